//===- Check.h - The interface of the emulator's checks ---------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A check watches a launch through the events the scheduler hears (memory
// accesses that compiled kernels and the device library report, barrier
// events) and ends the launch with a report when it sees a bug. The
// scheduler knows no check by name: it builds the registered ones
// (Checks.def) for each launch, hands each event to those that asked for
// it, in registration order, and fails the launch with the first report
// and that check's result code. A check that needs happens-before asks the
// race checker's clocks (CheckContext::race, null when the race check is
// off). docs/emulator.md, "Adding a check", is the recipe. This header is
// internal to the emulator.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_HOST_EMU_CHECK_H
#define TLE_HOST_EMU_CHECK_H

#include "tle/tle.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tle::emu::detail {

class RaceChecker;

/// One memory access a kernel or the device library reported (tleEmuAccess),
/// or one the simulated network performed for a transfer.
struct AccessEvent {
  uint32_t thread = 0; ///< the accessing thread's id in the race checker
  const void *addr = nullptr;
  uint64_t bytes = 0;
  int kind = 0;  ///< an AccessKind
  int order = 0; ///< a MemoryOrder, for atomics and fences
  const char *where = nullptr;
};

/// One tleEmuBarrierEvent of a checked communicator, with who reported it.
struct SlotEvent {
  const void *comm = nullptr;
  int32_t rank = 0;
  uint32_t block = 0;
  uint32_t thread = 0;
  int kind = 0; ///< a BarrierKind
  int coop = 0; ///< a CoopKind (kCoopGrid for the grid barrier)
  uint32_t slot = 0;
  int phase = 0; ///< a TracePhase
  const char *site = nullptr;
  uint32_t raceId = 0; ///< the thread, when the race checker runs
};

/// What a check may consult when a launch starts.
struct CheckContext {
  /// The race checker's clocks (happens-before between the launch's
  /// threads), or null when the launch runs without the race check.
  std::shared_ptr<RaceChecker> race;
  /// The device communicators of the launch's ranks.
  std::set<const void *> comms;
};

/// The events a check hears (Check::events, a mask).
enum CheckEvents : unsigned {
  kCheckAccesses = 1u << 0,
  kCheckBarrierEvents = 1u << 1,
};

class Check {
public:
  virtual ~Check() = default;

  /// The result a launch this check fails ends with (a tleResult_t of
  /// tle.h: a new kind of failure gets its own value there).
  virtual tleResult_t result() const = 0;
  /// Which events it hears (CheckEvents): the scheduler skips the others.
  virtual unsigned events() const = 0;

  /// The handlers: each returns the report of a bug the event reveals,
  /// which ends the launch.
  virtual std::optional<std::string> onAccess(const AccessEvent &) {
    return std::nullopt;
  }
  virtual std::optional<std::string> onBarrierEvent(const SlotEvent &) {
    return std::nullopt;
  }
};

/// Makes a check for one launch, or null when it does not apply to it.
using CheckFactory = std::shared_ptr<Check> (*)(const CheckContext &);

/// The registered checks for one launch, in registration order (Checks.def).
std::vector<std::shared_ptr<Check>> makeChecks(const CheckContext &context);

} // namespace tle::emu::detail

#endif // TLE_HOST_EMU_CHECK_H
