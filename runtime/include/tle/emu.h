//===- emu.h - Launching kernels on the CPU emulator ------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The CPU emulator runs a launch of `grid x block` threads on each of N ranks
// as fibers under one deterministic scheduler on the calling OS thread. A seed
// chooses the interleaving, so a failing schedule can be replayed with
// TLE_EMU_SEED. Fibers switch only inside the hooks of tle/detail/EmuHooks.h
// (block and warp sync, spin waits and hints, thread exit). When every live
// thread of a launch that covers all ranks of its communicator is blocked,
// the launch stops at once with tleDeadlock and a report of who waits for
// whom; a launch that makes no progress for its timeout is ended too. This
// header declares the C++ entry point for kernels written as C++ callables,
// the C entry points for compiled kernels, the launch limits, and small id
// helpers for kernel bodies. Included from C it declares the C entry points
// (tleEmuLaunch, tleEmuLaunchWithConfig) and the hooks a C kernel calls for
// its ids and syncs (tleEmuThreadId(0), tleEmuBlockId(0), tleEmuSyncBlock();
// tle/device.h has the device ABI in C). docs/emulator.md describes the
// scheduling rules and the limits.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_EMU_H
#define TLE_EMU_H

#include "tle/detail/Export.h"
#include "tle/tle.h"

#ifndef __cplusplus
#include "tle/abi.h"

#include <stddef.h>
#include <stdint.h>

/* The emulator's hooks (tle/detail/EmuHooks.h documents each). */
struct tleWaitInfo; /* tle::WaitInfo: only the device library passes one */
#define TLE_EMU_HOOK(Name, Result, ...)                                        \
  TLE_API TLE_ABI_CTYPE_##Result Name(TLE_ABI_MAP(TLE_ABI_CPARAM, __VA_ARGS__));
#define TLE_EMU_HOOK0(Name, Result) TLE_API TLE_ABI_CTYPE_##Result Name(void);
#include "tle/abi.def"
#else
#include "tle/detail/EmuHooks.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tle::emu {

/// A CUDA-style 3-D extent or index.
struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
};

/// Fiber stack sizes LaunchOptions::stackBytes accepts (a multiple of the
/// page size in this range), and the default.
inline constexpr size_t kMinStackBytes = size_t(16) << 10;
inline constexpr size_t kMaxStackBytes = size_t(64) << 20;
inline constexpr size_t kDefaultStackBytes = size_t(64) << 10;
/// Threads (fibers, each with a guarded stack) one launch may hold at once,
/// over all its ranks. Every stack has a PROT_NONE guard below it, which
/// costs the process two of its memory mappings (Linux allows 65530 by
/// default, vm.max_map_count), so this bound keeps a launch within them.
inline constexpr uint64_t kMaxLiveThreads = 30720;
/// Resident blocks per rank when LaunchOptions::maxResidentBlocks is 0, as
/// far as kMaxLiveThreads allows, and the most it may say.
inline constexpr uint32_t kDefaultResidentBlocks = 16;
inline constexpr uint32_t kMaxResidentBlocks = 4096;

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
  /// start, in block order, as resident blocks finish. 0: 16, or fewer when
  /// ranks x 16 x block threads would exceed kMaxLiveThreads (the launch's
  /// shape alone decides, so a seed still replays). A launch whose resident
  /// threads exceed kMaxLiveThreads fails with tleInvalidArgument.
  uint32_t maxResidentBlocks = 0;
  /// Usable stack of each thread's fiber: a multiple of the page size in
  /// [kMinStackBytes, kMaxStackBytes], anything else is tleInvalidArgument.
  /// 0: kDefaultStackBytes. A guard region below every stack turns an
  /// overflow into a report (rank, block, thread, seed) and exit status 1.
  size_t stackBytes = 0;
  /// Milliseconds a launch may go without progress before it is ended: a
  /// fiber that runs that long without returning to the scheduler ends the
  /// process with a report and exit status 1; threads that only poll memory
  /// (tleEmuSpinHint) that long end the launch with tleTimeout. Unset: the
  /// communicators' timeout (tleConfig_t::timeoutMs), or without
  /// communicators TLE_BARRIER_TIMEOUT_MS, else TLE_DEFAULT_TIMEOUT_MS.
  /// 0 waits forever.
  std::optional<int64_t> timeoutMs;
  /// Record the barrier's events (tleEmuBarrierEvent) for lastTraceJson().
  bool trace = false;
  /// Check every access to a symmetric buffer of the launch's
  /// communicators for data races (docs/emulator.md, "Race check"): the
  /// first pair of accesses to the same bytes, one a write, that no edge of
  /// the memory model orders fails the launch with tleDataRace and a report
  /// naming both. Compiled kernels report their loads and stores
  /// themselves (tlec --target=host); a C++ kernel reports those it makes
  /// through read()/write() below. It also orders the barrier-slot checks
  /// (two groups that use one slot one after the other need an edge
  /// between them). Skipped, with LaunchResult::raceCheckSkipped saying
  /// why, when the launch does not hold every rank of its communicators or
  /// has more than RaceChecker's 65,536 threads.
  bool raceCheck = false;
  /// Names of symmetric buffers for race reports: a handle of any rank
  /// names every rank's copy. Unnamed buffers are "buffer K", K counting
  /// the communicators' live buffers in allocation order.
  std::vector<std::pair<tleMem_t, std::string>> bufferNames;
  /// What a failure's replay hint puts before the seed: "replay with
  /// TLE_EMU_SEED=42". A tool with its own seed option passes it
  /// ("--seed " gives "replay with --seed 42").
  std::string replayWith = "TLE_EMU_SEED=";
  /// The simulated network's latency (communicators of several nodes,
  /// docs/emulator.md "Nodes"), in scheduler steps: a net add to a rank on
  /// another node lands this many steps after it was sent. Steps, not
  /// time, keep the schedule a function of the seed. Unset: the default.
  std::optional<uint64_t> netLatencySteps;
};

