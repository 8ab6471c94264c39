//===- session.h - A barrier slot bound once, for C++ kernels ----*- C++
//-*-===//
//
// tle::BarrierSession: the intra-node barrier for CUDA C++ kernels (and
// C++ kernels on the CPU emulator) that call it in a loop. It takes the
// same communicator, cooperative group and slot as the stateless ABI of
// tle/device.h, but loads and checks them once, when it is constructed, and
// keeps the slot's epoch in a register; every barrier then costs only the
// signal, the poll and the group syncs. Semantics, orders and failure
// reports are those of flagcxIntraBarrier*S. Rules: every thread of the
// group constructs the session (it is a group operation like the barrier);
// while a session is live, its slot is used through it only.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_SESSION_H
#define TLE_SESSION_H

#include "tle/device.h"
#include "tle/impl/Barrier.h"

namespace tle {

class BarrierSession {
public:
  TLE_DEV_INLINE BarrierSession(const void *comm, int coopKind, uint32_t index)
      : s(impl::sessionOpen(comm, coopKind, index)) {}
  /// Signal every peer (release half of `order`).
  TLE_DEV_INLINE void arrive(int order) {
    impl::sessionArrive(s, order, /*reconverge=*/true);
  }
  /// Wait for every peer (acquire half of `order`).
  TLE_DEV_INLINE void wait(int order) { impl::sessionWait(s, order); }
  TLE_DEV_INLINE void sync(int order) {
    impl::sessionArrive(s, order, /*reconverge=*/false);
    impl::sessionWait(s, order);
  }

private:
  impl::Session s;
};

} // namespace tle

#endif // TLE_SESSION_H
