//===- Wait.h - The wait engine every device-side wait shares ---*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// What a wait does after a failed poll, once for every wait of the library:
// the barrier's inbox waits (BarrierFlags.h), the signal, counter and
// shadow waits (SignalOps.h, OneSided.h) and the rail waits of the INTER
// and WORLD teams (Rail.h). Each keeps its own poll (what it loads and
// what "reached" means), its emulator yield (what it tells the scheduler)
// and its reports (what a give-up or a timeout record names); the engine
// owns the rest, so that they cannot drift apart: the count of failed
// polls, the look at the communicator's fault word (first at the
// kPollsBeforeAbortCheck-th failed poll, then every kPollsPerAbortCheck,
// none in the TLE_NO_ABORT_CHECK control build), the clock every
// kPollsPerClockRead (its first read starts the deadline) and the deadline.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_IMPL_WAIT_H
#define TLE_IMPL_WAIT_H

#include "tle/impl/Check.h"

namespace tle::impl {

/// Failed polls between two looks at the communicator's fault word: the
/// cadence that bounds how late a wait sees tleCommAbort. No look on the
/// success path or at the first miss, where a load of host memory (about a
/// microsecond on GPUs) would delay the barrier. A quarter of the clock's
/// cadence on GPUs, to bound the device's share of an abort's latency to
/// about 32 polls (docs/device-library.md has the figures); a wait that has
/// already missed 32 polls is no barrier fast path.
constexpr uint32_t kPollsPerAbortCheck =
    kPollsPerClockRead >= 4 ? kPollsPerClockRead / 4 : kPollsPerClockRead;
static_assert(kPollsPerClockRead % kPollsPerAbortCheck == 0,
              "the clock is read at a look at the fault word");
/// Failed polls before a wait's first look at the fault word: 512 on GPUs
/// (about 130 µs of polling on H200), none on the host. The look is a load
/// of host memory, and measured on one H200 (gpu-notes, run 14) the looks
/// of 64 or more CTAs per rank, two ranks sharing the GPU, made launches
/// of a barrier loop take 30-43 µs per round instead of 1.2 µs, every path
/// but the bare flag barrier that never looks, while the build without
/// the look never did: a wait made late by a peer's slow look looks in
/// turn. A wait shorter than this does not look at all, and one that
/// lasts longer looks every kPollsPerAbortCheck polls as before, so an
/// abort is seen at most this many polls later.
constexpr uint32_t kPollsBeforeAbortCheck =
    kPollsPerClockRead > 1 ? 4 * kPollsPerClockRead : 0;
/// Whether a wait that has missed `polls` polls looks at the fault word.
TLE_DEV_INLINE bool abortLookDue(uint32_t polls) {
  return polls >= kPollsBeforeAbortCheck;
}

/// The communicator's fault word (ErrorRecord::abort): 0 while it is usable.
TLE_DEV_INLINE uint32_t faultCode(const DevComm *dc) {
  const ErrorRecord *rec = loadConst(&dc->error);
  return rec ? loadFaultWord(&rec->abort) : 0;
}

/// Bookkeeping of one waiting thread: failed polls, and the clock's first
/// read, which starts the deadline.
struct PollClock {
  uint32_t polls = 0;
  uint64_t start = 0;
};

/// The engine, after a failed poll of a wait on communicator `dc`: 0 to
/// poll on, else the status the wait gives up with. `lookEvery` is the
/// fault word's cadence (kPollsPerAbortCheck; each caller names its own
/// mutant of it). `giveUp(code)` reports a set fault word and returns the
/// status, `timeOut(elapsedNs)` a passed deadline (both cold; they take
/// the caller's scalars, never a reference to its state, which would make
/// the compiler build that state in local memory on the hot path). The
/// fault word's load is issued before the clock read, so the two overlap.
template <typename GiveUp, typename TimeOut>
TLE_DEV_INLINE uint32_t waitMissed(PollClock &k, const DevComm *dc,
                                   uint32_t lookEvery, GiveUp giveUp,
                                   TimeOut timeOut) {
  if (++k.polls % lookEvery != 0)
    return 0;
#if defined(TLE_NO_ABORT_CHECK)
  // The benchmark's control build (bench/): the same loop without the look.
  uint32_t fault = 0;
#else
  uint32_t fault = abortLookDue(k.polls) ? faultCode(dc) : 0;
#endif
  if (TLE_UNLIKELY(fault != 0))
    return giveUp(fault);
  if (k.polls % kPollsPerClockRead != 0)
    return 0;
  uint64_t now = nowNs();
  uint64_t timeout = loadConst(&dc->timeoutNs);
  if (k.polls == kPollsPerClockRead)
    k.start = now;
  else if (timeout != 0 && now - k.start > timeout)
    return timeOut(now - k.start);
  return 0;
}

} // namespace tle::impl

#endif // TLE_IMPL_WAIT_H
