//===- OffFiber.h - Emulator hooks called off an emulator fiber -----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// What the emulator's hooks do when they are called outside a launch, on a
// plain OS thread. Shared by Hooks.cpp and NoFibers.cpp so both builds
// behave the same. Two modes:
//
// - no program (the host device library used directly, e.g. a host test
//   calling it from one OS thread per rank): the caller is a 1x1 launch of
//   its own; an abort ends the process, as a trap outside any kernel would.
// - a program (Interp.cpp runs a device function for Triton's interpreter):
//   the thread is block `blockIdx` of a grid `gridDim`, one thread per
//   block; a wait sleeps between polls instead of spinning, and an abort
//   returns to the entry point that started the program (longjmp) instead
//   of ending the process.
//
// In both, a wait that has not succeeded after kFirstProgressNs says so on
// stderr (once, then at doubling intervals): off a fiber nothing detects a
// deadlock, and a wait that cannot succeed would otherwise sit silent until
// its deadline.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_HOST_EMU_OFFFIBER_H
#define TLE_HOST_EMU_OFFFIBER_H

#include "diag/DevError.h"
#include "tle/detail/DevComm.h"
#include "tle/detail/EmuHooks.h"

#include <chrono>
#include <csetjmp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace tle::emu::detail {

/// The deadline clock: steady, in nanoseconds.
inline uint64_t steadyNowNs() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

/// A program that runs device code on the calling OS thread: block
/// `blockIdx` of `gridDim` blocks, each of one thread.
struct OffFiberProgram {
  uint32_t blockIdx[3];
  uint32_t gridDim[3];
  /// Failed polls since the entry point started (see offFiberSpinWait).
  uint32_t misses;
  /// Where tleEmuAbortLaunch returns to. Only trivially destructible frames
  /// (the device library's) lie between the setjmp and the longjmp, so
  /// skipping them is what a throw would do.
  std::jmp_buf abort;
};

/// The program the calling OS thread runs, or null.
inline thread_local OffFiberProgram *currentProgram = nullptr;

inline uint32_t offFiberBlockId(int32_t dim) {
  const OffFiberProgram *p = currentProgram;
  return p && dim >= 0 && dim < 3 ? p->blockIdx[dim] : 0;
}

inline uint32_t offFiberGridDim(int32_t dim) {
  const OffFiberProgram *p = currentProgram;
  return p && dim >= 0 && dim < 3 ? p->gridDim[dim] : 1;
}

/// Polls of a program before its wait starts to sleep. The peers are other
/// processes that need the CPU to reach the barrier (CI runs four ranks on
/// two cores), so a program yields for a few polls, which keeps a wait whose
/// peer is already close cheap, then sleeps between polls.
constexpr uint32_t kYieldsBeforeSleep = 64;
constexpr std::chrono::microseconds kPollSleep{20};

/// How long a wait off a fiber goes before it first says that it waits.
constexpr uint64_t kFirstProgressNs = 2'000'000'000;

/// One line on stderr: `info`'s wait has lasted `waitedNs` so far.
inline void reportStillWaiting(const WaitInfo &info, uint64_t waitedNs) {
  const auto *dc = static_cast<const DevComm *>(info.comm);
  char where[64] = "";
  if (const OffFiberProgram *p = currentProgram)
    std::snprintf(where, sizeof where, " program (%u, %u, %u)", p->blockIdx[0],
                  p->blockIdx[1], p->blockIdx[2]);
  char what[160];
  if (info.signal)
    std::snprintf(what, sizeof what,
                  "signal %u (it holds %llu, waiting for >= %llu)", info.slot,
                  static_cast<unsigned long long>(info.seen),
                  static_cast<unsigned long long>(info.wanted));
  else
    std::snprintf(what, sizeof what,
                  "slot %u for epoch %u (not arrived yet: ranks %s)", info.slot,
                  info.epoch, peerList(waitMissing(info)).c_str());
  char deadline[96] = "no deadline (TLE_BARRIER_TIMEOUT_MS=0)";
  if (dc && dc->timeoutNs)
    std::snprintf(deadline, sizeof deadline,
                  "it fails at its deadline, %.3g s (TLE_BARRIER_TIMEOUT_MS)",
                  static_cast<double>(dc->timeoutNs) / 1e9);
  std::fprintf(stderr, "tle: rank %d%s has waited %.0f s in %s on %s; %s\n",
               info.rank, where, static_cast<double>(waitedNs) / 1e9,
               info.what ? info.what : "a wait", what, deadline);
}

