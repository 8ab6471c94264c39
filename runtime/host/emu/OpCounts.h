//===- OpCounts.h - A launch's table of device-memory ops -------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// While a launch runs, the host build inside libtle counts its DeviceOps
// into a plain table of the launch (count() in tle/impl/PlatformHost.h:
// no call and no locked add per communicator load); the table joins the
// process's counts (tle::emu::deviceOpCounts) when the launch ends, however
// it ends.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_HOST_EMU_OPCOUNTS_H
#define TLE_HOST_EMU_OPCOUNTS_H

#include "tle/detail/EmuHooks.h"

#include <cstdint>

namespace tle::emu::detail {

/// Makes its table this OS thread's opTally for its lifetime, then adds
/// the table to the process's counts and restores the previous one.
class OpTallyScope {
public:
  OpTallyScope();
  ~OpTallyScope();
  OpTallyScope(const OpTallyScope &) = delete;
  OpTallyScope &operator=(const OpTallyScope &) = delete;

private:
  uint64_t table[static_cast<int>(DeviceOp::NumKinds)] = {};
  uint64_t *outer;
};

} // namespace tle::emu::detail

#endif // TLE_HOST_EMU_OPCOUNTS_H
