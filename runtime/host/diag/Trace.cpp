//===- Trace.cpp - The device library's trace rings: the C API -----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// tleCommTraceStart gives a communicator a ring of barrier events in memory
// the host can read (host-mapped pinned memory on GPUs, so that the events
// of a launch that trapped are still there) with its index counter in
// device memory, and points DevComm::trace at it; the device library then
// records into it (tle/impl/Trace.h). Taking the events reads the whole
// ring, keeps the events recorded since the last take in the order of
// their `seq`, skips a record a wrapping writer was overwriting, and hands
// them to the one trace writer (TraceJson.h).
//
//===----------------------------------------------------------------------===//

#include "comm/Comm.h"
#include "comm/Handles.h"
#include "diag/Error.h"
#include "diag/TraceJson.h"

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <memory>

namespace tle {
namespace {

constexpr uint32_t kDefaultTraceEvents = 1u << 16;
constexpr uint32_t kMaxTraceEvents = 1u << 24;

size_t ringBytes(uint64_t capacity) {
  return offsetof(TraceRing, events) + capacity * sizeof(TraceEvent);
}

/// Points the device communicator at `ring` (device address, or null).
tleResult_t publishRing(CommState &c, TraceRing *ring) {
  return c.backend->copyToLocal(reinterpret_cast<char *>(c.devComm) +
                                    offsetof(DevComm, trace),
                                &ring, sizeof ring);
}

tleResult_t stop(CommState &c) {
  if (!c.traceHost)
    return tleSuccess;
  tleResult_t r = publishRing(c, nullptr);
  c.backend->freeHostVisible(c.traceHost);
  c.backend->freeLocal(c.traceNext);
  c.traceHost = c.traceDev = nullptr;
  c.traceNext = nullptr;
  c.traceTaken = 0;
  return r;
}

tleResult_t start(CommState &c, uint32_t capacity) {
  if (capacity == 0)
    capacity = kDefaultTraceEvents;
  if (capacity > kMaxTraceEvents || (capacity & (capacity - 1)))
    return fail(tleInvalidArgument,
                "capacity %u is not a power of two up to %u events", capacity,
                kMaxTraceEvents);
  if (tleResult_t r = stop(c))
    return r;
  void *next = nullptr;
  if (tleResult_t r = c.backend->allocLocal(sizeof(uint64_t), &next))
    return r;
  void *host = nullptr, *dev = nullptr;
  if (tleResult_t r =
          c.backend->allocHostVisible(ringBytes(capacity), &host, &dev)) {
    c.backend->freeLocal(next);
    return r;
  }
  auto *ring = static_cast<TraceRing *>(host);
  std::memset(ring, 0, ringBytes(capacity));
  ring->next = static_cast<uint64_t *>(next);
  ring->capacity = capacity;
  c.traceHost = ring;
  c.traceDev = static_cast<TraceRing *>(dev);
  c.traceNext = static_cast<uint64_t *>(next);
  c.traceTaken = 0;
  if (tleResult_t r = publishRing(c, c.traceDev)) {
    stop(c);
    return r;
  }
  return tleSuccess;
}

/// Appends the events of `c`'s ring since the last take to `out`, in the
/// order they were recorded. The ring is read whole, by `seq`: its counter
/// is in device memory, which a launch that trapped may leave unreadable.
void take(CommState &c, std::vector<BarrierTraceRecord> &out) {
  TraceRing *ring = c.traceHost;
  if (!ring)
    return;
  std::vector<std::pair<uint64_t, const TraceEvent *>> fresh;
  for (uint64_t i = 0; i < ring->capacity; ++i) {
    const TraceEvent &e = ring->events[i];
    uint64_t seq = __atomic_load_n(&e.seq, __ATOMIC_ACQUIRE);
    // seq names the slot it belongs in: one that does not was being
    // overwritten by a writer that wrapped around.
    if (seq > c.traceTaken && ((seq - 1) & (ring->capacity - 1)) == i)
      fresh.push_back({seq, &e});
  }
  std::sort(fresh.begin(), fresh.end());
  for (const auto &[seq, e] : fresh) {
    BarrierTraceRecord r;
    r.rank = c.node * c.size + c.rank; // the world rank: one process per rank
    r.block = e->block;
    r.thread = e->thread;
    r.kind = e->kind;
    r.coop = e->coop;
    r.order = e->order;
    r.phase = e->phase;
    TeamSlot ts = splitTeamSlot(e->slot, c.config.nBarriers);
    r.slot = ts.slot;
    r.team = ts.team;
    r.time = e->ns;
    out.push_back(r);
    c.traceTaken = seq;
  }
}

tleResult_t takeAll(const tleComm_t *comms, int nComms,
                    std::optional<uint64_t> launch, uint64_t &origin,
                    std::string &events, uint64_t &first) {
  events.clear();
  first = 0;
  if (!comms || nComms < 1)
    return fail(tleInvalidArgument, "comms is NULL or nComms < 1");
  std::vector<BarrierTraceRecord> records;
  // Past one node, processes are named with their node, as reports name
  // ranks (traceEventsJson).
  int32_t ranksPerNode = 0;
  for (int i = 0; i < nComms; ++i) {
    std::shared_ptr<CommState> c;
    std::string arg = "comms[" + std::to_string(i) + "]";
    if (tleResult_t r = lookupComm(comms[i], c, arg.c_str()))
      return r;
    if (c->nNodes > 1)
      ranksPerNode = c->size;
    take(*c, records);
  }
  for (const BarrierTraceRecord &r : records)
    if (!first || r.time < first)
      first = r.time;
  if (!origin)
    origin = first;
  events = traceEventsJson(records, TraceClock::Nanoseconds, origin, launch,
                           ranksPerNode);
  return tleSuccess;
}

} // namespace

tleResult_t traceTakeEvents(const tleComm_t *comms, int nComms,
                            std::optional<uint64_t> launch, uint64_t &origin,
                            std::string &events, uint64_t &first) {
  return guard("traceTakeEvents", [&] {
    return takeAll(comms, nComms, launch, origin, events, first);
  });
}

} // namespace tle

