//===- Group.h - Cooperative groups as the barrier sees them ----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A barrier call is made by a group of threads together: one thread, a
// warp, or the whole CTA (the grid barrier, every CTA of the launch, lives
// in GridBarrier.h). The group synchronizes around the call; a few of its
// threads in its first warp ("workers") do the signalling and polling.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_IMPL_GROUP_H
#define TLE_IMPL_GROUP_H

#include "tle/impl/Check.h"

namespace tle::impl {

/// The caller's rank in its group and the group's size. TileSpan and Lanes
/// run as a warp (docs/device-library.md).
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

/// groupSync, and the group's agreement on a wait's status: the largest
/// `status` of its threads (a tleResult_t value; 0 when no thread gave up).
/// Used in place of the final groupSync by the status-returning calls only,
/// so that the void entry points keep their plain sync.
TLE_DEV_INLINE uint32_t groupSyncStatus(const Group &g, uint32_t status) {
  if (g.kind == kCoopBlock)
    return syncBlockMax(status);
  if (g.kind == kCoopWarp)
    return syncWarpMax(status);
  return status;
}

/// FlagCX's coop kinds (thread .. lanes) and a valid order; the grid group
/// has its own entry points.
TLE_DEV_INLINE void checkCoop(const void *comm, uint32_t index, int coop,
                              int order, FnAt fn) {
  if (TLE_UNLIKELY(static_cast<uint32_t>(coop) > kMaxFlagcxCoop))
    failArgument(comm, index, fn, kArgCoopKind, coop, kMaxFlagcxCoop);
  checkOrder(comm, index, order, fn);
}

/// The threads of a group that do the work: one per peer up to the group
/// size (at most kMaxRanks - 1 of them, all in the first warp). Only the
/// group's first warp reads the communicator; only the workers and the
/// group's rank 0 (which advances the epoch) touch barrier memory; the
/// other threads only take part in the group syncs.
TLE_DEV_INLINE uint32_t workerCount(const Comm &c, const Group &g) {
  return minU(c.size - 1, g.size);
}

} // namespace tle::impl

#endif // TLE_IMPL_GROUP_H
