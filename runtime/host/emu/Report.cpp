//===- Report.cpp - Deadlock reports and traces of emulator launches ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A deadlocked launch can hold a hundred thousand waiting threads, so the
// report groups them: one line per rank, block and tle op or library call
// (its source line) or thing waited on, with the thread ids compressed to
// ranges, and a cap on the number of lines. A launch that made no progress
// until its deadline is reported the same way. The trace's records become
// TraceJson's.
//
//===----------------------------------------------------------------------===//

#include "emu/Scheduler.h"

#include "diag/DevError.h"
#include "tle/support/Log.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>

namespace tle::emu::detail {

namespace {
constexpr size_t kMaxReportGroups = 32;
constexpr uint32_t kWarpSize = 32;

/// "0-31,40,42-47" for sorted ids.
std::string ranges(const std::vector<uint32_t> &ids) {
  std::string out;
  for (size_t i = 0; i < ids.size();) {
    size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1)
      ++j;
    if (!out.empty())
      out += ',';
    out += std::to_string(ids[i]);
    if (j > i)
      out += '-' + std::to_string(ids[j]);
    i = j + 1;
  }
  return out;
}

/// Whether reports show which lanes of a group wait where (TLE_DEBUG=TRACE):
/// by default a group inside a tle op is one line, since which of its
/// threads poll and which wait at the op's internal syncs is the library's
/// business, not the user's.
bool laneDetail() { return log::enabled(log::Level::Trace); }

/// Threads of one block that wait on the same thing: in the same tle op or
/// library call (the same source location, or with none the same entry
/// point), or, for threads outside any call or with lane detail on, at the
/// same kind of sync or wait.
struct Group {
  const char *site = nullptr;
  const char *call = nullptr; ///< the call of a merged group with no site
  bool merged = false; ///< one op's or call's threads, whatever each waits in
  Yield kind = Yield::NotStarted;
  uint32_t warp = 0;
  WaitInfo wait{};
  bool spins = false, hints = false;
  const void *hintAddr = nullptr;
  uint64_t hintValue = 0;
  const char *hintSite = nullptr;
  std::vector<uint32_t> tids;
};

/// Whether `t` is inside a tle op or library call, whose threads are one
/// line: a compiled kernel's op (its site), a typed C++ API call (its
/// caller's site), or a C ABI call from C++ (no site, the entry's name).
bool inCall(const EmuThread &t) { return t.site || t.call; }

bool sameGroup(const Group &g, const EmuThread &t, bool merge) {
  if (merge && inCall(t))
    return g.merged && g.site == t.site && (t.site || g.call == t.call);
  if (g.merged || g.kind != t.reason || g.site != t.site)
    return false;
  if (t.reason == Yield::WarpSync)
    return g.warp == t.tid / kWarpSize;
  if (t.reason == Yield::Hint)
    return g.hintAddr == t.hintAddr && g.hintValue == t.hintValue;
  if (t.reason == Yield::Spin)
    return g.wait.what == t.wait.what && g.wait.slot == t.wait.slot &&
           g.wait.epoch == t.wait.epoch &&
           samePeers(g.wait.missing, t.wait.missing) &&
           g.wait.comm == t.wait.comm && g.wait.seen == t.wait.seen &&
           g.wait.wanted == t.wait.wanted;
  return true;
}

void addThread(Group &g, const EmuThread &t) {
  g.tids.push_back(t.tid);
  if (t.reason == Yield::Spin && !g.spins) {
    g.spins = true;
    g.wait = t.wait;
  } else if (t.reason == Yield::Hint && !g.hints) {
    g.hints = true;
    g.hintAddr = t.hintAddr;
    g.hintValue = t.hintValue;
    g.hintSite = t.hintSite;
  }
  // A merged group reports the deepest thing its threads wait in: a spin,
  // else a poll, else a sync.
  if (g.tids.size() == 1 || t.reason == Yield::Spin ||
      (t.reason == Yield::Hint && g.kind != Yield::Spin)) {
    g.kind = t.reason;
    g.warp = t.tid / kWarpSize;
  }
}
} // namespace

