//===- JobGather.cpp - Gathering every rank's error record ----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// tleCommGetJobError. Every rank's device error record lives in
// host-visible memory, so a rank blocked in a kernel still has a readable
// record: the ranks of a tleCommInitAll set are read directly (their fault
// group holds every rank's record), and ranks of other processes send
// theirs through the bootstrap, an all-gather with the bootstrap's
// deadline. A rank that does not answer by then is reported as silent; a
// rank the watchdog saw die, as dead. Records are read, not cleared: the
// rank's own tleCommGetError still finds its record afterwards.
//
//===----------------------------------------------------------------------===//

#include "diag/JobError.h"

#include "comm/Comm.h"
#include "comm/Handles.h"
#include "diag/Abort.h"
#include "diag/Error.h"

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <mutex>

namespace tle {
namespace {

/// The record that holds fault word `word` (Errors.cpp publishes
/// &record->abort as the rank's fault word).
const ErrorRecord *recordOfFaultWord(const uint32_t *word) {
  return reinterpret_cast<const ErrorRecord *>(
      reinterpret_cast<const char *>(word) - offsetof(ErrorRecord, abort));
}

/// A completed record's copy, else the last one the host took from it, or
/// false. The device publishes a record with a release store of state 2.
bool peekRecord(const ErrorRecord &rec, ErrorRecord &out) {
  if (__atomic_load_n(&rec.state, __ATOMIC_ACQUIRE) != 2)
    return lastTakenRecord(rec, out);
  std::memcpy(&out, &rec, sizeof(out));
  return true;
}

/// Bytes of a call site's text on the wire (longer ones are cut).
constexpr size_t kWireSiteBytes = 256;

/// What one rank sends the others: a version, so that a peer running
/// another build is refused rather than misread, then its view, and the
/// text of its record's call site as its own table holds it (tleSiteText):
/// the others may never have registered that line (a rank that skipped the
/// barrier never compiled its call), and enter it in theirs, so that every
/// rank prints the same report.
struct Wire {
  uint32_t version;
  int32_t rank;
  uint32_t hasRecord;
  int32_t node;
  int32_t ranksPerNode;
  ErrorRecord record;
  char site[kWireSiteBytes]; ///< NUL-terminated; empty: unknown
};
constexpr uint32_t kWireVersion = 0x4a4f4202; // "JOB" 2

RecordNode nodeOf(const CommState &c, int worldRank) {
  if (c.nNodes <= 1)
    return {};
  return {worldRank / c.size, c.size};
}

/// Every rank of a tleCommInitAll set, read through its fault group.
void gatherInProcess(const CommState &c, std::vector<RankView> &views) {
  FaultGroup &g = *c.faults;
  g.users.fetch_add(1); // a destroy waits for us before its record goes
  for (int r = 0; r < g.size; ++r) {
    RankView v;
    v.rank = r;
    v.node = nodeOf(c, r);
    if (uint32_t *word = g.words[r].load()) {
      v.answered = true;
      v.hasRecord = peekRecord(*recordOfFaultWord(word), v.record);
    }
    views.push_back(v);
  }
  g.users.fetch_sub(1);
}

/// Every rank of a communicator of one process per rank, through the
/// bootstrap; the ranks that did not answer stay silent.
void gatherAcrossProcesses(CommState &c, std::vector<RankView> &views) {
  Bootstrap &b = c.worldBootstrap ? *c.worldBootstrap : *c.bootstrap;
  int me = c.node * c.size + c.rank;
  Wire mine = {};
  mine.version = kWireVersion;
  mine.rank = me;
  mine.hasRecord = peekRecord(*c.errorHost, mine.record);
  if (const char *text =
          mine.hasRecord ? tleSiteText(mine.record.site) : nullptr)
    std::snprintf(mine.site, sizeof mine.site, "%s", text);
  RecordNode node = nodeOf(c, me);
  mine.node = node.node;
  mine.ranksPerNode = node.ranksPerNode;
  int world = c.nNodes * c.size;
  views.assign(world, RankView{});
  for (int q = 0; q < world; ++q) {
    views[q].rank = q;
    views[q].node = nodeOf(c, q);
  }
  // NCCL's exchange would queue behind the hung kernel; a bootstrap of
  // one node's ranks cannot reach the world: this rank's view alone.
  bool exchange = b.outOfBand() && b.size() == world;
  std::vector<std::string> all;
  tleResult_t r = tleInternalError;
  if (exchange)
    r = b.allGather(
        std::string(reinterpret_cast<const char *>(&mine), sizeof(mine)), all);
  // This rank's own view stands whatever the others did.
  views[me].answered = true;
  views[me].hasRecord = mine.hasRecord;
  views[me].record = mine.record;
  views[me].node = node;
  for (int q : b.lostPeers())
    if (q >= 0 && q < world)
      views[q].dead = true;
  if (r != tleSuccess || static_cast<int>(all.size()) != world)
    return;
  for (int q = 0; q < world; ++q) {
    Wire w;
    if (all[q].size() != sizeof(w))
      continue;
    std::memcpy(&w, all[q].data(), sizeof(w));
    if (w.version != kWireVersion || w.rank != q)
      continue;
    views[q].answered = true;
    views[q].hasRecord = w.hasRecord != 0;
    views[q].record = w.record;
    w.site[sizeof w.site - 1] = '\0';
    if (w.hasRecord && w.site[0] && !tleSiteText(w.record.site))
      tleSiteRegister(w.record.site, w.site);
    views[q].node = {w.node, w.ranksPerNode};
  }
}

/// The last report this thread gathered (tleCommGetJobError(NULL, ...)).
thread_local std::string lastJson;

tleResult_t copyOut(const std::string &json, char *buf, size_t size,
                    size_t *needed) {
  if (needed)
    *needed = json.size() + 1;
  if (!buf || size == 0)
    return tleSuccess;
  size_t n = json.size() < size - 1 ? json.size() : size - 1;
  std::memcpy(buf, json.data(), n);
  buf[n] = '\0';
  return tleSuccess;
}

} // namespace
} // namespace tle

using namespace tle;

tleResult_t tleCommGetJobError(tleComm_t handle, char *buf, size_t size,
                               size_t *needed) {
  return guard("tleCommGetJobError", [&]() -> tleResult_t {
    if (!buf && size)
      return fail(tleInvalidArgument, "buf is NULL but size is %zu", size);
    if (!handle) {
      copyOut(lastJson, buf, size, needed);
      return tleSuccess;
    }
    std::shared_ptr<CommState> comm;
    if (tleResult_t r = lookupComm(handle, comm))
      return r;
    std::vector<RankView> views;
    // A fault group that holds the whole world is a tleCommInitAll set's;
    // a communicator of one process made from NCCL holds its own rank. A
    // failed exchange leaves the ranks that did not answer silent.
    bool inProcess =
        !comm->multiProcess && comm->faults->size == comm->nNodes * comm->size;
    if (inProcess)
      gatherInProcess(*comm, views);
    else
      gatherAcrossProcesses(*comm, views);
    JobReport report = mergeJobReport(views);
    lastJson = report.json;
    copyOut(report.json, buf, size, needed);
    if (!report.failed)
      return tleSuccess;
    // One rank prints the picture: the lowest that answered (this caller
    // reads every rank of an in-process set).
    int me = comm->node * comm->size + comm->rank;
    int printer = me;
    for (const RankView &v : views)
      if (v.answered && !inProcess) {
        printer = v.rank;
        break;
      }
    if (printer == me)
      fprintf(stderr, "TLE: %s\n", report.text.c_str());
    return fail(report.result, "%s", report.text.c_str());
  });
}
