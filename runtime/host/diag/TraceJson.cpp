//===- TraceJson.cpp - Barrier traces as Chrome/Perfetto JSON -------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Chrome's trace format (the "JSON Array/Object Format" both chrome://tracing
// and ui.perfetto.dev read): ts in microseconds, pid/tid integers, "M"
// events naming processes and threads. Strings go through TLE's one JSON
// writer's escaping (tle/support/Json.h); the rest is integers. A thread's tid
// is block * 1024 + thread (a block has at most 1024 threads), so that one id
// names one reporting thread whatever the launch's block size.
//
//===----------------------------------------------------------------------===//

#include "diag/TraceJson.h"

#include "tle/abi.h"
#include "tle/support/Json.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <set>
#include <utility>

namespace tle {

namespace {
constexpr uint64_t kMaxBlockThreads = 1024;

const char *spelling(const abi::EnumCase *cases, size_t n, int value) {
  for (size_t i = 0; i < n; ++i)
    if (cases[i].value == value)
      return cases[i].spelling;
  return "?";
}
template <size_t N>
const char *spelling(const abi::EnumCase (&cases)[N], int value) {
  return spelling(cases, N, value);
}

uint64_t tidOf(const BarrierTraceRecord &r) {
  return uint64_t(r.block) * kMaxBlockThreads + r.thread;
}

std::string timeOf(TraceClock clock, uint64_t time, uint64_t origin) {
  uint64_t t = time >= origin ? time - origin : 0;
  if (clock == TraceClock::Steps)
    return std::to_string(t);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%" PRIu64 ".%03" PRIu64, t / 1000, t % 1000);
  return buf;
}
} // namespace

std::string traceEventsJson(const std::vector<BarrierTraceRecord> &records,
                            TraceClock clock, uint64_t origin,
                            std::optional<uint64_t> launch,
                            int32_t ranksPerNode) {
  std::string out;
  auto next = [&] {
    if (!out.empty())
      out += ',';
  };
  std::set<int32_t> ranks;
  std::set<std::pair<int32_t, uint64_t>> threads;
  for (const BarrierTraceRecord &r : records) {
    ranks.insert(r.rank);
    threads.insert({r.rank, tidOf(r)});
  }
  for (int32_t rank : ranks) {
    next();
    std::string name = "rank " + std::to_string(rank);
    if (ranksPerNode > 0)
      name += " (node " + std::to_string(rank / ranksPerNode) + ", local " +
              std::to_string(rank % ranksPerNode) + ")";
    out += "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" +
           std::to_string(rank) + ",\"args\":{\"name\":\"" + name + "\"}},";
    out += "{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":" +
           std::to_string(rank) +
           ",\"args\":{\"sort_index\":" + std::to_string(rank) + "}}";
  }
  for (const auto &[rank, tid] : threads) {
    next();
    out += "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" +
           std::to_string(rank) + ",\"tid\":" + std::to_string(tid) +
           ",\"args\":{\"name\":\"block " +
           std::to_string(tid / kMaxBlockThreads) + " thread " +
           std::to_string(tid % kMaxBlockThreads) + "\"}}";
  }
  for (const BarrierTraceRecord &r : records) {
    next();
    const char *ph = r.phase == kTraceBegin ? "B"
                     : r.phase == kTraceEnd ? "E"
                                            : "i";
    bool signal = r.kind == kTraceSignal || r.kind == kTraceSignalWait;
    out += "{\"name\":";
    json::appendString(out, signal ? spelling(abi::kTraceKinds, r.kind)
                                   : spelling(abi::kBarrierKinds, r.kind));
    out += signal ? ",\"cat\":\"signal\",\"ph\":\""
                  : ",\"cat\":\"barrier\",\"ph\":\"";
    out += ph;
    out += "\",";
    if (r.phase == kTraceInstant)
      out += "\"s\":\"t\",";
    out += "\"pid\":" + std::to_string(r.rank) +
           ",\"tid\":" + std::to_string(tidOf(r)) +
           ",\"ts\":" + timeOf(clock, r.time, origin) + ",\"args\":{\"" +
           (signal ? "signal" : "slot") + "\":" + std::to_string(r.slot) +
           ",\"group\":";
    json::appendString(out, spelling(abi::kCoopKinds, r.coop));
    // INTRA's events keep the form they had before teams.
    if (r.team != kTeamIntra) {
      out += ",\"team\":";
      json::appendString(out, spelling(abi::kTeamKinds, r.team));
    }
    out += ",\"order\":";
    json::appendString(out, spelling(abi::kMemoryOrders, r.order));
    out += ",\"block\":" + std::to_string(r.block) +
           ",\"thread\":" + std::to_string(r.thread);
    if (r.site) {
      out += ",\"loc\":";
      json::appendString(out, r.site);
    }
    if (launch)
      out += ",\"launch\":" + std::to_string(*launch);
    out += "}}";
  }
  return out;
}

std::string traceLaunchMarker(uint64_t launch, TraceClock clock, uint64_t time,
                              uint64_t origin) {
  return "{\"name\":\"launch " + std::to_string(launch) +
         "\",\"ph\":\"i\",\"s\":\"g\",\"pid\":0,\"tid\":0,\"ts\":" +
         timeOf(clock, time, origin) +
         ",\"args\":{\"launch\":" + std::to_string(launch) + "}}";
}

std::string traceDocumentHead(TraceClock clock) {
  const char *what =
      clock == TraceClock::Steps
          ? "emulator scheduler steps: ts counts fiber switches, not time "
            "(1 us on the time axis = 1 step)"
      : clock == TraceClock::HostNanoseconds
          ? "host monotonic clock (CPU ranks): ts in microseconds from the "
            "trace's first event (one clock for every rank of the machine)"
          : "GPU %globaltimer: ts in microseconds from the trace's first "
            "event (GPUs' timers are not synchronized: ranks may be offset "
            "by their skew)";
  std::string out = "{\"otherData\":{\"clock\":";
  json::appendString(out, what);
  out += "},\"traceEvents\":[";
  return out;
}

} // namespace tle
