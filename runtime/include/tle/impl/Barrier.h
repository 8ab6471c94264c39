//===- Barrier.h - The intra-node barrier, written once ----------*- C++
//-*-===//
//
// The implementation of every function declared in tle/device.h, written
// against the platform layer (Platform.h) so that the same text is the nvcc
// header build, the clang bitcode build and the emulator's host build.
// DESIGN.md ("The barrier") is the specification; docs/device-library.md
// explains the layout and the choices.
//
// Memory model, in short. Rank r's inbox word for slot s and peer q,
// inbox[r][s * inboxStride + q], is written only by q: a store of the epoch
// q reached. arrive(release): the group synchronizes (bar.sync / bar.warp.sync
// order every write of the group before the elected thread's next
// operation), then the elected thread stores with release at system scope.
// PTX release is cumulative: it orders everything in the releasing thread's
// causality past, which the group sync put the whole group's writes in, so
// one thread's release publishes the whole group. wait(acquire): the pollers
// observe the peer's store with acquire at system scope, then the group
// synchronizes, which extends that causality to every thread of the group.
// Several stores (or loads) by one thread use one fence.acq_rel.sys plus
// relaxed stores (loads), which is the same release (acquire) pattern in PTX
// and lets the accesses pipeline instead of serializing on each other.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_IMPL_BARRIER_H
#define TLE_IMPL_BARRIER_H

#ifndef TLE_DEVICE_H
#error "include tle/device.h, not this file"
#endif

#include "tle/impl/Platform.h"

#define TLE_UNLIKELY(x) __builtin_expect(!!(x), 0)

