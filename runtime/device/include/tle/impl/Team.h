//===- Team.h - Barriers, signals and queries over INTER and WORLD -*- C++
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//-*-===//
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
TLE_DEV_INLINE int32_t teamRank(const void *comm, int team, abi::Fn fn) {
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
TLE_DEV_INLINE int32_t teamSize(const void *comm, int team, abi::Fn fn) {
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

} // namespace tle::impl

#endif // TLE_IMPL_TEAM_H