using namespace tle;

extern "C" {

tleResult_t tleCommTraceStart(tleComm_t comm, uint32_t capacity) {
  return guard("tleCommTraceStart", [&] {
    std::shared_ptr<CommState> c;
    if (tleResult_t r = lookupComm(comm, c))
      return r;
    return start(*c, capacity);
  });
}

tleResult_t tleCommTraceStop(tleComm_t comm) {
  return guard("tleCommTraceStop", [&] {
    std::shared_ptr<CommState> c;
    if (tleResult_t r = lookupComm(comm, c))
      return r;
    return stop(*c);
  });
}

tleResult_t tleTraceWrite(const tleComm_t *comms, int nComms,
                          const char *path) {
  return guard("tleTraceWrite", [&] {
    if (!path)
      return fail(tleInvalidArgument, "path is NULL");
    // A communicator without a ring would add no events, silently: the
    // trace of a program that stopped before it wrote is an empty file.
    for (int i = 0; comms && i < nComms; ++i) {
      std::shared_ptr<CommState> c;
      std::string arg = "comms[" + std::to_string(i) + "]";
      if (tleResult_t r = lookupComm(comms[i], c, arg.c_str()))
        return r;
      if (!c->traceHost)
        return fail(tleInvalidArgument,
                    "%s (rank %d) records no trace: call tleCommTraceStart "
                    "before its launches, and tleTraceWrite before "
                    "tleCommTraceStop, which frees the events",
                    arg.c_str(), c->rank);
    }
    uint64_t origin = 0, first = 0;
    std::string events;
    if (tleResult_t r =
            takeAll(comms, nComms, std::nullopt, origin, events, first))
      return r;
    std::unique_ptr<FILE, int (*)(FILE *)> file(std::fopen(path, "wb"),
                                                std::fclose);
    if (!file)
      return fail(tleSystemError, "cannot write %s: %s", path,
                  std::strerror(errno));
    // The emulator backend's ring stamps the host's clock (CPU ranks).
    std::shared_ptr<CommState> c0;
    TraceClock clock = TraceClock::Nanoseconds;
    if (nComms > 0 && lookupComm(comms[0], c0) == tleSuccess &&
        c0->config.backend == tleBackendEmulator)
      clock = TraceClock::HostNanoseconds;
    std::string doc = traceDocumentHead(clock) + events + kTraceDocumentTail;
    if (std::fwrite(doc.data(), 1, doc.size(), file.get()) != doc.size() ||
        std::fclose(file.release()) != 0)
      return fail(tleSystemError, "cannot write %s: %s", path,
                  std::strerror(errno));
    return tleSuccess;
  });
}

} // extern "C"