namespace tle::impl {

constexpr uint32_t kWarpSize = 32;

/// Argument ids in the top byte of ErrorRecord::aux for kDevErrBadArgument;
/// the low 24 bits hold the offending value.
enum BadArgument : uint32_t {
  kArgCoopKind = 1,
  kArgOrder = 2,
  kArgTeamKind = 3,
  kArgScope = 4,
  kArgPeer = 5,
  kArgOffset = 6,
  kArgBarrierKind = 7,
};

/// The first failure of a launch: claim the record (CAS 0 -> 1), fill it,
/// publish it (release store of state 2), push it out of the GPU, end the
/// launch. Later failures find the record taken and only abort.
[[noreturn]] TLE_DEV_COLD void
failWithRecord(ErrorRecord *rec, int32_t rank, uint32_t nBarriers,
               uint32_t code, uint32_t slot, uint32_t epoch,
               uint32_t missingMask, uint32_t aux, uint64_t elapsedNs) {
  if (rec && casRelaxedSys(&rec->state, 0, 1)) {
    rec->code = code;
    rec->rank = rank;
    rec->slot = slot;
    rec->epoch = epoch;
    rec->missingMask = missingMask;
    rec->block = static_cast<int32_t>(blockRank());
    rec->thread = static_cast<int32_t>(threadRank());
    rec->nBarriers = nBarriers;
    rec->aux = aux;
    rec->elapsedNs = elapsedNs;
    storeReleaseSys(&rec->state, 2);
    // A trap tears the context down; make the record reach host memory
    // first (the __threadfence_system() of CUDA C++).
    fenceSeqCstSys();
  }
  abortLaunch();
}

/// The pointer is not a communicator (null, foreign or of another layout
/// version): nothing in it can be trusted, not even its error record. The
/// launch fails with no record; the host reports it as a bad communicator.
[[noreturn]] TLE_DEV_COLD void failNoRecord() { abortLaunch(); }

[[noreturn]] TLE_DEV_COLD void failComm(const DevComm *dc, uint32_t code,
                                        uint32_t slot, uint32_t aux) {
  failWithRecord(dc->error, dc->rank, dc->nBarriers, code, slot, 0, 0, aux, 0);
}

TLE_DEV_INLINE const DevComm *checkComm(const void *comm) {
  const DevComm *dc = static_cast<const DevComm *>(comm);
  if (TLE_UNLIKELY(!dc || dc->magic != kDevCommMagic ||
                   dc->version != kDevCommVersion))
    failNoRecord();
  if (TLE_UNLIKELY(static_cast<uint32_t>(dc->size) - 1 >= kMaxRanks ||
                   static_cast<uint32_t>(dc->rank) >=
                       static_cast<uint32_t>(dc->size)))
    failComm(dc, kDevErrBadComm, 0, static_cast<uint32_t>(dc->size));
  return dc;
}

/// checkComm, and the slot must exist: an index out of range is reported
/// before any inbox or epoch word is touched.
TLE_DEV_INLINE const DevComm *checkSlot(const void *comm, uint32_t index) {
  const DevComm *dc = checkComm(comm);
  if (TLE_UNLIKELY(index >= dc->nBarriers))
    failComm(dc, kDevErrIndexOutOfRange, index, 0);
  return dc;
}

[[noreturn]] TLE_DEV_COLD void failArgument(const void *comm, uint32_t index,
                                            uint32_t arg, int value) {
  failComm(checkComm(comm), kDevErrBadArgument, index,
           (arg << 24) | (static_cast<uint32_t>(value) & 0xffffffu));
}

TLE_DEV_INLINE void checkOrder(const void *comm, uint32_t index, int order) {
  if (TLE_UNLIKELY(static_cast<uint32_t>(order) > kOrderSeqCst))
    failArgument(comm, index, kArgOrder, order);
}

TLE_DEV_INLINE bool releases(int order) { return order >= kOrderRelease; }
TLE_DEV_INLINE bool acquires(int order) {
  return order == kOrderAcquire || order >= kOrderAcqRel;
}
TLE_DEV_INLINE bool reached(uint32_t value, uint32_t target) {
  return static_cast<int32_t>(value - target) >= 0;
}
TLE_DEV_INLINE uint32_t minU(uint32_t a, uint32_t b) { return a < b ? a : b; }

/// A cooperative group as the barrier sees it: the caller's rank in it and
/// its size. TileSpan and Lanes run as a warp (docs/device-library.md).
struct Group {
  uint32_t rank;
  uint32_t size;
  int kind; ///< kCoopThread, kCoopWarp or kCoopBlock
};

TLE_DEV_INLINE Group makeGroup(int coop) {
  if (coop == kCoopThread)
    return {0, 1, kCoopThread};
  uint32_t t = threadRank();
  if (coop == kCoopBlock)
    return {t, blockThreads(), kCoopBlock};
  uint32_t base = t & ~(kWarpSize - 1);
  return {t - base, minU(kWarpSize, blockThreads() - base), kCoopWarp};
}

TLE_DEV_INLINE void groupSync(const Group &g) {
  if (g.kind == kCoopBlock)
    syncBlock();
  else if (g.kind == kCoopWarp)
    syncWarp();
}

TLE_DEV_INLINE void checkCoop(const void *comm, uint32_t index, int coop,
                              int order) {
  if (TLE_UNLIKELY(static_cast<uint32_t>(coop) > kCoopLanes))
    failArgument(comm, index, kArgCoopKind, coop);
  checkOrder(comm, index, order);
}

/// Entry j (0 <= j < n) of rank r's round: (r + 1 + j) mod n. Entries
/// 0..n-2 are the peers; entry n-1 is r itself (the grid barrier counts it).
TLE_DEV_INLINE uint32_t entryRank(uint32_t rank, uint32_t n, uint32_t j) {
  uint32_t q = rank + 1 + j;
  return q >= n ? q - n : q;
}

/// Stores `value` into entries first, first+stride, ... < count of every
/// such rank's inbox (our word in it).
TLE_DEV_INLINE void signal(const DevComm *dc, uint32_t slot, uint32_t value,
                           uint32_t first, uint32_t stride, uint32_t count,
                           int order) {
  uint32_t n = static_cast<uint32_t>(dc->size);
  uint32_t r = static_cast<uint32_t>(dc->rank);
  uint32_t word = slot * dc->inboxStride + r;
  if (order == kOrderSeqCst)
    fenceSeqCstSys();
  if (first + stride >= count) {
    uint32_t *flag = dc->inbox[entryRank(r, n, first)] + word;
    if (releases(order))
      storeReleaseSys(flag, value);
    else
      storeRelaxedSys(flag, value);
    return;
  }
  if (order != kOrderSeqCst && releases(order))
    fenceAcqRelSys();
  for (uint32_t j = first; j < count; j += stride)
    storeRelaxedSys(dc->inbox[entryRank(r, n, j)] + word, value);
}

/// What a wait waits for: entries 0..count-1 of this rank's inbox for
/// `slot` reaching `target`.
struct WaitCtx {
  const DevComm *dc;
  uint32_t slot;
  uint32_t target;
  uint32_t count;
  const char *what;
};

TLE_DEV_INLINE const uint32_t *entryFlag(const WaitCtx &w, uint32_t j) {
  const DevComm *dc = w.dc;
  uint32_t r = static_cast<uint32_t>(dc->rank);
  return dc->inbox[r] + w.slot * dc->inboxStride +
         entryRank(r, static_cast<uint32_t>(dc->size), j);
}

/// Bit q: rank q's entry has not reached the target.
TLE_DEV_INLINE uint32_t missingMask(const WaitCtx &w) {
  uint32_t n = static_cast<uint32_t>(w.dc->size);
  uint32_t mask = 0;
  for (uint32_t j = 0; j < w.count; ++j)
    if (!reached(loadRelaxedSys(entryFlag(w, j)), w.target))
      mask |= 1u << entryRank(static_cast<uint32_t>(w.dc->rank), n, j);
  return mask;
}

[[noreturn]] TLE_DEV_COLD void failTimeout(const WaitCtx &w,
                                           uint64_t elapsedNs) {
  const DevComm *dc = w.dc;
  failWithRecord(dc->error, dc->rank, dc->nBarriers, kDevErrTimeout, w.slot,
                 w.target, missingMask(w), 0, elapsedNs);
}

/// Bookkeeping of one waiting thread: failed polls, the clock every
/// kPollsPerClockRead of them (its first read starts the deadline), and on
/// the emulator a yield per failed poll.
struct PollClock {
  uint32_t polls = 0;
  uint64_t start = 0;
};

TLE_DEV_INLINE void onMiss(PollClock &c, const WaitCtx &w) {
  if constexpr (kPlatformYields) {
    WaitInfo info{w.dc, w.dc->rank, w.slot, w.target, missingMask(w), w.what};
    spinWait(info);
  }
  if (++c.polls % kPollsPerClockRead != 0)
    return;
  uint64_t now = nowNs();
  if (c.polls == kPollsPerClockRead)
    c.start = now;
  else if (w.dc->timeoutNs != 0 && now - c.start > w.dc->timeoutNs)
    failTimeout(w, now - c.start);
}

/// The hot loop: one flag, acquire (or relaxed) loads, nothing else until
/// a miss.
template <bool Acquire>
TLE_DEV_INLINE void pollOne(const WaitCtx &w, const uint32_t *flag) {
  PollClock c;
  while (
      !reached(Acquire ? loadAcquireSys(flag) : loadRelaxedSys(flag), w.target))
    onMiss(c, w);
}

/// Waits for entries first, first+stride, ... < w.count. One entry per
/// thread is the fast path (warp and block groups, grid pollers); a thread
/// that owns several polls them with relaxed loads, which pipeline, and
/// acquires once after with a fence.
TLE_DEV_INLINE void await(const WaitCtx &w, uint32_t first, uint32_t stride,
                          bool acquire) {
  if (first + stride >= w.count) {
    const uint32_t *flag = entryFlag(w, first);
    if (acquire)
      pollOne<true>(w, flag);
    else
      pollOne<false>(w, flag);
    return;
  }
  PollClock c;
  for (;;) {
    bool all = true;
    for (uint32_t j = first; j < w.count; j += stride)
      all &= reached(loadRelaxedSys(entryFlag(w, j)), w.target);
    if (all)
      break;
    onMiss(c, w);
  }
  if (acquire)
    fenceAcqRelSys();
}

/// The threads of a group that do the work: one per peer up to the group
/// size (at most kMaxRanks - 1 of them, all in the first warp). Only they,
/// and the group's rank 0 (which advances the epoch), validate and touch
/// memory; the others only take part in the group syncs.
TLE_DEV_INLINE uint32_t workerCount(const DevComm *dc, const Group &g) {
  return minU(static_cast<uint32_t>(dc->size) - 1, g.size);
}

TLE_DEV_INLINE void groupArrive(const void *comm, int coop, uint32_t index,
                                int order) {
  checkCoop(comm, index, coop, order);
  Group g = makeGroup(coop);
  groupSync(g);
  if (g.rank >= kMaxRanks)
    return;
  const DevComm *dc = checkSlot(comm, index);
  uint32_t workers = workerCount(dc, g);
  if (g.rank == 0)
    traceEvent("arrive", index, true);
  if (g.rank < workers) {
    uint32_t next = loadRelaxedGpu(dc->epochs + index) + 1;
    signal(dc, index, next, g.rank, workers, dc->size - 1u, order);
  }
}

/// wait, and with `arrive` first the fused sync (one validation, one epoch
/// load, no group sync between the halves: the arrive half's sync already
/// ordered the group's writes).
TLE_DEV_INLINE void groupWait(const void *comm, int coop, uint32_t index,
                              int order, bool arrive) {
  checkCoop(comm, index, coop, order);
  Group g = makeGroup(coop);
  if (arrive)
    groupSync(g);
  const DevComm *dc = nullptr;
  uint32_t next = 0;
  if (g.rank < kMaxRanks) {
    dc = checkSlot(comm, index);
    uint32_t workers = workerCount(dc, g);
    if (g.rank == 0)
      traceEvent(arrive ? "sync" : "wait", index, true);
    // Every reader of epochs[index] reads it before the group sync below;
    // rank 0 writes it after, so no reader sees the advanced epoch early.
    if (g.rank < workers || g.rank == 0)
      next = loadRelaxedGpu(dc->epochs + index) + 1;
    if (g.rank < workers) {
      if (arrive)
        signal(dc, index, next, g.rank, workers, dc->size - 1u, order);
      await(WaitCtx{dc, index, next, dc->size - 1u, "barrier wait"}, g.rank,
            workers, acquires(order));
    }
  }
  groupSync(g);
  if (g.rank == 0) {
    storeRelaxedGpu(dc->epochs + index, next);
    traceEvent(arrive ? "sync" : "wait", index, false);
  }
}

// The grid barrier. Inside a rank, CTAs meet on gridCount[s]; the last CTA
// to arrive publishes the rank's arrival to every rank, itself included, so
// that every CTA waits on the same n inbox entries. The counter reset and
// the epoch advance are published to the rank's own CTAs by the same
// release (their wait acquires it), which is why every order is at least
// acq_rel inside the rank: a relaxed grid barrier would let a CTA start the
// next round on a stale epoch or counter.

TLE_DEV_INLINE void gridArrive(const void *comm, uint32_t index, int order) {
  checkOrder(comm, index, order);
  syncBlock();
  if (threadRank() != 0)
    return;
  const DevComm *dc = checkSlot(comm, index);
  traceEvent("grid arrive", index, true);
  // Stable: epochs[s] changes only after every CTA of this rank arrived,
  // and this one has not yet.
  uint32_t next = loadRelaxedGpu(dc->epochs + index) + 1;
  *blockScratch() = next;
  // acq_rel at gpu scope: releases this CTA's writes (made visible to this
  // thread by the block sync) to the last CTA, and makes the last CTA
  // acquire every other CTA's. Inline PTX: LLVM 22 drops the ordering of
  // atomicrmw on NVPTX.
  uint32_t arrived = fetchAddAcqRelGpu(dc->gridCount + index, 1);
  if (arrived != gridBlocks() - 1)
    return;
  storeRelaxedGpu(dc->gridCount + index, 0);
  storeRelaxedGpu(dc->epochs + index, next);
  uint32_t n = static_cast<uint32_t>(dc->size);
  signal(dc, index, next, 0, 1, n,
         order == kOrderSeqCst ? kOrderSeqCst : kOrderAcqRel);
}

TLE_DEV_INLINE void gridWait(const void *comm, uint32_t index, int order) {
  checkOrder(comm, index, order);
  uint32_t t = threadRank();
  if (t < kWarpSize) {
    // Orders thread 0's scratch store (in arrive) before the pollers read
    // it; the warp is the first one, where all pollers live.
    syncWarp();
    if (t < kMaxRanks) {
      const DevComm *dc = checkSlot(comm, index);
      uint32_t n = static_cast<uint32_t>(dc->size);
      uint32_t pollers = minU(n, minU(kWarpSize, blockThreads()));
      if (t < pollers)
        await(WaitCtx{dc, index, *blockScratch(), n, "grid barrier wait"}, t,
              pollers, /*acquire=*/true);
    }
  }
  syncBlock();
}

TLE_DEV_INLINE void barrier(const void *comm, int coop, uint32_t index,
                            int order, int kind) {
  if (kind == 0)
    groupArrive(comm, coop, index, order);
  else
    groupWait(comm, coop, index, order, /*arrive=*/kind == 2);
}

TLE_DEV_INLINE void gridBarrier(const void *comm, uint32_t index, int order,
                                int kind) {
  if (kind != 1)
    gridArrive(comm, index, order);
  if (kind != 0)
    gridWait(comm, index, order);
}

TLE_DEV_INLINE void devBarrier(const void *comm, int team, uint32_t index,
                               int coop, int order, int scope, int kind) {
  if (TLE_UNLIKELY(team != kTeamIntra))
    failArgument(comm, index, kArgTeamKind, team);
  if (TLE_UNLIKELY(static_cast<uint32_t>(scope) > kScopeThread))
    failArgument(comm, index, kArgScope, scope);
  barrier(comm, coop, index, order, kind);
}

TLE_DEV_INLINE const SymMem *checkMem(const void *mem) {
  const SymMem *m = static_cast<const SymMem *>(mem);
  if (TLE_UNLIKELY(!m || m->magic != kSymMemMagic ||
                   static_cast<uint32_t>(m->size) - 1 >= kMaxRanks ||
                   static_cast<uint32_t>(m->rank) >=
                       static_cast<uint32_t>(m->size)))
    failNoRecord();
  return m;
}

[[noreturn]] TLE_DEV_COLD void failMem(const SymMem *m, uint32_t arg,
                                       uint64_t value) {
  failWithRecord(m->error, m->rank, 0, kDevErrBadArgument, 0, 0, 0,
                 (arg << 24) | static_cast<uint32_t>(value & 0xffffffu), 0);
}

/// Byte `offset` of rank `peer`'s copy. offset == bytes (one past the end)
/// is allowed, as in C++.
TLE_DEV_INLINE void *memPointer(const void *mem, uint64_t offset, int peer,
                                bool local) {
  const SymMem *m = checkMem(mem);
  if (local)
    peer = m->rank;
  else if (TLE_UNLIKELY(static_cast<uint32_t>(peer) >=
                        static_cast<uint32_t>(m->size)))
    failMem(m, kArgPeer, static_cast<uint32_t>(peer));
  if (TLE_UNLIKELY(offset > m->bytes))
    failMem(m, kArgOffset, offset);
  return static_cast<char *>(m->ptrs[peer]) + offset;
}

} // namespace tle::impl

