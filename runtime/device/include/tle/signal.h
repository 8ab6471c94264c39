//===- signal.h - Point-to-point signals, the typed C++ API -----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Signal words for C++ kernels, with the enumerations of tle/abi.h. Every
// rank of a communicator owns nSignals 64-bit words (tleConfig_t::nSignals),
// zero at creation. A signal adds to word `sig` of rank `peer` (itself
// included) as a release: what the group wrote before it is visible to a
// thread of `peer` whose wait (acquire) observed the new value. Only a
// word's owner waits on it, reads it and resets it. Words only grow, except
// by a reset; waits compare unsigned values. `group` is kCoopThread,
// kCoopWarp or kCoopBlock (kCoopTileSpan and kCoopLanes run as a warp): the
// group syncs, its rank 0 signals or polls, the group syncs again; every
// member of the group makes the call. A reset must not race with a signal
// to the same word (the increment could be lost): reset words between
// phases that a barrier or another signal separates. Out-of-range
// arguments and a wait past the deadline are reported like the barrier's
// (docs/device-library.md), and a wait gives up like the barrier's after
// tleCommAbort, a peer's death or a failure under onError = return (a
// status with trySignalWait). The extern "C" flagcxDevSignal* functions of
// tle/device.h are thin wrappers over these. Every call takes a trailing
// tle::CallSite, as tle/barrier.h's do.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_SIGNAL_H
#define TLE_SIGNAL_H

#include "tle/abi.h"
#include "tle/detail/DevComm.h"
#include "tle/impl/CallSite.h"
#include "tle/impl/SignalOps.h"
#include "tle/impl/Team.h"

namespace tle {

/// Adds 1 to word `sig` of rank `peer`.
TLE_DEV_INLINE void signalInc(const void *comm, int peer, uint32_t sig,
                              CoopKind group,
                              CallSite site = CallSite::current()) {
  impl::CallScope scope(site);
  impl::signalAdd(comm, peer, sig, 1, group,
                  impl::FnAt(abi::Fn::flagcxDevSignalInc, impl::siteOf(site)));
}
/// Adds `value` to word `sig` of rank `peer`.
TLE_DEV_INLINE void signalAdd(const void *comm, int peer, uint32_t sig,
                              uint64_t value, CoopKind group,
                              CallSite site = CallSite::current()) {
  impl::CallScope scope(site);
  impl::signalAdd(comm, peer, sig, value, group,
                  impl::FnAt(abi::Fn::flagcxDevSignalAdd, impl::siteOf(site)));
}
/// Waits until this rank's word `sig` is >= `least`.
TLE_DEV_INLINE void signalWait(const void *comm, uint32_t sig, uint64_t least,
                               CoopKind group,
                               MemoryOrder order = kOrderAcquire,
                               CallSite site = CallSite::current()) {
  impl::CallScope scope(site);
  impl::signalWait(
      comm, sig, least, group, order,
      impl::FnAt(abi::Fn::flagcxDevWaitSignal, impl::siteOf(site)));
}
/// The same, returning a status (as tle::tryBarrier): 0, or the
/// tleResult_t value of a wait that gave up (tleAborted, tlePeerFailure,
/// tleTimeout under onError = return; docs/runtime.md, "Faults"), the same
/// in every thread of the group. signalWait gives up the same way, without
/// saying so (tle::commFailed does).
[[nodiscard]] TLE_DEV_INLINE int
trySignalWait(const void *comm, uint32_t sig, uint64_t least, CoopKind group,
              MemoryOrder order = kOrderAcquire,
              CallSite site = CallSite::current()) {
  impl::CallScope scope(site);
  return static_cast<int>(impl::signalWait</*Status=*/true>(
      comm, sig, least, group, order,
      impl::FnAt(abi::Fn::flagcxDevWaitSignal, impl::siteOf(site))));
}
/// signalInc and signalAdd with `peer` numbered in team `team` (INTRA: a
/// rank of this node; INTER: a node, the same local rank there; WORLD: a
/// world rank). A peer on another node is reached through the network,
/// which delivers the add after the data the group wrote before it.
TLE_DEV_INLINE void signalInc(const void *comm, TeamKind team, int peer,
                              uint32_t sig, CoopKind group,
                              CallSite site = CallSite::current()) {
  impl::CallScope scope(site);
  const impl::FnAt fn(abi::Fn::flagcxDevSignalInc, impl::siteOf(site));
  impl::checkSignalArgs(comm, sig, impl::kHasTeam, team, 0, 0, fn);
  impl::teamSignalAdd(comm, team, peer, sig, 1, group, fn);
}
TLE_DEV_INLINE void signalAdd(const void *comm, TeamKind team, int peer,
                              uint32_t sig, uint64_t value, CoopKind group,
                              CallSite site = CallSite::current()) {
  impl::CallScope scope(site);
  const impl::FnAt fn(abi::Fn::flagcxDevSignalAdd, impl::siteOf(site));
  impl::checkSignalArgs(comm, sig, impl::kHasTeam, team, 0, 0, fn);
  impl::teamSignalAdd(comm, team, peer, sig, value, group, fn);
}
/// This rank's word `sig`, read by the calling thread alone.
TLE_DEV_INLINE uint64_t readSignal(const void *comm, uint32_t sig,
                                   MemoryOrder order = kOrderAcquire,
                                   CallSite site = CallSite::current()) {
  impl::CallScope scope(site);
  return impl::readSignal(comm, sig, order, abi::Fn::flagcxDevReadSignal);
}
/// Sets this rank's word `sig` to 0.
TLE_DEV_INLINE void resetSignal(const void *comm, uint32_t sig,
                                CallSite site = CallSite::current()) {
  impl::CallScope scope(site);
  impl::resetSignal(comm, sig, abi::Fn::flagcxDevResetSignal);
}

} // namespace tle

#endif // TLE_SIGNAL_H