/// The default of LaunchOptions::netLatencySteps.
inline constexpr uint64_t kDefaultNetLatencySteps = 64;

/// The network clock of the running launch (scheduler steps, plus the
/// steps skipped while every thread waited for a message in flight), for
/// kernels that measure the network; 0 off a launch.
TLE_API uint64_t netNow();

/// What a launch returned.
struct LaunchResult {
  tleResult_t result = tleSuccess;
  uint64_t seed = 0; ///< the seed the schedule used (for replay)
  /// Whether the schedule ran: false when the launch was refused before any
  /// thread started (a bad option, out of memory), where a seed replays
  /// nothing.
  bool started = false;
  std::string message;       ///< the failure report ("" on success)
  uint64_t steps = 0;        ///< scheduler steps (fiber switches)
  uint64_t scheduleHash = 0; ///< digest of the sequence of threads scheduled
  tleErrorInfo error{};      ///< the device error record of the failure, if any
  /// Why LaunchOptions::raceCheck did not check this launch ("" when it
  /// did, or was not asked to).
  std::string raceCheckSkipped;
};

/// What a launch holds at once, decided by its shape alone.
struct LaunchFootprint {
  uint32_t residentBlocks = 0; ///< blocks per rank resident at once
  uint64_t liveThreads = 0;    ///< threads (fibers) alive at once, all ranks
  size_t stackBytes = 0;       ///< usable stack of each fiber
  uint64_t timeoutMs = 0;      ///< the no-progress deadline (0: none)
  /// Estimated resident memory: a few touched pages of every live stack and
  /// the scheduler's state per thread (a lower bound: deep kernels touch
  /// more of their stacks).
  uint64_t bytes = 0;
};

/// Checks `options` for a launch on `nRanks` ranks of `comms` (may be null)
/// as launch() would, without running anything: tleSuccess and the
/// footprint, or the code launch() would fail with and its reason in
/// `error`. This includes the memory check: a launch whose estimate exceeds
/// the machine's physical memory is refused.
TLE_API tleResult_t planLaunch(const tleComm_t *comms, int nRanks,
                               const LaunchOptions &options,
                               LaunchFootprint &out, std::string &error);

/// Physical memory of this machine in bytes (0 if unknown).
TLE_API uint64_t physicalMemoryBytes();

/// The seed TLE_EMU_SEED names (decimal, or 0x and hex digits, at most 64
/// bits), in `out`; nullopt when it is unset or empty. tleInvalidArgument,
/// with the reason in `error`, when it is not a seed.
TLE_API tleResult_t environmentSeed(std::optional<uint64_t> &out,
                                    std::string &error);

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
/// JSON (docs/emulator.md, "Traces"): a process per rank (pid = rank), a
/// thread per reporting thread (tid = block * 1024 + thread), both named by
/// metadata events; a B/E slice per wait or sync, an instant per arrive,
/// with slot, group, order and the op's source location in the args; ts =
/// scheduler step (otherData.clock says so).
TLE_API std::string lastTraceJson();

