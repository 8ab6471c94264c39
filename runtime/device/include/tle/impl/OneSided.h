//===- OneSided.h - Put, get, counters, shadows and flush -------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// FlagCX's one-sided data movement (docs/design.md, "One-sided transfers"):
// a put copies bytes of this rank's copy of a symmetric buffer into a team
// member's copy, a get the reverse, a put-value stores one 64-bit word; a
// put may then add to the peer's signal word (as a release after the data)
// and to this rank's counter once the source may be reused. On this node
// the group copies through the peer pointer, every thread a share, in
// 16-byte vectors where both sides allow; past it the network carries the
// transfer (Net.h: netCopy; over NCCL GIN, NetNccl.h's GIN put), delivering
// the data before the signal and the counter, and a get's data by the next
// flush (GIN has no get: checkNetData refuses it). Every argument is checked
// before any byte moves: a bad one is a located report (rank, function,
// value and bound), never a partial copy.
//
// Memory model. INTRA put: a release or acq_rel order fences before the
// copy (the data the caller wrote is ordered before the copy's stores for
// whoever acquires them); after the copy the group syncs and its rank 0
// adds to the signal with a release (cumulative: it publishes the whole
// group's copy, as SignalOps.h's adds do), so a waiter that acquires the
// signal sees the data. FlagCX also fences in every thread there; the
// group sync makes that fence redundant, and it costs a system fence per
// thread in the latency of a small put. The local counter's add is a
// release after the copy's loads: whoever acquires it (flagcxDevWaitCounter)
// may overwrite the source. INTRA get: acquire or acq_rel fences after the
// copy. The final group sync makes the group's whole transfer done for
// every member when the call returns.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_IMPL_ONESIDED_H
#define TLE_IMPL_ONESIDED_H

#include "tle/impl/Net.h"
#include "tle/impl/Team.h"

