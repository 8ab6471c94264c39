//===- Trace.h - Barrier events for traces and the emulator -----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A barrier group's rank 0 reports when its arrive, wait or sync on a slot
// begins or ends. Two listeners: the CPU emulator (its trace, and its checks
// that one slot serves one group at a time), through the platform layer's
// emuBarrierEvent, which is empty on GPUs; and the communicator's trace ring
// (DevComm::trace, tleCommTraceStart), which both builds fill. With no ring
// the cost is one more load among the communicator's (loadComm issues them
// together, before the group sync, and a loop of barriers hoists them all)
// and a branch on a register that is never taken; the recording itself is
// out of line.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_IMPL_TRACE_H
#define TLE_IMPL_TRACE_H

#include "tle/impl/Check.h"

namespace tle::impl {

/// Appends one event to `ring`: the next index, then the fields, then the
/// index (plus 1) in `seq`, so that a reader can tell a record that a
/// writer wrapping around the ring overwrote.
TLE_DEV_COLD void recordTrace(TraceRing *ring, int kind, int coop,
                              uint32_t slot, int order, int phase) {
  uint64_t index = fetchAddRelaxed(loadConst(&ring->next), 1);
  TraceEvent *e = &ring->events[index & (loadConst(&ring->capacity) - 1)];
  e->ns = nowNs();
  e->block = blockRank();
  e->thread = threadRank();
  e->slot = slot;
  e->kind = static_cast<uint8_t>(kind);
  e->coop = static_cast<uint8_t>(coop);
  e->order = static_cast<uint8_t>(order);
  e->phase = static_cast<uint8_t>(phase);
  e->seq = index + 1;
}

/// The event `phase` (a TracePhase) of a barrier half `kind` (a
/// BarrierKind) by a group of kind `coop` on `slot`.
TLE_DEV_INLINE void traceEvent(const Comm &c, int kind, int coop, uint32_t slot,
                               int order, int phase) {
  emuBarrierEvent(c.dc, kind, coop, slot, order, phase);
  if (TLE_UNLIKELY(c.trace != nullptr))
    recordTrace(c.trace, kind, coop, slot, order, phase);
}

/// The event `phase` of a signal's add or a signal wait (`kind` a
/// TraceKind) by a group of kind `coop` on word `sig`: the emulator's trace
/// only. The trace ring records barriers alone, so a signal costs no load
/// of DevComm::trace (docs/runtime.md, "Traces").
TLE_DEV_INLINE void traceSignal(const DevComm *dc, int kind, int coop,
                                uint32_t sig, int order, int phase) {
  emuBarrierEvent(dc, kind, coop, sig, order, phase);
}

} // namespace tle::impl

#endif // TLE_IMPL_TRACE_H
