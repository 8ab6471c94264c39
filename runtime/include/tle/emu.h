//===- emu.h - Launching kernels on the CPU emulator -------------*- C++
//-*-===//
//
// The CPU emulator runs a launch of `grid x block` threads on each of N ranks
// as fibers under one deterministic scheduler on the calling OS thread. A seed
// chooses the interleaving, so a failing schedule can be replayed with
// TLE_EMU_SEED. Fibers switch only inside the hooks of tle/detail/EmuHooks.h
// (block and warp sync, spin waits, thread exit). When every live thread of a
// launch that covers all ranks of its communicator is blocked, the launch
// stops at once with tleDeadlock and a report of who waits for whom. This
// header declares the C++ entry point for kernels written as C++ callables,
// the C entry point for compiled kernels, and small id helpers for kernel
// bodies. docs/emulator.md describes the scheduling rules.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_EMU_H
#define TLE_EMU_H

#include "tle/detail/EmuHooks.h"
#include "tle/detail/Export.h"
#include "tle/tle.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace tle::emu {

/// A CUDA-style 3-D extent or index.
struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
};

/// How to run one launch.
struct LaunchOptions {
  Dim3 grid;  ///< blocks per rank
  Dim3 block; ///< threads per block (at most 1024)
  /// Schedule seed; unset: TLE_EMU_SEED if set, else derived from the clock.
  std::optional<uint64_t> seed;
  /// All blocks of a rank must be resident at once (grid barriers); fails
  /// with tleInvalidArgument when the grid exceeds maxResidentBlocks.
  bool cooperative = false;
  /// Blocks of one rank that run concurrently (a GPU's SM count); the rest
  /// start, in block order, as resident blocks finish. 0: 16.
  uint32_t maxResidentBlocks = 0;
  /// Usable stack of each thread's fiber (at least 16 KiB). 0: 64 KiB.
  size_t stackBytes = 0;
  /// Record tleEmuTraceEvent events for lastTraceJson().
  bool trace = false;
};

/// What a launch returned.
struct LaunchResult {
  tleResult_t result = tleSuccess;
  uint64_t seed = 0;         ///< the seed the schedule used (for replay)
  std::string message;       ///< the failure report ("" on success)
  uint64_t steps = 0;        ///< scheduler steps (fiber switches)
  uint64_t scheduleHash = 0; ///< digest of the sequence of threads scheduled
  tleErrorInfo error{};      ///< the device error record of the failure, if any
};

/// Per-thread kernel body: `rank` and `devComm` of the thread's rank (from
/// tleCommGetDevComm; null when launched without communicators). Ids come
/// from the helpers below.
using KernelFn = std::function<void(int rank, void *devComm)>;

/// Runs `kernel` on `nRanks` ranks. `comms[i]` gives rank tleCommRank(comms[i])
/// its devComm. When the comms are not all ranks of their communicator (one
/// process per rank), waits that cannot progress sleep and rely on the
/// device library's timeout instead of deadlock detection. `comms` may be
/// null: ranks 0..nRanks-1 then run with a null devComm. A C++ exception
/// escaping the kernel fails the launch with tleLaunchFailure.
TLE_API LaunchResult launch(const tleComm_t *comms, int nRanks,
                            const LaunchOptions &options,
                            const KernelFn &kernel);

/// Trace of the last launch on this thread with tracing on, as Chrome/Perfetto
/// JSON: "traceEvents" with B/E events, pid = rank, tid = block * blockSize +
/// thread, ts = scheduler step.
TLE_API std::string lastTraceJson();

/// threadIdx, blockIdx, blockDim and gridDim of the calling emulated thread.
inline Dim3 threadIdx() {
  return {tleEmuThreadId(0), tleEmuThreadId(1), tleEmuThreadId(2)};
}
inline Dim3 blockIdx() {
  return {tleEmuBlockId(0), tleEmuBlockId(1), tleEmuBlockId(2)};
}
inline Dim3 blockDim() {
  return {tleEmuBlockDim(0), tleEmuBlockDim(1), tleEmuBlockDim(2)};
}
inline Dim3 gridDim() {
  return {tleEmuGridDim(0), tleEmuGridDim(1), tleEmuGridDim(2)};
}
/// Linear thread id in the block and linear block id in the grid (x fastest).
inline uint32_t linearThreadId() {
  Dim3 t = threadIdx(), d = blockDim();
  return (t.z * d.y + t.y) * d.x + t.x;
}
inline uint32_t linearBlockId() {
  Dim3 b = blockIdx(), d = gridDim();
  return (b.z * d.y + b.y) * d.x + b.x;
}
/// __syncthreads().
inline void syncThreads() { tleEmuSyncBlock(); }

} // namespace tle::emu

extern "C" {
/// Launch of a compiled kernel: every thread of rank r calls
/// `kernel(argsPerRank[i])` where comms[i] is rank r's communicator; the args
/// array holds pointers to each parameter value, as for cuLaunchKernel.
/// `seed` 0 selects the default seed. `outError` (may be null) receives the
/// failure record and message. A failed launch abandons its threads without
/// unwinding their stacks (compiled code need not carry unwind tables).
TLE_API tleResult_t tleEmuLaunch(const tleComm_t *comms, int nRanks,
                                 const uint32_t grid[3],
                                 const uint32_t block[3], uint64_t seed,
                                 int cooperative, void (*kernel)(void **args),
                                 void **const *argsPerRank,
                                 tleErrorInfo *outError);
}

#endif // TLE_EMU_H