/// A failed poll off a fiber, of the wait `info` (may be null).
inline void offFiberSpinWait(const WaitInfo *info = nullptr) {
  // The wait this OS thread polls for: one wait's polls come one after
  // another (at most a sleep apart), on the same communicator and word.
  thread_local uint64_t since = 0, next = 0, lastPoll = 0;
  thread_local WaitInfo last{};
  if (info) {
    uint64_t now = steadyNowNs();
    bool same = since && now - lastPoll < 500'000'000 &&
                info->comm == last.comm && info->slot == last.slot &&
                info->epoch == last.epoch && info->signal == last.signal &&
                info->wanted == last.wanted;
    lastPoll = now;
    if (!same) {
      since = now;
      next = kFirstProgressNs;
      last = *info;
    } else if (now - since >= next) {
      const auto *dc = static_cast<const DevComm *>(info->comm);
      // Not when the deadline is at most a second away: the failure's
      // own report is about to say it.
      if (!dc || !dc->timeoutNs || now - since + 1'000'000'000 < dc->timeoutNs)
        reportStillWaiting(*info, now - since);
      next *= 2;
    }
  }
  OffFiberProgram *p = currentProgram;
  if (p && ++p->misses > kYieldsBeforeSleep)
    std::this_thread::sleep_for(kPollSleep);
  else
    std::this_thread::yield();
}

/// Off a fiber the caller is its own block: one scratch per OS thread.
inline uint32_t *offFiberScratch(uint32_t id, uint32_t n) {
  thread_local std::vector<std::vector<uint32_t>> scratch;
  if (scratch.size() <= id)
    scratch.resize(id + 1);
  if (scratch[id].size() < n)
    scratch[id].resize(n, 0);
  return scratch[id].data();
}

/// A device-side failure off a fiber: back to the entry point that runs the
/// program, or, with none, the host equivalent of a trap outside any
/// kernel, which nothing can recover from.
/// Off a fiber there is no scheduler to delay the network, so it delivers
/// a transfer with a completion word (a signal or a counter) at once: the
/// data, then the adds. One with none (a get, a put nothing follows) is
/// complete only at a flush, as on the scheduler's network: it is held,
/// with its data as the network read it at the send, until this thread's
/// next flush, or its next send with a word (net adds included, which
/// barriers and signals make), so the network keeps its order and a flag
/// raised after the data never arrives before it. A get read before its
/// flush therefore reads the old bytes.
struct OffFiberTransfer {
  void *dst;
  std::vector<unsigned char> data;
};
inline thread_local std::vector<OffFiberTransfer> offFiberHeld;
inline void offFiberDeliverHeld() {
  for (OffFiberTransfer &t : offFiberHeld)
    std::memcpy(t.dst, t.data.data(), t.data.size());
  offFiberHeld.clear();
}
inline void offFiberNetCopy(void *dst, const void *src, uint64_t bytes,
                            uint64_t *signal, uint64_t signalValue,
                            uint64_t *counter, uint64_t counterValue) {
  if (!signal && !counter) {
    if (bytes) {
      const auto *from = static_cast<const unsigned char *>(src);
      offFiberHeld.push_back({dst, {from, from + bytes}});
    }
    return;
  }
  offFiberDeliverHeld();
  if (bytes)
    std::memcpy(dst, src, bytes);
  if (counter)
    __atomic_fetch_add(counter, counterValue, __ATOMIC_RELEASE);
  if (signal)
    __atomic_fetch_add(signal, signalValue, __ATOMIC_RELEASE);
}
/// tleEmuNetAdd off a fiber: after what the thread sent before.
inline void offFiberNetAdd(uint64_t *word, uint64_t value) {
  offFiberDeliverHeld();
  __atomic_fetch_add(word, value, __ATOMIC_RELEASE);
}
/// tleEmuNetFlush off a fiber: everything held lands; nothing is pending.
inline uint64_t offFiberNetFlush() {
  offFiberDeliverHeld();
  return 0;
}

/// Prints what the communicators' error records say (set by the host
/// runtime, comm/features/Errors.cpp): a host thread that calls the device
/// ABI has no launch to return the record to, so the process says what
/// failed before it ends.
inline void (*offFiberReport)() = nullptr;

[[noreturn]] inline void offFiberAbort() {
  if (OffFiberProgram *p = currentProgram)
    std::longjmp(p->abort, 1);
  if (offFiberReport)
    offFiberReport();
  std::fprintf(stderr,
               "tle: a device-side error outside an emulator launch ends the "
               "process (the device ABI was called from a host thread of "
               "the program's own): run kernels with tleEmuLaunch or "
               "tle::emu::launch (tle/emu.h), which return the error "
               "record\n");
  std::abort();
}

} // namespace tle::emu::detail

#endif // TLE_HOST_EMU_OFFFIBER_H
