//===- Session.h - A barrier slot bound once --------------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The implementation of tle::BarrierSession (tle/session.h): the
// communicator is loaded and checked when the session opens and the epoch
// is kept in a register, so a barrier in a loop costs only the signal, the
// poll and the group syncs. The epoch word is still written on every wait,
// so stateless calls and later launches on the slot continue from where the
// session left it.
//
// Below it, the compiled sessions (tle.session_open / tle.session_barrier /
// tle.session_close, formed by tle-form-barrier-sessions and written by
// hand in Triton): the same halves, with the epoch in a value the caller
// carries through its loops instead of in a Session. The epoch word is
// read once, when the session opens; each wait writes it as the C++
// session's does, so it is current whenever the session ends.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_IMPL_SESSION_H
#define TLE_IMPL_SESSION_H

#include "tle/impl/BarrierFlags.h"
#include "tle/impl/Group.h"
#include "tle/impl/Trace.h"

namespace tle::impl {

struct Session {
  const void *comm;
  Comm c;
  Group g;
  uint32_t slot;
  uint32_t workers;
  uint32_t epoch;
};

/// Reports name the stateless function a session stands for.
constexpr abi::Fn kSessionFn = abi::Fn::flagcxIntraBarrierSyncS;

/// A session of slot `index` for the group `coop`, its communicator loaded
/// and checked (the epoch left 0): the C++ session's open and each of a
/// compiled session's barriers (compiledBarrier) bind one.
TLE_DEV_INLINE Session sessionBind(const void *comm, int coop, uint32_t index,
                                   int order, FnAt fn) {
  checkCoop(comm, index, coop, order, fn);
  Session s{};
  s.comm = comm;
  s.g = makeGroup(coop);
  s.slot = index;
  // Every thread loads and checks the communicator, as the stateless calls
  // do: a compiler may hoist a communicator load of the wait (its timeout)
  // out of a loop of barriers to threads that never wait, and that load
  // must read a real DevComm (with only the first warp loading, nvcc's
  // hoisted load read the null pointer's fields in the others).
  s.c = checkSlot(comm, index, s.g.rank, fn);
  if (s.g.rank < kWarpSize)
    s.workers = workerCount(s.c, s.g);
  return s;
}

TLE_DEV_INLINE Session sessionOpen(const void *comm, int coop, uint32_t index) {
  Session s = sessionBind(comm, coop, index, kOrderRelaxed, kSessionFn);
  if (s.g.rank < kWarpSize)
    s.epoch = loadRelaxedGpu(epochWord(s.c, index));
  return s;
}

/// `reconverge` is false only when the wait follows at once (sync).
TLE_DEV_INLINE void sessionArrive(Session &s, int order, bool reconverge,
                                  FnAt fn = kSessionFn) {
  checkOrder(s.comm, s.slot, order, fn);
  if (!TLE_MUTANT(17))
    groupSync(s.g);
  if (s.g.rank < kWarpSize) {
    if (s.g.rank == 0)
      traceEvent(s.c, kBarrierArrive, s.g.kind, s.slot, order, kTraceInstant);
    if (s.g.rank < s.workers)
      arriveAt<true>(s.c, s.slot, s.g.rank, s.workers, order, s.epoch + 1);
    // Reconverge before the caller's next code (see groupArrive).
    if (reconverge && s.g.kind != kCoopThread)
      syncWarp();
  }
}

/// With `Status`, returns the group's status (see groupWait); `own`, if
/// given, receives the calling thread's (nonzero only in a worker whose
/// wait gave up).
template <bool Status = false>
TLE_DEV_INLINE uint32_t sessionWait(Session &s, int order, FnAt fn = kSessionFn,
                                    uint32_t *own = nullptr) {
  checkOrder(s.comm, s.slot, order, fn);
  uint32_t status = 0;
  if (s.g.rank < kWarpSize) {
    // Every lane holds the epoch in a register, so rank 0 stores the next
    // one before it polls: nothing waits for the store, and it completes
    // during the poll instead of in front of the next arrive's release,
    // which would wait for it (with the store after the poll, as the
    // stateless wait must order it, that wait is an L2 round trip per
    // round). While the session lives nothing else reads the word.
    uint32_t next = s.epoch + 1;
    if (s.g.rank == 0) {
      traceEvent(s.c, kBarrierWait, s.g.kind, s.slot, order, kTraceBegin);
      if (!TLE_MUTANT(23))
        storeRelaxedGpu(epochWord(s.c, s.slot), next);
    }
    if (s.g.rank < s.workers)
      status =
          await(WaitCtx{s.c, s.slot, next, s.c.size - 1, "barrier wait", fn},
                s.g.rank, s.workers, acquires(order));
    if (s.g.rank == 0)
      traceEvent(s.c, kBarrierWait, s.g.kind, s.slot, order, kTraceEnd);
    s.epoch = next;
  }
  if (own)
    *own = status;
  if constexpr (Status)
    return groupSyncStatus(s.g, status);
  if (!TLE_MUTANT(18))
    groupSync(s.g);
  return 0;
}

//===----------------------------------------------------------------------===//
// Compiled sessions
//===----------------------------------------------------------------------===//

/// Opens a compiled session on slot `index`: the checks of a stateless call
/// and the slot's epoch, which every thread of the group returns (the last
/// write of the word, a wait's, was followed by a group sync, or by the end
/// of an earlier launch, so all read the same).
TLE_DEV_INLINE uint32_t compiledOpen(const void *comm, int coop, uint32_t index,
                                     FnAt fn) {
  checkCoop(comm, index, coop, kOrderRelaxed, fn);
  Group g = makeGroup(coop);
  Comm c = checkSlot(comm, index, g.rank, fn);
  return loadRelaxedGpu(epochWord(c, index));
}

/// The barrier half `kind` of a compiled session whose epoch is `epoch`;
/// returns the epoch after it (one more after a wait or sync). It runs the
/// C++ session's own halves on a Session of the communicator, loaded and
/// checked as by a stateless call: those loads are invariant (loadConst),
/// so a compiler hoists them out of the loop that carries the epoch, and
/// what is left per round is the signal, the poll, the group syncs and, as
/// in the C++ session, group rank 0's store of the next epoch into the
/// slot's word before it polls. That store is what keeps the word current
/// for whatever follows the session (a stateless call, a later session or
/// launch, a graph replay); it also made the round faster, not slower: on
/// one H200 with two ranks sharing it, tlec's loop at 1 CTA per rank went
/// from 1.06x the C++ session to 0.99x with it (the same halves without
/// the store: 1.10x; docs/gpu-notes.md, runs 37 and 38). With `Status`,
/// `*status` receives the calling thread's own status (nonzero only in a
/// worker whose wait gave up), with the plain group sync: a reduction of
/// the group's status in every round cost Triton's loops 0.05 us per round
/// (run 26), so the Triton session reduces it once, at its close
/// (tleTritonSessionClose).
template <bool Status = false>
TLE_DEV_INLINE uint32_t compiledBarrier(const void *comm, int coop,
                                        uint32_t index, int order, int kind,
                                        uint32_t epoch, uint32_t *status,
                                        FnAt fn) {
  Session s = sessionBind(comm, coop, index, order, fn);
  s.epoch = epoch;
  // On the emulator a block's thread that neither signals nor waits (past
  // the workers, not the group's rank 0) does nothing between a sync's two
  // group syncs, and takes both in one step: a switch of fibers per sync
  // was most of its cost. GPUs run the syncs as written below.
  if constexpr (kPlatformYields) {
    if (kind == kBarrierSync && s.g.kind == kCoopBlock && s.g.rank != 0 &&
        s.g.rank >= s.workers && !TLE_MUTANT(17) && !TLE_MUTANT(18)) {
      checkOrder(s.comm, s.slot, order, fn);
      syncBlockTwice();
      if constexpr (Status)
        *status = 0;
      return TLE_MUTANT(60) ? epoch : epoch + 1;
    }
  }
  // As the stateless halves: arrive and sync order the group's writes
  // before the signal; a wait alone does not sync first.
  if (kind != kBarrierWait)
    sessionArrive(s, order, /*reconverge=*/kind == kBarrierArrive, fn);
  if (kind == kBarrierArrive)
    return epoch;
  uint32_t own = 0;
  sessionWait(s, order, fn, &own);
  if constexpr (Status)
    *status = own;
  return TLE_MUTANT(60) ? epoch : epoch + 1;
}

/// What a thread whose session's wait gave up does in each later barrier
/// half `kind` of the session: the group's syncs of compiledBarrier and
/// nothing else, so that it keeps step with the threads of its group that
/// did not wait (they do not know yet; the close tells them).
TLE_DEV_INLINE void compiledSkip(int coop, int kind) {
  Group g = makeGroup(coop);
  if (kind != kBarrierWait)
    groupSync(g);
  if (kind == kBarrierArrive) {
    if (g.rank < kWarpSize && g.kind != kCoopThread)
      syncWarp();
    return;
  }
  groupSync(g);
}

/// Closes a compiled session: the checks of a stateless call, and nothing
/// else. The slot's word already holds `epoch` (the last wait stored it
/// before its poll, and its group sync ordered the store before every
/// thread's next read of the word), so stateless calls, later sessions and
/// later launches continue from it; `epoch` stays in the entry point's
/// signature for the ABI (abi.def).
TLE_DEV_INLINE void compiledClose(const void *comm, int coop, uint32_t index,
                                  uint32_t epoch, FnAt fn) {
  (void)epoch;
  checkCoop(comm, index, coop, kOrderRelaxed, fn);
  Group g = makeGroup(coop);
  (void)checkSlot(comm, index, g.rank, fn);
}

} // namespace tle::impl

#endif // TLE_IMPL_SESSION_H
