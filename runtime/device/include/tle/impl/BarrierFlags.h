//===- BarrierFlags.h - The barrier's flags: signalling and polling -------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The two halves every barrier is built from (the point-to-point signal
// words of tle.signal are another thing: SignalOps.h). Rank r's inbox word
// for slot s and peer q, inbox[r][s * inboxStride + q], is written only by
// q and counts q's arrivals on the slot (the epoch q reached). Signalling adds
// 1 to our word in each peer's inbox with a release at system scope; polling
// loads our own inbox with acquire until every peer's word reached the
// target epoch, under a deadline.
//
// Memory model, in short: the group's sync puts every member's writes in
// the signalling thread's causality past, and a PTX release is cumulative,
// so one worker's release publishes the whole group; on the other side the
// pollers' acquire observes it and the final group sync extends it to every
// member. Several accesses by one thread use one fence.acq_rel plus relaxed
// accesses, the same release (acquire) pattern in PTX, which pipelines.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_IMPL_BARRIERFLAGS_H
#define TLE_IMPL_BARRIERFLAGS_H

#include "tle/impl/Wait.h"

namespace tle::impl {

/// Entry j (0 <= j < n) of rank r's round: (r + 1 + j) mod n. Entries
/// 0..n-2 are the peers; entry n-1 is r itself (the grid barrier counts it).
TLE_DEV_INLINE uint32_t entryRank(const Comm &c, uint32_t j) {
  uint32_t q = c.rank + 1 + j;
  return q >= c.size ? q - c.size : q;
}
/// Route j < size, through the mask that keeps a load the compiler
/// speculates for another j inside the table (see DevComm::routes).
TLE_DEV_INLINE const Route *route(const Comm &c, uint32_t j) {
  return &c.dc->routes[routeIndex(j)];
}
/// Our word in entry j's inbox for `slot` (preloaded for the lane's own
/// entry, else one load independent of rank: DevComm::routes).
TLE_DEV_INLINE uint32_t *outFlag(const Comm &c, uint32_t slot, uint32_t j) {
  return (j == c.entry ? c.outEntry : loadConst(&route(c, j)->out)) +
         slot * c.stride;
}
/// Entry j's word in our inbox for `slot`.
TLE_DEV_INLINE const uint32_t *inFlag(const Comm &c, uint32_t slot,
                                      uint32_t j) {
  return (j == c.entry ? c.inEntry : loadConst(&route(c, j)->in)) +
         slot * c.stride;
}
TLE_DEV_INLINE uint32_t *epochWord(const Comm &c, uint32_t slot) {
  return c.epochs + slot;
}

/// Arrival: adds 1 to our word in the inbox of peers first, first+stride,
/// ... < size-1. Since each such word counts our arrivals on the slot, it
/// equals our epoch after the arrive, as docs/design.md specifies, without
/// loading the epoch first: the epoch load moves to the wait, where it
/// overlaps the flight of the signal. One peer per thread: a release (or
/// relaxed) reduction. Several: one fence, then relaxed reductions, which
/// pipeline instead of each release waiting for the previous one.
///
/// A session knows that count (`after`, its epoch + 1: between two waits
/// of a slot its group arrives once, so the word held the epoch) and
/// stores it instead of adding: the same value in the word, but a plain
/// release store; on one H200 at 1 CTA per rank the session went from
/// 0.961 to 0.863 us per round with it (docs/gpu-notes.md, runs 24, 25).
template <bool Known = false>
TLE_DEV_INLINE void arriveAt(const Comm &c, uint32_t slot, uint32_t first,
                             uint32_t stride, int order, uint32_t after = 0) {
  uint32_t count = c.size - 1;
  if (order == kOrderSeqCst && !TLE_MUTANT(5))
    fenceSeqCstSys();
  auto relaxed = [&](uint32_t *flag) {
    if constexpr (Known)
      storeRelaxedSys(flag, after);
    else
      addRelaxedSys(flag, 1);
  };
  if (first + stride >= count) {
    uint32_t *flag = outFlag(c, slot, first);
    if (!releases(order))
      relaxed(flag);
    else if constexpr (Known)
      storeReleaseSys(flag, after);
    else
      addReleaseSys(flag, 1);
    return;
  }
  if (order != kOrderSeqCst && releases(order) && !TLE_MUTANT(6))
    fenceAcqRelSys();
  for (uint32_t j = first; j < count; j += stride)
    relaxed(outFlag(c, slot, j));
}

/// The grid barrier's publication: stores `value` into entries 0..size-1
/// (every peer and ourselves) with one fence first.
TLE_DEV_INLINE void publishAll(const Comm &c, uint32_t slot, uint32_t value,
                               int order) {
  if (order == kOrderSeqCst)
    fenceSeqCstSys();
  else if (!TLE_MUTANT(8))
    fenceAcqRelSys();
  for (uint32_t j = 0; j < c.size; ++j)
    storeRelaxedSys(outFlag(c, slot, j), value);
}

/// What a wait waits for: entries 0..count-1 of our inbox for `slot`
/// reaching `target`.
struct WaitCtx {
  Comm c;
  uint32_t slot;
  uint32_t target;
  uint32_t count;
  const char *what;
  FnAt fn;
};

/// Rank q is in the set: its entry has not reached the target.
TLE_DEV_INLINE PeerMask missingPeers(const WaitCtx &w) {
  PeerMask mask = {};
  for (uint32_t j = 0; j < w.count; ++j)
    if (!reached(peekFlagSys(inFlag(w.c, w.slot, j)), w.target)) {
      uint32_t q = entryRank(w.c, j);
      mask.words[q / 64] |= uint64_t(1) << (q % 64);
    }
  return mask;
}

/// tleCommFailed and its Triton spelling: 0 while `comm` is usable, else
/// the tleResult_t value its waits give up with.
TLE_DEV_INLINE int32_t commFailed(const void *comm, FnAt fn) {
  uint32_t code = faultCode(checkComm(comm, fn).dc);
  return code ? static_cast<int32_t>(resultOf(code)) : 0;
}

/// A wait that gives up because the communicator's fault word says `code`:
/// the first such wait after tleCommAbort claims the free record (the
/// watchdog and a failed wait have filled theirs). Returns the status of
/// the wait, a tleResult_t value. Signal waits give up through here too.
/// Scalars, not the WaitCtx, as failTimeout: a reference to it would make
/// the compiler build the struct in local memory on the hot path of every
/// wait (eleven stores before the first poll), not only when one gives up.
TLE_DEV_COLD uint32_t giveUp(const void *comm, uint32_t slot, uint32_t target,
                             uint32_t count, uint32_t code, FnAt fn) {
  if (code == kDevErrAborted) {
    WaitCtx w{checkComm(comm, fn), slot, target, count, nullptr, fn};
    Failure f{kDevErrAborted, w.fn};
    f.slot = w.slot;
    f.epoch = w.target;
    f.missing = missingPeers(w);
    claimRecord(loadConst(&w.c.dc->error), static_cast<int32_t>(w.c.rank),
                w.c.nBarriers, f);
  } else if (code == kDevErrPeerFailure) {
    addWaitSite(loadConst(&checkComm(comm, fn).dc->error), fn);
  }
  return resultOf(code);
}

/// A wait passed its deadline: record it, then trap, or under
/// kDevCommOnErrorReturn set the fault word (every later wait on the
/// communicator gives up at its next check) and return the status.
TLE_DEV_COLD uint32_t failTimeout(const void *comm, uint32_t slot,
                                  uint32_t target, uint32_t count,
                                  uint64_t elapsedNs, FnAt fn) {
  WaitCtx w{checkComm(comm, fn), slot, target, count, nullptr, fn};
  Failure f{kDevErrTimeout, fn};
  f.slot = slot;
  f.epoch = target;
  f.missing = missingPeers(w);
  f.elapsedNs = elapsedNs;
  ErrorRecord *rec = loadConst(&w.c.dc->error);
  auto rank = static_cast<int32_t>(w.c.rank);
  if (!(loadConst(&w.c.dc->flags) & kDevCommOnErrorReturn))
    failWithRecord(rec, rank, w.c.nBarriers, f);
  claimRecord(rec, rank, w.c.nBarriers, f);
  if (rec && loadFaultWord(&rec->abort) == 0)
    storeFaultWord(&rec->abort, kDevErrTimeout);
  return resultOf(kDevErrTimeout);
}

/// After a failed poll: on the emulator a yield that names the missing
/// peers, then the wait engine (Wait.h) with the barrier's reports. 0 to
/// poll on, else the status the wait gives up with.
/// WaitInfo::peers of a barrier wait (`ctx` its WaitCtx): the emulator asks
/// for the missing peers only for a report, not on every failed poll.
TLE_DEV_INLINE void missingPeersOf(const void *ctx, PeerMask *out) {
  *out = missingPeers(*static_cast<const WaitCtx *>(ctx));
}

/// After a failed poll of `watch` (a flag that has not reached the target;
/// the emulator wakes the thread when it is written): on the emulator a
/// yield that describes the wait, then the wait engine (Wait.h) with the
/// barrier's reports. 0 to poll on, else the status the wait gives up with.
TLE_DEV_INLINE uint32_t onMiss(PollClock &k, const WaitCtx &w,
                               const uint32_t *watch) {
  if constexpr (kPlatformYields) {
    WaitInfo info{w.c.dc, static_cast<int32_t>(w.c.rank), w.slot, w.target, {},
                  w.what};
    info.watch = watch;
    info.peers = missingPeersOf;
    info.peersCtx = &w;
    spinWait(info);
  }
  return waitMissed(
      k, w.c.dc, TLE_MUTANT(33) ? kPollsPerClockRead : kPollsPerAbortCheck,
      [&](uint32_t fault) {
        return giveUp(w.c.dc, w.slot, w.target, w.count, fault, w.fn);
      },
      [&](uint64_t elapsedNs) {
        return failTimeout(w.c.dc, w.slot, w.target, w.count, elapsedNs, w.fn);
      });
}

/// The hot loop: one flag, acquire (or relaxed) loads, nothing else until
/// a miss. Returns 0, or the status of a wait that gave up.
template <bool Acquire>
TLE_DEV_INLINE uint32_t pollOne(const WaitCtx &w, const uint32_t *flag) {
  auto poll = [&] {
    return reached(Acquire ? loadAcquireSys(flag) : loadRelaxedSys(flag),
                   w.target);
  };
  // The first poll is peeled off the loop by hand. Written as one loop,
  // nvcc kept the poll in the loop's header whenever the miss path held
  // the fault word's look, and ptxas put the loop's YIELD there: every
  // round paid for it, also when the first poll succeeded (the SASS of
  // bench/SharedBench.cu's session loop; the build without the look got
  // the peeled form by itself, and ran 0.06-0.08 us per round faster,
  // docs/gpu-notes.md runs 18 and 24).
  if (poll())
    return 0;
  PollClock k;
  do {
    if (uint32_t status = onMiss(k, w, flag))
      return status;
  } while (!poll());
  return 0;
}

/// Waits for entries first, first+stride, ... < w.count. One entry per
/// thread is the fast path (warp and block groups, grid pollers); a thread
/// that owns several polls them with relaxed loads, which pipeline, and
/// acquires once after with a fence. Returns 0, or the status of a wait
/// that gave up (a tleResult_t value).
TLE_DEV_INLINE uint32_t await(const WaitCtx &w, uint32_t first, uint32_t stride,
                              bool acquire) {
  if (TLE_MUTANT(24))
    return 0;
  if (first + stride >= w.count) {
    const uint32_t *flag = inFlag(w.c, w.slot, first);
    return acquire ? pollOne<true>(w, flag) : pollOne<false>(w, flag);
  }
  PollClock k;
  for (;;) {
    const uint32_t *behind = nullptr; // the first entry short of the target
    for (uint32_t j = first; j < w.count; j += stride) {
      const uint32_t *flag = inFlag(w.c, w.slot, j);
      if (!reached(loadRelaxedSys(flag), w.target) && !behind)
        behind = flag;
    }
    if (!behind)
      break;
    if (uint32_t status = onMiss(k, w, behind))
      return status;
  }
  if (acquire && !TLE_MUTANT(7))
    fenceAcqRelSys();
  return 0;
}

} // namespace tle::impl

#endif // TLE_IMPL_BARRIERFLAGS_H
