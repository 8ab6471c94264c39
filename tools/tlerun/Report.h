//===- Report.h - What tlerun tells: text on stderr, or --json --*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// tlerun's results in both forms. Without --json: diagnostics and the
// summary are lines on stderr, the --dump lines go to stdout as they are
// read. With --json, the same lines still go to stderr, and stdout gets
// exactly one JSON object when tlerun ends (tle/support/Json.h writes it):
//
//   {"tool": "tlerun", "version": "0.2.0", "exit_status": 1,
//    "run": {"kernel": ..., "target": "host", "ranks": 2, "grid": [..],
//            "block": [..], "launches_requested": 1},
//    "dumps": [{"rank": 0, "buffer": "out", "values": [...]}, ...],
//    "summary": {"launches": 1, "seed": 42, "time_ms": {"min": ..,
//                "median": .., "max": ..}, "barrier_rounds": 8,
//                "barrier_ops": 2},
//    "error": {"stage": "launch", "message": ..., "launch": 1,
//              "result": "timed out", "result_code": 4, "seed": 42,
//              "records": [{"rank": 1, "slot": 3, "epoch": 7,
//                           "missing_peers": [0], ...}]}}
//
// "run" is there once the kernel is loaded, "summary" after a successful
// run, "error" (null on success) says what failed at which stage: usage,
// load, params, setup, launch or dump. The dumps are held in memory until
// the end. When the emulator ends the process during a launch, a hook
// writes the object all the same, with the emulator's report as the error.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_TOOLS_TLERUN_REPORT_H
#define TLE_TOOLS_TLERUN_REPORT_H

#include "Device.h"
#include "Options.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tle::run {

class Report {
public:
  explicit Report(bool json) : json(json) {}

  bool isJson() const { return json; }
  /// The run's parameters, once the kernel is known.
  void setRun(const Options &options, const BundleKernel &kernel);
  /// Prints "tlerun: MESSAGE" on stderr and makes it the run's error.
  void error(const char *stage, const std::string &message);
  /// Reports launch `launch` (1-based) of `launches` that failed.
  void launchFailed(unsigned launch, unsigned launches,
                    const LaunchOutcome &outcome, bool progress);
  /// One dumped buffer of one rank, a JSON object the caller writes with
  /// tle::json into `text` and passes on chunk by chunk (dumpChunk empties
  /// `text`): with --json into the report's "dumps", otherwise to stdout,
  /// one line per rank and buffer.
  void dumpBegin();
  void dumpChunk(std::string &text);
  void dumpEnd(std::string &text);
  /// The summary (--repeat prints it on stderr; --json always records it).
  void summary(const Options &options, const LoadedKernel &kernel,
               tleBackend_t backend, std::vector<double> times,
               std::optional<uint64_t> rounds, std::optional<uint64_t> seed,
               bool print);
  /// Writes the JSON object (with --json) and returns `status`.
  int finish(int status);
  /// Prepares what tlerun still writes if the emulator ends the process
  /// during launch `launch` (a fatal signal or the watchdog, which skip
  /// finish()): with --json, the object with the emulator's report as the
  /// error; with a trace on a pipe (`traceFd`, -1: none), the document's
  /// closing bracket. Installs the hook (tle::emu::setFatalHook) once.
  void armFatal(unsigned launch, std::optional<uint64_t> seed, int traceFd);

private:
  /// The JSON object with exit status `status`.
  std::string render(int status) const;

  bool json;
  std::string run, dumps, summaryJson, errorJson;
  bool anyDump = false;
};

} // namespace tle::run

#endif // TLE_TOOLS_TLERUN_REPORT_H
