//===- JobError.h - The job's report of a failed wait -----------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// When a wait fails on a GPU each rank has only its own device error record
// (DevError.h). The job's report merges every rank's view into one
// wait-for picture, the shape of the emulator's deadlock report: who waits
// where for whom, who has left the kernel, who is dead or silent, and the
// likely culprit. The merge is pure (records in, text and JSON out), so it
// is tested on hand-made records; JobGather.cpp collects the records.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_RUNTIME_HOST_JOBERROR_H
#define TLE_RUNTIME_HOST_JOBERROR_H

#include "diag/DevError.h"

#include <string>
#include <vector>

namespace tle {

/// One rank's contribution to the job's report.
struct RankView {
  int rank = 0;           ///< world rank
  bool answered = false;  ///< contributed to the gather
  bool dead = false;      ///< the watchdog saw its process die
  bool hasRecord = false; ///< `record` is a completed device error record
  ErrorRecord record{};
  RecordNode node{}; ///< where the communicator that wrote it sits
};

/// What a rank was doing when the report was made.
enum class RankFate {
  Waiting, ///< a barrier or signal wait failed (timeout, deadlock, abort)
  Failed,  ///< another device error (a bad index, a bad argument...)
  Exited,  ///< answered with no record: its kernel ended (or never ran)
  Dead,    ///< its process died (the watchdog's view)
  Silent,  ///< did not answer: blocked (timeout 0) or hung on the host
};

/// Lower-case name of a fate, as the JSON writes it ("waiting"...).
const char *fateName(RankFate fate);

struct JobReport {
  bool failed = false;             ///< some rank recorded a failure or died
  tleResult_t result = tleSuccess; ///< the first failing rank's status
  int culprit = -1;                ///< the likely culprit's world rank, or -1
  std::string why;                 ///< the culprit line (no culprit: the cause)
  std::vector<RankFate> fates;     ///< by position in the views
  std::string text;                ///< the report, several lines
  std::string json;                ///< the same as one JSON object
};

/// Merges the views (one per world rank, in rank order) into one report.
JobReport mergeJobReport(const std::vector<RankView> &views);

} // namespace tle

#endif // TLE_RUNTIME_HOST_JOBERROR_H
