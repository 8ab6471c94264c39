//===- Handles.cpp - The registry of live handles ---------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A handle's value is (serial << 8) | tag. Serials come from one 64-bit
// counter for both types, so a value is issued once in a process's life;
// the tag tells a communicator from a buffer, so that passing one for the
// other gets a message that says so. The tables are never destroyed: a
// handle may be destroyed from an atexit handler or a static destructor
// that runs after this file's statics would be gone.
//
//===----------------------------------------------------------------------===//

#include "comm/Handles.h"
#include "comm/Comm.h"
#include "diag/Error.h"
#include "memory/Memory.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace tle {
namespace {

static_assert(sizeof(void *) == sizeof(uint64_t),
              "a handle's value fills a pointer");

constexpr uint64_t kCommTag = 0xc0;
constexpr uint64_t kMemTag = 0xe0;

std::atomic<uint64_t> nextSerial{1};

template <typename T> struct Table {
  std::mutex mutex;
  std::unordered_map<uint64_t, std::shared_ptr<T>> live;
};

template <typename T> Table<T> &table() {
  static Table<T> *t = new Table<T>;
  return *t;
}

template <typename T> uint64_t insert(std::shared_ptr<T> object, uint64_t tag) {
  uint64_t value = nextSerial.fetch_add(1) << 8 | tag;
  Table<T> &t = table<T>();
  std::lock_guard<std::mutex> lock(t.mutex);
  t.live.emplace(value, std::move(object));
  return value;
}

template <typename T>
bool find(uint64_t value, std::shared_ptr<T> &out, bool take) {
  Table<T> &t = table<T>();
  std::lock_guard<std::mutex> lock(t.mutex);
  auto it = t.live.find(value);
  if (it == t.live.end())
    return false;
  out = it->second;
  if (take)
    t.live.erase(it);
  return true;
}

template <typename T> bool isLive(uint64_t value) {
  std::shared_ptr<T> ignored;
  return find(value, ignored, false);
}

/// The detail for a value that is not a live `T`.
tleResult_t refuse(uint64_t value, const char *arg, bool wantComm) {
  if (value == 0)
    return fail(tleInvalidArgument, "%s is NULL", arg);
  if (wantComm && isLive<MemState>(value))
    return fail(tleInvalidArgument, "%s is a tleMem_t handle, not a tleComm_t",
                arg);
  if (!wantComm && isLive<CommState>(value))
    return fail(tleInvalidArgument, "%s is a tleComm_t handle, not a tleMem_t",
                arg);
  return fail(tleInvalidArgument,
              "%s (0x%llx) is not a live %s: already %s, or not a handle "
              "TLE returned",
              arg, static_cast<unsigned long long>(value),
              wantComm ? "communicator" : "symmetric buffer",
              wantComm ? "destroyed" : "freed");
}

uint64_t valueOf(const void *handle) {
  return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(handle));
}

} // namespace

tleComm_t registerComm(std::shared_ptr<CommState> comm) {
  CommState &c = *comm;
  uint64_t value = insert(std::move(comm), kCommTag);
  // No one has the handle yet, so no call races with this store.
  c.abortSlot = armAbort(value, *c.faults, c.faultIndex, &c.errorHost->abort);
  return reinterpret_cast<tleComm_t>(static_cast<uintptr_t>(value));
}

tleMem_t registerMem(std::shared_ptr<MemState> mem) {
  return reinterpret_cast<tleMem_t>(
      static_cast<uintptr_t>(insert(std::move(mem), kMemTag)));
}

tleResult_t lookupComm(tleComm_t handle, std::shared_ptr<CommState> &out,
                       const char *arg) {
  uint64_t v = valueOf(handle);
  if ((v & 0xff) == kCommTag && find(v, out, false))
    return tleSuccess;
  return refuse(v, arg, true);
}

tleResult_t lookupMem(tleMem_t handle, std::shared_ptr<MemState> &out,
                      const char *arg) {
  uint64_t v = valueOf(handle);
  if ((v & 0xff) == kMemTag && find(v, out, false))
    return tleSuccess;
  return refuse(v, arg, false);
}

bool isLiveDevicePointer(const void *p) {
  {
    Table<CommState> &t = table<CommState>();
    std::lock_guard<std::mutex> lock(t.mutex);
    for (const auto &[value, comm] : t.live)
      if (comm->devComm == p)
        return true;
  }
  Table<MemState> &t = table<MemState>();
  std::lock_guard<std::mutex> lock(t.mutex);
  for (const auto &[value, mem] : t.live)
    if (mem->handle == p)
      return true;
  return false;
}

void forEachMem(const std::function<void(tleMem_t, const MemState &)> &fn) {
  std::vector<std::pair<uint64_t, std::shared_ptr<MemState>>> live;
  {
    Table<MemState> &t = table<MemState>();
    std::lock_guard<std::mutex> lock(t.mutex);
    live.assign(t.live.begin(), t.live.end());
  }
  std::sort(live.begin(), live.end(),
            [](const auto &a, const auto &b) { return a.first < b.first; });
  for (const auto &[value, mem] : live)
    fn(reinterpret_cast<tleMem_t>(static_cast<uintptr_t>(value)), *mem);
}

void forEachComm(const std::function<void(tleComm_t, const CommState &)> &fn) {
  std::vector<std::pair<uint64_t, std::shared_ptr<CommState>>> live;
  {
    Table<CommState> &t = table<CommState>();
    std::lock_guard<std::mutex> lock(t.mutex);
    live.assign(t.live.begin(), t.live.end());
  }
  std::sort(live.begin(), live.end(),
            [](const auto &a, const auto &b) { return a.first < b.first; });
  for (const auto &[value, comm] : live)
    fn(reinterpret_cast<tleComm_t>(static_cast<uintptr_t>(value)), *comm);
}

tleResult_t unregisterComm(tleComm_t handle, std::shared_ptr<CommState> &out) {
  uint64_t v = valueOf(handle);
  if ((v & 0xff) == kCommTag && find(v, out, true))
    return tleSuccess;
  return refuse(v, "comm", true);
}

tleResult_t unregisterMem(tleMem_t handle, std::shared_ptr<MemState> &out) {
  uint64_t v = valueOf(handle);
  if ((v & 0xff) == kMemTag && find(v, out, true))
    return tleSuccess;
  return refuse(v, "mem", false);
}

} // namespace tle
