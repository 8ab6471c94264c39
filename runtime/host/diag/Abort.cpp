//===- Abort.cpp - Aborting a communicator from anywhere --------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The abort table of Abort.h. A slot is claimed (`taken`), filled, then
// published by storing its handle; an abort finds the slot by its handle,
// announces itself in the slot's `users`, checks the handle again and only
// then follows the group pointer, so that a destroy which cleared the
// handle and saw no users knows that no abort will follow it. The group's
// own `users` does the same for its words: a rank of a tleCommInitAll set
// may be destroyed while an abort through another rank's slot stores to
// every word. All operations are sequentially consistent, which the two
// "announce, then check" handshakes need.
//
//===----------------------------------------------------------------------===//

#include "diag/Abort.h"

#include "tle/abi.h"

#include <thread>

namespace tle {
namespace {

/// Live communicators the table serves; past it, tleCommAbort locks.
constexpr int kAbortSlots = 4096;

struct Slot {
  std::atomic<bool> taken{false};
  std::atomic<uint64_t> handle{0};
  std::atomic<uint32_t> users{0};
  std::atomic<FaultGroup *> group{nullptr};
};

/// Constant-initialised and trivially destructible, so usable from a signal
/// handler at any time, also during exit.
Slot slots[kAbortSlots];

void waitForNoUsers(const std::atomic<uint32_t> &users) {
  while (users.load() != 0)
    std::this_thread::yield();
}

} // namespace

void setFault(FaultGroup &group, uint32_t code) {
  group.users.fetch_add(1);
  for (int r = 0; r < group.size; ++r)
    if (uint32_t *word = group.words[r].load()) {
      // The first reason wins: a wait that failed under onError = return
      // keeps its code.
      uint32_t expected = 0;
      __atomic_compare_exchange_n(word, &expected, code, false,
                                  __ATOMIC_SEQ_CST, __ATOMIC_RELAXED);
    }
  group.users.fetch_sub(1);
}

int armAbort(uint64_t handle, FaultGroup &group, int rank, uint32_t *word) {
  group.words[rank].store(word);
  for (int i = 0; i < kAbortSlots; ++i) {
    bool expected = false;
    if (slots[i].taken.load() ||
        !slots[i].taken.compare_exchange_strong(expected, true))
      continue;
    slots[i].group.store(&group);
    slots[i].handle.store(handle);
    return i;
  }
  return -1;
}

void disarmAbort(int slot, FaultGroup &group, int rank) {
  if (slot >= 0) {
    Slot &s = slots[slot];
    s.handle.store(0);
    waitForNoUsers(s.users);
    s.group.store(nullptr);
    s.taken.store(false);
  }
  group.words[rank].store(nullptr);
  waitForNoUsers(group.users);
}

bool abortHandle(uint64_t handle) {
  if (handle == 0)
    return false;
  for (Slot &s : slots) {
    if (s.handle.load() != handle)
      continue;
    s.users.fetch_add(1);
    bool found = s.handle.load() == handle;
    if (found)
      setFault(*s.group.load(), kDevErrAborted);
    s.users.fetch_sub(1);
    if (found)
      return true;
  }
  return false;
}

} // namespace tle