// The ABI. TLE_DEVICE_API (device.h) makes these inline in the nvcc header
// build and external, kept definitions in the bitcode and host builds.

#if defined(__CUDACC__) && defined(TLE_DEVICE_EXPORT)
#define TLE_DEVICE_DEF TLE_DEVICE_API __attribute__((used))
#else
#define TLE_DEVICE_DEF TLE_DEVICE_API
#endif

TLE_DEVICE_DEF void flagcxIntraBarrierArriveS(const void *comm, int coopKind,
                                              uint32_t index, bool, int order) {
  tle::impl::barrier(comm, coopKind, index, order, 0);
}
TLE_DEVICE_DEF void flagcxIntraBarrierWaitS(const void *comm, int coopKind,
                                            uint32_t index, bool, int order) {
  tle::impl::barrier(comm, coopKind, index, order, 1);
}
TLE_DEVICE_DEF void flagcxIntraBarrierSyncS(const void *comm, int coopKind,
                                            uint32_t index, bool, int order) {
  tle::impl::barrier(comm, coopKind, index, order, 2);
}

TLE_DEVICE_DEF void flagcxDevBarrierArrive(const void *comm, int teamKind,
                                           uint32_t index, int, int coopKind,
                                           int order, int scope) {
  tle::impl::devBarrier(comm, teamKind, index, coopKind, order, scope, 0);
}
TLE_DEVICE_DEF void flagcxDevBarrierWait(const void *comm, int teamKind,
                                         uint32_t index, int, int coopKind,
                                         int order, int scope) {
  tle::impl::devBarrier(comm, teamKind, index, coopKind, order, scope, 1);
}
TLE_DEVICE_DEF void flagcxDevBarrierSync(const void *comm, int teamKind,
                                         uint32_t index, int, int coopKind,
                                         int order, int scope) {
  tle::impl::devBarrier(comm, teamKind, index, coopKind, order, scope, 2);
}

