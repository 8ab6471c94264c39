//===- Barrier.h - The barrier of a thread, warp or block group -----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// arrive, wait and sync on one slot for the thread, warp and block groups
// (Group.h), built from BarrierFlags.h's halves. docs/design.md ("The
// barrier") is the specification; docs/device-library.md explains the choices.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_IMPL_BARRIER_H
#define TLE_IMPL_BARRIER_H

#include "tle/impl/BarrierFlags.h"
#include "tle/impl/Group.h"
#include "tle/impl/Rail.h"
#include "tle/impl/Trace.h"

namespace tle::impl {

/// The inbox slot and epoch word of team `Team`'s slot `index`: INTRA's
/// own, or WORLD's intra half (kInboxSets). With Team INTRA this is
/// `index` itself, so INTRA's code is what it was before teams.
template <int Team>
TLE_DEV_INLINE uint32_t intraSlot(const Comm &c, uint32_t index) {
  return Team == kTeamWorld ? c.nBarriers + index : index;
}

/// The arrive of the INTRA barrier on slot `index`, or with Team WORLD the
/// arrive of WORLD's slot `index` (its intra half; docs/design.md, "Teams").
template <int Team = kTeamIntra>
TLE_DEV_INLINE void groupArrive(const void *comm, int coop, uint32_t index,
                                int order, FnAt fn) {
  checkCoop(comm, index, coop, order, fn);
  Group g = makeGroup(coop);
  // Every thread loads and checks the communicator, before the group sync
  // and before any branch (see loadComm: the loads then overlap the sync,
  // and a compiler may hoist them out of a loop of barriers).
  Comm c = checkSlot(comm, index, g.rank, fn);
  if constexpr (Team == kTeamWorld)
    checkWorld(c, fn);
  uint32_t slot = intraSlot<Team>(c, index);
  if (!TLE_MUTANT(10))
    groupSync(g);
  if (g.rank >= kWarpSize)
    return;
  uint32_t workers = workerCount(c, g);
  if (g.rank == 0)
    traceEvent(c, kBarrierArrive, g.kind, slot, order, kTraceInstant);
  if (g.rank < workers)
    arriveAt(c, slot, g.rank, workers, order);
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
///
/// With `Status`, returns what the group agrees on (groupSyncStatus): 0, or
/// the status of a wait that gave up; without, 0 and the plain final sync.
///
/// With Team WORLD, the wait of WORLD's slot `index`: the same on WORLD's
/// intra slot, then, before the final group sync, the inter half by the
/// group's rank 0 (railArrive and railWait on WORLD's net word for the
/// slot). Unless `order` is relaxed the intra half acquires and the inter
/// half's add releases what it acquired, which forwards every node-local
/// rank's writes to the other nodes (docs/design.md, "Teams").
template <bool Status = false, int Team = kTeamIntra>
TLE_DEV_INLINE uint32_t groupWait(const void *comm, int coop, uint32_t index,
                                  int order, bool arrive, FnAt fn) {
  checkCoop(comm, index, coop, order, fn);
  Group g = makeGroup(coop);
  // Every thread checks, before the group sync (see groupArrive), so that a
  // failing check aborts all of them: a thread left waiting at a sync below
  // for one that trapped would turn the trap into an illegal-instruction
  // error that can beat the error record.
  Comm c = checkSlot(comm, index, g.rank, fn);
  World world{0, 1};
  if constexpr (Team == kTeamWorld)
    world = checkWorld(c, fn);
  uint32_t slot = intraSlot<Team>(c, index);
  bool intraAcquire = Team == kTeamWorld && !TLE_MUTANT(29)
                          ? order != kOrderRelaxed
                          : acquires(order);
  // On the emulator a block's thread past the first warp does nothing
  // between a sync's two group syncs (the first warp signals, waits and
  // reconverges): it takes both in one step (see compiledBarrier).
  if constexpr (kPlatformYields && !Status) {
    if (arrive && g.kind == kCoopBlock && g.rank >= kWarpSize &&
        !TLE_MUTANT(11) && !TLE_MUTANT(13)) {
      syncBlockTwice();
      return 0;
    }
  }
  if (arrive && !TLE_MUTANT(11))
    groupSync(g);
  uint32_t status = 0;
  if (g.rank < kWarpSize) {
    uint32_t workers = workerCount(c, g);
    uint32_t next = 0;
    int kind = arrive ? kBarrierSync : kBarrierWait;
    if (g.rank == 0)
      traceEvent(c, kind, g.kind, slot, order, kTraceBegin);
    if (g.rank < workers && arrive)
      arriveAt(c, slot, g.rank, workers, order);
    if (g.rank < workers || g.rank == 0)
      next = loadRelaxedGpu(epochWord(c, slot)) + 1;
    WaitCtx w{c,
              slot,
              next,
              c.size - 1,
              Team == kTeamWorld ? "world barrier wait (intra half)"
                                 : "barrier wait",
              fn};
    if (workers > 1) {
      if (!TLE_MUTANT(12))
        syncWarp();
      if (g.rank == 0 && !TLE_MUTANT(19))
        storeRelaxedGpu(epochWord(c, slot), next);
      if (g.rank < workers)
        status = await(w, g.rank, workers, intraAcquire);
    } else if (g.rank == 0) {
      if (workers == 1)
        status = await(w, 0, 1, intraAcquire);
      if (!TLE_MUTANT(20))
        storeRelaxedGpu(epochWord(c, slot), next);
    }
    if constexpr (Team == kTeamWorld) {
      // Every worker's acquire before rank 0's release: the inter half
      // forwards what the whole intra half saw.
      if (g.kind != kCoopThread)
        syncWarp();
      if (g.rank == 0 && status == 0 && !TLE_MUTANT(27)) {
        uint32_t word = loadConst(&c.dc->nSignalWords) + c.nBarriers + index;
        railArrive(c, world, word, kOrderRelease);
        status =
            railWait(c, world, word, 3 * c.nBarriers + index, index,
                     TLE_MUTANT(36) ? acquires(order) : order != kOrderRelaxed,
                     kTeamWorld, fn);
      }
    }
    if (g.rank == 0)
      traceEvent(c, kind, g.kind, slot, order, kTraceEnd);
  }
  if constexpr (Status)
    return groupSyncStatus(g, status);
  if (!TLE_MUTANT(13))
    groupSync(g);
  return 0;
}

/// The barrier half `kind` (a BarrierKind) for a FlagCX coop kind; with
/// `Status`, returns the group's status (0 for arrive, which never waits).
template <bool Status = false>
TLE_DEV_INLINE uint32_t barrier(const void *comm, int coop, uint32_t index,
                                int order, int kind, FnAt fn) {
  if (kind == kBarrierArrive) {
    groupArrive(comm, coop, index, order, fn);
    return 0;
  }
  return groupWait<Status>(comm, coop, index, order,
                           /*arrive=*/kind == kBarrierSync, fn);
}

/// The INTER barrier's half `kind` on INTER's slot `index`: the group
/// syncs, its rank 0 arrives (railArrive), waits (railWait) or both, the
/// group syncs again after a wait. With `Status`, as barrier.
template <bool Status = false>
TLE_DEV_INLINE uint32_t interBarrier(const void *comm, int coop, uint32_t index,
                                     int order, int kind, FnAt fn) {
  checkCoop(comm, index, coop, order, fn);
  Group g = makeGroup(coop);
  Comm c = checkSlot(comm, index, g.rank, fn);
  World world = checkWorld(c, fn);
  uint32_t word = loadConst(&c.dc->nSignalWords) + index;
  // The slot as traces and the emulator's slot checks see it: INTER's own.
  uint32_t slot = 2 * c.nBarriers + index;
  // On the emulator every thread but rank 0 takes a wait's or a sync's two
  // group syncs in one step (see compiledBarrier).
  if constexpr (kPlatformYields && !Status) {
    if (kind != kBarrierArrive && g.kind == kCoopBlock && g.rank != 0) {
      syncBlockTwice();
      return 0;
    }
  }
  groupSync(g);
  uint32_t status = 0;
  if (g.rank == 0) {
    if (kind == kBarrierArrive) {
      traceEvent(c, kind, g.kind, slot, order, kTraceInstant);
      railArrive(c, world, word, order);
    } else {
      traceEvent(c, kind, g.kind, slot, order, kTraceBegin);
      if (kind == kBarrierSync)
        railArrive(c, world, word, order);
      status = railWait(c, world, word, slot, index, acquires(order),
                        kTeamInter, fn);
      traceEvent(c, kind, g.kind, slot, order, kTraceEnd);
    }
  }
  if (kind == kBarrierArrive)
    return 0;
  if constexpr (Status)
    return groupSyncStatus(g, status);
  groupSync(g);
  return 0;
}

/// The barrier half `kind` of team `team` (a TeamKind) on that team's slot
/// `index`, for a FlagCX coop kind (grid is INTRA's only: its own entry
/// points). With `Status`, as barrier.
template <bool Status = false>
TLE_DEV_INLINE uint32_t teamBarrier(const void *comm, int team, int coop,
                                    uint32_t index, int order, int kind,
                                    FnAt fn) {
  if (team == kTeamIntra)
    return barrier<Status>(comm, coop, index, order, kind, fn);
  if (team == kTeamInter)
    return interBarrier<Status>(comm, coop, index, order, kind, fn);
  if (TLE_UNLIKELY(team != kTeamWorld))
    failArgument(comm, index, fn, kArgTeamKind, team, kTeamWorld);
  if (kind == kBarrierArrive) {
    groupArrive<kTeamWorld>(comm, coop, index, order, fn);
    return 0;
  }
  return groupWait<Status, kTeamWorld>(comm, coop, index, order,
                                       /*arrive=*/kind == kBarrierSync, fn);
}

/// FlagCX's unified form: a team, and a scope that is one of the four (the
/// barrier is always system-wide: peers are other GPUs).
TLE_DEV_INLINE void devBarrier(const void *comm, int team, uint32_t index,
                               int coop, int order, int scope, int kind,
                               FnAt fn) {
  if (TLE_UNLIKELY(static_cast<uint32_t>(scope) > kScopeThread))
    failArgument(comm, index, fn, kArgScope, scope, kScopeThread);
  teamBarrier(comm, team, coop, index, order, kind, fn);
}

} // namespace tle::impl

#endif // TLE_IMPL_BARRIER_H
