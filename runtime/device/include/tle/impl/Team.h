//===- Team.h - Barriers, signals and queries over INTER and WORLD --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The teams of docs/design.md ("Teams"): INTRA (the node), INTER (this
// local rank on every node, a rail) and WORLD (every rank). INTRA is the
// barrier and signals of Barrier.h and SignalOps.h; this file dispatches
// on the team and serves the queries.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_IMPL_TEAM_H
#define TLE_IMPL_TEAM_H

#include "tle/impl/Barrier.h"
#include "tle/impl/Pointer.h"
#include "tle/impl/SignalOps.h"

namespace tle::impl {

/// This rank's index in team `team`, and the team's size.
TLE_DEV_INLINE int32_t teamRank(const void *comm, int team, FnAt fn) {
  Comm c = checkComm(comm, fn);
  if (TLE_UNLIKELY(static_cast<uint32_t>(team) > kTeamWorld))
    failArgument(comm, 0, fn, kArgTeamKind, team, kTeamWorld);
  int32_t node = loadConst(&c.dc->node);
  if (team == kTeamIntra)
    return static_cast<int32_t>(c.rank);
  if (team == kTeamInter)
    return node;
  return node * static_cast<int32_t>(c.size) + static_cast<int32_t>(c.rank);
}
TLE_DEV_INLINE int32_t teamSize(const void *comm, int team, FnAt fn) {
  Comm c = checkComm(comm, fn);
  if (TLE_UNLIKELY(static_cast<uint32_t>(team) > kTeamWorld))
    failArgument(comm, 0, fn, kArgTeamKind, team, kTeamWorld);
  int32_t nodes = loadConst(&c.dc->nNodes);
  if (team == kTeamIntra)
    return static_cast<int32_t>(c.size);
  if (team == kTeamInter)
    return nodes;
  return nodes * static_cast<int32_t>(c.size);
}

/// Reports what teamSignalAdd's combined check rejected: the signal index,
/// its context, then a peer outside team `team` (of `limit` members).
[[noreturn]] TLE_DEV_COLD void failTeamSignal(const Comm &c, uint32_t sig,
                                              uint32_t context, int team,
                                              int peer, uint32_t limit,
                                              FnAt fn) {
  Failure f{kDevErrSignalOutOfRange, fn};
  f.slot = sig;
  uint32_t nSignals = loadConst(&c.dc->nSignals);
  if (sig >= nSignals) {
    f.limit = nSignals;
    failComm(c.dc, f);
  }
  uint32_t contexts = loadConst(&c.dc->nContexts);
  if (context >= contexts)
    failArgument(c.dc, sig, fn, kArgContextId, context, contexts);
  f.code = kDevErrBadArgument;
  f.argument = kArgPeer;
  f.value = static_cast<uint64_t>(static_cast<int64_t>(peer));
  f.limit = limit;
  f.aux = static_cast<uint32_t>(team); // the report names the team's bound
  failComm(c.dc, f);
}

/// Adds `value` to signal `sig` of network context `context` of member
/// `peer` of team `team` (INTRA: a rank of this node, INTER: a node, WORLD:
/// a world rank) for the group `coop`. A member on this node gets today's
/// add into its word (signalAdd); one on another node a net add (Net.h)
/// into the same word, which its owner waits on, reads and resets as any
/// other.
TLE_DEV_INLINE void teamSignalAdd(const void *comm, int team, int peer,
                                  uint32_t sig, uint64_t value, int coop,
                                  FnAt fn, uint32_t context = 0) {
  if (team == kTeamIntra) {
    signalAdd(comm, peer, sig, value, coop, fn, context);
    return;
  }
  checkCoop(comm, sig, coop, kOrderRelaxed, fn);
  Group g = makeGroup(coop);
  // Every thread checks before the group sync, as signalAdd.
  Comm c = checkComm(comm, fn);
  World w = checkWorld(c, fn);
  uint32_t q = static_cast<uint32_t>(peer);
  uint32_t limit = team == kTeamInter ? w.nNodes : w.nNodes * c.size;
  uint32_t nSignals = loadConst(&c.dc->nSignals);
  uint64_t flat = contextWord(context, nSignals, sig);
  if (TLE_UNLIKELY(sig >= nSignals || flat >= loadConst(&c.dc->nSignalWords) ||
                   q >= limit))
    failTeamSignal(c, sig, context, team, peer, limit, fn);
  uint32_t worldPeer =
      team == kTeamInter ? q * c.size + (TLE_MUTANT(41) ? 0 : c.rank) : q;
  uint32_t node = worldPeer / c.size;
  if (node == w.node) {
    signalAdd(comm, static_cast<int>(worldPeer - node * c.size), sig, value,
              coop, fn, context);
    return;
  }
  if (!TLE_MUTANT(42))
    groupSync(g);
  if (g.rank == 0) {
    traceSignal(c.dc, kTraceSignal, g.kind, sig, kOrderRelease, kTraceBegin);
    netAdd(c.dc, static_cast<int32_t>(worldPeer), static_cast<uint32_t>(flat),
           value);
    traceSignal(c.dc, kTraceSignal, g.kind, sig, kOrderRelease, kTraceEnd);
  }
  groupSync(g);
}

} // namespace tle::impl

#endif // TLE_IMPL_TEAM_H
