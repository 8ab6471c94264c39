//===- GridBarrier.h - Every CTA of the launch on every rank ----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The grid barrier (TLE's group `grid`): inside a rank, CTAs meet on
// gridCount[s]; the last CTA to arrive publishes the rank's arrival to
// every rank, itself included, so that every CTA waits on the same n inbox
// entries. The counter reset and the epoch advance are published to the
// rank's own CTAs by the same release (their wait acquires it), which is
// why every order is at least acq_rel inside the rank: a relaxed grid
// barrier would let a CTA start the next round on a stale epoch or counter.
// The launch must be co-resident (cooperative).
//
//===----------------------------------------------------------------------===//

#ifndef TLE_IMPL_GRIDBARRIER_H
#define TLE_IMPL_GRIDBARRIER_H

#include "tle/impl/BarrierFlags.h"
#include "tle/impl/Trace.h"

namespace tle::impl {

TLE_DEV_INLINE void gridArrive(const void *comm, uint32_t index, int order,
                               FnAt fn) {
  checkOrder(comm, index, order, fn);
  if (!TLE_MUTANT(14))
    syncBlock();
  if (threadRank() != 0)
    return;
  Comm c = checkSlot(comm, index, 0, fn);
  traceEvent(c, kBarrierArrive, kCoopGrid, index, order, kTraceInstant);
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
  if (!TLE_MUTANT(22))
    storeRelaxedGpu(count, 0);
  if (!TLE_MUTANT(21))
    storeRelaxedGpu(epochWord(c, index), next);
  publishAll(c, index, next, order);
}

/// With `Status`, returns the CTA's agreement on the status (see groupWait).
template <bool Status = false>
TLE_DEV_INLINE uint32_t gridWait(const void *comm, uint32_t index, int order,
                                 FnAt fn) {
  checkOrder(comm, index, order, fn);
  uint32_t t = threadRank();
  uint32_t status = 0;
  if (t < kWarpSize) {
    // The whole first warp checks before its warp sync (see groupWait).
    Comm c = checkSlot(comm, index, t, fn);
    // Orders thread 0's scratch store (in arrive) before the pollers read
    // it; the warp is the first one, where all pollers live.
    if (!TLE_MUTANT(15))
      syncWarp();
    uint32_t pollers = minU(c.size, minU(kWarpSize, blockThreads()));
    if (t == 0)
      traceEvent(c, kBarrierWait, kCoopGrid, index, order, kTraceBegin);
    if (t < pollers)
      status = await(
          WaitCtx{c, index, *blockScratch(), c.size, "grid barrier wait", fn},
          t, pollers, /*acquire=*/!TLE_MUTANT(4) || acquires(order));
    if (t == 0)
      traceEvent(c, kBarrierWait, kCoopGrid, index, order, kTraceEnd);
  }
  if constexpr (Status)
    return syncBlockMax(status);
  if (!TLE_MUTANT(16))
    syncBlock();
  return 0;
}

/// The grid barrier half `kind` (a BarrierKind); with `Status`, returns the
/// CTA's status (0 for arrive).
template <bool Status = false>
TLE_DEV_INLINE uint32_t gridBarrier(const void *comm, uint32_t index, int order,
                                    int kind, FnAt fn) {
  if (kind != kBarrierWait)
    gridArrive(comm, index, order, fn);
  if (kind != kBarrierArrive)
    return gridWait<Status>(comm, index, order, fn);
  return 0;
}

} // namespace tle::impl

#endif // TLE_IMPL_GRIDBARRIER_H
