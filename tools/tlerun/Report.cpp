//===- Report.cpp - tlerun's diagnostics, summary and --json object -------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Implements Report.h. The text forms are the ones docs/tools.md documents
// (the output contract); the JSON object holds the same facts, written with
// tle/support/Json.h, and the hook that still writes it (and closes a trace
// on a pipe) when the emulator ends the process.
//
//===----------------------------------------------------------------------===//

#include "Report.h"

#include "tle/emu.h"
#include "tle/support/Json.h"
#include "tle/trace.h"
#include "tle/version.h"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <unistd.h>

using namespace tle::run;

namespace {
/// What the fatal hook writes, prepared before each launch (armFatal): it
/// runs in a signal handler, so it only reads these and calls write(2).
struct FatalOutput {
  std::string jsonHead, jsonTail; ///< around the report's escaped text
  bool json = false;
  int traceFd = -1;
};
FatalOutput fatal;

void writeAll(int fd, const char *data, size_t bytes) {
  while (bytes) {
    ssize_t n = ::write(fd, data, bytes);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return;
    data += n;
    bytes -= static_cast<size_t>(n);
  }
}

/// Writes `text` as the inside of a JSON string, without allocating.
void writeJsonEscaped(int fd, const char *text, size_t bytes) {
  char buf[512];
  size_t n = 0;
  for (size_t i = 0; i < bytes; ++i) {
    if (n + 6 > sizeof buf) {
      writeAll(fd, buf, n);
      n = 0;
    }
    auto c = static_cast<unsigned char>(text[i]);
    if (c == '"' || c == '\\') {
      buf[n++] = '\\';
      buf[n++] = static_cast<char>(c);
    } else if (c == '\n') {
      buf[n++] = '\\';
      buf[n++] = 'n';
    } else if (c < 0x20 || c == 0x7f) {
      const char *hex = "0123456789abcdef";
      for (char e : {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]})
        buf[n++] = e;
    } else {
      buf[n++] = static_cast<char>(c);
    }
  }
  writeAll(fd, buf, n);
}

void onFatal(const char *report, size_t bytes) {
  if (fatal.traceFd >= 0)
    writeAll(fatal.traceFd, tle::kTraceDocumentTail,
             std::strlen(tle::kTraceDocumentTail));
  if (!fatal.json)
    return;
  writeAll(STDOUT_FILENO, fatal.jsonHead.data(), fatal.jsonHead.size());
  writeJsonEscaped(STDOUT_FILENO, report, bytes);
  writeAll(STDOUT_FILENO, fatal.jsonTail.data(), fatal.jsonTail.size());
}
} // namespace

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

void Report::armFatal(unsigned launch, std::optional<uint64_t> seed,
                      int traceFd) {
  static bool installed = false;
  if (!installed)
    tle::emu::setFatalHook(&onFatal);
  installed = true;
  fatal.traceFd = traceFd;
  fatal.json = json;
  if (!json)
    return;
  // The object finish() would write, with a marker where the report goes.
  static constexpr const char *kMarker = "@@report@@";
  std::string saved = errorJson;
  errorJson.clear();
  json::Writer w(errorJson);
  w.beginObject().key("stage").value("launch");
  w.key("message").value(kMarker);
  w.key("launch").value(launch);
  w.key("result").value("the emulator ended the process");
  w.key("result_code").null();
  w.key("seed");
  if (seed)
    w.value(*seed);
  else
    w.null();
  w.key("records").beginArray().endArray().endObject();
  std::string whole = render(1);
  errorJson = std::move(saved);
  size_t at = whole.find(kMarker);
  fatal.jsonHead = whole.substr(0, at);
  fatal.jsonTail = whole.substr(at + std::strlen(kMarker));
  std::fflush(stdout); // the hook writes to the descriptor
}

std::string Report::render(int status) const {
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
  return out;
}

int Report::finish(int status) {
  fatal.json = false;
  fatal.traceFd = -1;
  if (!json) {
    std::fflush(stdout);
    return status;
  }
  std::string out = render(status);
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
  return status;
}
