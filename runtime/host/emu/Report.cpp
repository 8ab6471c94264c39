//===- Report.cpp - Deadlock reports and traces of emulator launches ------===//
//
// A deadlocked launch can hold a hundred thousand waiting threads, so the
// report groups them: one line per rank, block and thing waited on, with the
// thread ids compressed to ranges, and a cap on the number of lines. A
// launch that made no progress until its deadline is reported the same way.
//
//===----------------------------------------------------------------------===//

#include "emu/Scheduler.h"

#include "DevError.h"

#include <algorithm>
#include <cstdio>
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

/// Threads of one block that wait on the same thing.
struct Group {
  Yield kind;
  uint32_t warp = 0;
  WaitInfo wait{};
  const void *hintAddr = nullptr;
  uint64_t hintValue = 0;
  std::vector<uint32_t> tids;
};

bool sameGroup(const Group &g, const EmuThread &t) {
  if (g.kind != t.reason)
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

void appendJsonString(std::string &out, const std::string &s) {
  out += '"';
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  out += '"';
}
} // namespace

std::string Scheduler::deadlockReport(RunResult &result,
                                      const std::string &head) const {
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
        auto it = std::find_if(found.begin(), found.end(),
                               [&](const Group &g) { return sameGroup(g, t); });
        if (it == found.end()) {
          found.push_back({t.reason,
                           t.tid / kWarpSize,
                           t.wait,
                           t.hintAddr,
                           t.hintValue,
                           {}});
          it = found.end() - 1;
        }
        it->tids.push_back(t.tid);
        // The record names a spinning thread if there is one: a barrier
        // waiter's missing peers explain a deadlock.
        bool spins = t.reason == Yield::Spin || t.reason == Yield::Hint;
        if (!haveFirst || (spins && !firstSpins)) {
          haveFirst = true;
          firstSpins = spins;
          result.rankIndex = rank.index;
          result.block = static_cast<int32_t>(b->id);
          result.thread = static_cast<int32_t>(t.tid);
          if (t.reason == Yield::Spin)
            result.wait = t.wait;
        }
      }
      for (const Group &g : found) {
        if (++groups > kMaxReportGroups)
          continue;
        std::string who = "rank " + std::to_string(rank.info.rank) + " block " +
                          std::to_string(b->id) +
                          (g.tids.size() == 1 ? " thread " : " threads ") +
                          ranges(g.tids);
        std::string line;
        if (g.kind == Yield::Hint) {
          char where[64];
          std::snprintf(where, sizeof where, "%p (last value %llu)", g.hintAddr,
                        static_cast<unsigned long long>(g.hintValue));
          line = who + (g.tids.size() == 1 ? " polls " : " poll ") + where +
                 " (tleEmuSpinHint)";
        } else if (g.kind == Yield::Spin && g.wait.signal) {
          line = who + (g.tids.size() == 1 ? " waits in " : " wait in ") +
                 "signal wait on signal " + std::to_string(g.wait.slot) +
                 " of rank " + std::to_string(g.wait.rank) +
                 " for a value >= " + std::to_string(g.wait.wanted) +
                 " (it holds " + std::to_string(g.wait.seen) +
                 "); ranks that could still signal it: " + peerList(liveRanks);
        } else if (g.kind == Yield::Spin) {
          line = who + (g.tids.size() == 1 ? " waits in " : " wait in ") +
                 (g.wait.what ? g.wait.what : "a spin wait") + " on slot " +
                 std::to_string(g.wait.slot) + " for epoch " +
                 std::to_string(g.wait.epoch) +
                 "; missing peers: " + peerList(g.wait.missing);
        } else if (g.kind == Yield::BlockSync) {
          line = who + " wait in block sync (" +
                 std::to_string(b->syncArrived) + " of " +
                 std::to_string(b->live) + " live threads arrived)";
        } else {
          line = who + " wait in warp sync of warp " + std::to_string(g.warp) +
                 " (" + std::to_string(b->warpArrived[g.warp]) + " of " +
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
  std::string out = head;
  for (const std::string &line : lines)
    out += "\n  " + line;
  if (groups > kMaxReportGroups)
    out += "\n  ... and " + std::to_string(groups - kMaxReportGroups) +
           " more groups of waiting threads";
  return out;
}

std::string traceEventsToJson(const std::vector<TraceRecord> &trace,
                              std::optional<uint64_t> launch,
                              uint64_t tsOffset) {
  std::string out;
  for (const TraceRecord &r : trace) {
    if (!out.empty())
      out += ',';
    out += "{\"name\":";
    appendJsonString(out, r.name);
    out += ",\"ph\":\"";
    out += r.begin ? 'B' : 'E';
    out += "\",\"pid\":" + std::to_string(r.rank) + ",\"tid\":" +
           std::to_string(uint64_t(r.block) * r.blockSize + r.thread) +
           ",\"ts\":" + std::to_string(r.step + tsOffset) +
           ",\"args\":{\"slot\":" + std::to_string(r.slot) +
           ",\"block\":" + std::to_string(r.block) +
           ",\"thread\":" + std::to_string(r.thread);
    if (launch)
      out += ",\"launch\":" + std::to_string(*launch);
    out += "}}";
  }
  return out;
}

std::string traceToJson(const std::vector<TraceRecord> &trace) {
  return "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[" +
         traceEventsToJson(trace, std::nullopt, 0) + "]}";
}

} // namespace tle::emu::detail
