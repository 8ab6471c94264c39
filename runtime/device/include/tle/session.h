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
                                uint32_t index)
      : s(impl::sessionOpen(comm, group, index)) {}
  BarrierSession(const BarrierSession &) = delete;
  BarrierSession &operator=(const BarrierSession &) = delete;

  /// Signal every peer (release half of `order`).
  TLE_DEV_INLINE void arrive(MemoryOrder order) {
    impl::sessionArrive(s, order, /*reconverge=*/true);
  }
  /// Wait for every peer (acquire half of `order`).
  TLE_DEV_INLINE void wait(MemoryOrder order) { impl::sessionWait(s, order); }
  TLE_DEV_INLINE void sync(MemoryOrder order) {
    impl::sessionArrive(s, order, /*reconverge=*/false);
    impl::sessionWait(s, order);
  }
  /// wait and sync returning a status, as tle::tryBarrier: 0, or the
  /// tleResult_t value of a wait that gave up, the same in the whole group.
  [[nodiscard]] TLE_DEV_INLINE int tryWait(MemoryOrder order) {
    return static_cast<int>(impl::sessionWait</*Status=*/true>(s, order));
  }
  [[nodiscard]] TLE_DEV_INLINE int trySync(MemoryOrder order) {
    impl::sessionArrive(s, order, /*reconverge=*/false);
    return static_cast<int>(impl::sessionWait</*Status=*/true>(s, order));
  }

private:
  impl::Session s;
};

} // namespace tle

#endif // TLE_SESSION_H