TLE_DEVICE_DEF void tleIntraGridBarrierArriveS(const void *comm, uint32_t index,
                                               bool, int order) {
  tle::impl::gridBarrier(comm, index, order, 0);
}
TLE_DEVICE_DEF void tleIntraGridBarrierWaitS(const void *comm, uint32_t index,
                                             bool, int order) {
  tle::impl::gridBarrier(comm, index, order, 1);
}
TLE_DEVICE_DEF void tleIntraGridBarrierSyncS(const void *comm, uint32_t index,
                                             bool, int order) {
  tle::impl::gridBarrier(comm, index, order, 2);
}

TLE_DEVICE_DEF int flagcxDevCommGetIntraRank(const void *comm) {
  return tle::impl::checkComm(comm)->rank;
}
TLE_DEVICE_DEF int flagcxDevCommGetIntraSize(const void *comm) {
  return tle::impl::checkComm(comm)->size;
}

TLE_DEVICE_DEF void *flagcxGetLocalPointerS(const void *mem, uint64_t offset) {
  return tle::impl::memPointer(mem, offset, 0, /*local=*/true);
}
TLE_DEVICE_DEF void *flagcxGetIntraPointerS(const void *mem, uint64_t offset,
                                            int peer) {
  return tle::impl::memPointer(mem, offset, peer, /*local=*/false);
}

