//===- session.h - A barrier slot bound once, for C++ kernels ---*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// tle::BarrierSession: the intra-node barrier for CUDA C++ kernels (and C++
// kernels on the CPU emulator) that call it in a loop. It takes the same
// communicator, group and slot as tle/barrier.h, but loads and checks them
// once, when it is constructed, and keeps the slot's epoch in a register.
// Semantics, orders and failure reports are those of the stateless calls.
// Rules: every thread of the group constructs the session (it is a group
// operation like the barrier); while a session is live, its slot is used
// through it only; a session is not copyable (two copies would each advance
// their own epoch).
// Over the INTER and WORLD teams (the constructor that takes a TeamKind) a
// session is the team's barrier of tle/barrier.h bound to its arguments:
// the rail's half counts in the network's words, which the session does
// not cache, so only an INTRA session saves the per-call epoch traffic.
// Every call takes a trailing tle::CallSite, as tle/barrier.h's do.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_SESSION_H
#define TLE_SESSION_H

#include "tle/barrier.h"
#include "tle/impl/Session.h"

namespace tle {

class BarrierSession {
public:
  /// Binds slot `index` of `comm` for `group` (thread, warp or block).
  TLE_DEV_INLINE BarrierSession(const void *comm, CoopKind group,
                                uint32_t index,
                                CallSite site = CallSite::current())
      : s(open(comm, group, index, site)) {}
  /// Binds slot `index` of team `team` (INTRA: as above; INTER, WORLD: the
  /// team's barrier, tle::barrier(comm, team, ...), on every call).
  TLE_DEV_INLINE BarrierSession(const void *comm, TeamKind team, CoopKind group,
                                uint32_t index,
                                CallSite site = CallSite::current())
      : s(team == kTeamIntra ? open(comm, group, index, site)
                             : impl::Session{}),
        team(team), group(group) {
    if (team != kTeamIntra) {
      s.comm = comm;
      s.slot = index;
    }
  }
  BarrierSession(const BarrierSession &) = delete;
  BarrierSession &operator=(const BarrierSession &) = delete;

  /// Signal every peer (release half of `order`).
  TLE_DEV_INLINE void arrive(MemoryOrder order,
                             CallSite site = CallSite::current()) {
    if (team != kTeamIntra)
      return barrier(s.comm, team, kBarrierArrive, group, s.slot, order, site);
    impl::CallScope scope(site);
    impl::sessionArrive(s, order, /*reconverge=*/true);
  }
  /// Wait for every peer (acquire half of `order`).
  TLE_DEV_INLINE void wait(MemoryOrder order,
                           CallSite site = CallSite::current()) {
    if (team != kTeamIntra)
      return barrier(s.comm, team, kBarrierWait, group, s.slot, order, site);
    impl::CallScope scope(site);
    impl::sessionWait(s, order, at(site));
  }
  TLE_DEV_INLINE void sync(MemoryOrder order,
                           CallSite site = CallSite::current()) {
    if (team != kTeamIntra)
      return barrier(s.comm, team, kBarrierSync, group, s.slot, order, site);
    impl::CallScope scope(site);
    impl::sessionArrive(s, order, /*reconverge=*/false);
    impl::sessionWait(s, order, at(site));
  }
  /// wait and sync returning a status, as tle::tryBarrier: 0, or the
  /// tleResult_t value of a wait that gave up, the same in the whole group.
  [[nodiscard]] TLE_DEV_INLINE int
  tryWait(MemoryOrder order, CallSite site = CallSite::current()) {
    if (team != kTeamIntra)
      return tryBarrier(s.comm, team, kBarrierWait, group, s.slot, order, site);
    impl::CallScope scope(site);
    return static_cast<int>(
        impl::sessionWait</*Status=*/true>(s, order, at(site)));
  }
  [[nodiscard]] TLE_DEV_INLINE int
  trySync(MemoryOrder order, CallSite site = CallSite::current()) {
    if (team != kTeamIntra)
      return tryBarrier(s.comm, team, kBarrierSync, group, s.slot, order, site);
    impl::CallScope scope(site);
    impl::sessionArrive(s, order, /*reconverge=*/false);
    return static_cast<int>(
        impl::sessionWait</*Status=*/true>(s, order, at(site)));
  }

private:
  /// The session's entry point in reports, with the caller's site.
  TLE_DEV_INLINE static impl::FnAt at(CallSite site) {
    return impl::FnAt(impl::kSessionFn, impl::siteOf(site));
  }
  TLE_DEV_INLINE static impl::Session open(const void *comm, CoopKind group,
                                           uint32_t index, CallSite site) {
    impl::CallScope scope(site);
    return impl::sessionOpen(comm, group, index);
  }

  impl::Session s;
  TeamKind team = kTeamIntra;
  CoopKind group = kCoopBlock; ///< used by INTER and WORLD sessions only
};

} // namespace tle

#endif // TLE_SESSION_H