namespace tle::impl {

/// What a put does besides the data, at the peer (remote) or here (local).
enum class Action : uint8_t {
  None,
  SigInc, ///< add 1 to a signal word
  SigAdd, ///< add `value` to a signal word
  CtrInc, ///< add 1 to a counter
};
struct ActionArg {
  Action kind = Action::None;
  uint32_t index = 0; ///< the signal or counter
  uint64_t value = 0; ///< SigAdd's value (1 for SigInc and CtrInc)
};
TLE_DEV_INLINE ActionArg sigInc(uint32_t s) { return {Action::SigInc, s, 1}; }
TLE_DEV_INLINE ActionArg sigAdd(uint32_t s, uint64_t v) {
  return {Action::SigAdd, s, v};
}
TLE_DEV_INLINE ActionArg ctrInc(uint32_t c) { return {Action::CtrInc, c, 1}; }

/// A checked symmetric-buffer handle.
struct Mem {
  const SymMem *m;
  uint32_t rank, size;
  uint64_t bytes;
};

/// Where a transfer goes: member `peer` of a team, resolved to this node's
/// rank `intra` when it is on this node, else to world rank `world`.
struct Target {
  bool local;
  uint32_t intra;
  uint32_t world;
};

/// The FlagCX arguments every transfer takes besides its buffers: a team
/// that exists, a context this communicator serves, a scope and an order.
TLE_DEV_INLINE void checkTransferArgs(const void *comm, int team,
                                      uint32_t context, int coop, int scope,
                                      int order, FnAt fn) {
  if (TLE_UNLIKELY(static_cast<uint32_t>(team) > kTeamWorld))
    failArgument(comm, 0, fn, kArgTeamKind, team, kTeamWorld);
  const DevComm *dc = checkComm(comm, fn).dc;
  uint32_t contexts = loadConst(&dc->nContexts);
  if (TLE_UNLIKELY(context >= contexts))
    failArgument(comm, 0, fn, kArgContextId, context, contexts);
  // Every int is a value a caller can pass (-1 included): callers without
  // a scope or an order pass a valid one.
  if (TLE_UNLIKELY(static_cast<uint32_t>(scope) > kScopeThread))
    failArgument(comm, 0, fn, kArgScope, scope, kScopeThread);
  checkCoop(comm, 0, coop, order, fn);
}

/// Member `peer` of team `team`, checked against the team's size.
TLE_DEV_INLINE Target resolvePeer(const Comm &c, int team, int peer, FnAt fn) {
  uint32_t q = static_cast<uint32_t>(peer);
  if (team == kTeamIntra) {
    if (TLE_UNLIKELY(q >= c.size))
      failArgument(c.dc, 0, fn, kArgPeer, peer, c.size);
    int32_t node = loadConst(&c.dc->node);
    return {true, q, static_cast<uint32_t>(node) * c.size + q};
  }
  World w = checkWorld(c, fn);
  uint32_t limit = team == kTeamInter ? w.nNodes : w.nNodes * c.size;
  if (TLE_UNLIKELY(q >= limit))
    failArgument(c.dc, 0, fn, kArgPeer, peer, limit);
  uint32_t world = team == kTeamInter ? q * c.size + c.rank : q;
  uint32_t node = world / c.size;
  return {node == w.node, world - node * c.size, world};
}

/// A located kDevErrNotServed report: `what` cannot reach world rank
/// `world` on this communicator's network.
[[noreturn]] TLE_DEV_COLD void failNotServed(const Comm &c, uint32_t world,
                                             NotServedWhat what, FnAt fn) {
  Failure f{kDevErrNotServed, fn};
  f.value = world;
  f.aux = what;
  failComm(c.dc, f);
}

/// Whether `dc`'s transfers past this node, its puts with a local counter
/// and its counters go through NCCL GIN (NetNccl.h; docs/design.md, "Over
/// NCCL GIN"): never in builds without it, so their paths carry no test of
/// netKind.
TLE_DEV_INLINE bool onGin(const DevComm *dc) {
#if defined(TLE_WITH_NCCL_GIN)
  return loadConst(&dc->netKind) == kNetNcclGin;
#else
  (void)dc;
  return false;
#endif
}

/// What the network cannot carry of a transfer with `t` (a `get`, else a
/// put with actions `remote` and `local`), refused before anything moves.
/// The emulator's network carries everything. NCCL GIN (docs/abi.md, "Over
/// NCCL GIN"): no get past this node (NCCL 2.28's GIN has none), no remote
/// counter on any peer (GIN's counters are local; on a GIN communicator
/// every counter is one), no local signal past this node (GIN's local
/// action is a counter). Past this node on any other network: TLE built
/// no such communicator (checkWorld refused its kind first).
TLE_DEV_INLINE void checkNetData(const Comm &c, const Target &t, bool get,
                                 const ActionArg &remote,
                                 const ActionArg &local, FnAt fn) {
  uint32_t kind = loadConst(&c.dc->netKind);
  if (kind == kNetNcclGin) {
    if (get && !t.local)
      failNotServed(c, t.world, kNotServedGet, fn);
    bool localSignal =
        local.kind == Action::SigInc || local.kind == Action::SigAdd;
    if (remote.kind == Action::CtrInc || (!t.local && localSignal))
      failNotServed(c, t.world, kNotServedAction, fn);
    return;
  }
  if (!t.local && kind != kNetEmu)
    failNoRecord();
}

/// A buffer handle, and `offset + bytes` inside it (no wrap-around).
TLE_DEV_INLINE Mem checkRange(const void *comm, const void *mem,
                              uint64_t offset, uint64_t bytes, FnAt fn) {
  const SymMem *m = static_cast<const SymMem *>(mem);
  if (TLE_UNLIKELY(!m || loadConst(&m->magic) != kSymMemMagic))
    failNoRecord();
  Mem out{m, static_cast<uint32_t>(loadConst(&m->rank)),
          static_cast<uint32_t>(loadConst(&m->size)), loadConst(&m->bytes)};
  if (TLE_UNLIKELY(out.size - 1 >= kMaxRanks || out.rank >= out.size))
    failNoRecord();
  uint64_t end = offset + bytes;
  if (TLE_UNLIKELY(end < offset || end > out.bytes))
    failArgument(comm, 0, fn, kArgOffset,
                 static_cast<int64_t>(end < offset ? offset : end), out.bytes);
  return out;
}

/// A signal or counter an action names, checked before anything moves.
TLE_DEV_INLINE void checkAction(const Comm &c, const ActionArg &a, FnAt fn) {
  if (a.kind == Action::None)
    return;
  if (a.kind == Action::CtrInc) {
    uint32_t n = loadConst(&c.dc->nCounters);
    if (TLE_UNLIKELY(a.index >= n))
      failArgument(c.dc, a.index, fn, kArgCounter, a.index, n);
    return;
  }
  uint32_t n = loadConst(&c.dc->nSignals);
  if (TLE_UNLIKELY(a.index >= n)) {
    Failure f{kDevErrSignalOutOfRange, fn};
    f.slot = a.index;
    f.limit = n;
    failComm(c.dc, f);
  }
}

/// `a` with its index made flat over the network contexts (SignalOps.h's
/// contextWord): the signal or counter `a.index` of context `context`.
/// After checkAction and checkTransferArgs (which checked the context).
TLE_DEV_INLINE ActionArg inContext(const DevComm *dc, ActionArg a,
                                   uint32_t context) {
  if (a.kind == Action::None)
    return a;
  uint32_t n =
      loadConst(a.kind == Action::CtrInc ? &dc->nCounters : &dc->nSignals);
  a.index = static_cast<uint32_t>(contextWord(context, n, a.index));
  return a;
}

/// The flat index of counter (`counter`) or signal `index` of network
/// context `context`, checked by checkWordArgs.
TLE_DEV_INLINE uint32_t wordIndex(const DevComm *dc, bool counter,
                                  uint32_t context, uint32_t index) {
  return static_cast<uint32_t>(contextWord(
      context, loadConst(counter ? &dc->nCounters : &dc->nSignals), index));
}

/// This rank's counter `i`, flat over the contexts (checked by the caller).
TLE_DEV_INLINE uint64_t *counterWord(const DevComm *dc, uint32_t i) {
  return loadConst(&dc->counters) + i;
}
/// Sets this rank's counter `i` (flat) to 0, as resetSignal sets a signal
/// word.
TLE_DEV_INLINE void resetCounter(const DevComm *dc, uint32_t i) {
#if defined(TLE_WITH_NCCL_GIN)
  if (onGin(dc)) {
    netCounterResetGin(dc, i);
    return;
  }
#endif
  storeSignalSys(counterWord(dc, i), 0);
}
/// This rank's counter `i`, a relaxed load, then an acquire fence when
/// `acquire`: from GIN on a GIN communicator, else from its word.
template <bool Acquire>
TLE_DEV_INLINE uint64_t loadCounter(const DevComm *dc, uint32_t i) {
#if defined(TLE_WITH_NCCL_GIN)
  if (onGin(dc)) {
    uint64_t v = netCounterLoadGin(dc, i);
    if (Acquire)
      fenceAcqRelSys();
    return v;
  }
#endif
  uint64_t *w = counterWord(dc, i);
  return Acquire ? loadAcquireSys(w) : loadRelaxedSys(w);
}
/// Intra rank `q`'s signal word `i`, or its counter `i` (`counter`), both
/// flat over the contexts: the counters follow the signal words in the
/// same allocation.
TLE_DEV_INLINE uint64_t *peerWord(const DevComm *dc, uint32_t q, uint32_t i,
                                  bool counter) {
  uint64_t *base = loadConst(&dc->signalPeers[routeIndex(q)]);
  return base + (counter ? loadConst(&dc->nSignalWords) : 0) + i;
}

/// Performs action `a` on this node, after the data, as a release: on
/// intra rank `q`'s words (a remote action) or on this rank's (`q` is its
/// rank). Run by one thread after the group's sync. A counter is waited
/// on as a signal word is (>= a value), so the emulator's race checker
/// keeps the same history of it: the 64-bit addReleaseSys reports both.
/// The shadows are not: only their owner reads them, as a wait's target.
TLE_DEV_INLINE void actNear(const DevComm *dc, uint32_t q, const ActionArg &a) {
  if (a.kind == Action::None)
    return;
  uint64_t *w = peerWord(dc, q, a.index, a.kind == Action::CtrInc);
#if defined(TLE_WITH_NCCL_GIN)
  if (a.kind != Action::CtrInc && signalsOnNet(dc)) {
    netAdd(dc, loadConst(&dc->node) * loadConst(&dc->size) + q, a.index,
           a.value);
    return;
  }
#endif
  addReleaseSys(w, TLE_MUTANT(52) ? 0 : a.value);
}

/// The network's words an action names: world rank `world`'s signal or
/// counter (null for none), for netCopy.
TLE_DEV_INLINE uint64_t *farWord(const DevComm *dc, uint32_t world,
                                 const ActionArg &a) {
  if (a.kind == Action::None)
    return nullptr;
  return netWordOf(dc, world, a.index, a.kind == Action::CtrInc);
}

#if defined(TLE_WITH_NCCL_GIN)
/// GIN's form of a put's actions (checkNetData let only these through):
/// the remote signal add and the local counter, their indices flat over
/// the contexts (inContext).
TLE_DEV_INLINE GinActions ginActions(const ActionArg &remote,
                                     const ActionArg &local) {
  GinActions a{};
  a.hasSignal = remote.kind == Action::SigInc || remote.kind == Action::SigAdd;
  a.signal = ginSignalId(remote.index);
  a.value = remote.value;
  a.hasCounter = local.kind == Action::CtrInc;
  a.counter = ginCounterId(local.index);
  return a;
}

/// Buffer `m`'s NCCL window, or a located report (kNotServedNoWindow)
/// naming the transfer's peer when NCCL did not register it.
TLE_DEV_INLINE const void *ginWindowOf(const Comm &c, const SymMem *m,
                                       uint32_t world, FnAt fn) {
  const void *w = loadConst(&m->netWindow);
  if (TLE_UNLIKELY(!w))
    failNotServed(c, world, kNotServedNoWindow, fn);
  return w;
}
#endif

/// A put of `bytes` from `src` + `srcOffset` (this rank's copy) to member
/// `peer` of `team`'s copy of `dst` + `dstOffset` for the group `coop`,
/// then `remote` at the peer and `local` here.
TLE_DEV_INLINE void put(const void *comm, const void *dst, uint64_t dstOffset,
                        const void *src, uint64_t srcOffset, uint64_t bytes,
                        int team, int peer, uint32_t context, int coop,
                        int scope, int order, ActionArg remote, ActionArg local,
                        FnAt fn) {
  checkTransferArgs(comm, team, context, coop, scope, order, fn);
  Comm c = checkComm(comm, fn);
  Target t = resolvePeer(c, team, peer, fn);
  Mem d = checkRange(comm, dst, dstOffset, bytes, fn);
  Mem s = checkRange(comm, src, srcOffset, bytes, fn);
  checkAction(c, remote, fn);
  checkAction(c, local, fn);
  checkNetData(c, t, /*get=*/false, remote, local, fn);
  remote = inContext(c.dc, remote, context);
  local = inContext(c.dc, local, context);
  Group g = makeGroup(coop);
  char *from = static_cast<char *>(loadConst(&s.m->ptrs[routeIndex(s.rank)])) +
               srcOffset;
  if (releases(order))
    fenceAcqRelSys();
  // On a GIN communicator a put with a local counter goes through GIN even
  // to a peer on this node: the counter is GIN's, which only GIN's engine
  // moves (docs/design.md, "One-sided transfers").
  bool viaNet = !t.local || (onGin(c.dc) && local.kind == Action::CtrInc);
  if (!viaNet) {
    char *to = static_cast<char *>(loadConst(&d.m->ptrs[routeIndex(t.intra)])) +
               dstOffset;
    copyBytes(to, from, bytes, g.rank, g.size);
    if (remote.kind != Action::None || local.kind != Action::None) {
      // The whole group's copy before rank 0's release, which is
      // cumulative (as signalAdd's, SignalOps.h).
      if (!TLE_MUTANT(50))
        groupSync(g);
      if (g.rank == 0) {
        actNear(c.dc, t.intra, remote);
        actNear(c.dc, c.rank, local);
      }
    }
    groupSync(g);
    return;
  }
  // Past this node: the group syncs, so that the network reads what every
  // member wrote, and its rank 0 hands the whole transfer to the network.
  groupSync(g);
#if defined(TLE_WITH_NCCL_GIN)
  if (g.rank == 0 && onGin(c.dc)) {
    const void *dstWin = ginWindowOf(c, d.m, t.world, fn);
    const void *srcWin = ginWindowOf(c, s.m, t.world, fn);
    netPutGin(c.dc, static_cast<int32_t>(t.world), dstWin, dstOffset, srcWin,
              srcOffset, bytes, ginActions(remote, local));
  } else
#endif
      if (g.rank == 0) {
    char *to = static_cast<char *>(netPtrOf(d.m, t.world, fn)) + dstOffset;
    uint32_t me = loadConst(&c.dc->node) * c.size + c.rank;
    netCopy(c.dc, to, from, bytes, farWord(c.dc, t.world, remote), remote.value,
            farWord(c.dc, me, local), local.value);
  }
  groupSync(g);
}

/// A get of `bytes` from member `peer` of `team`'s copy of `src` +
/// `srcOffset` into this rank's copy of `dst` + `dstOffset`.
TLE_DEV_INLINE void get(const void *comm, const void *src, uint64_t srcOffset,
                        const void *dst, uint64_t dstOffset, uint64_t bytes,
                        int team, int peer, uint32_t context, int coop,
                        int scope, int order, FnAt fn) {
  checkTransferArgs(comm, team, context, coop, scope, order, fn);
  Comm c = checkComm(comm, fn);
  Target t = resolvePeer(c, team, peer, fn);
  Mem s = checkRange(comm, src, srcOffset, bytes, fn);
  Mem d = checkRange(comm, dst, dstOffset, bytes, fn);
  checkNetData(c, t, /*get=*/true, ActionArg{}, ActionArg{}, fn);
  Group g = makeGroup(coop);
  char *to = static_cast<char *>(loadConst(&d.m->ptrs[routeIndex(d.rank)])) +
             dstOffset;
  if (t.local) {
    const char *from =
        static_cast<char *>(loadConst(&s.m->ptrs[routeIndex(t.intra)])) +
        srcOffset;
    copyBytes(to, from, bytes, g.rank, g.size);
    if (acquires(order))
      fenceAcqRelSys();
    // Every member's share has landed before any member returns.
    if (!TLE_MUTANT(51))
      groupSync(g);
    return;
  }
  groupSync(g);
  if (g.rank == 0) {
    const char *from =
        static_cast<char *>(netPtrOf(s.m, t.world, fn)) + srcOffset;
    netCopy(c.dc, to, from, bytes, nullptr, 0, nullptr, 0);
  }
  groupSync(g);
}

/// One 64-bit `value` to member `peer`'s `dst` + `dstOffset` (8-byte
/// aligned), by the group's rank 0, then `remote`.
TLE_DEV_INLINE void putValue(const void *comm, const void *dst,
                             uint64_t dstOffset, uint64_t value, int team,
                             int peer, uint32_t context, int coop, int scope,
                             int order, ActionArg remote, FnAt fn) {
  checkTransferArgs(comm, team, context, coop, scope, order, fn);
  Comm c = checkComm(comm, fn);
  Target t = resolvePeer(c, team, peer, fn);
  Mem d = checkRange(comm, dst, dstOffset, sizeof(uint64_t), fn);
  if (TLE_UNLIKELY(dstOffset % sizeof(uint64_t) != 0))
    failArgument(comm, 0, fn, kArgOffset, static_cast<int64_t>(dstOffset),
                 sizeof(uint64_t));
  checkAction(c, remote, fn);
  checkNetData(c, t, /*get=*/false, remote, ActionArg{}, fn);
  remote = inContext(c.dc, remote, context);
  Group g = makeGroup(coop);
  groupSync(g);
  if (g.rank == 0) {
    if (releases(order))
      fenceAcqRelSys();
    if (t.local) {
      auto *to = reinterpret_cast<uint64_t *>(
          static_cast<char *>(loadConst(&d.m->ptrs[routeIndex(t.intra)])) +
          dstOffset);
      storeRelaxedSys(to, value);
      if (remote.kind != Action::None) {
        fenceAcqRelSys();
        actNear(c.dc, t.intra, remote);
      }
    } else if (onGin(c.dc)) {
#if defined(TLE_WITH_NCCL_GIN)
      netPutValueGin(c.dc, static_cast<int32_t>(t.world),
                     ginWindowOf(c, d.m, t.world, fn), dstOffset, value,
                     ginActions(remote, ActionArg{}));
#endif
    } else {
      // The value travels from a per-thread slot the network reads when it
      // sends: FlagCX's net putValue carries the value inline; the
      // emulator's network copies it at send time (netCopy's contract for
      // a source that lives on the caller's stack).
      uint64_t v = value;
      char *to = static_cast<char *>(netPtrOf(d.m, t.world, fn)) + dstOffset;
      netCopyValue(c.dc, to, v, farWord(c.dc, t.world, remote), remote.value);
    }
  }
  groupSync(g);
}

/// Adds `value` to `remote`'s word (of network context `context`) of
/// member `peer` with no data (the net forms' SignalSigInc/SigAdd/CtrInc).
TLE_DEV_INLINE void signalOnly(const void *comm, int team, int peer, int coop,
                               ActionArg remote, uint32_t context, FnAt fn) {
  if (remote.kind != Action::CtrInc) {
    checkSignalArgs(comm, remote.index, kHasTeam, team, 0, 0, fn);
    teamSignalAdd(comm, team, peer, remote.index, remote.value, coop, fn,
                  context);
    return;
  }
  checkTransferArgs(comm, team, context, coop, 0, kOrderRelaxed, fn);
  Comm c = checkComm(comm, fn);
  Target t = resolvePeer(c, team, peer, fn);
  checkAction(c, remote, fn);
  checkNetData(c, t, /*get=*/false, remote, ActionArg{}, fn);
  remote = inContext(c.dc, remote, context);
  Group g = makeGroup(coop);
  groupSync(g);
  if (g.rank == 0) {
    if (t.local)
      actNear(c.dc, t.intra, remote);
    else
      netCopy(c.dc, nullptr, nullptr, 0, farWord(c.dc, t.world, remote),
              remote.value, nullptr, 0);
  }
  groupSync(g);
}

/// The counter and shadow calls' checks: a context served, 64-bit words,
/// an index in range (`counter`: of the counters, else of the signals) of
/// that context; wordIndex then names the word.
TLE_DEV_INLINE const DevComm *checkWordArgs(const void *comm, uint32_t index,
                                            bool counter, uint32_t context,
                                            int bits, FnAt fn) {
  const DevComm *dc = checkComm(comm, fn).dc;
  uint32_t contexts = loadConst(&dc->nContexts);
  if (TLE_UNLIKELY(context >= contexts))
    failArgument(comm, index, fn, kArgContextId, context, contexts);
  // Callers without a width pass 64: -1 is a value a caller can pass.
  if (TLE_UNLIKELY(bits != 64))
    failArgument(comm, index, fn, kArgBits, bits, 64);
  uint32_t n = loadConst(counter ? &dc->nCounters : &dc->nSignals);
  if (TLE_UNLIKELY(index >= n)) {
    if (counter)
      failArgument(comm, index, fn, kArgCounter, index, n);
    Failure f{kDevErrSignalOutOfRange, fn};
    f.slot = index;
    f.context = context;
    f.limit = n;
    failComm(dc, f);
  }
  return dc;
}

/// pollWord's loop on a GIN counter (onGin), with the same
/// deadline and fault-word cadence: the word GIN's engine increments lives
/// in NCCL's memory, so each poll is GIN's relaxed load (and the acquire
/// fence after, with `Acquire`). GIN's counters carry 56 bits: a `least`
/// of 2^56 or more is never reached (docs/design.md).
template <bool Acquire>
TLE_DEV_INLINE uint32_t pollNetCounter(const SignalWord &s, uint32_t ctr,
                                       uint64_t least, FnAt fn) {
  PollClock k;
  for (;;) {
    uint64_t v = loadCounter<Acquire>(s.dc, s.index);
    if (v >= least)
      return 0;
    if (uint32_t status = onSignalMiss(k, s, ctr, v, least, fn, "counter wait"))
      return status;
  }
}

/// Waits until this rank's counter `ctr` of network context `context`
/// (checked by checkWordArgs) >= `least` for the group `coop` (the signal
/// wait's loop, on the counter word). With `Status`, returns what the
/// group agrees on, as signalWait: 0, or the status of the wait that gave
/// up; without, 0 and the plain final sync.
template <bool Status = false>
TLE_DEV_INLINE uint32_t waitCounter(const void *comm, uint32_t ctr,
                                    uint64_t least, int coop, int order,
                                    FnAt fn, uint32_t context = 0) {
  checkCoop(comm, ctr, coop, order, fn);
  Group g = makeGroup(coop);
  const DevComm *dc = checkComm(comm, fn).dc;
  uint32_t index = wordIndex(dc, true, context, ctr);
  SignalWord s{dc, static_cast<uint32_t>(loadConst(&dc->rank)),
               counterWord(dc, index), index, context};
  groupSync(g);
  uint32_t status = 0;
  if (g.rank == 0) {
    if (order == kOrderSeqCst)
      fenceSeqCstSys();
    bool acquire = acquires(order) && !TLE_MUTANT(53);
    if (onGin(dc))
      status = acquire ? pollNetCounter<true>(s, ctr, least, fn)
                       : pollNetCounter<false>(s, ctr, least, fn);
    else if (acquire)
      status = pollWord<true>(s, ctr, least, "counter wait", fn);
    else
      status = pollWord<false>(s, ctr, least, "counter wait", fn);
  }
  if constexpr (Status)
    return groupSyncStatus(g, status);
  groupSync(g);
  return 0;
}

/// This rank's counter `ctr` of network context `context` (checked by
/// checkWordArgs), loaded by the calling thread.
TLE_DEV_INLINE uint64_t readCounter(const void *comm, uint32_t ctr, int order,
                                    FnAt fn, uint32_t context = 0) {
  checkOrder(comm, ctr, order, fn);
  const DevComm *dc = checkComm(comm, fn).dc;
  uint32_t index = wordIndex(dc, true, context, ctr);
  uint64_t *w = counterWord(dc, index);
  if (order == kOrderSeqCst)
    fenceSeqCstSys();
  if (onGin(dc))
    return acquires(order) ? loadCounter<true>(dc, index)
                           : loadCounter<false>(dc, index);
  uint64_t v = acquires(order) ? loadAcquireSys(w) : loadRelaxedSys(w);
  noteSignal(w, kSignalRead, v, 0, order);
  pollHint(w, v);
  return v;
}

/// Waits until signal `sig` >= its shadow for the group `coop`: the group
/// syncs first, so that every member's shadow increase before the call
/// counts, then waits as flagcxDevWaitSignal with the shadow as `least`
/// (`Status` as for signalWait).
template <bool Status = false>
TLE_DEV_INLINE uint32_t waitShadow(const void *comm, uint32_t sig, int coop,
                                   int order, FnAt fn, uint32_t context = 0) {
  checkCoop(comm, sig, coop, order, fn);
  const DevComm *dc = checkComm(comm, fn).dc;
  Group g = makeGroup(coop);
  groupSync(g);
  uint64_t least = loadRelaxedSys(loadConst(&dc->shadows) +
                                  wordIndex(dc, false, context, sig));
  if (TLE_MUTANT(54))
    least = 0;
  return signalWait<Status>(comm, sig, least, coop, order, fn, context);
}

/// Every transfer this rank handed to the network has completed (a get's
/// data landed here, a put's source was read), then a system fence; on
/// this node transfers complete inside their call, so the fence alone.
TLE_DEV_INLINE void flush(const void *comm, uint32_t context, int coop,
                          int order, FnAt fn) {
  checkTransferArgs(comm, kTeamIntra, context, coop, 0, order, fn);
  Comm c = checkComm(comm, fn);
  Group g = makeGroup(coop);
  groupSync(g);
  // A GIN communicator sends puts with a local counter over GIN on one
  // node too, so it flushes whatever its node count.
  if (g.rank == 0 && (loadConst(&c.dc->nNodes) > 1 || onGin(c.dc)) &&
      !TLE_MUTANT(55))
    netFlush(c.dc, c.rank);
  fenceAcqRelSys();
  groupSync(g);
}

} // namespace tle::impl

#endif // TLE_IMPL_ONESIDED_H
