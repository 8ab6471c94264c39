//===- Device.h - Where tlerun runs a kernel: emulator or GPUs --*- C++ -*-===//
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

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
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
};

/// One launch's shape.
struct LaunchShape {
  Extent grid, block;
  bool cooperative = false;
  std::optional<uint64_t> seed;
  bool trace = false;
  /// The emulator's fiber stack size (unset: its default).
  std::optional<size_t> stackBytes;
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
  /// The Chrome trace events of the last traced launch, comma-separated,
  /// with `launch` in their args and ts shifted by `tsOffset` ("" when
  /// none were recorded or tracing is unsupported).
  virtual std::string traceEvents(uint64_t launch, uint64_t tsOffset) {
    return "";
  }
};

/// The CPU emulator.
std::unique_ptr<Device> createEmuDevice();
/// The node's GPUs; null with `error` set when CUDA is not built in.
std::unique_ptr<Device> createCudaDevice(std::string &error);

} // namespace tle::run

#endif // TLE_TOOLS_TLERUN_DEVICE_H
