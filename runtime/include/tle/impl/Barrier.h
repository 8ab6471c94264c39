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
// inbox[r][s * inboxStride + q], is written only by q and holds the epoch q
// reached (q adds 1 per arrive). arrive(release): the group synchronizes
// (bar.sync / bar.warp.sync order every write of the group before the
// elected thread's next operation), then the elected thread adds 1 with a
// release reduction at system scope.
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

#include <stddef.h>

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
/// launch. Later failures find the record taken and only abort, but not
/// before the record is complete: often every lane of a warp fails at once,
/// and a losing lane's trap would end the launch while the winner writes.
constexpr uint32_t kRecordWaitPolls = 1u << 20;

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
  } else if (rec) {
    for (uint32_t i = 0;
         i < kRecordWaitPolls && loadAcquireSys(&rec->state) != 2; ++i) {
    }
  }
  abortLaunch();
}

/// The pointer is not a communicator (null, foreign or of another layout
/// version): nothing in it can be trusted, not even its error record. The
/// launch fails with no record; the host reports it as a bad communicator.
[[noreturn]] TLE_DEV_COLD void failNoRecord() { abortLaunch(); }

[[noreturn]] TLE_DEV_COLD void failComm(const DevComm *dc, uint32_t code,
                                        uint32_t slot, uint32_t aux) {
  failWithRecord(loadConst(&dc->error), loadConst(&dc->rank),
                 loadConst(&dc->nBarriers), code, slot, 0, 0, aux, 0);
}

/// The fields of a checked communicator that every call needs.
struct Comm {
  const DevComm *dc;
  uint32_t rank;
  uint32_t size;
  uint32_t nBarriers;
  uint32_t stride;         ///< inboxStride
  uint32_t *epochs;        ///< this rank's epochs[]
  uint32_t entry;          ///< the calling lane's entry (see entryRank)
  uint32_t *outEntry;      ///< outFlags[entry]
  const uint32_t *inEntry; ///< inFlags[entry]
};

static_assert(offsetof(DevComm, version) == 4 &&
                  offsetof(DevComm, size) == 12 &&
                  offsetof(DevComm, rank) == 8 &&
                  offsetof(DevComm, nBarriers) == 16 &&
                  offsetof(DevComm, inboxStride) == 20 && alignof(DevComm) >= 8,
              "checkComm loads DevComm's leading fields in pairs");

/// Classifies and reports what loadComm's one combined check rejected.
[[noreturn]] TLE_DEV_COLD void failCheck(const DevComm *dc, uint32_t index,
                                         bool checkIndex) {
  if (loadConst(&dc->magic) != kDevCommMagic ||
      loadConst(&dc->version) != kDevCommVersion)
    failNoRecord();
  uint32_t size = static_cast<uint32_t>(loadConst(&dc->size));
  uint32_t rank = static_cast<uint32_t>(loadConst(&dc->rank));
  if (size - 1 >= kMaxRanks || rank >= size)
    failComm(dc, kDevErrBadComm, 0, size);
  if (checkIndex && index >= loadConst(&dc->nBarriers))
    failComm(dc, kDevErrIndexOutOfRange, index, 0);
  // A misaligned epoch or flag pointer.
  failComm(dc, kDevErrBadComm, 0, size);
}

/// Loads and checks what a call needs from the communicator, including the
/// calling lane's flag pointers for `entry`. Every load is issued before the
/// one combined check, so together they cost one load latency: an acquire
/// poll invalidates L1, so each level of dependent loads is an L2 round trip
/// in front of the signal (measured on H200: the arrive's pointer loaded
/// after the check made arrive alone take about 1 µs). The loads of a
/// communicator that then fails the check read only its own struct.
TLE_DEV_INLINE Comm loadComm(const void *comm, uint32_t index, bool checkIndex,
                             uint32_t entry) {
  const DevComm *dc = static_cast<const DevComm *>(comm);
  if (TLE_UNLIKELY(!dc))
    failNoRecord();
  uint32_t magic, version;
  Comm c;
  c.dc = dc;
  c.entry = entry < kMaxRanks ? entry : 0;
  loadConstPair(&dc->magic, magic, version);
  loadConstPair(&dc->rank, c.rank, c.size);
  loadConstPair(&dc->nBarriers, c.nBarriers, c.stride);
  c.epochs = loadConst(&dc->epochs);
  c.outEntry = loadConst(&dc->outFlags[c.entry]);
  c.inEntry = loadConst(&dc->inFlags[c.entry]);
  // The pointers' alignment is checked too (a misaligned flag or epoch
  // pointer means a corrupt communicator), which also makes the branch
  // depend on their loads: otherwise compilers sink the loads past it and
  // they cost a second round trip.
  uintptr_t misaligned = (reinterpret_cast<uintptr_t>(c.epochs) |
                          reinterpret_cast<uintptr_t>(c.outEntry) |
                          reinterpret_cast<uintptr_t>(c.inEntry)) &
                         (sizeof(uint32_t) - 1);
  bool bad = (magic != kDevCommMagic) | (version != kDevCommVersion) |
             (c.size - 1 >= kMaxRanks) | (c.rank >= c.size) |
             (checkIndex & (index >= c.nBarriers)) | (misaligned != 0);
  if (TLE_UNLIKELY(bad))
    failCheck(dc, index, checkIndex);
  return c;
}

