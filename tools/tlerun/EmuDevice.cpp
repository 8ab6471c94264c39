//===- EmuDevice.cpp - tlerun on the CPU emulator -------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Runs a host-compiled kernel (`void NAME(void **args)`) on the TLE CPU
// emulator. Buffers are plain memory here. The launch's deadline is the
// communicators' timeout (--timeout-ms).
//
//===----------------------------------------------------------------------===//

#include "Device.h"

#include "tle/emu.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

using namespace tle::run;

namespace {
/// The emulator's options for `shape`.
tle::emu::LaunchOptions launchOptions(const LaunchShape &shape) {
  tle::emu::LaunchOptions options;
  options.grid = {shape.grid.x, shape.grid.y, shape.grid.z};
  options.block = {shape.block.x, shape.block.y, shape.block.z};
  options.seed = shape.seed;
  options.cooperative = shape.cooperative;
  options.trace = shape.trace;
  options.raceCheck = shape.raceCheck;
  options.bufferNames = shape.bufferNames;
  options.replayWith = "--seed ";
  options.stackBytes = shape.stackBytes.value_or(0);
  options.netLatencySteps = shape.netLatencySteps;
  // A cooperative launch needs the whole grid resident (up to what the
  // emulator can hold, which then says the grid is too big); the
  // emulator's default residency stands for the SM count otherwise.
  if (shape.cooperative)
    options.maxResidentBlocks = static_cast<uint32_t>(std::clamp<uint64_t>(
        shape.grid.total(), tle::emu::kDefaultResidentBlocks,
        tle::emu::kMaxResidentBlocks));
  return options;
}

class EmuDevice final : public Device {
public:
  tleBackend_t backend() const override { return tleBackendEmulator; }

  bool load(const LoadedKernel &kernel, const tleComm_t *comms, int nRanks,
            std::string &error) override {
    if (!kernel.hostEntry) {
      error = "kernel '" + kernel.meta.name +
              "' has no host code (a cuda bundle cannot run on the emulator; "
              "compile with tlec --target=host or pass the .mlir)";
      return false;
    }
    entry = kernel.hostEntry;
    this->comms.assign(comms, comms + nRanks);
    return true;
  }

  bool write(int, void *dst, const void *src, size_t bytes,
             std::string &) override {
    std::memcpy(dst, src, bytes);
    return true;
  }
  bool read(int, void *dst, const void *src, size_t bytes,
            std::string &) override {
    std::memcpy(dst, src, bytes);
    return true;
  }

  bool plan(const LaunchShape &shape, int nRanks, uint64_t &hostBytes,
            std::string &error) override {
    tle::emu::LaunchFootprint footprint;
    if (tle::emu::planLaunch(nullptr, nRanks, launchOptions(shape), footprint,
                             error) != tleSuccess)
      return false;
    hostBytes += footprint.bytes;
    return true;
  }

  LaunchOutcome launch(const LaunchShape &shape,
                       void **const *argsPerRank) override {
    tle::emu::LaunchOptions options = launchOptions(shape);
    std::vector<int> rankToIndex(comms.size(), 0);
    for (size_t i = 0; i < comms.size(); ++i) {
      int rank = 0;
      tleCommRank(comms[i], &rank);
      if (rank >= 0 && static_cast<size_t>(rank) < comms.size())
        rankToIndex[rank] = static_cast<int>(i);
    }
    void (*kernel)(void **) = entry;
    auto start = std::chrono::steady_clock::now();
    tle::emu::LaunchResult result = tle::emu::launch(
        comms.data(), static_cast<int>(comms.size()), options,
        [&](int rank, void *) { kernel(argsPerRank[rankToIndex[rank]]); });
    auto end = std::chrono::steady_clock::now();
    LaunchOutcome outcome;
    outcome.result = result.result;
    outcome.message = result.message;
    if (result.error.result != tleSuccess)
      outcome.records.push_back(result.error);
    if (result.started)
      outcome.seed = result.seed;
    outcome.steps = result.steps;
    outcome.raceCheckSkipped = result.raceCheckSkipped;
    outcome.seconds = std::chrono::duration<double>(end - start).count();
    traced = shape.trace && result.started;
    return outcome;
  }

  tle::TraceClock traceClock() const override { return tle::TraceClock::Steps; }

  std::string traceLaunch(uint64_t launch, uint64_t stepOffset,
                          std::string &marker) override {
    marker =
        tle::traceLaunchMarker(launch, tle::TraceClock::Steps, stepOffset, 0);
    return traced ? tle::emu::lastTraceEvents(launch, stepOffset) : "";
  }

private:
  void (*entry)(void **) = nullptr;
  std::vector<tleComm_t> comms;
  bool traced = false;
};
} // namespace

std::unique_ptr<Device> tle::run::createEmuDevice() {
  return std::make_unique<EmuDevice>();
}
