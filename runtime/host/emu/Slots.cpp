//===- Slots.cpp - Checks that a barrier slot serves one group ------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The state of each slot of each rank as its groups enter and leave it, and
// the rounds of every slot across ranks. A group enters a slot with its
// arrive, or with the begin of a wait or sync, and leaves it at the end of
// its wait or sync. The grid barrier's group is the whole rank: each CTA
// reports its own arrive and wait, and the slot is the grid's until the
// last CTA waiting has left.
//
//===----------------------------------------------------------------------===//

#include "emu/Slots.h"

#include "tle/detail/DevComm.h"

#include "tle/abi.h"
#include "tle/impl/Mutation.h"

namespace tle::emu::detail {

namespace {
constexpr uint32_t kWarpSize = 32;

std::string at(const char *site) {
  return site ? std::string(" at ") + site : std::string();
}

const char *kindName(int kind) {
  for (const abi::EnumCase &c : abi::kBarrierKinds)
    if (c.value == kind)
      return c.spelling;
  return "barrier";
}

const char *coopName(int coop) {
  for (const abi::EnumCase &c : abi::kCoopKinds)
    if (c.value == coop)
      return c.spelling;
  return "?";
}

/// "slot 3 of team world" for WORLD's and INTER's slots (splitTeamSlot),
/// "slot 3" for INTRA's.
std::string slotName(const SlotEvent &e) {
  const auto *dc = static_cast<const DevComm *>(e.comm);
  TeamSlot ts = splitTeamSlot(e.slot, dc ? dc->nBarriers : 0);
  std::string name = "slot " + std::to_string(ts.slot);
  if (ts.team == kTeamWorld)
    return name + " of team world";
  if (ts.team == kTeamInter)
    return name + " of team inter";
  return name;
}

std::string slotOf(const SlotEvent &e) {
  return slotName(e) + " of rank " + std::to_string(e.rank);
}

/// Which ranks share the rounds of e's slot: with several nodes, the
/// node's for INTRA's slots (and the grid's), the rail's for INTER's, the
/// world's for WORLD's; with one node, all of them.
int64_t teamOf(const SlotEvent &e) {
  const auto *dc = static_cast<const DevComm *>(e.comm);
  if (!dc || dc->nNodes <= 1)
    return 0;
  uint32_t n = dc->nBarriers;
  if (e.slot >= 2 * n)
    return 1 + dc->rank;
  if (e.slot >= n)
    return 0;
  return -1 - dc->node;
}

const char *kAdvice = "one slot serves one group at a time: give each group "
                      "its own slot (for example index = block id)";
} // namespace

SlotChecker::Group SlotChecker::groupOf(const SlotEvent &e) {
  Group g;
  g.coop = e.coop;
  if (e.coop == kCoopGrid)
    return g;
  g.block = e.block;
  if (e.coop == kCoopThread)
    g.sub = e.thread;
  else if (e.coop != kCoopBlock)
    g.sub = e.thread / kWarpSize;
  return g;
}

static std::string describe(int coop, uint32_t block, uint32_t sub) {
  std::string group = std::string(" (group ") + coopName(coop) + ")";
  if (coop == kCoopGrid)
    return "the grid" + group;
  if (coop == kCoopBlock)
    return "block " + std::to_string(block) + group;
  if (coop == kCoopThread)
    return "thread " + std::to_string(sub) + " of block " +
           std::to_string(block) + group;
  return "warp " + std::to_string(sub) + " of block " + std::to_string(block) +
         group;
}

std::optional<std::string> SlotChecker::onEvent(const SlotEvent &e) {
  Slot &s = slots[{e.comm, e.slot}];
  if (e.coop == kCoopGrid)
    return onGrid(s, e);
  Group g = groupOf(e);
  if (e.phase == kTraceEnd) {
    s.busy = s.inCall = s.arrived = false;
    s.hasLast = true;
    s.last = g;
    s.lastSite = e.site;
    s.lastExit = race ? race->now(e.raceId) : Snap{};
    return std::nullopt;
  }
  // An arrive (instant), or the begin of a wait or sync.
  if (s.busy && s.owner == g) {
    if (s.arrived &&
        (TLE_MUTANT(32) ? e.kind == kBarrierArrive : e.kind != kBarrierWait))
      return "barrier misuse: " + describe(g.coop, g.block, g.sub) +
             " of rank " + std::to_string(e.rank) + " arrives twice on " +
             slotName(e) + " without a wait:\n  first " +
             kindName(s.ownerKind) + at(s.ownerSite) + "\n  then " +
             kindName(e.kind) + at(e.site) +
             "\n  an arrive must be followed by a wait on the same slot "
             "before the group arrives again";
  } else if (auto misuse = enter(s, e, g)) {
    return misuse;
  }
  if (e.kind != kBarrierWait)
    if (auto misuse = checkRound(s, e))
      return misuse;
  s.busy = true;
  s.owner = g;
  if (e.kind == kBarrierArrive || !s.arrived) {
    s.ownerKind = e.kind;
    s.ownerSite = e.site;
  }
  if (e.kind == kBarrierArrive)
    s.arrived = true;
  else
    s.inCall = true;
  return std::nullopt;
}

std::optional<std::string> SlotChecker::enter(Slot &s, const SlotEvent &e,
                                              const Group &g) {
  // Built only for a report: every event of every group comes here.
  auto who = [&] { return describe(g.coop, g.block, g.sub); };
  if (s.busy && !TLE_MUTANT(40)) {
    std::string owner = describe(s.owner.coop, s.owner.block, s.owner.sub);
    return "barrier misuse: two groups use " + slotOf(e) + " at once:\n  " +
           owner + " entered it with " + kindName(s.ownerKind) +
           at(s.ownerSite) + " and has not left it\n  " + who() +
           " enters it with " + kindName(e.kind) + at(e.site) + "\n  " +
           kAdvice;
  }
  if (s.hasLast && !(s.last == g) && race &&
      !race->happensBefore(s.lastExit, e.raceId)) {
    std::string last = describe(s.last.coop, s.last.block, s.last.sub);
    return "barrier misuse: two groups use " + slotOf(e) +
           " and nothing orders them:\n  " + last + " left it" +
           at(s.lastSite) + "\n  " + who() + " enters it with " +
           kindName(e.kind) + at(e.site) +
           ", with no block sync, barrier or other edge from the first "
           "group since (on a GPU the two can run at once)\n  " +
           kAdvice;
  }
  return std::nullopt;
}

std::optional<std::string> SlotChecker::checkRound(Slot &s,
                                                   const SlotEvent &e) {
  uint32_t round = ++s.rounds;
  // The launch's ranks share one key; a communicator from elsewhere is
  // compared with itself only.
  const void *set = launchComms.count(e.comm) ? nullptr : e.comm;
  auto key = std::make_tuple(set, teamOf(e), e.slot, round);
  auto [it, first] = rounds.try_emplace(key, Round{e.coop, e.rank, e.site});
  if (first || it->second.coop == e.coop || TLE_MUTANT(39)) {
    // Once every rank of the launch has been compared the round is done
    // with, so that a launch's memory does not grow with its barriers. (A
    // team smaller than the launch, a node's, keeps its rounds.)
    uint32_t seen = first ? 1 : ++it->second.seen;
    if (seen >= (set ? 1u : launchComms.size()))
      rounds.erase(it);
    return std::nullopt;
  }
  const Round &r = it->second;
  return "barrier misuse: ranks use " + slotName(e) +
         " with different groups (round " + std::to_string(round) +
         " of the slot in this launch):\n  rank " + std::to_string(r.rank) +
         ": group " + coopName(r.coop) + at(r.site) + "\n  rank " +
         std::to_string(e.rank) + ": group " + coopName(e.coop) + at(e.site) +
         "\n  every rank must call a round of a slot with the same group kind";
}

std::optional<std::string> SlotChecker::onGrid(Slot &s, const SlotEvent &e) {
  if (s.busy && s.owner.coop != kCoopGrid) {
    Group g = groupOf(e);
    return enter(s, e, g);
  }
  if (e.kind == kBarrierArrive) {
    if (!s.gridArrived.insert(e.block).second)
      return "barrier misuse: block " + std::to_string(e.block) + " of rank " +
             std::to_string(e.rank) + " arrives twice on grid slot " +
             std::to_string(e.slot) + " without a wait" + at(e.site) +
             "\n  a block may have one grid arrive outstanding; wait before "
             "it arrives again";
    if (e.block == 0)
      if (auto misuse = checkRound(s, e))
        return misuse;
  } else if (e.phase == kTraceBegin) {
    ++s.gridWaiting;
  } else {
    s.gridArrived.erase(e.block);
    if (s.gridWaiting)
      --s.gridWaiting;
  }
  s.busy = !s.gridArrived.empty() || s.gridWaiting > 0;
  if (s.busy) {
    s.owner = groupOf(e);
    s.ownerKind = e.kind;
    s.ownerSite = e.site;
  } else {
    s.hasLast = false;
  }
  return std::nullopt;
}

std::shared_ptr<Check> makeSlotCheck(const CheckContext &context) {
  return std::make_shared<SlotChecker>(context.race.get(), context.comms);
}

} // namespace tle::emu::detail
