//===- SignalOps.h - Point-to-point signal words ----------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// tle.signal and its companions: every rank owns nSignals 64-bit words
// (tle/detail/DevComm.h); a signal adds to word `sig` of rank `peer` with a
// release, a wait polls this rank's word until it is >= a value (unsigned)
// with an acquire, under the barrier's deadline, a read loads it and a
// reset zeroes it. A group (thread, warp, block; Group.h) signals or waits
// together: it syncs, its rank 0 signals or polls, it syncs again. A wait
// looks at the communicator's fault word as the barrier's waits do
// (BarrierFlags.h): tleCommAbort, the watchdog and a failure under
// onError = return stop it within the same bound.
//
// Memory model: as for the barrier (BarrierFlags.h). The first group sync
// puts every member's writes in rank 0's causality past, and its release
// reduction (red.release.sys.add.u64) is cumulative, so it publishes the
// whole group's writes; the waiter's acquire load observes that reduction,
// and the final group sync extends what it acquired to every member. Words
// only grow (except by reset), so a poll that saw >= least can never have
// seen a later value from before the release it pairs with.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_IMPL_SIGNALOPS_H
#define TLE_IMPL_SIGNALOPS_H

#include "tle/impl/BarrierFlags.h"
#include "tle/impl/Group.h"
#include "tle/impl/Trace.h"
#if defined(TLE_WITH_NCCL_GIN)
#include "tle/impl/Net.h"
#endif