std::string Scheduler::deadlockReport(RunResult &result,
                                      const std::string &head) const {
  // With several nodes every rank is named with its node and local rank.
  auto rankList = [this](const PeerMask &mask) {
    if (ranksPerNode == 0)
      return peerList(mask);
    std::string out;
    for (int32_t q = 0; q < kMaxRanks; ++q)
      if (mask.words[q / 64] >> (q % 64) & 1)
        out += (out.empty() ? "" : ", ") + rankName(q);
    return out.empty() ? std::string("none") : out;
  };
  // An intra wait's peers are ranks of the waiter's node.
  auto localPeers = [&](int32_t worldRank, const WaitInfo &wait) {
    if (ranksPerNode == 0)
      return peerList(wait.missing);
    PeerMask world = {};
    int32_t base = worldRank / ranksPerNode * ranksPerNode;
    for (int32_t q = 0; q + base < kMaxRanks; ++q)
      if (wait.missing.words[q / 64] >> (q % 64) & 1)
        world.words[(q + base) / 64] |= uint64_t(1) << ((q + base) % 64);
    return rankList(world);
  };
  bool merge = !laneDetail();
  bool signalWaits = false;
  std::vector<std::string> lines;
  size_t groups = 0;
  bool haveFirst = false, firstSpins = false;
  // Who could still signal a word a signal wait is waiting on: the ranks
  // with threads left (any rank may signal any word, its own included).
  PeerMask liveRanks = {};
  for (const RankState &rank : ranks)
    if (!rank.active.empty() && rank.info.rank >= 0 &&
        rank.info.rank < kMaxRanks)
      liveRanks.words[rank.info.rank / 64] |= uint64_t(1)
                                              << (rank.info.rank % 64);
  result.liveRanks = liveRanks;
  for (const RankState &rank : ranks) {
    std::vector<const Block *> blocks;
    for (const auto &b : rank.active)
      blocks.push_back(b.get());
    std::sort(blocks.begin(), blocks.end(),
              [](const Block *a, const Block *b) { return a->id < b->id; });
    for (const Block *b : blocks) {
      std::vector<Group> found;
      for (uint32_t i = 0; i < b->size; ++i) {
        const EmuThread &t = b->threads[i];
        if (t.state == ThreadState::Done)
          continue;
        auto it = std::find_if(found.begin(), found.end(), [&](const Group &g) {
          return sameGroup(g, t, merge);
        });
        if (it == found.end()) {
          Group g;
          g.site = t.site;
          g.call = t.call;
          g.merged = merge && inCall(t);
          found.push_back(g);
          it = found.end() - 1;
        }
        addThread(*it, t);
        // The record names a spinning thread if there is one: a barrier
        // waiter's missing peers explain a deadlock.
        bool spins = t.reason == Yield::Spin || t.reason == Yield::Hint;
        if (!haveFirst || (spins && !firstSpins)) {
          haveFirst = true;
          firstSpins = spins;
          result.rankIndex = rank.index;
          result.block = static_cast<int32_t>(b->id);
          result.thread = static_cast<int32_t>(t.tid);
          result.site = t.site;
          if (t.reason == Yield::Spin) {
            result.wait = t.wait;
            if (t.wait.team != 0)
              result.wait.missing = netMissing(t.wait);
          }
        }
      }
      for (const Group &g : found) {
        if (++groups > kMaxReportGroups)
          continue;
        bool whole = g.tids.size() == b->live && g.merged;
        bool one = g.tids.size() == 1 || whole;
        std::string who =
            rankName(rank.info.rank) + " block " + std::to_string(b->id);
        if (!whole)
          who +=
              (g.tids.size() == 1 ? " thread " : " threads ") + ranges(g.tids);
        std::string at = g.site ? std::string(" at ") + g.site : "";
        std::string line;
        if (g.kind == Yield::Hint) {
          std::string what = describeAddress(g.hintAddr);
          char where[64];
          std::snprintf(where, sizeof where, "%p", g.hintAddr);
          if (what.empty())
            what = where;
          std::string hintAt =
              g.hintSite ? std::string(" at ") + g.hintSite : at;
          line = who + (one ? " polls " : " poll ") + what + hintAt +
                 " (last value " + std::to_string(g.hintValue) + ")";
        } else if (g.kind == Yield::Spin && g.wait.signal) {
          line =
              who + (one ? " waits in " : " wait in ") + "signal wait" + at +
              " on signal " + std::to_string(g.wait.slot) +
              (g.wait.context ? " of context " + std::to_string(g.wait.context)
                              : std::string()) +
              " of rank " + std::to_string(g.wait.rank) +
              " for a value >= " + std::to_string(g.wait.wanted) +
              " (it holds " + std::to_string(g.wait.seen) + ")";
          signalWaits = true;
        } else if (g.kind == Yield::Spin && g.wait.team != 0) {
          // A net wait: a word counts arrivals, so the missing ranks are
          // the candidates whose adds to it fall short (netMissing).
          line = who + (one ? " waits in " : " wait in ") +
                 (g.wait.what ? g.wait.what : "a net wait") + at + " on slot " +
                 std::to_string(g.wait.slot) + " of team " +
                 (g.wait.team == kTeamInter ? "inter" : "world") +
                 " for epoch " + std::to_string(g.wait.epoch) +
                 " (its net word " + std::to_string(g.wait.netWord) +
                 " holds " + std::to_string(g.wait.seen) + " of " +
                 std::to_string(g.wait.wanted) +
                 "); missing: " + rankList(netMissing(g.wait));
        } else if (g.kind == Yield::Spin) {
          // WORLD's intra half runs on the inbox slots past nBarriers
          // (kInboxSets); name the slot as the kernel did.
          const auto *dc = static_cast<const DevComm *>(g.wait.comm);
          bool worldHalf =
              g.wait.what && dc && dc->nBarriers > 0 &&
              g.wait.slot >= dc->nBarriers &&
              std::strcmp(g.wait.what, "world barrier wait (intra half)") == 0;
          std::string slot = worldHalf
                                 ? std::to_string(g.wait.slot - dc->nBarriers) +
                                       " of team world"
                                 : std::to_string(g.wait.slot);
          line = who + (one ? " waits in " : " wait in ") +
                 (g.wait.what ? g.wait.what : "a spin wait") + at +
                 " on slot " + slot + " for epoch " +
                 std::to_string(g.wait.epoch) +
                 "; missing peers: " + localPeers(rank.info.rank, g.wait);
        } else if (g.kind == Yield::BlockSync) {
          line = who + (one ? " waits" : " wait") + " in block sync" + at +
                 " (" + std::to_string(b->syncArrived) + " of " +
                 std::to_string(b->live) + " live threads arrived)";
        } else {
          line = who + (one ? " waits" : " wait") + " in warp sync of warp " +
                 std::to_string(g.warp) + at + " (" +
                 std::to_string(b->warpArrived[g.warp]) + " of " +
                 std::to_string(b->warpLive[g.warp]) + " live lanes arrived)";
        }
        lines.push_back(std::move(line));
      }
    }
    uint64_t total = uint64_t(config.grid.x) * config.grid.y * config.grid.z;
    if (rank.nextBlock < total)
      lines.push_back("rank " + std::to_string(rank.info.rank) + " blocks " +
                      std::to_string(rank.nextBlock) + "-" +
                      std::to_string(total - 1) +
                      " not started: every resident block is blocked");
  }
  // The same for every signal wait, so said once.
  if (signalWaits)
    lines.push_back("ranks that could still signal a waited-for word: " +
                    rankList(liveRanks));
  std::string out = head;
  for (const std::string &line : lines)
    out += "\n  " + line;
  if (groups > kMaxReportGroups)
    out += "\n  ... and " + std::to_string(groups - kMaxReportGroups) +
           " more groups of waiting threads";
  return out;
}

std::vector<BarrierTraceRecord>
toTraceRecords(const std::vector<TraceRecord> &trace) {
  std::vector<BarrierTraceRecord> out;
  out.reserve(trace.size());
  for (const TraceRecord &r : trace) {
    BarrierTraceRecord b;
    b.rank = r.rank;
    b.block = r.block;
    b.thread = r.thread;
    b.kind = r.kind;
    b.coop = r.coop;
    b.order = r.order;
    b.phase = r.phase;
    b.slot = r.slot;
    b.team = r.team;
    b.site = r.site;
    b.time = r.step;
    out.push_back(b);
  }
  return out;
}

} // namespace tle::emu::detail