/// The events of lastTraceJson() without the enclosing document, for one
/// trace of several launches: every `ts` is shifted by `tsOffset` and every
/// event's args carry `"launch": launch`. "" when nothing was recorded.
TLE_API std::string lastTraceEvents(uint64_t launch, uint64_t tsOffset);

/// Called when the emulator ends the process (a fatal signal on a fiber, or
/// the watchdog: emulator.md, "Failures that end the process") with the
/// report it wrote to stderr, just before _exit(1). It runs in a signal
/// handler or on the watchdog's thread while a fiber is stopped anywhere:
/// it may only make async-signal-safe calls (write(2), no allocation, no
/// stdio, no locks). Lets a tool finish what it promised to write (tlerun's
/// --json object and --trace document). Null removes it; process-wide.
using FatalHook = void (*)(const char *report, size_t bytes);
TLE_API void setFatalHook(FatalHook hook);

/// Device-memory operations the host build of the device library performed
/// since the last reset, by tle::DeviceOp kind (tle/detail/EmuHooks.h):
/// what a barrier costs in memory traffic. Process-wide; an emulated
/// launch's operations join the counts when the launch ends (a kernel that
/// reads them sees those of the launches before its own).
struct DeviceOpCounts {
  uint64_t byKind[static_cast<int>(DeviceOp::NumKinds)] = {};
  uint64_t operator[](DeviceOp kind) const {
    return byKind[static_cast<int>(kind)];
  }
};
TLE_API DeviceOpCounts deviceOpCounts();
TLE_API void resetDeviceOpCounts();

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

/// Loads and stores of a C++ kernel that the race checker sees
/// (LaunchOptions::raceCheck): plain accesses, as a compiled kernel's
/// llvm.load and llvm.store are. `where` names the access in a report.
template <typename T> inline T read(const T *p, const char *where = nullptr) {
  T v = *p;
  tleEmuAccess(p, sizeof(T), kAccessLoad, kOrderRelaxed, where);
  return v;
}
template <typename T>
inline void write(T *p, T v, const char *where = nullptr) {
  *p = v;
  tleEmuAccess(p, sizeof(T), kAccessStore, kOrderRelaxed, where);
}

} // namespace tle::emu

extern "C" {
#endif // __cplusplus

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

/// Every option of an emulator launch, for C callers (the fields of
/// tle::emu::LaunchOptions). Initialise with TLE_EMU_LAUNCH_CONFIG_INITIALIZER
/// and change fields, so that a later, larger version still reads it.
typedef struct tleEmuLaunchConfig {
  size_t size;       /**< sizeof(tleEmuLaunchConfig) */
  unsigned version;  /**< TLE_VERSION_MAJOR * 100 + TLE_VERSION_MINOR */
  uint32_t grid[3];  /**< blocks per rank */
  uint32_t block[3]; /**< threads per block */
  uint64_t seed;     /**< 0: TLE_EMU_SEED, else the clock */
  int cooperative;   /**< every block resident at once */
  uint32_t maxResidentBlocks; /**< 0: the default */
  size_t stackBytes;          /**< 0: the default */
  int64_t timeoutMs; /**< no-progress deadline; -1: the communicators' */
  int raceCheck;     /**< LaunchOptions::raceCheck (read when `size` covers
                          it, so a config of an older version still works) */
  int64_t netLatencySteps; /**< LaunchOptions::netLatencySteps; -1: the
                                default (read when `size` covers it) */
} tleEmuLaunchConfig;

#define TLE_EMU_LAUNCH_CONFIG_INITIALIZER                                      \
  {                                                                            \
    sizeof(tleEmuLaunchConfig), TLE_VERSION_MAJOR * 100 + TLE_VERSION_MINOR,   \
        {1, 1, 1}, {1, 1, 1}, 0, 0, 0, 0, -1, 0, -1                            \
  }

/// tleEmuLaunch with every option.
TLE_API tleResult_t tleEmuLaunchWithConfig(const tleComm_t *comms, int nRanks,
                                           const tleEmuLaunchConfig *config,
                                           void (*kernel)(void **args),
                                           void **const *argsPerRank,
                                           tleErrorInfo *outError);

#ifdef __cplusplus
}
#endif

#endif // TLE_EMU_H
