//===- TraceJson.h - Barrier traces as Chrome/Perfetto JSON -----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The one writer of TLE's trace files, shared by the emulator's trace
// (tle::emu::lastTraceJson, tlerun --trace on the host) and the device
// trace rings (tleTraceWrite, tlerun --trace on GPUs), so that both produce
// the same format: a process per rank and a thread per reporting thread,
// each named by metadata events, a B/E slice per wait or sync and an
// instant per arrive, with the slot, group, order and source location in
// the args. Time is the emulator's scheduler step or the GPU's
// %globaltimer, as the document's otherData.clock says. The document's
// head and the launch markers are public (tle/trace.h).
//
//===----------------------------------------------------------------------===//

#ifndef TLE_HOST_TRACEJSON_H
#define TLE_HOST_TRACEJSON_H

#include "tle/trace.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tle {

/// One barrier event, from the emulator or a device trace ring.
struct BarrierTraceRecord {
  int32_t rank = 0;
  uint32_t block = 0, thread = 0;
  int kind = 0, coop = 0, order = 0, phase = 0; ///< abi.h's encodings
  uint32_t slot = 0;                            ///< the slot within `team`
  int team = 0;               ///< a TeamKind (kTeamIntra for signals)
  const char *site = nullptr; ///< source location, or null
  uint64_t time = 0;          ///< steps or nanoseconds (TraceClock)
};

/// The events of `records`, comma-separated and without the document
/// around them: process and thread names first, then one event per
/// record, `time - origin` on the clock's axis; with `launch`, each event's
/// args carry it. With `ranksPerNode` > 0 the records' ranks are world
/// ranks of nodes of that many, and each process is named with its node
/// ("rank 5 (node 1, local 1)"), as reports name ranks.
std::string traceEventsJson(const std::vector<BarrierTraceRecord> &records,
                            TraceClock clock, uint64_t origin,
                            std::optional<uint64_t> launch,
                            int32_t ranksPerNode = 0);

} // namespace tle

#endif // TLE_HOST_TRACEJSON_H
