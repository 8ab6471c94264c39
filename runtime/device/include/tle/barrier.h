//===- barrier.h - The typed C++ device API ---------------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The barrier, rank queries and buffer pointers for C++ kernels, with the
// enumerations of tle/abi.h instead of plain ints. The extern "C" FlagCX
// ABI of tle/device.h is a thin wrapper over these. `group` may be any
// CoopKind, kCoopGrid included (every CTA of a co-resident launch on every
// rank). Out-of-range values are reported like the ABI reports them. For a
// barrier in a loop, tle/session.h loads the communicator once.
// Every call takes a trailing tle::CallSite (impl/CallSite.h) whose default
// is the caller's file and line: the emulator's reports and traces name it.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_BARRIER_H
#define TLE_BARRIER_H

#include "tle/abi.h"
#include "tle/detail/DevComm.h"
#include "tle/impl/Barrier.h"
#include "tle/impl/CallSite.h"
#include "tle/impl/GridBarrier.h"
#include "tle/impl/Pointer.h"

namespace tle {

/// Barrier half `kind` on slot `index` of `comm` for `group`.
TLE_DEV_INLINE void barrier(const void *comm, BarrierKind kind, CoopKind group,
                            uint32_t index, MemoryOrder order,
                            CallSite site = CallSite::current()) {
  impl::CallScope scope(site);
  const impl::FnAt fn(abi::Fn::flagcxIntraBarrierSyncS, impl::siteOf(site));
  if (group == kCoopGrid)
    impl::gridBarrier(comm, index, order, kind, fn);
  else
    impl::barrier(comm, group, index, order, kind, fn);
}
TLE_DEV_INLINE void barrierArrive(const void *comm, CoopKind group,
                                  uint32_t index, MemoryOrder order,
                                  CallSite site = CallSite::current()) {
  barrier(comm, kBarrierArrive, group, index, order, site);
}
TLE_DEV_INLINE void barrierWait(const void *comm, CoopKind group,
                                uint32_t index, MemoryOrder order,
                                CallSite site = CallSite::current()) {
  barrier(comm, kBarrierWait, group, index, order, site);
}
TLE_DEV_INLINE void barrierSync(const void *comm, CoopKind group,
                                uint32_t index, MemoryOrder order,
                                CallSite site = CallSite::current()) {
  barrier(comm, kBarrierSync, group, index, order, site);
}

/// The same, returning a status: 0, or the tleResult_t value of a wait
/// that gave up (tleAborted, tlePeerFailure, tleTimeout under onError =
/// return; docs/runtime.md, "Faults"), the same in every thread of the
/// group. The group agrees on it in its final sync (a bar.red for a block),
/// which the void calls above do not pay for.
[[nodiscard]] TLE_DEV_INLINE int
tryBarrier(const void *comm, BarrierKind kind, CoopKind group, uint32_t index,
           MemoryOrder order, CallSite site = CallSite::current()) {
  impl::CallScope scope(site);
  const impl::FnAt fn(abi::Fn::flagcxIntraBarrierSyncS, impl::siteOf(site));
  if (group == kCoopGrid)
    return static_cast<int>(
        impl::gridBarrier</*Status=*/true>(comm, index, order, kind, fn));
  return static_cast<int>(
      impl::barrier</*Status=*/true>(comm, group, index, order, kind, fn));
}
[[nodiscard]] TLE_DEV_INLINE int
tryBarrierWait(const void *comm, CoopKind group, uint32_t index,
               MemoryOrder order, CallSite site = CallSite::current()) {
  return tryBarrier(comm, kBarrierWait, group, index, order, site);
}
[[nodiscard]] TLE_DEV_INLINE int
tryBarrierSync(const void *comm, CoopKind group, uint32_t index,
               MemoryOrder order, CallSite site = CallSite::current()) {
  return tryBarrier(comm, kBarrierSync, group, index, order, site);
}

/// The barrier over team `team` (docs/design.md, "Teams"): kTeamIntra the
/// ranks of this node, kTeamInter this local rank on every node (a rail),
/// kTeamWorld every rank of every node. `group` is thread, warp or block
/// (the grid barrier is INTRA's alone: the other teams report it); `index`
/// is the slot, whose state each team keeps apart. FlagCX's
/// flagcxDevBarrier* with the enumerations.
TLE_DEV_INLINE void barrier(const void *comm, TeamKind team, BarrierKind kind,
                            CoopKind group, uint32_t index, MemoryOrder order,
                            CallSite site = CallSite::current()) {
  impl::CallScope scope(site);
  impl::teamBarrier(
      comm, team, group, index, order, kind,
      impl::FnAt(abi::Fn::flagcxDevBarrierSync, impl::siteOf(site)));
}
TLE_DEV_INLINE void barrierArrive(const void *comm, TeamKind team,
                                  CoopKind group, uint32_t index,
                                  MemoryOrder order,
                                  CallSite site = CallSite::current()) {
  barrier(comm, team, kBarrierArrive, group, index, order, site);
}
TLE_DEV_INLINE void barrierWait(const void *comm, TeamKind team, CoopKind group,
                                uint32_t index, MemoryOrder order,
                                CallSite site = CallSite::current()) {
  barrier(comm, team, kBarrierWait, group, index, order, site);
}
TLE_DEV_INLINE void barrierSync(const void *comm, TeamKind team, CoopKind group,
                                uint32_t index, MemoryOrder order,
                                CallSite site = CallSite::current()) {
  barrier(comm, team, kBarrierSync, group, index, order, site);
}
/// tryBarrier over team `team`: 0, or the tleResult_t value of a wait that
/// gave up, the same in the whole group.
[[nodiscard]] TLE_DEV_INLINE int
tryBarrier(const void *comm, TeamKind team, BarrierKind kind, CoopKind group,
           uint32_t index, MemoryOrder order,
           CallSite site = CallSite::current()) {
  impl::CallScope scope(site);
  return static_cast<int>(impl::teamBarrier</*Status=*/true>(
      comm, team, group, index, order, kind,
      impl::FnAt(abi::Fn::flagcxDevBarrierSync, impl::siteOf(site))));
}

/// 0 while `comm` is usable, else the tleResult_t value its waits give up
/// with. One load of host memory: call it after a barrier, not in a loop.
TLE_DEV_INLINE int commFailed(const void *comm,
                              CallSite site = CallSite::current()) {
  impl::CallScope scope(site);
  return impl::commFailed(comm, abi::Fn::tleCommFailed);
}

/// This rank and the number of ranks of `comm`.
TLE_DEV_INLINE int intraRank(const void *comm,
                             CallSite site = CallSite::current()) {
  impl::CallScope scope(site);
  return impl::intraRank(comm, abi::Fn::flagcxDevCommGetIntraRank);
}
TLE_DEV_INLINE int intraSize(const void *comm,
                             CallSite site = CallSite::current()) {
  impl::CallScope scope(site);
  return impl::intraSize(comm, abi::Fn::flagcxDevCommGetIntraSize);
}

/// Byte `offset` of symmetric buffer `mem` in this rank's copy, or in rank
/// `peer`'s copy as mapped here.
TLE_DEV_INLINE void *localPointer(const void *mem, uint64_t offset,
                                  CallSite site = CallSite::current()) {
  impl::CallScope scope(site);
  return impl::memPointer(mem, offset, 0, /*local=*/true,
                          abi::Fn::flagcxGetLocalPointerS);
}
TLE_DEV_INLINE void *intraPointer(const void *mem, uint64_t offset, int peer,
                                  CallSite site = CallSite::current()) {
  impl::CallScope scope(site);
  return impl::memPointer(mem, offset, peer, /*local=*/false,
                          abi::Fn::flagcxGetIntraPointerS);
}

} // namespace tle

#endif // TLE_BARRIER_H
