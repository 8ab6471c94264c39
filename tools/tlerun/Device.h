//===- Device.h - Where tlerun runs a kernel: emulator or GPUs ---*- C++
//-*-===//
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

namespace tle::run {

/// How one launch went.
struct LaunchOutcome {
  tleResult_t result = tleSuccess;
  /// The runtime's report of a failure (rank, block, slot, epoch, peers).
  std::string message;
  /// The emulator's schedule seed, for replay.
  std::optional<uint64_t> seed;
  /// Wall time of the launch, in seconds.
  double seconds = 0;
};

/// One launch's shape.
struct LaunchShape {
  Extent grid, block;
  bool cooperative = false;
  std::optional<uint64_t> seed;
  bool trace = false;
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
  /// Chrome trace JSON of the last traced launch ("" when unsupported).
  virtual std::string traceJson() = 0;
};

/// The CPU emulator.
std::unique_ptr<Device> createEmuDevice();
/// The node's GPUs; null with `error` set when CUDA is not built in.
std::unique_ptr<Device> createCudaDevice(std::string &error);

} // namespace tle::run

#endif // TLE_TOOLS_TLERUN_DEVICE_H
