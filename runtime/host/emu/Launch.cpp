//===- Launch.cpp - Public entry points of the CPU emulator ---------------===//
//
// Validates a launch, resolves the communicators through the host C API,
// runs the scheduler, and turns how the run ended into a status: the device
// error record of the rank that aborted (read with tleCommGetError), the
// deadlock report, or the exception a kernel threw. Every failure message
// ends with the seed, so the schedule can be replayed.
//
//===----------------------------------------------------------------------===//

#include "Error.h"
#include "emu/Scheduler.h"
#include "tle/detail/DevComm.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>

namespace tle::emu {

namespace {
using detail::Outcome;
using detail::RankInfo;
using detail::RunResult;
using detail::Scheduler;
using detail::Spec;

constexpr uint32_t kDefaultResidentBlocks = 16;
constexpr size_t kDefaultStackBytes = 64 * 1024;
constexpr size_t kMinStackBytes = 16 * 1024;
constexpr uint32_t kMaxResidentBlocks = 4096;
constexpr uint32_t kMaxBlockThreads = 1024;

thread_local std::vector<detail::TraceRecord> lastTrace;

LaunchResult failed(LaunchResult result, tleResult_t code,
                    std::string message) {
  result.result = code;
  result.message = std::move(message);
  result.error.result = code;
  std::snprintf(result.error.message, sizeof result.error.message, "%s",
                result.message.c_str());
  // Not fail(): a deadlock report is longer than its message buffer.
  setLastErrorDetail(result.message);
  return result;
}

/// TLE_EMU_SEED if set, else a seed that differs between launches.
bool defaultSeed(uint64_t &seed, std::string &error) {
  if (const char *env = std::getenv("TLE_EMU_SEED"); env && *env) {
    char *end = nullptr;
    errno = 0;
    unsigned long long value = std::strtoull(env, &end, 0);
    if (errno != 0 || *end != '\0') {
      error = std::string("TLE_EMU_SEED='") + env + "' is not a number";
      return false;
    }
    seed = value;
    return true;
  }
  static std::atomic<uint64_t> counter{0};
  uint64_t now = static_cast<uint64_t>(
      std::chrono::steady_clock::now().time_since_epoch().count());
  seed = detail::mix64(
      now ^ detail::mix64(counter++ ^ static_cast<uint64_t>(getpid())));
  return true;
}

std::string replayHint(uint64_t seed) {
  return "seed " + std::to_string(seed) +
         " (replay with TLE_EMU_SEED=" + std::to_string(seed) + ")";
}

bool devCommValid(const void *devComm) {
  const auto *dc = static_cast<const DevComm *>(devComm);
  return dc && dc->magic == kDevCommMagic && dc->version == kDevCommVersion;
}

/// Writes a deadlock into the record of the rank whose waiter the report
/// names, as the device library writes its failures, so that a caller that
/// only reads tleCommGetError after the launch sees it too.
void recordDeadlock(const DevComm *dc, const tleErrorInfo &e) {
  ErrorRecord *rec = dc->error;
  uint32_t expected = 0;
  if (!rec || !__atomic_compare_exchange_n(&rec->state, &expected, 1, false,
                                           __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
    return;
  rec->code = kDevErrDeadlock;
  rec->rank = e.rank;
  rec->slot = e.slot;
  rec->epoch = e.epoch;
  rec->missingMask = e.missingMask;
  rec->block = e.block;
  rec->thread = e.thread;
  rec->nBarriers = dc->nBarriers;
  rec->aux = 0;
  rec->elapsedNs = 0;
  __atomic_store_n(&rec->state, 2, __ATOMIC_RELEASE);
}

/// Reads and clears every comm's error record; returns the first failure,
/// preferring the rank that aborted.
bool collectRecords(const tleComm_t *comms, int nRanks, int first,
                    tleErrorInfo &out) {
  bool found = false;
  for (int k = 0; k < nRanks; ++k) {
    int i = (first + k) % nRanks;
    tleErrorInfo info{};
    if (tleCommGetError(comms[i], &info) != tleSuccess &&
        info.result != tleSuccess && !found) {
      out = info;
      found = true;
    }
  }
  return found;
}

LaunchResult run(const tleComm_t *comms, int nRanks,
                 const LaunchOptions &options, detail::Body body,
                 void **const *argsPerRank) {
  LaunchResult result;
  std::string seedError;
  if (options.seed)
    result.seed = *options.seed;
  else if (!defaultSeed(result.seed, seedError))
    return failed(result, tleInvalidArgument, seedError);

  if (Scheduler::current())
    return failed(result, tleInvalidArgument,
                  "an emulator launch cannot start inside another launch");
  if (nRanks < 1 || nRanks > kMaxRanks)
    return failed(result, tleInvalidArgument,
                  "nRanks " + std::to_string(nRanks) + " is not in 1.." +
                      std::to_string(kMaxRanks));
  const Dim3 &g = options.grid, &b = options.block;
  if (!g.x || !g.y || !g.z || !b.x || !b.y || !b.z)
    return failed(result, tleInvalidArgument,
                  "grid and block dims must be >= 1");
  uint64_t threads = uint64_t(b.x) * b.y * b.z;
  uint64_t blocks = uint64_t(g.x) * g.y * g.z;
  if (threads > kMaxBlockThreads)
    return failed(result, tleInvalidArgument,
                  "a block of " + std::to_string(threads) +
                      " threads exceeds " + std::to_string(kMaxBlockThreads));
  if (blocks > UINT32_MAX)
    return failed(result, tleInvalidArgument, "grid has more than 2^32 blocks");

  Spec spec;
  spec.grid = g;
  spec.block = b;
  spec.seed = result.seed;
  spec.trace = options.trace;
  spec.maxResident = options.maxResidentBlocks ? options.maxResidentBlocks
                                               : kDefaultResidentBlocks;
  if (spec.maxResident > kMaxResidentBlocks)
    return failed(result, tleInvalidArgument,
                  "maxResidentBlocks " + std::to_string(spec.maxResident) +
                      " exceeds " + std::to_string(kMaxResidentBlocks));
  if (options.cooperative && blocks > spec.maxResident)
    return failed(result, tleInvalidArgument,
                  "cooperative launch of " + std::to_string(blocks) +
                      " blocks per rank, but at most " +
                      std::to_string(spec.maxResident) +
                      " blocks can be co-resident (raise "
                      "LaunchOptions::maxResidentBlocks)");
  spec.stackBytes = options.stackBytes
                        ? std::max(options.stackBytes, kMinStackBytes)
                        : kDefaultStackBytes;

  uint32_t seen = 0;
  for (int i = 0; i < nRanks; ++i) {
    RankInfo info;
    info.args = argsPerRank ? argsPerRank[i] : nullptr;
    if (!comms) {
      info.rank = i;
      spec.ranks.push_back(info);
      continue;
    }
    int size = 0;
    if (!comms[i] || tleCommRank(comms[i], &info.rank) != tleSuccess ||
        tleCommSize(comms[i], &size) != tleSuccess ||
        tleCommGetDevComm(comms[i], &info.devComm) != tleSuccess)
      return failed(result, tleInvalidComm,
                    "comms[" + std::to_string(i) +
                        "] is not a valid communicator: " + lastErrorDetail());
    if (info.rank < 0 || info.rank >= kMaxRanks || (seen >> info.rank & 1))
      return failed(result, tleInvalidArgument,
                    "comms[" + std::to_string(i) + "] repeats rank " +
                        std::to_string(info.rank));
    seen |= 1u << info.rank;
    spec.partial = spec.partial || nRanks < size;
    spec.ranks.push_back(info);
  }

  if (comms) {
    // A record left by an earlier failed launch that nobody read would
    // block this launch's first failure from being recorded.
    std::string detail = lastErrorDetail();
    tleErrorInfo stale;
    for (int i = 0; i < nRanks; ++i)
      tleCommGetError(comms[i], &stale);
    setLastErrorDetail(detail);
  }

  RunResult run;
  {
    Scheduler scheduler(spec, std::move(body));
    run = scheduler.run();
    lastTrace = scheduler.takeTrace();
  }
  result.steps = run.steps;
  result.scheduleHash = run.scheduleHash;

  const RankInfo *rank = run.rankIndex >= 0
                             ? &spec.ranks[static_cast<size_t>(run.rankIndex)]
                             : nullptr;
  std::string where = rank ? "rank " + std::to_string(rank->rank) + " block " +
                                 std::to_string(run.block) + " thread " +
                                 std::to_string(run.thread)
                           : std::string();
  switch (run.outcome) {
  case Outcome::Completed:
    return result;
  case Outcome::Deadlock: {
    tleErrorInfo &e = result.error;
    e.rank = rank ? rank->rank : -1;
    e.slot = run.wait.slot;
    e.epoch = run.wait.epoch;
    e.missingMask = run.wait.missingMask;
    e.block = run.block;
    e.thread = run.thread;
    if (rank && devCommValid(rank->devComm)) {
      const auto *dc = static_cast<const DevComm *>(rank->devComm);
      e.nBarriers = dc->nBarriers;
      recordDeadlock(dc, e);
    }
    return failed(result, tleDeadlock,
                  run.message + "\n  " + replayHint(result.seed));
  }
  case Outcome::Aborted: {
    if (comms && collectRecords(comms, nRanks, run.rankIndex, result.error)) {
      tleErrorInfo error = result.error;
      result =
          failed(result, error.result,
                 std::string(error.message) + "; " + replayHint(result.seed));
      result.error = error;
      return result;
    }
    // The device library aborts without a record only when it cannot trust
    // the pointer it was given: a null, corrupt or foreign communicator or
    // symmetric-buffer handle.
    std::string why = "a null, corrupt or foreign communicator or symmetric "
                      "buffer pointer";
    if (rank && rank->devComm && !devCommValid(rank->devComm)) {
      const auto *dc = static_cast<const DevComm *>(rank->devComm);
      char buf[96];
      std::snprintf(buf, sizeof buf,
                    "the rank's communicator is corrupt (magic 0x%08x, "
                    "version %u)",
                    dc->magic, dc->version);
      why = buf;
    }
    return failed(result, tleInvalidComm,
                  where + " aborted the launch without an error record: " +
                      why + "; " + replayHint(result.seed));
  }
  case Outcome::KernelException:
    return failed(result, tleLaunchFailure,
                  where + ": " + run.message + "; " + replayHint(result.seed));
  case Outcome::Internal:
    return failed(result, tleInternalError,
                  where + ": " + run.message + "; " + replayHint(result.seed));
  }
  return result;
}
} // namespace

LaunchResult launch(const tleComm_t *comms, int nRanks,
                    const LaunchOptions &options, const KernelFn &kernel) {
  try {
    return run(
        comms, nRanks, options,
        [&kernel](const RankInfo &info) { kernel(info.rank, info.devComm); },
        nullptr);
  } catch (const std::bad_alloc &) {
    LaunchResult result;
    return failed(result, tleSystemError,
                  "out of memory for the launch's threads");
  }
}

std::string lastTraceJson() { return detail::traceToJson(lastTrace); }

} // namespace tle::emu

extern "C" TLE_API tleResult_t tleEmuLaunch(const tleComm_t *comms, int nRanks,
                                            const uint32_t grid[3],
                                            const uint32_t block[3],
                                            uint64_t seed, int cooperative,
                                            void (*kernel)(void **args),
                                            void **const *argsPerRank,
                                            tleErrorInfo *outError) {
  tle::emu::LaunchResult result;
  tleResult_t code = tle::guard("tleEmuLaunch", [&] {
    if (!grid || !block || !kernel)
      return tle::fail(tleInvalidArgument,
                       "grid, block and kernel are required");
    tle::emu::LaunchOptions options;
    options.grid = {grid[0], grid[1], grid[2]};
    options.block = {block[0], block[1], block[2]};
    if (seed)
      options.seed = seed;
    options.cooperative = cooperative != 0;
    try {
      result = tle::emu::run(
          comms, nRanks, options,
          [kernel](const tle::emu::detail::RankInfo &info) {
            kernel(info.args);
          },
          argsPerRank);
    } catch (const std::bad_alloc &) {
      return tle::fail(tleSystemError,
                       "out of memory for the launch's threads");
    }
    return result.result;
  });
  if (outError) {
    *outError = result.error;
    outError->result = code;
    if (code != tleSuccess && result.message.empty())
      std::snprintf(outError->message, sizeof outError->message, "%s",
                    tleGetLastErrorDetail());
  }
  return code;
}
