//===- Device.h - Where tlerun runs a kernel: emulator or GPUs --*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The few operations tlerun's runtime core needs from a backend: load the
// kernel, copy buffer contents in and out, launch on every rank at once and
// read the barrier epochs for the summary. The CPU emulator implements it in
// EmuDevice.cpp, CUDA in CudaDevice.cpp (a stub without TLE_ENABLE_CUDA).
//
//===----------------------------------------------------------------------===//

#ifndef TLE_TOOLS_TLERUN_DEVICE_H
#define TLE_TOOLS_TLERUN_DEVICE_H

#include "Kernel.h"
#include "tle/tle.h"
#include "tle/trace.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tle::run {

/// How one launch went.
struct LaunchOutcome {
  tleResult_t result = tleSuccess;
  /// The runtime's report of a failure (rank, block, slot, epoch, peers).
  std::string message;
  /// The emulator's schedule seed, for replay; unset when no schedule ran
  /// (the launch was refused before any thread started).
  std::optional<uint64_t> seed;
  /// Scheduler steps of the launch (emulator; a trace's time unit).
  uint64_t steps = 0;
  /// Wall time of the launch, in seconds.
  double seconds = 0;
  /// The device error records of a failure (one per rank that recorded
  /// one), for --json.
  std::vector<tleErrorInfo> records;
  /// Why the race checker did not follow the launch ("" when it did or
  /// was not asked to).
  std::string raceCheckSkipped;
};

/// One launch's shape.
struct LaunchShape {
  Extent grid, block;
  bool cooperative = false;
  std::optional<uint64_t> seed;
  bool trace = false;
  /// The emulator's race checker, and the buffers' names for its reports
  /// (any rank's handle names the buffer).
  bool raceCheck = false;
  std::vector<std::pair<tleMem_t, std::string>> bufferNames;
  /// The emulator's fiber stack size (unset: its default).
  std::optional<size_t> stackBytes;
  /// The emulator's network latency in steps (unset: its default).
  std::optional<uint64_t> netLatencySteps;
  /// Host-side deadline for a GPU launch in ms, past the device timeout
  /// (0: none); the device library's own timeout should fire first.
  uint64_t watchdogMs = 0;
};

class Device {
public:
  virtual ~Device() = default;
  virtual tleBackend_t backend() const = 0;
  /// Prepares `kernel` on every rank of `comms`.
  virtual bool load(const LoadedKernel &kernel, const tleComm_t *comms,
                    int nRanks, std::string &error) = 0;
  /// Copies into / out of rank `rank`'s copy of a buffer (tleMemGetLocalPtr).
  virtual bool write(int rank, void *dst, const void *src, size_t bytes,
                     std::string &error) = 0;
  virtual bool read(int rank, void *dst, const void *src, size_t bytes,
                    std::string &error) = 0;
  /// Launches on all ranks; argsPerRank[i] are the parameter pointers of
  /// rank i (comms[i]).
  virtual LaunchOutcome launch(const LaunchShape &shape,
                               void **const *argsPerRank) = 0;
  /// Checks a launch of `shape` on `nRanks` ranks before anything is
  /// allocated; adds the host memory it needs to `hostBytes`. False with
  /// `error` set when it cannot run.
  virtual bool plan(const LaunchShape &shape, int nRanks, uint64_t &hostBytes,
                    std::string &error) {
    return true;
  }
  /// What the trace's ts counts (tle/trace.h).
  virtual TraceClock traceClock() const = 0;
  /// Starts recording barrier events, before the first launch.
  virtual bool startTrace(std::string &error) { return true; }
  /// The trace of the last launch, `launch` (1-based): its marker (a global
  /// instant event "launch K") and its events, comma-separated, with
  /// `launch` in their args ("" when none were recorded). On the emulator
  /// ts counts scheduler steps from `stepOffset` (the steps of the launches
  /// before); on GPUs nanoseconds from the first traced launch.
  virtual std::string traceLaunch(uint64_t launch, uint64_t stepOffset,
                                  std::string &marker) = 0;
};

/// The CPU emulator.
std::unique_ptr<Device> createEmuDevice();
/// The node's GPUs; null with `error` set when CUDA is not built in.
std::unique_ptr<Device> createCudaDevice(std::string &error);

} // namespace tle::run

#endif // TLE_TOOLS_TLERUN_DEVICE_H
