//===- trace.h - Barrier traces for tools -----------------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// What a tool needs to build one Chrome/Perfetto trace out of several
// launches (tlerun --trace): the document's head for its clock, a marker
// per launch, and the events the device library recorded in the
// communicators' trace rings (tleCommTraceStart in tle.h). The emulator's
// own trace comes from tle::emu::lastTraceEvents (tle/emu.h). Both are
// written by one writer inside libtle, in one format: a process per rank,
// a thread per recording thread, a B/E slice per wait or sync and an
// instant per arrive, with slot, group, order (and on the emulator the
// op's source location) in the args.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_TRACE_H
#define TLE_TRACE_H

#include "tle/tle.h"

#include <cstdint>
#include <optional>
#include <string>

namespace tle {

/// What a trace's `ts` counts; the document says it in otherData.clock.
enum class TraceClock {
  /// The emulator's scheduler steps (fiber switches), drawn as
  /// microseconds: an order of events, not a time.
  Steps,
  /// A GPU's %globaltimer, in microseconds from an origin.
  Nanoseconds,
  /// The host's monotonic clock (the emulator backend's device ring: CPU
  /// ranks), in microseconds from an origin.
  HostNanoseconds,
};

/// The start of a trace document: otherData, then `"traceEvents":[`. The
/// events follow, comma-separated, and kTraceDocumentTail ends it.
TLE_API std::string traceDocumentHead(TraceClock clock);
inline constexpr const char kTraceDocumentTail[] = "]}";

/// A global instant event "launch K" at `time - origin`.
TLE_API std::string traceLaunchMarker(uint64_t launch, TraceClock clock,
                                      uint64_t time, uint64_t origin);

/// Takes the events the trace rings of `comms` recorded since the last
/// take, as comma-separated JSON events ("" if none), in `events`. Times
/// are nanoseconds from `origin`; an `origin` of 0 is set to the earliest
/// event taken. `first` is the earliest time taken (0 if none). With
/// `launch`, each event's args carry it.
TLE_API tleResult_t traceTakeEvents(const tleComm_t *comms, int nComms,
                                    std::optional<uint64_t> launch,
                                    uint64_t &origin, std::string &events,
                                    uint64_t &first);

} // namespace tle

#endif // TLE_TRACE_H
