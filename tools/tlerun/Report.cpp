//===- Report.cpp - tlerun's diagnostics, summary and --json object -------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Implements Report.h. The text forms are the ones docs/tools.md documents
// (the output contract); the JSON object holds the same facts, written with
// tle/detail/Json.h.
//
//===----------------------------------------------------------------------===//

#include "Report.h"

#include "tle/detail/Json.h"
#include "tle/version.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>

using namespace tle::run;

void Report::setRun(const Options &options, const BundleKernel &kernel) {
  run.clear();
  json::Writer w(run);
  auto extent = [&](const Extent &e) {
    w.beginArray().value(e.x).value(e.y).value(e.z).endArray();
  };
  w.beginObject().key("input").value(options.input);
  w.key("kernel").value(kernel.name);
  w.key("target").value(options.target);
  w.key("ranks").value(options.ranks);
  if (options.nodes > 1)
    w.key("nodes").value(options.nodes);
  w.key("grid");
  extent(options.grid);
  w.key("block");
  extent(options.block);
  w.key("launches_requested").value(options.repeat);
  w.key("params").beginArray();
  for (const std::string &param : kernel.params)
    w.value(param);
  w.endArray().endObject();
}

void Report::error(const char *stage, const std::string &message) {
  std::fprintf(stderr, "tlerun: %s\n", message.c_str());
  errorJson.clear();
  json::Writer(errorJson)
      .beginObject()
      .key("stage")
      .value(stage)
      .key("message")
      .value(message)
      .endObject();
}

void Report::launchFailed(unsigned launch, unsigned launches,
                          const LaunchOutcome &outcome, bool progress) {
  std::fprintf(stderr, "%stlerun: launch %u of %u failed: %s\n",
               progress ? "\n" : "", launch, launches,
               tleGetErrorString(outcome.result));
  if (!outcome.message.empty())
    std::fprintf(stderr, "%s%s", outcome.message.c_str(),
                 outcome.message.back() == '\n' ? "" : "\n");
  // The emulator's report ends with the replay hint (LaunchOptions::
  // replayWith is tlerun's --seed): one hint, not two.

  errorJson.clear();
  json::Writer w(errorJson);
  w.beginObject().key("stage").value("launch");
  w.key("message").value(outcome.message);
  w.key("launch").value(launch);
  w.key("result").value(tleGetErrorString(outcome.result));
  w.key("result_code").value(static_cast<int>(outcome.result));
  w.key("seed");
  if (outcome.seed)
    w.value(*outcome.seed);
  else
    w.null();
  w.key("records").beginArray();
  for (const tleErrorInfo &r : outcome.records) {
    w.beginObject().key("result").value(tleGetErrorString(r.result));
    w.key("result_code").value(static_cast<int>(r.result));
    w.key("rank").value(r.rank).key("slot").value(r.slot);
    w.key("epoch").value(r.epoch);
    w.key("missing_peers").beginArray();
    for (int p = 0; p < TLE_MAX_RANKS; ++p)
      if (r.missingPeers[p / 64] >> (p % 64) & 1)
        w.value(p);
    w.endArray();
    w.key("block").value(r.block).key("thread").value(r.thread);
    w.key("barrier_slots").value(r.nBarriers);
    w.key("elapsed_ns").value(r.elapsedNs);
    w.key("message").value(
        std::string_view(r.message, strnlen(r.message, sizeof(r.message))));
    w.endObject();
  }
  w.endArray().endObject();
}

void Report::dumpBegin() {
  if (json && anyDump)
    dumps += ", ";
  anyDump = true;
}

void Report::dumpChunk(std::string &text) {
  if (json)
    dumps += text;
  else
    std::fwrite(text.data(), 1, text.size(), stdout);
  text.clear();
}

void Report::dumpEnd(std::string &text) {
  if (!json)
    text += '\n';
  dumpChunk(text);
}

void Report::summary(const Options &options, const LoadedKernel &kernel,
                     tleBackend_t backend, std::vector<double> times,
                     std::optional<uint64_t> rounds,
                     std::optional<uint64_t> seed, bool print) {
  std::sort(times.begin(), times.end());
  double median =
      times.size() % 2
          ? times[times.size() / 2]
          : (times[times.size() / 2 - 1] + times[times.size() / 2]) / 2;
  summaryJson.clear();
  json::Writer w(summaryJson);
  w.beginObject().key("backend").value(backend == tleBackendCuda ? "cuda"
                                                                 : "emulator");
  w.key("launches").value(times.size());
  w.key("seed");
  if (seed)
    w.value(*seed);
  else
    w.null();
  w.key("time_ms").beginObject();
  w.key("min").value(times.front() * 1e3);
  w.key("median").value(median * 1e3);
  w.key("max").value(times.back() * 1e3).endObject();
  w.key("barrier_rounds");
  if (rounds)
    w.value(*rounds);
  else
    w.null();
  w.key("barrier_ops").value(kernel.meta.barrierOps).endObject();
  if (!print)
    return;

  std::fprintf(stderr,
               "tlerun: kernel %s, %d ranks (%s), grid %ux%ux%u, block "
               "%ux%ux%u, %zu launches",
               kernel.meta.name.c_str(), options.ranks,
               backend == tleBackendCuda ? "cuda" : "emulator", options.grid.x,
               options.grid.y, options.grid.z, options.block.x, options.block.y,
               options.block.z, times.size());
  if (seed)
    std::fprintf(stderr, ", seed %" PRIu64, *seed);
  std::fprintf(stderr, "\n");
  std::fprintf(stderr,
               "tlerun: per-launch time: min %.3f ms, median %.3f ms, max "
               "%.3f ms\n",
               times.front() * 1e3, median * 1e3, times.back() * 1e3);
  if (rounds)
    std::fprintf(stderr,
                 "tlerun: barrier rounds: %" PRIu64 " (%.1f per launch; slot "
                 "epochs of rank 0), %u barrier ops in the kernel\n",
                 *rounds, double(*rounds) / times.size(),
                 kernel.meta.barrierOps);
  else
    std::fprintf(stderr,
                 "tlerun: barrier rounds: unknown, %u barrier ops in "
                 "the kernel\n",
                 kernel.meta.barrierOps);
}

int Report::finish(int status) {
  if (!json) {
    std::fflush(stdout);
    return status;
  }
  std::string out;
  json::Writer w(out);
  w.beginObject().key("tool").value("tlerun");
  w.key("version").value(TLE_VERSION_STRING);
  w.key("exit_status").value(status);
  w.key("run");
  if (run.empty())
    w.null();
  else
    w.raw(run);
  w.key("dumps").beginArray().raw(dumps).endArray();
  w.key("summary");
  if (summaryJson.empty())
    w.null();
  else
    w.raw(summaryJson);
  w.key("error");
  if (errorJson.empty())
    w.null();
  else
    w.raw(errorJson);
  w.endObject();
  out += '\n';
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
  return status;
}
