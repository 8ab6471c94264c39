//===- Rail.h - The INTER protocol: a barrier over a rail of nodes --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The barrier of the INTER team (this local rank on every node, a rail) on
// one net word per slot (Net.h), which WORLD's inter half uses too
// (Barrier.h). Arrive: one thread adds 1, a release, to the slot's word of
// every rail peer. Wait: it polls its own word until the word counts
// (nNodes - 1) * epoch arrivals, where epoch is the round this rank's
// epoch word (DevComm::epochs, kEpochSets) says comes next; every rail peer
// adds exactly once per round, so the count is reached exactly when every
// peer arrived at this round (a peer cannot run a round ahead: it waits
// for our arrive). With one node the rail is this rank alone and the wait
// completes at once, so a kernel written for INTER runs on one node.
// docs/device-library.md ("Teams") is the long form.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_IMPL_RAIL_H
#define TLE_IMPL_RAIL_H

#include "tle/impl/BarrierFlags.h"
#include "tle/impl/Net.h"

namespace tle::impl {

/// This rank's place in the world, from a checked communicator.
struct World {
  uint32_t node;
  uint32_t nNodes;
};

/// Reports a communicator whose node fields make no sense.
[[noreturn]] TLE_DEV_COLD void failWorld(const Comm &c, FnAt fn) {
  Failure f{kDevErrBadComm, fn};
  f.aux = c.size;
  failComm(c.dc, f);
}

/// Loads and checks the node fields of a checked communicator: a node in
/// range, a world of at most kMaxRanks ranks, and with several nodes a net
/// this build serves with room for the team words.
TLE_DEV_INLINE World checkWorld(const Comm &c, FnAt fn) {
  int32_t node = loadConst(&c.dc->node);
  int32_t nNodes = loadConst(&c.dc->nNodes);
  bool bad = nNodes < 1 || node < 0 || node >= nNodes ||
             static_cast<uint64_t>(nNodes) * c.size > kMaxRanks;
  if (!bad && nNodes > 1) {
    uint32_t words = loadConst(&c.dc->nNetWords);
    bad = !netServed(loadConst(&c.dc->netKind)) ||
          words < loadConst(&c.dc->nSignals) + 2 * c.nBarriers;
  }
  if (TLE_UNLIKELY(bad))
    failWorld(c, fn);
  return {static_cast<uint32_t>(node), static_cast<uint32_t>(nNodes)};
}

TLE_DEV_INLINE uint32_t worldRankOf(const Comm &c, uint32_t node) {
  return node * c.size + c.rank;
}

/// The rail peers of this rank, as world ranks.
TLE_DEV_INLINE PeerMask railPeers(const Comm &c, World w) {
  PeerMask mask = {};
  for (uint32_t m = 0; m < w.nNodes; ++m)
    if (m != w.node) {
      uint32_t q = worldRankOf(c, m);
      mask.words[q / 64] |= uint64_t(1) << (q % 64);
    }
  return mask;
}

/// A rail wait passed its deadline: as failTimeout (BarrierFlags.h), with
/// the rail peers as missing, in world ranks (kRecordWorldRanks: a net word
/// counts arrivals, not who arrived).
TLE_DEV_COLD uint32_t failRailTimeout(const Comm &c, World w, uint32_t slot,
                                      uint32_t epoch, uint64_t elapsedNs,
                                      FnAt fn) {
  Failure f{kDevErrTimeout, fn};
  f.slot = slot;
  f.epoch = epoch;
  f.missing = railPeers(c, w);
  f.aux = kRecordWorldRanks;
  f.elapsedNs = elapsedNs;
  ErrorRecord *rec = loadConst(&c.dc->error);
  auto rank = static_cast<int32_t>(c.rank);
  if (!(loadConst(&c.dc->flags) & kDevCommOnErrorReturn))
    failWithRecord(rec, rank, c.nBarriers, f);
  claimRecord(rec, rank, c.nBarriers, f);
  if (rec && loadFaultWord(&rec->abort) == 0)
    storeFaultWord(&rec->abort, kDevErrTimeout);
  return resultOf(kDevErrTimeout);
}

/// A rail wait that gives up because the fault word says `code`: as
/// giveUp for the intra barrier, the first such wait after tleCommAbort
/// claims the free record (naming the slot, the round and the rail peers,
/// in world ranks), so that the host sees the launch end in tleAborted;
/// the watchdog and a failed wait have filled theirs. Returns the status.
TLE_DEV_COLD uint32_t giveUpRail(const Comm &c, World w, uint32_t slot,
                                 uint32_t epoch, uint32_t code, FnAt fn) {
  if (code == kDevErrAborted) {
    Failure f{kDevErrAborted, fn};
    f.slot = slot;
    f.epoch = epoch;
    f.missing = railPeers(c, w);
    f.aux = kRecordWorldRanks;
    claimRecord(loadConst(&c.dc->error), static_cast<int32_t>(c.rank),
                c.nBarriers, f);
  }
  return resultOf(code);
}

/// Whether a slot's word `v` counts the arrivals `target` of the round
/// waited for. Compared in their low 32 bits, wrap-safe as the intra
/// barrier's epochs, because `target` comes from a 32-bit epoch that wraps
/// after 2^32 rounds (hours of barriers on one slot) while the 64-bit word
/// keeps counting: both are multiples of nNodes - 1 by numbers congruent
/// modulo 2^32, and the word is within nNodes - 1 of the target (peers are
/// at most a round ahead, and every one finished the round before), far
/// inside the 2^31 a wrap-safe comparison needs.
TLE_DEV_INLINE bool railReached(uint64_t v, uint64_t target) {
  if (TLE_MUTANT(28))
    return v >= target;
  return static_cast<int32_t>(static_cast<uint32_t>(v) -
                              static_cast<uint32_t>(target)) >= 0;
}

/// Polls this rank's net word `word` until it reaches `target` (relaxed
/// loads), under the deadline and the fault word through the wait engine
/// (Wait.h), as await does for the inbox. `slot` and `epoch` name the wait in
/// reports, `team` says whose. Returns 0, or the status of a wait that gave up.
TLE_DEV_INLINE uint32_t railPoll(const Comm &c, World w, uint32_t word,
                                 uint64_t target, uint32_t slot, uint32_t epoch,
                                 int team, FnAt fn) {
  PollClock k;
  for (;;) {
    uint64_t v = netLoad(c.dc, word);
    if (railReached(v, target))
      return 0;
    if constexpr (kPlatformYields) {
      WaitInfo info{c.dc,
                    static_cast<int32_t>(worldRankOf(c, w.node)),
                    slot,
                    epoch,
                    railPeers(c, w),
                    team == kTeamInter ? "inter barrier wait"
                                       : "world barrier wait (inter half)"};
      info.seen = v;
      info.wanted = target;
      info.team = team;
      info.netWord = word;
      spinWait(info);
    }
    if (uint32_t status = waitMissed(
            k, c.dc, TLE_MUTANT(35) ? kPollsPerClockRead : kPollsPerAbortCheck,
            [&](uint32_t fault) {
              return giveUpRail(c, w, slot, epoch, fault, fn);
            },
            [&](uint64_t elapsedNs) {
              return failRailTimeout(c, w, slot, epoch, elapsedNs, fn);
            }))
      return TLE_MUTANT(30) ? 0 : status;
  }
}

/// The arrive half: a release add of 1 to net word `word` of every rail
/// peer (seq_cst adds a fence.sc first). Called by one thread.
TLE_DEV_INLINE void railArrive(const Comm &c, World w, uint32_t word,
                               int order) {
  if (w.nNodes == 1)
    return;
  if (order == kOrderSeqCst && !TLE_MUTANT(37))
    fenceSeqCstSys();
  for (uint32_t m = 0; m < w.nNodes; ++m)
    if (m != w.node)
      netAdd(c.dc, static_cast<int32_t>(worldRankOf(c, m)), word, 1);
}

/// The wait half, by one thread: the next round of epoch word `epochSlot`,
/// the poll, then with `acquire` an acquire fence (the loads are relaxed).
/// `slot` names the team's slot in reports. Returns 0, or the status of a
/// wait that gave up (the epoch then stays: the round did not complete).
TLE_DEV_INLINE uint32_t railWait(const Comm &c, World w, uint32_t word,
                                 uint32_t epochSlot, uint32_t slot,
                                 bool acquire, int team, FnAt fn) {
  uint32_t next = loadRelaxedGpu(epochWord(c, epochSlot)) + 1;
  if (w.nNodes > 1) {
    uint64_t target = static_cast<uint64_t>(w.nNodes - 1) * next;
    if (uint32_t status = railPoll(c, w, word, target, slot, next, team, fn))
      return status;
    if (acquire && !TLE_MUTANT(38))
      fenceAcqRelSys();
  }
  storeRelaxedGpu(epochWord(c, epochSlot), next);
  return 0;
}

} // namespace tle::impl

#endif // TLE_IMPL_RAIL_H
