//===- JobError.cpp - One report of a failed wait across the ranks --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The culprit is found in the order a person debugging a hang would look:
// a dead process first (every other wait gave up because of it), then a
// rank that failed with another error (its peers time out behind it), then
// a barrier slot used out of step or ranks that disagree on the slot, then
// a peer that never arrived (it left the kernel, or is stuck elsewhere),
// then a signal that nobody sent.
//
//===----------------------------------------------------------------------===//

#include "diag/JobError.h"

#include "tle/support/Json.h"

#include <cinttypes>
#include <cstdio>

namespace tle {

const char *fateName(RankFate fate) {
  switch (fate) {
  case RankFate::Waiting:
    return "waiting";
  case RankFate::Failed:
    return "failed";
  case RankFate::Exited:
    return "exited";
  case RankFate::Dead:
    return "dead";
  case RankFate::Silent:
    return "silent";
  }
  return "unknown";
}

namespace {

/// What a failed wait waited on.
enum class WaitKind { None, Barrier, Signal, PeerLost };

WaitKind waitKind(const ErrorRecord &e) {
  switch (e.code) {
  case kDevErrTimeout:
  case kDevErrDeadlock:
    return WaitKind::Barrier;
  case kDevErrSignalTimeout:
  case kDevErrSignalDeadlock:
    return WaitKind::Signal;
  case kDevErrAborted:
    return isSignalWait(e.function) ? WaitKind::Signal : WaitKind::Barrier;
  case kDevErrPeerFailure:
    return WaitKind::PeerLost;
  default:
    return WaitKind::None;
  }
}

/// The call a record names; "" for the emulator's deadlock records, which
/// name none (DevError.cpp leaves it out of their message too).
std::string recordCall(const ErrorRecord &e) {
  if (e.code == kDevErrDeadlock || e.code == kDevErrSignalDeadlock)
    return "";
  return callName(e.function);
}

/// The text of the record's call site: what the process's table holds for
/// it (tleSiteRegister), the line of a typed C++ call on a GPU
/// (kSiteLineOnly), "site <id>" for an id nobody registered, "" for none
/// (site 0: FlagCX's entry points, a deadlock's waiter with no location).
std::string siteText(const ErrorRecord &e) {
  if (e.site == 0)
    return "";
  if (const char *text = tleSiteText(e.site))
    return text;
  if (e.site & kSiteLineOnly)
    return "line " + std::to_string(e.site & ~kSiteLineOnly) +
           " (a typed C++ call on a GPU: its file is not recorded)";
  return "site " + std::to_string(e.site);
}

bool has(const uint64_t *mask, int q) { return mask[q / 64] >> (q % 64) & 1; }

/// One rank, normalised: world ranks throughout.
struct Rank {
  const RankView *view = nullptr;
  tleErrorInfo info{};
  WaitKind kind = WaitKind::None;
  RankFate fate = RankFate::Exited;
};

std::string rankSet(const std::vector<int> &ranks) {
  std::string s;
  for (int q : ranks)
    s += (s.empty() ? "" : ",") + std::to_string(q);
  return s.empty() ? "none" : s;
}

std::string line(const Rank &r) {
  const ErrorRecord &e = r.view->record;
  std::string who = "rank " + std::to_string(r.view->rank);
  switch (r.fate) {
  case RankFate::Dead:
    return who + " is dead: its process ended without a goodbye (the "
                 "watchdog's view)";
  case RankFate::Silent:
    return who + " did not answer: blocked in a kernel without a TLE "
                 "timeout (timeout 0), or hung on the host";
  case RankFate::Exited:
    return who + " has no failed wait: it left the kernel (or never "
                 "launched it)";
  case RankFate::Failed:
    if (std::string site = siteText(e); !site.empty())
      return who + " failed at " + site + ": " + r.info.message;
    return who + " failed: " + r.info.message;
  case RankFate::Waiting:
    break;
  }
  who += " block " + std::to_string(e.block) + " thread " +
         std::to_string(e.thread);
  std::string call = recordCall(e);
  std::string in = " waits in " + (!call.empty() ? call
                                   : r.kind == WaitKind::Signal
                                       ? std::string("a signal wait")
                                       : std::string("a barrier wait"));
  if (std::string site = siteText(e); !site.empty())
    in += " at " + site;
  char how[64];
  if (e.code == kDevErrTimeout || e.code == kDevErrSignalTimeout)
    snprintf(how, sizeof(how), " (timed out after %llu ms)",
             static_cast<unsigned long long>(e.elapsedNs / 1000000));
  else if (e.code == kDevErrAborted)
    snprintf(how, sizeof(how), " (aborted)");
  else
    snprintf(how, sizeof(how), " (deadlock)");
  std::vector<int> missing;
  for (int q = 0; q < kMaxRanks; ++q)
    if (has(r.info.missingPeers, q))
      missing.push_back(q);
  switch (r.kind) {
  case WaitKind::Barrier:
    return who + in + " on slot " + std::to_string(e.slot) + " for epoch " +
           std::to_string(e.epoch) + "; missing peers: " + rankSet(missing) +
           how;
  case WaitKind::Signal:
    return who + in + " on signal " + std::to_string(e.slot) +
           (e.context ? " of context " + std::to_string(e.context)
                      : std::string()) +
           " of rank " + std::to_string(r.view->rank) +
           " for a value >= " + std::to_string(e.wanted) + " (it holds " +
           std::to_string(e.seen) + ")" + how;
  case WaitKind::PeerLost: {
    // The first wait that gave up added its call site (impl::addWaitSite).
    std::string site = siteText(e);
    return "rank " + std::to_string(r.view->rank) + " gave up its waits" +
           (site.empty() ? "" : " (the first at " + site + ")") +
           ": the watchdog saw rank(s) " + rankSet(missing) + " die";
  }
  case WaitKind::None:
    break;
  }
  return who + ": " + r.info.message;
}

/// The likely culprit and why; -1 when the cause names no one rank.
int findCulprit(const std::vector<Rank> &ranks, std::string &why) {
  auto at = [&](int q) -> const Rank * {
    for (const Rank &r : ranks)
      if (r.view->rank == q)
        return &r;
    return nullptr;
  };
  for (const Rank &r : ranks)
    if (r.fate == RankFate::Dead) {
      why = "rank " + std::to_string(r.view->rank) +
            " died; every other rank's wait on the communicator gave up";
      return r.view->rank;
    }
  for (const Rank &r : ranks)
    if (r.fate == RankFate::Failed) {
      why = "rank " + std::to_string(r.view->rank) +
            " failed with another error first; its peers' waits are behind "
            "it: " +
            r.info.message;
      return r.view->rank;
    }
  // Barrier waits that disagree: one slot at two epochs, or peers that
  // wait for each other on different slots.
  for (const Rank &a : ranks)
    for (const Rank &b : ranks) {
      if (&a == &b || a.kind != WaitKind::Barrier ||
          b.kind != WaitKind::Barrier || a.view->rank > b.view->rank)
        continue;
      const ErrorRecord &x = a.view->record, &y = b.view->record;
      if (x.slot == y.slot && x.epoch != y.epoch) {
        why = "slot " + std::to_string(x.slot) + " is used out of step: rank " +
              std::to_string(a.view->rank) + " waits for epoch " +
              std::to_string(x.epoch) + ", rank " +
              std::to_string(b.view->rank) + " for epoch " +
              std::to_string(y.epoch) +
              ": two groups share the slot, or one rank ran more rounds on it";
        return -1;
      }
      if (x.slot != y.slot && has(a.info.missingPeers, b.view->rank) &&
          has(b.info.missingPeers, a.view->rank)) {
        why = "ranks " + std::to_string(a.view->rank) + " and " +
              std::to_string(b.view->rank) +
              " wait for each other on different slots (" +
              std::to_string(x.slot) + " and " + std::to_string(y.slot) +
              "): they disagree on the barrier's index";
        return -1;
      }
    }
  for (const Rank &r : ranks) {
    if (r.kind != WaitKind::Barrier)
      continue;
    const ErrorRecord &e = r.view->record;
    for (int q = 0; q < kMaxRanks; ++q) {
      const Rank *p = has(r.info.missingPeers, q) ? at(q) : nullptr;
      if (!p || p->fate == RankFate::Waiting)
        continue;
      why = "rank " + std::to_string(q) + " never arrived at slot " +
            std::to_string(e.slot) + " epoch " + std::to_string(e.epoch) +
            " (rank " + std::to_string(r.view->rank) + " waits for it): " +
            (p->fate == RankFate::Exited
                 ? "it left the kernel without it (a skipped barrier)"
                 : "it does not answer (stuck in a wait without a TLE "
                   "timeout, timeout 0, or on its host)");
      return q;
    }
  }
  for (const Rank &r : ranks) {
    if (r.kind != WaitKind::Signal || r.view->record.code == kDevErrAborted)
      continue;
    const ErrorRecord &e = r.view->record;
    std::vector<int> left, silent;
    for (const Rank &p : ranks)
      if (p.fate == RankFate::Exited)
        left.push_back(p.view->rank);
      else if (p.fate == RankFate::Silent)
        silent.push_back(p.view->rank);
    why =
        "signal " + std::to_string(e.slot) + " of rank " +
        std::to_string(r.view->rank) + " never reached " +
        std::to_string(e.wanted) + " (it holds " + std::to_string(e.seen) +
        "): a signal never sent; ranks that left the kernel: " + rankSet(left) +
        "; silent: " + rankSet(silent);
    if (left.size() + silent.size() == 1)
      return left.empty() ? silent[0] : left[0];
    return -1;
  }
  for (const Rank &r : ranks)
    if (r.view->hasRecord && r.view->record.code == kDevErrAborted) {
      why = "the communicator was aborted (tleCommAbort) while ranks waited";
      return -1;
    }
  for (const Rank &r : ranks)
    if (r.fate == RankFate::Silent) {
      why = "rank " + std::to_string(r.view->rank) +
            " does not answer: it is stuck in a wait without a TLE timeout "
            "(timeout 0), or on its host";
      return r.view->rank;
    }
  for (const Rank &r : ranks)
    if (r.fate == RankFate::Waiting) {
      why = "no rank explains it: every rank waits (rank " +
            std::to_string(r.view->rank) + ": " + r.info.message + ")";
      return -1;
    }
  return -1;
}

void appendKey(std::string &out, const char *key) {
  json::appendString(out, key);
  out += ": ";
}

} // namespace

JobReport mergeJobReport(const std::vector<RankView> &views) {
  JobReport out;
  std::vector<Rank> ranks(views.size());
  // The watchdog's view: the ranks a peer-failure record names are dead.
  std::vector<bool> dead(kMaxRanks);
  for (size_t i = 0; i < views.size(); ++i) {
    Rank &r = ranks[i];
    r.view = &views[i];
    if (!r.view->hasRecord)
      continue;
    describeErrorRecord(r.view->record, r.info, r.view->node);
    r.kind = waitKind(r.view->record);
    if (r.kind == WaitKind::PeerLost)
      for (int q = 0; q < kMaxRanks; ++q)
        if (has(r.info.missingPeers, q))
          dead[q] = true;
  }
  for (Rank &r : ranks) {
    int q = r.view->rank;
    if (r.view->dead || (q >= 0 && q < kMaxRanks && dead[q]))
      r.fate = RankFate::Dead;
    else if (!r.view->answered)
      r.fate = RankFate::Silent;
    else if (!r.view->hasRecord)
      r.fate = RankFate::Exited;
    else
      r.fate = r.kind == WaitKind::None ? RankFate::Failed : RankFate::Waiting;
    out.fates.push_back(r.fate);
    // A silent rank is a failure too: it may hang with no timeout.
    if (r.fate != RankFate::Exited) {
      if (out.result == tleSuccess && r.view->hasRecord)
        out.result = r.info.result;
      out.failed = true;
    }
  }
  if (out.failed && out.result == tleSuccess) {
    bool anyDead = false;
    for (const Rank &r : ranks)
      anyDead |= r.fate == RankFate::Dead;
    out.result = anyDead ? tlePeerFailure : tleTimeout;
  }
  if (!out.failed) {
    out.text = "job report (" + std::to_string(views.size()) +
               " ranks): no rank recorded a failed wait";
  } else {
    out.culprit = findCulprit(ranks, out.why);
    out.text = "job report (" + std::to_string(views.size()) +
               " ranks): a wait failed; who waits where for whom:";
    for (const Rank &r : ranks)
      out.text += "\n  " + line(r);
    out.text += "\n  likely culprit: " + out.why;
  }
  std::string &j = out.json;
  j = "{";
  appendKey(j, "failed");
  j += out.failed ? "true" : "false";
  j += ", ";
  appendKey(j, "result");
  json::appendString(j, tleGetErrorString(out.result));
  j += ", ";
  appendKey(j, "culprit");
  if (out.culprit >= 0)
    json::appendNumber(j, out.culprit);
  else
    j += "null";
  j += ", ";
  appendKey(j, "why");
  json::appendString(j, out.why);
  j += ", ";
  appendKey(j, "ranks");
  j += "[";
  for (size_t i = 0; i < ranks.size(); ++i) {
    const Rank &r = ranks[i];
    const ErrorRecord &e = r.view->record;
    j += i ? ", {" : "{";
    appendKey(j, "rank");
    json::appendNumber(j, r.view->rank);
    j += ", ";
    appendKey(j, "fate");
    json::appendString(j, fateName(r.fate));
    if (r.view->hasRecord) {
      static const char *kKinds[] = {"other", "barrier", "signal", "peer_lost"};
      j += ", ";
      appendKey(j, "wait");
      json::appendString(j, kKinds[static_cast<int>(r.kind)]);
      j += ", ";
      appendKey(j, "error");
      json::appendString(j, tleGetErrorString(r.info.result));
      if (r.kind == WaitKind::Barrier || r.kind == WaitKind::Signal) {
        j += ", ";
        appendKey(j, r.kind == WaitKind::Signal ? "signal" : "slot");
        json::appendNumber(j, e.slot);
      }
      if (r.kind == WaitKind::Barrier) {
        j += ", ";
        appendKey(j, "epoch");
        json::appendNumber(j, e.epoch);
      }
      if (r.kind == WaitKind::Signal) {
        j += ", ";
        appendKey(j, "seen");
        json::appendNumber(j, e.seen);
        j += ", ";
        appendKey(j, "wanted");
        json::appendNumber(j, e.wanted);
      }
      j += ", ";
      appendKey(j, "block");
      json::appendNumber(j, e.block);
      j += ", ";
      appendKey(j, "thread");
      json::appendNumber(j, e.thread);
      j += ", ";
      appendKey(j, "missing");
      j += "[";
      bool first = true;
      for (int q = 0; q < kMaxRanks; ++q)
        if (has(r.info.missingPeers, q)) {
          j += first ? "" : ", ";
          json::appendNumber(j, q);
          first = false;
        }
      j += "], ";
      appendKey(j, "call");
      json::appendString(j, recordCall(e));
      j += ", ";
      appendKey(j, "site");
      if (std::string site = siteText(e); !site.empty())
        json::appendString(j, site);
      else
        j += "null";
      j += ", ";
      appendKey(j, "message");
      json::appendString(j, r.info.message);
    }
    j += "}";
  }
  j += "], ";
  appendKey(j, "report");
  json::appendString(j, out.text);
  j += "}";
  return out;
}

} // namespace tle