TLE_DEVICE_DEF int32_t tleTritonBarrier(int64_t comm, int32_t barrierKind,
                                        int32_t groupKind, int32_t index,
                                        int32_t order) {
  const void *c = reinterpret_cast<const void *>(comm);
  uint32_t slot = static_cast<uint32_t>(index);
  if (TLE_UNLIKELY(static_cast<uint32_t>(barrierKind) > 2))
    tle::impl::failArgument(c, slot, tle::impl::kArgBarrierKind, barrierKind);
  if (groupKind == tle::kTritonGroupGrid)
    tle::impl::gridBarrier(c, slot, order, barrierKind);
  else
    tle::impl::barrier(c, groupKind, slot, order, barrierKind);
  return 0;
}
TLE_DEVICE_DEF int32_t tleTritonIntraRank(int64_t comm) {
  return tle::impl::checkComm(reinterpret_cast<const void *>(comm))->rank;
}
TLE_DEVICE_DEF int32_t tleTritonIntraSize(int64_t comm) {
  return tle::impl::checkComm(reinterpret_cast<const void *>(comm))->size;
}
TLE_DEVICE_DEF int64_t tleTritonLocalPointer(int64_t mem, int64_t offset) {
  return reinterpret_cast<int64_t>(
      tle::impl::memPointer(reinterpret_cast<const void *>(mem),
                            static_cast<uint64_t>(offset), 0, true));
}
TLE_DEVICE_DEF int64_t tleTritonIntraPointer(int64_t mem, int64_t offset,
                                             int32_t peer) {
  return reinterpret_cast<int64_t>(
      tle::impl::memPointer(reinterpret_cast<const void *>(mem),
                            static_cast<uint64_t>(offset), peer, false));
}

#endif // TLE_IMPL_BARRIER_H