namespace tle::impl {

/// The word a signal call touches, in a checked communicator: signal
/// `sig` of network context `context` is word `index` = context * nSignals
/// + sig of the rank's nSignalWords (DevComm.h, kMaxContexts). Reports
/// name the signal and its context; the net (Net.h) names the word.
struct SignalWord {
  const DevComm *dc;
  uint32_t rank;
  uint64_t *word;
  uint32_t index = 0;   ///< the flat word index
  uint32_t context = 0; ///< its network context
};

/// The flat index of word `index` of network context `context`, `perContext`
/// words to a context (nSignals, or nCounters for counters). 64-bit: a
/// context far out of range must not wrap into a valid word.
TLE_DEV_INLINE uint64_t contextWord(uint32_t context, uint32_t perContext,
                                    uint32_t index) {
  return TLE_MUTANT(88) ? index : uint64_t(context) * perContext + index;
}

static_assert(offsetof(DevComm, nSignals) % 8 == 0 &&
                  offsetof(DevComm, nSignalWords) ==
                      offsetof(DevComm, nSignals) + 4,
              "loadSignalWord loads nSignals with nSignalWords");

/// Classifies and reports what loadSignalWord's one combined check
/// rejected, in the order a reader would look: the communicator, the
/// signal index, its context, then the peer.
[[noreturn]] TLE_DEV_COLD void failSignalCheck(const DevComm *dc, uint32_t sig,
                                               uint32_t context, int peer,
                                               bool remote, FnAt fn) {
  if (!dc || loadConst(&dc->magic) != kDevCommMagic ||
      loadConst(&dc->version) != kDevCommVersion)
    failNoRecord();
  uint32_t size = static_cast<uint32_t>(loadConst(&dc->size));
  uint32_t rank = static_cast<uint32_t>(loadConst(&dc->rank));
  Failure f{kDevErrBadComm, fn};
  f.aux = size;
  if (size - 1 >= kMaxRanks || rank >= size)
    failComm(dc, f);
  f.aux = 0;
  f.slot = sig;
  uint32_t nSignals = loadConst(&dc->nSignals);
  if (sig >= nSignals) {
    f.code = kDevErrSignalOutOfRange;
    f.limit = nSignals;
    failComm(dc, f);
  }
  uint32_t contexts = loadConst(&dc->nContexts);
  if (context >= contexts)
    failArgument(dc, sig, fn, kArgContextId, context, contexts);
  if (remote && static_cast<uint32_t>(peer) >= size) {
    f.code = kDevErrBadArgument;
    f.argument = kArgPeer;
    f.value = static_cast<uint64_t>(static_cast<int64_t>(peer));
    f.limit = size;
    failComm(dc, f);
  }
  // A misaligned word pointer.
  f.aux = size;
  failComm(dc, f);
}

/// Loads and checks what a signal call needs: signal `sig` of network
/// context `context` of rank `peer` (`remote`) or of this rank. As in
/// loadComm (Check.h), every load is issued before one combined check, so
/// the call costs one load latency before it touches the word, and the
/// check reads only the communicator's own struct. With sig < nSignals,
/// the flat index is below nSignalWords exactly when the context is
/// served, so one comparison checks the context.
TLE_DEV_INLINE SignalWord loadSignalWord(const void *comm, uint32_t sig,
                                         int peer, bool remote, FnAt fn,
                                         uint32_t context = 0) {
  const DevComm *dc = static_cast<const DevComm *>(comm);
  const DevComm *src = dc ? dc : &kNullDevComm;
  uint32_t magic, version, rank, size, nSignals, nSignalWords;
  loadConstPair(&src->magic, magic, version);
  loadConstPair(&src->rank, rank, size);
  loadConstPair(&src->nSignals, nSignals, nSignalWords);
  // A peer's words through the mask of routeIndex: the load may come before
  // the check that rejects the peer (see DevComm::routes).
  uint32_t q = static_cast<uint32_t>(peer);
  uint64_t *base = remote ? loadConst(&src->signalPeers[routeIndex(q)])
                          : loadConst(&src->signals);
  uint64_t flat = contextWord(context, nSignals, sig);
  bool bad =
      (magic != kDevCommMagic) | (version != kDevCommVersion) |
      (size - 1 >= kMaxRanks) | (rank >= size) | (sig >= nSignals) |
      (flat >= nSignalWords) | (remote & (q >= size)) |
      ((reinterpret_cast<uintptr_t>(base) & (sizeof(uint64_t) - 1)) != 0);
  if (TLE_UNLIKELY(bad))
    failSignalCheck(dc, sig, context, peer, remote, fn);
  auto index = static_cast<uint32_t>(flat);
  return {dc, rank, base + index, index, context};
}

#if defined(TLE_WITH_NCCL_GIN)
/// NCCL GIN's signals live in NCCL's memory, and a waiter must look in
/// one place: on a kNetNcclGin communicator every add (intra-node ones
/// too), wait, read and reset goes through the net (Net.h). Builds without
/// GIN never see such a communicator here (checkWorld refuses it on the
/// team paths), so their hot paths carry no test of netKind.
TLE_DEV_INLINE bool signalsOnNet(const DevComm *dc) {
  return loadConst(&dc->netKind) == kNetNcclGin;
}
/// This rank's (flat) signal word `word` through the net, with an acquire
/// fence after the relaxed load when `acquire`.
TLE_DEV_INLINE uint64_t netSignalLoad(const DevComm *dc, uint32_t word,
                                      bool acquire) {
  uint64_t v = netLoad(dc, word);
  if (acquire)
    fenceAcqRelSys();
  return v;
}
#endif

/// Which of checkSignalArgs' arguments a function has (a bit each).
enum SignalArg : unsigned { kHasTeam = 1, kHasScope = 2, kHasBits = 4 };

/// The FlagCX arguments TLE serves some values of: a team that exists,
/// a scope that exists (a signal is always system-wide: its reader is
/// another GPU) and 64-bit words. `has` (SignalArg bits) says which of
/// team, scope and bits the function takes; no value of an argument
/// skips its check, since every int is something a caller can pass. The
/// context is checked where the words are loaded (loadSignalWord,
/// teamSignalAdd), after the communicator.
TLE_DEV_INLINE void checkSignalArgs(const void *comm, uint32_t sig,
                                    unsigned has, int team, int scope, int bits,
                                    FnAt fn) {
  if (TLE_UNLIKELY((has & kHasTeam) &&
                   static_cast<uint32_t>(team) > kTeamWorld))
    failArgument(comm, sig, fn, kArgTeamKind, team, kTeamWorld);
  if (TLE_UNLIKELY((has & kHasScope) &&
                   static_cast<uint32_t>(scope) > kScopeThread))
    failArgument(comm, sig, fn, kArgScope, scope, kScopeThread);
  if (TLE_UNLIKELY((has & kHasBits) && bits != 64))
    failArgument(comm, sig, fn, kArgBits, bits, 64);
}

/// Adds `value` to signal `sig` of network context `context` of rank
/// `peer` for the group `coop`.
TLE_DEV_INLINE void signalAdd(const void *comm, int peer, uint32_t sig,
                              uint64_t value, int coop, FnAt fn,
                              uint32_t context = 0) {
  checkCoop(comm, sig, coop, kOrderRelaxed, fn);
  Group g = makeGroup(coop);
  // Every thread checks before the group sync, so that a failing check
  // aborts all of them (see groupWait in Barrier.h).
  SignalWord s = loadSignalWord(comm, sig, peer, /*remote=*/true, fn, context);
  groupSync(g);
  if (g.rank == 0) {
    traceSignal(s.dc, kTraceSignal, g.kind, sig, kOrderRelease, kTraceBegin);
#if defined(TLE_WITH_NCCL_GIN)
    if (signalsOnNet(s.dc))
      netAdd(s.dc,
             TLE_MUTANT(31)
                 ? peer
                 : loadConst(&s.dc->node) * loadConst(&s.dc->size) + peer,
             s.index, value);
    else
#endif
      addReleaseSys(s.word, value);
    traceSignal(s.dc, kTraceSignal, g.kind, sig, kOrderRelease, kTraceEnd);
  }
  groupSync(g);
}

/// A signal wait passed its deadline: record it, then trap, or under
/// kDevCommOnErrorReturn set the fault word (every later wait on the
/// communicator gives up at its next check) and return the status (as
/// failTimeout for the barrier). Takes the communicator by value: a
/// reference to the caller's SignalWord would make it store the struct to
/// local memory before every poll loop.
TLE_DEV_COLD uint32_t failSignalTimeout(const DevComm *dc, uint32_t sig,
                                        uint32_t context, uint64_t seen,
                                        uint64_t least, uint64_t elapsedNs,
                                        FnAt fn) {
  Failure f{kDevErrSignalTimeout, fn};
  f.slot = sig;
  f.context = context;
  f.seen = seen;
  f.wanted = least;
  f.elapsedNs = elapsedNs;
  if (!(loadConst(&dc->flags) & kDevCommOnErrorReturn))
    failComm(dc, f);
  ErrorRecord *rec = loadConst(&dc->error);
  claimRecord(rec, loadConst(&dc->rank), loadConst(&dc->nBarriers), f);
  if (rec && loadFaultWord(&rec->abort) == 0)
    storeFaultWord(&rec->abort, kDevErrSignalTimeout);
  return resultOf(kDevErrSignalTimeout);
}

/// A signal wait that gives up because the communicator's fault word says
/// `code` (giveUp for the barrier): the first wait to see tleCommAbort's
/// word claims the free record, naming the signal and its values. Returns
/// the status of the wait, a tleResult_t value.
TLE_DEV_COLD uint32_t giveUpSignal(const DevComm *dc, uint32_t sig,
                                   uint32_t context, uint64_t seen,
                                   uint64_t least, uint32_t code, FnAt fn) {
  if (code == kDevErrAborted) {
    Failure f{kDevErrAborted, fn};
    f.slot = sig;
    f.context = context;
    f.seen = seen;
    f.wanted = least;
    claimRecord(loadConst(&dc->error), loadConst(&dc->rank),
                loadConst(&dc->nBarriers), f);
  } else if (code == kDevErrPeerFailure) {
    addWaitSite(loadConst(&dc->error), fn);
  }
  return resultOf(code);
}

/// A failed poll: on the emulator a yield that names the word, then the
/// wait engine (Wait.h) with the signal's reports. 0 to poll on, else the
/// status the wait gives up with.
TLE_DEV_INLINE uint32_t onSignalMiss(PollClock &k, const SignalWord &s,
                                     uint32_t sig, uint64_t seen,
                                     uint64_t least, FnAt fn,
                                     const char *what = "signal wait") {
  if constexpr (kPlatformYields) {
    WaitInfo info{};
    info.comm = s.dc;
    info.rank = static_cast<int32_t>(s.rank);
    info.slot = sig;
    info.what = what;
    info.signal = 1;
    info.context = s.context;
    info.seen = seen;
    info.wanted = least;
    info.watch = s.word;
    spinWait(info);
  }
  return waitMissed(
      k, s.dc, TLE_MUTANT(34) ? kPollsPerClockRead : kPollsPerAbortCheck,
      [&](uint32_t fault) {
        return giveUpSignal(s.dc, sig, s.context, seen, least, fault, fn);
      },
      [&](uint64_t elapsedNs) {
        return failSignalTimeout(s.dc, sig, s.context, seen, least, elapsedNs,
                                 fn);
      });
}

/// Tells the emulator's race checker that a wait's final read saw `seen`
/// >= `least` in `word`: it acquires the word's adds up to the first that
/// reached `least`, not every add the read happened to see (mutant 82
/// reports a target of 0: the wait acquires nothing). After the read, so
/// that the checker orders it as the load it is.
TLE_DEV_INLINE void noteWaited(const uint64_t *word, uint64_t least,
                               uint64_t seen, bool acquire) {
  noteSignal(word, kSignalWait, TLE_MUTANT(82) ? 0 : least, seen,
             acquire ? kOrderAcquire : kOrderRelaxed);
}

/// The poll loop: one word, acquire (or relaxed) loads, nothing else until
/// a miss. Returns 0, or the status of a wait that gave up.
template <bool Acquire>
TLE_DEV_INLINE uint32_t pollSignal(const SignalWord &s, uint32_t sig,
                                   uint64_t least, FnAt fn) {
  PollClock k;
#if defined(TLE_WITH_NCCL_GIN)
  bool net = signalsOnNet(s.dc);
#endif
  for (;;) {
#if defined(TLE_WITH_NCCL_GIN)
    uint64_t v = net       ? netSignalLoad(s.dc, s.index, Acquire)
                 : Acquire ? loadAcquireSys(s.word)
                           : loadRelaxedSys(s.word);
#else
    uint64_t v = Acquire ? loadAcquireSys(s.word) : loadRelaxedSys(s.word);
#endif
    if (v >= least) {
      noteWaited(s.word, least, v, Acquire);
      return 0;
    }
    if (uint32_t status = onSignalMiss(k, s, sig, v, least, fn))
      return status;
  }
}

/// A wait or a read only observes: an order with nothing but a release
/// half (release) would be dropped silently, so it is refused, as the
/// dialect's verifier refuses it.
TLE_DEV_INLINE void checkObserverOrder(const void *comm, uint32_t sig,
                                       int order, FnAt fn) {
  if (TLE_UNLIKELY(order == kOrderRelease))
    failArgument(comm, sig, fn, kArgOrder, order, kOrderSeqCst);
}

/// pollSignal's loop on a word that never lives on the net (a counter,
/// OneSided.h), naming it `what` in reports.
template <bool Acquire>
TLE_DEV_INLINE uint32_t pollWord(const SignalWord &s, uint32_t index,
                                 uint64_t least, const char *what, FnAt fn) {
  PollClock k;
  for (;;) {
    uint64_t v = Acquire ? loadAcquireSys(s.word) : loadRelaxedSys(s.word);
    if (v >= least) {
      noteWaited(s.word, least, v, Acquire);
      return 0;
    }
    if (uint32_t status = onSignalMiss(k, s, index, v, least, fn, what))
      return status;
  }
}

/// Waits until this rank's word `sig` is >= `least` for the group `coop`,
/// with the acquire half of `order` (seq_cst adds a fence.sc first). A wait
/// that gives up (the fault word is set, or the deadline passed under
/// onError = return) returns early, without the acquire. With `Status`,
/// returns what the group agrees on (groupSyncStatus): 0, or the status of
/// the wait that gave up; without, 0 and the plain final sync.
template <bool Status = false>
TLE_DEV_INLINE uint32_t signalWait(const void *comm, uint32_t sig,
                                   uint64_t least, int coop, int order, FnAt fn,
                                   uint32_t context = 0) {
  checkCoop(comm, sig, coop, order, fn);
  checkObserverOrder(comm, sig, order, fn);
  Group g = makeGroup(coop);
  SignalWord s = loadSignalWord(comm, sig, 0, /*remote=*/false, fn, context);
  groupSync(g);
  uint32_t status = 0;
  if (g.rank == 0) {
    traceSignal(s.dc, kTraceSignalWait, g.kind, sig, order, kTraceBegin);
    if (order == kOrderSeqCst)
      fenceSeqCstSys();
    if (acquires(order))
      status = pollSignal<true>(s, sig, least, fn);
    else
      status = pollSignal<false>(s, sig, least, fn);
    traceSignal(s.dc, kTraceSignalWait, g.kind, sig, order, kTraceEnd);
  }
  if constexpr (Status)
    return groupSyncStatus(g, status);
  groupSync(g);
  return 0;
}

/// This rank's word `sig`, loaded by the calling thread with the acquire
/// half of `order`. A read may be the poll of the caller's own loop, so on
/// the emulator it yields (pollHint).
TLE_DEV_INLINE uint64_t readSignal(const void *comm, uint32_t sig, int order,
                                   FnAt fn, uint32_t context = 0) {
  checkOrder(comm, sig, order, fn);
  checkObserverOrder(comm, sig, order, fn);
  SignalWord s = loadSignalWord(comm, sig, 0, /*remote=*/false, fn, context);
  if (order == kOrderSeqCst)
    fenceSeqCstSys();
#if defined(TLE_WITH_NCCL_GIN)
  if (signalsOnNet(s.dc))
    return netSignalLoad(s.dc, s.index, acquires(order));
#endif
  uint64_t v =
      acquires(order) ? loadAcquireSys(s.word) : loadRelaxedSys(s.word);
  // Every add up to the value read (the checker's signal history).
  noteSignal(s.word, kSignalRead, v, 0, order);
  pollHint(s.word, v);
  return v;
}

/// Sets this rank's word `sig` to 0 (every calling thread stores; the
/// stores are the same). Relaxed: what must not overtake the reset (a
/// peer's next signal) is ordered by the synchronization that tells the
/// peer the word was reset, which is a release after it.
TLE_DEV_INLINE void resetSignal(const void *comm, uint32_t sig, FnAt fn,
                                uint32_t context = 0) {
  SignalWord s = loadSignalWord(comm, sig, 0, /*remote=*/false, fn, context);
#if defined(TLE_WITH_NCCL_GIN)
  if (signalsOnNet(s.dc)) {
    netReset(s.dc, s.index);
    return;
  }
#endif
  storeSignalSys(s.word, 0);
}

} // namespace tle::impl

#endif // TLE_IMPL_SIGNALOPS_H