TLE_DEV_INLINE Comm checkComm(const void *comm) {
  return loadComm(comm, 0, false, 0);
}

/// checkComm, and the slot must exist: an index out of range is reported
/// before any inbox or epoch word is touched. `entry`: the flags the
/// calling lane will use first (its rank in the group).
TLE_DEV_INLINE Comm checkSlot(const void *comm, uint32_t index,
                              uint32_t entry = 0) {
  return loadComm(comm, index, true, entry);
}

[[noreturn]] TLE_DEV_COLD void failArgument(const void *comm, uint32_t index,
                                            uint32_t arg, int value) {
  failComm(checkComm(comm).dc, kDevErrBadArgument, index,
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

/// Entry j (0 <= j < n) of rank r's round: (r + 1 + j) mod n. Entries
/// 0..n-2 are the peers; entry n-1 is r itself (the grid barrier counts it).
TLE_DEV_INLINE uint32_t entryRank(const Comm &c, uint32_t j) {
  uint32_t q = c.rank + 1 + j;
  return q >= c.size ? q - c.size : q;
}
/// Our word in entry j's inbox for `slot` (preloaded for the lane's own
/// entry, else one load independent of rank and size: DevComm::outFlags).
TLE_DEV_INLINE uint32_t *outFlag(const Comm &c, uint32_t slot, uint32_t j) {
  return (j == c.entry ? c.outEntry : loadConst(&c.dc->outFlags[j])) +
         slot * c.stride;
}
/// Entry j's word in our inbox for `slot`.
TLE_DEV_INLINE const uint32_t *inFlag(const Comm &c, uint32_t slot,
                                      uint32_t j) {
  return (j == c.entry ? c.inEntry : loadConst(&c.dc->inFlags[j])) +
         slot * c.stride;
}
TLE_DEV_INLINE uint32_t *epochWord(const Comm &c, uint32_t slot) {
  return c.epochs + slot;
}

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

/// Arrival of a thread-, warp- or block-group: adds 1 to our word in the
/// inbox of peers first, first+stride, ... < size-1. Since each such word
/// counts our arrivals on the slot, it equals our epoch after the arrive,
/// as DESIGN.md specifies, without loading the epoch first: the epoch load
/// moves to the wait, where it overlaps the flight of the signal.
/// One peer per thread: a release (or relaxed) reduction. Several: one
/// fence, then relaxed reductions, which pipeline instead of each release
/// waiting for the previous one.
TLE_DEV_INLINE void arriveAt(const Comm &c, uint32_t slot, uint32_t first,
                             uint32_t stride, int order) {
  uint32_t count = c.size - 1;
  if (order == kOrderSeqCst)
    fenceSeqCstSys();
  if (first + stride >= count) {
    if (releases(order))
      addReleaseSys(outFlag(c, slot, first), 1);
    else
      addRelaxedSys(outFlag(c, slot, first), 1);
    return;
  }
  if (order != kOrderSeqCst && releases(order))
    fenceAcqRelSys();
  for (uint32_t j = first; j < count; j += stride)
    addRelaxedSys(outFlag(c, slot, j), 1);
}

/// The grid barrier's publication: stores `value` into entries 0..size-1
/// (every peer and ourselves) with one fence first.
TLE_DEV_INLINE void publishAll(const Comm &c, uint32_t slot, uint32_t value,
                               int order) {
  if (order == kOrderSeqCst)
    fenceSeqCstSys();
  else
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
};

/// Bit q: rank q's entry has not reached the target.
TLE_DEV_INLINE uint32_t missingMask(const WaitCtx &w) {
  uint32_t mask = 0;
  for (uint32_t j = 0; j < w.count; ++j)
    if (!reached(loadRelaxedSys(inFlag(w.c, w.slot, j)), w.target))
      mask |= 1u << entryRank(w.c, j);
  return mask;
}

[[noreturn]] TLE_DEV_COLD void failTimeout(const void *comm, uint32_t slot,
                                           uint32_t target, uint32_t count,
                                           uint64_t elapsedNs) {
  WaitCtx w{checkComm(comm), slot, target, count, nullptr};
  failWithRecord(loadConst(&w.c.dc->error), w.c.rank, w.c.nBarriers,
                 kDevErrTimeout, slot, target, missingMask(w), 0, elapsedNs);
}

/// Bookkeeping of one waiting thread: failed polls, the clock every
/// kPollsPerClockRead of them (its first read starts the deadline), and on
/// the emulator a yield per failed poll.
struct PollClock {
  uint32_t polls = 0;
  uint64_t start = 0;
};

TLE_DEV_INLINE void onMiss(PollClock &k, const WaitCtx &w) {
  if constexpr (kPlatformYields) {
    WaitInfo info{w.c.dc,         static_cast<int32_t>(w.c.rank),
                  w.slot,         w.target,
                  missingMask(w), w.what};
    spinWait(info);
  }
  if (++k.polls % kPollsPerClockRead != 0)
    return;
  uint64_t now = nowNs();
  uint64_t timeout = loadConst(&w.c.dc->timeoutNs);
  if (k.polls == kPollsPerClockRead)
    k.start = now;
  else if (timeout != 0 && now - k.start > timeout)
    failTimeout(w.c.dc, w.slot, w.target, w.count, now - k.start);
}

/// The hot loop: one flag, acquire (or relaxed) loads, nothing else until
/// a miss.
template <bool Acquire>
TLE_DEV_INLINE void pollOne(const WaitCtx &w, const uint32_t *flag) {
  PollClock k;
  while (
      !reached(Acquire ? loadAcquireSys(flag) : loadRelaxedSys(flag), w.target))
    onMiss(k, w);
}

/// Waits for entries first, first+stride, ... < w.count. One entry per
/// thread is the fast path (warp and block groups, grid pollers); a thread
/// that owns several polls them with relaxed loads, which pipeline, and
/// acquires once after with a fence.
TLE_DEV_INLINE void await(const WaitCtx &w, uint32_t first, uint32_t stride,
                          bool acquire) {
  if (first + stride >= w.count) {
    const uint32_t *flag = inFlag(w.c, w.slot, first);
    if (acquire)
      pollOne<true>(w, flag);
    else
      pollOne<false>(w, flag);
    return;
  }
  PollClock k;
  for (;;) {
    bool all = true;
    for (uint32_t j = first; j < w.count; j += stride)
      all &= reached(loadRelaxedSys(inFlag(w.c, w.slot, j)), w.target);
    if (all)
      break;
    onMiss(k, w);
  }
  if (acquire)
    fenceAcqRelSys();
}

/// The threads of a group that do the work: one per peer up to the group
/// size (at most kMaxRanks - 1 of them, all in the first warp). Only the
/// group's first warp reads the communicator; only the workers and the
/// group's rank 0 (which advances the epoch) touch barrier memory; the
/// other threads only take part in the group syncs.
TLE_DEV_INLINE uint32_t workerCount(const Comm &c, const Group &g) {
  return minU(c.size - 1, g.size);
}

TLE_DEV_INLINE void groupArrive(const void *comm, int coop, uint32_t index,
                                int order) {
  checkCoop(comm, index, coop, order);
  Group g = makeGroup(coop);
  groupSync(g);
  if (g.rank >= kWarpSize)
    return;
  // The whole first warp checks, as in groupWait.
  Comm c = checkSlot(comm, index, g.rank);
  uint32_t workers = workerCount(c, g);
  if (g.rank == 0)
    traceEvent("arrive", index, true);
  if (g.rank < workers)
    arriveAt(c, index, g.rank, workers, order);
  // Reconverge the first warp before returning. Lanes that returned early
  // would run the caller's next code (the work an arrive/wait split exists
  // to overlap) while the signalling lanes wait to be scheduled: measured
  // on H200, the signal then left only after the work, and the split gave
  // no overlap at all.
  if (g.kind != kCoopThread)
    syncWarp();
}

/// wait, and with `arrive` first the fused sync (one validation, no group
/// sync between the halves: the arrive half's sync already ordered the
/// group's writes).
///
/// The epoch. Group rank 0 advances epochs[s] before the final group sync:
/// a store still in flight when the next arrive's release fence executes
/// would make that fence wait for it. With several workers (all in the
/// group's first warp) it does so before polling, after a warp sync that
/// orders every worker's read of the old epoch before the store. With one
/// worker (two ranks, or a small group) that worker is group rank 0 itself
/// and stores after its poll instead, so that the poll's first load leaves
/// together with the epoch's load rather than after it: when the peer
/// already arrived (an arrive/wait split around enough work) the wait then
/// costs one load latency, not two. The next reads are in the next call,
/// after its group sync.
TLE_DEV_INLINE void groupWait(const void *comm, int coop, uint32_t index,
                              int order, bool arrive) {
  checkCoop(comm, index, coop, order);
  Group g = makeGroup(coop);
  if (arrive)
    groupSync(g);
  if (g.rank < kWarpSize) {
    // Every lane of the first warp checks, so that a failing check aborts
    // all of them: a lane left waiting at the warp sync below for a lane
    // that trapped would turn the trap into an illegal-instruction error
    // that can beat the error record.
    Comm c = checkSlot(comm, index, g.rank);
    uint32_t workers = workerCount(c, g);
    uint32_t next = 0;
    if (g.rank == 0)
      traceEvent(arrive ? "sync" : "wait", index, true);
    if (g.rank < workers && arrive)
      arriveAt(c, index, g.rank, workers, order);
    if (g.rank < workers || g.rank == 0)
      next = loadRelaxedGpu(epochWord(c, index)) + 1;
    WaitCtx w{c, index, next, c.size - 1, "barrier wait"};
    if (workers > 1) {
      syncWarp();
      if (g.rank == 0)
        storeRelaxedGpu(epochWord(c, index), next);
      if (g.rank < workers)
        await(w, g.rank, workers, acquires(order));
    } else if (g.rank == 0) {
      if (workers == 1)
        await(w, 0, 1, acquires(order));
      storeRelaxedGpu(epochWord(c, index), next);
    }
    if (g.rank == 0)
      traceEvent(arrive ? "sync" : "wait", index, false);
  }
  groupSync(g);
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
  Comm c = checkSlot(comm, index);
  traceEvent("grid arrive", index, true);
  // Stable: epochs[s] changes only after every CTA of this rank arrived,
  // and this one has not yet.
  uint32_t next = loadRelaxedGpu(epochWord(c, index)) + 1;
  *blockScratch() = next;
  // acq_rel at gpu scope: releases this CTA's writes (made visible to this
  // thread by the block sync) to the last CTA, and makes the last CTA
  // acquire every other CTA's. Inline PTX: LLVM 22 drops the ordering of
  // atomicrmw on NVPTX.
  uint32_t *count = loadConst(&c.dc->gridCount) + index;
  if (fetchAddAcqRelGpu(count, 1) != gridBlocks() - 1)
    return;
  storeRelaxedGpu(count, 0);
  storeRelaxedGpu(epochWord(c, index), next);
  publishAll(c, index, next, order);
}

TLE_DEV_INLINE void gridWait(const void *comm, uint32_t index, int order) {
  checkOrder(comm, index, order);
  uint32_t t = threadRank();
  if (t < kWarpSize) {
    // The whole first warp checks before its warp sync (see groupWait).
    Comm c = checkSlot(comm, index, t);
    // Orders thread 0's scratch store (in arrive) before the pollers read
    // it; the warp is the first one, where all pollers live.
    syncWarp();
    uint32_t pollers = minU(c.size, minU(kWarpSize, blockThreads()));
    if (t < pollers)
      await(WaitCtx{c, index, *blockScratch(), c.size, "grid barrier wait"}, t,
            pollers, /*acquire=*/true);
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

[[noreturn]] TLE_DEV_COLD void failMem(const SymMem *m, uint32_t arg,
                                       uint64_t value) {
  failWithRecord(loadConst(&m->error), loadConst(&m->rank), 0,
                 kDevErrBadArgument, 0, 0, 0,
                 (arg << 24) | static_cast<uint32_t>(value & 0xffffffu), 0);
}

/// Byte `offset` of rank `peer`'s copy (ours when `local`). offset == bytes
/// (one past the end) is allowed, as in C++.
TLE_DEV_INLINE void *memPointer(const void *mem, uint64_t offset, int peer,
                                bool local) {
  const SymMem *m = static_cast<const SymMem *>(mem);
  if (TLE_UNLIKELY(!m || loadConst(&m->magic) != kSymMemMagic))
    failNoRecord();
  uint32_t rank = static_cast<uint32_t>(loadConst(&m->rank));
  uint32_t size = static_cast<uint32_t>(loadConst(&m->size));
  if (TLE_UNLIKELY(size - 1 >= kMaxRanks || rank >= size))
    failNoRecord();
  uint32_t q = local ? rank : static_cast<uint32_t>(peer);
  if (TLE_UNLIKELY(q >= size))
    failMem(m, kArgPeer, q);
  if (TLE_UNLIKELY(offset > loadConst(&m->bytes)))
    failMem(m, kArgOffset, offset);
  return static_cast<char *>(loadConst(&m->ptrs[q])) + offset;
}

/// A slot bound once (tle::BarrierSession, tle/session.h): the
/// communicator is loaded and checked when the session opens and the epoch
/// is kept in a register, so a barrier in a loop costs only the signal, the
/// poll and the group syncs. The stateless ABI above reloads the
/// communicator on every call, and after an acquire (which invalidates L1)
/// that reload is an L2 round trip in front of the signal. The epoch word is
/// still written on every wait, so stateless calls and later launches on the
/// slot continue from where the session left it.
struct Session {
  const void *comm;
  Comm c;
  Group g;
  uint32_t slot;
  uint32_t workers;
  uint32_t epoch;
};

TLE_DEV_INLINE Session sessionOpen(const void *comm, int coop, uint32_t index) {
  checkCoop(comm, index, coop, kOrderRelaxed);
  Session s{};
  s.comm = comm;
  s.g = makeGroup(coop);
  s.slot = index;
  if (s.g.rank < kWarpSize) {
    s.c = checkSlot(comm, index, s.g.rank);
    s.workers = workerCount(s.c, s.g);
    s.epoch = loadRelaxedGpu(epochWord(s.c, index));
  }
  return s;
}

/// `reconverge` is false only when the wait follows at once (sync).
TLE_DEV_INLINE void sessionArrive(Session &s, int order, bool reconverge) {
  checkOrder(s.comm, s.slot, order);
  groupSync(s.g);
  if (s.g.rank < kWarpSize) {
    if (s.g.rank < s.workers)
      arriveAt(s.c, s.slot, s.g.rank, s.workers, order);
    // Reconverge before the caller's next code (see groupArrive).
    if (reconverge && s.g.kind != kCoopThread)
      syncWarp();
  }
}

TLE_DEV_INLINE void sessionWait(Session &s, int order) {
  checkOrder(s.comm, s.slot, order);
  if (s.g.rank < kWarpSize) {
    // Every lane holds the epoch in a register, so rank 0 can store it after
    // its poll (see groupWait) whatever the number of workers.
    uint32_t next = s.epoch + 1;
    if (s.g.rank < s.workers)
      await(WaitCtx{s.c, s.slot, next, s.c.size - 1, "barrier wait"}, s.g.rank,
            s.workers, acquires(order));
    if (s.g.rank == 0)
      storeRelaxedGpu(epochWord(s.c, s.slot), next);
    s.epoch = next;
  }
  groupSync(s.g);
}

} // namespace tle::impl

// The ABI, defined where device.h includes this file (CUDA builds and the
// library's own host build); tle/session.h includes it elsewhere for the
// inline implementation alone.
#if defined(__CUDACC__) || defined(TLE_DEVICE_EXPORT)

// TLE_DEVICE_API (device.h) makes these inline in the nvcc header
// build and external definitions in the bitcode and host builds. The bitcode
// does not mark them `used`: a consumer that links the library (tlec,
// Triton's extern_libs) must be free to drop what its kernel does not call.
#define TLE_DEVICE_DEF TLE_DEVICE_API

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
  return static_cast<int>(tle::impl::checkComm(comm).rank);
}
TLE_DEVICE_DEF int flagcxDevCommGetIntraSize(const void *comm) {
  return static_cast<int>(tle::impl::checkComm(comm).size);
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
  return flagcxDevCommGetIntraRank(reinterpret_cast<const void *>(comm));
}
TLE_DEVICE_DEF int32_t tleTritonIntraSize(int64_t comm) {
  return flagcxDevCommGetIntraSize(reinterpret_cast<const void *>(comm));
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

#endif // __CUDACC__ || TLE_DEVICE_EXPORT

#endif // TLE_IMPL_BARRIER_H
