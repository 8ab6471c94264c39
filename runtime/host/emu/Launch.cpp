//===- Launch.cpp - Public entry points of the CPU emulator ---------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Validates a launch, resolves the communicators through the host C API,
// runs the scheduler, and turns how the run ended into a status: the device
// error record of the rank that aborted (read with tleCommGetError), the
// deadlock or no-progress report, or the exception a kernel threw. Every
// failure message of a launch that ran ends with the seed, so the schedule
// can be replayed. Before anything runs, the launch's footprint (threads
// alive at once, memory) is computed from its shape alone and checked
// against the emulator's bound on guarded stacks and the machine's memory.
//
//===----------------------------------------------------------------------===//

#include "comm/Comm.h"
#include "comm/Handles.h"
#include "diag/Error.h"
#include "diag/TraceJson.h"
#include "emu/Scheduler.h"
#include "memory/Memory.h"
#include "tle/detail/DevComm.h"

#include "diag/DevError.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <system_error>

namespace tle::emu {

namespace {
using detail::Outcome;
using detail::RankInfo;
using detail::RunResult;
using detail::Scheduler;
using detail::Spec;

constexpr uint32_t kMaxBlockThreads = 1024;
/// Stack a thread touches at the least (the fiber's record, the kernel's
/// first frames, the hooks), for the memory estimate.
constexpr uint64_t kTouchedStackBytes = 8 << 10;
/// Memory mappings to leave free for the rest of the process when checking
/// that a launch's guarded stacks fit under vm.max_map_count.
constexpr uint64_t kSpareMappings = 1024;

thread_local std::vector<BarrierTraceRecord> lastTrace;
/// The nodes' size of lastTrace's launch (0: one node).
thread_local int32_t lastTraceRanksPerNode = 0;
/// The source locations lastTrace's records point to, copied: the code of a
/// compiled kernel, which holds the originals, may be gone by the time the
/// trace is read.
thread_local std::set<std::string> lastTraceSites;

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

/// Parses a seed strictly: decimal digits, or 0x and hex digits, that fit
/// in 64 bits (strtoull would take signs, spaces and octal).
bool parseSeed(const char *text, uint64_t &out) {
  int base = 10;
  if (text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    base = 16;
    text += 2;
  }
  if (!*text)
    return false;
  uint64_t value = 0;
  for (const char *p = text; *p; ++p) {
    int digit;
    if (*p >= '0' && *p <= '9')
      digit = *p - '0';
    else if (base == 16 && *p >= 'a' && *p <= 'f')
      digit = *p - 'a' + 10;
    else if (base == 16 && *p >= 'A' && *p <= 'F')
      digit = *p - 'A' + 10;
    else
      return false;
    if (__builtin_mul_overflow(value, uint64_t(base), &value) ||
        __builtin_add_overflow(value, uint64_t(digit), &value))
      return false;
  }
  out = value;
  return true;
}

/// TLE_EMU_SEED if set, else a seed that differs between launches.
bool defaultSeed(uint64_t &seed, std::string &error) {
  std::optional<uint64_t> fromEnv;
  if (environmentSeed(fromEnv, error) != tleSuccess)
    return false;
  if (fromEnv) {
    seed = *fromEnv;
    return true;
  }
  static std::atomic<uint64_t> counter{0};
  uint64_t now = static_cast<uint64_t>(
      std::chrono::steady_clock::now().time_since_epoch().count());
  seed = detail::mix64(
      now ^ detail::mix64(counter++ ^ static_cast<uint64_t>(getpid())));
  return true;
}

std::string replayHint(const Spec &spec) {
  return "replay with " + spec.replayWith + std::to_string(spec.seed);
}

bool devCommValid(const void *devComm) {
  const auto *dc = static_cast<const DevComm *>(devComm);
  return dc && dc->magic == kDevCommMagic && dc->version == kDevCommVersion;
}

/// "1.5 GiB", "300 MiB": a size for a message.
std::string humanBytes(uint64_t bytes) {
  char buf[32];
  if (bytes >= (uint64_t(1) << 30))
    std::snprintf(buf, sizeof buf, "%.1f GiB", double(bytes) / (1 << 30));
  else
    std::snprintf(
        buf, sizeof buf, "%llu MiB",
        static_cast<unsigned long long>((bytes + (1 << 20) - 1) >> 20));
  return buf;
}

/// Memory mappings this process holds now and may hold at most (0, 0 when
/// /proc does not say).
std::pair<uint64_t, uint64_t> mappingCounts() {
  uint64_t limit = 0, used = 0;
  std::ifstream max("/proc/sys/vm/max_map_count");
  if (!(max >> limit))
    return {0, 0};
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line))
    ++used;
  return {used, limit};
}

/// The launch's shape: grid and block dims, threads per block (into
/// `threads`), blocks per rank (into `blocks`), and the stack size.
tleResult_t planShape(const LaunchOptions &options, Spec &spec,
                      uint64_t &threads, uint64_t &blocks, std::string &error) {
  const Dim3 &g = options.grid, &b = options.block;
  if (!g.x || !g.y || !g.z || !b.x || !b.y || !b.z) {
    error = "grid and block dims must be >= 1";
    return tleInvalidArgument;
  }
  // Three 32-bit factors can pass 64 bits and wrap to a small count.
  if (__builtin_mul_overflow(uint64_t(b.x) * b.y, uint64_t(b.z), &threads) ||
      threads > kMaxBlockThreads) {
    error = "a block of " + std::to_string(b.x) + " x " + std::to_string(b.y) +
            " x " + std::to_string(b.z) + " threads exceeds " +
            std::to_string(kMaxBlockThreads);
    return tleInvalidArgument;
  }
  if (__builtin_mul_overflow(uint64_t(g.x) * g.y, uint64_t(g.z), &blocks) ||
      blocks > UINT32_MAX) {
    error = "grid has more than 2^32 blocks";
    return tleInvalidArgument;
  }
  spec.grid = g;
  spec.block = b;
  spec.trace = options.trace;
  spec.raceCheck = options.raceCheck;
  spec.replayWith = options.replayWith;
  spec.netLatencySteps =
      options.netLatencySteps.value_or(kDefaultNetLatencySteps);

  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  spec.stackBytes =
      options.stackBytes ? options.stackBytes : kDefaultStackBytes;
  if (spec.stackBytes < kMinStackBytes || spec.stackBytes > kMaxStackBytes ||
      spec.stackBytes % page) {
    error = "stackBytes " + std::to_string(spec.stackBytes) +
            " is not a multiple of the page size (" + std::to_string(page) +
            ") in " + std::to_string(kMinStackBytes) + ".." +
            std::to_string(kMaxStackBytes);
    return tleInvalidArgument;
  }
  return tleSuccess;
}

/// How many blocks of each rank are resident at once, and the footprint
/// that gives (threads alive, memory, mappings), checked against the
/// emulator's bound and the machine's.
tleResult_t planResidency(const LaunchOptions &options, int nRanks,
                          uint64_t threads, uint64_t blocks, Spec &spec,
                          LaunchFootprint &footprint, std::string &error) {
  // The default residency shrinks for large blocks so that the guarded
  // stacks fit; it depends on the shape alone, so a seed replays anywhere.
  uint64_t perRound = uint64_t(nRanks) * threads;
  if (options.maxResidentBlocks) {
    spec.maxResident = options.maxResidentBlocks;
    if (spec.maxResident > kMaxResidentBlocks) {
      error = "maxResidentBlocks " + std::to_string(spec.maxResident) +
              " exceeds " + std::to_string(kMaxResidentBlocks);
      return tleInvalidArgument;
    }
  } else {
    spec.maxResident = static_cast<uint32_t>(std::clamp<uint64_t>(
        kMaxLiveThreads / perRound, 1, kDefaultResidentBlocks));
  }
  if (options.cooperative && blocks > spec.maxResident) {
    error = "cooperative launch of " + std::to_string(blocks) +
            " blocks per rank, but at most " +
            std::to_string(spec.maxResident) +
            " blocks can be co-resident (raise "
            "LaunchOptions::maxResidentBlocks)";
    return tleInvalidArgument;
  }
  uint32_t resident =
      static_cast<uint32_t>(std::min<uint64_t>(spec.maxResident, blocks));
  footprint.residentBlocks = resident;
  footprint.liveThreads = perRound * resident;
  footprint.stackBytes = spec.stackBytes;
  footprint.bytes = footprint.liveThreads *
                    (std::min<uint64_t>(spec.stackBytes, kTouchedStackBytes) +
                     sizeof(detail::EmuThread));
  if (footprint.liveThreads > kMaxLiveThreads) {
    error = "the launch keeps " + std::to_string(footprint.liveThreads) +
            " threads alive at once (" + std::to_string(nRanks) + " ranks x " +
            std::to_string(resident) + " resident blocks x " +
            std::to_string(threads) + " threads, about " +
            humanBytes(footprint.bytes) + "), more than the emulator's " +
            std::to_string(kMaxLiveThreads) +
            " (each thread's stack has a guard page, and each costs two of "
            "the process's memory mappings): use smaller blocks, fewer "
            "ranks or fewer resident blocks (maxResidentBlocks; for a "
            "cooperative launch, a smaller grid)";
    return tleInvalidArgument;
  }
  if (uint64_t memory = physicalMemoryBytes();
      memory && footprint.bytes > memory) {
    error = "the launch needs about " + humanBytes(footprint.bytes) +
            " for its " + std::to_string(footprint.liveThreads) +
            " threads, more than this machine's " + humanBytes(memory) +
            ": use smaller blocks, fewer ranks or a lower maxResidentBlocks";
    return tleInvalidArgument;
  }
  // Small launches cannot reach the limit; reading /proc costs more.
  if (footprint.liveThreads * 2 > 8 * kSpareMappings) {
    auto [used, limit] = mappingCounts();
    if (limit && used + footprint.liveThreads * 2 + kSpareMappings > limit) {
      error = "the launch's " + std::to_string(footprint.liveThreads) +
              " guarded fiber stacks need " +
              std::to_string(footprint.liveThreads * 2) +
              " memory mappings, but the process holds " +
              std::to_string(used) + " of at most " + std::to_string(limit) +
              " (vm.max_map_count): use smaller blocks, fewer ranks or a "
              "lower maxResidentBlocks, or raise vm.max_map_count";
      return tleInvalidArgument;
    }
  }
  return tleSuccess;
}

/// The launch's ranks from its communicators (or 0..nRanks-1 without), into
/// spec.ranks; the deadlines the communicators ask for, into `commTimeouts`.
tleResult_t planRanks(const tleComm_t *comms, int nRanks,
                      void **const *argsPerRank, bool timeoutFromComms,
                      Spec &spec, std::vector<uint64_t> &commTimeouts,
                      std::string &error) {
  std::vector<bool> seen(kMaxRanks, false);
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
        tleCommSize(comms[i], &size) != tleSuccess) {
      error = "comms[" + std::to_string(i) +
              "] is not a valid communicator: " + lastErrorDetail();
      return tleInvalidComm;
    }
    // A live communicator that is aborted or failed: its own status.
    if (tleResult_t r = tleCommGetDevComm(comms[i], &info.devComm)) {
      error = "comms[" + std::to_string(i) + "]: " + lastErrorDetail();
      return r;
    }
    if (info.rank < 0 || info.rank >= kMaxRanks || seen[info.rank]) {
      error = "comms[" + std::to_string(i) + "] repeats rank " +
              std::to_string(info.rank);
      return tleInvalidArgument;
    }
    seen[info.rank] = true;
    spec.partial = spec.partial || nRanks < size;
    spec.ranks.push_back(info);
    // The communicators of one launch share their config; should they
    // not, the longest deadline wins (0, forever, longest of all). A
    // corrupt DevComm is the kernel's to report.
    if (timeoutFromComms && devCommValid(info.devComm))
      commTimeouts.push_back(
          static_cast<const DevComm *>(info.devComm)->timeoutNs);
  }
  return tleSuccess;
}

/// The no-progress deadline: the options', else the communicators' (the
/// longest; 0 if any waits forever), else the environment's.
tleResult_t planTimeout(const tleComm_t *comms, int nRanks,
                        const LaunchOptions &options, void **const *argsPerRank,
                        Spec &spec, std::string &error) {
  bool timeoutFromComms = !options.timeoutMs && comms;
  uint64_t timeoutNs = 0;
  if (options.timeoutMs) {
    if (*options.timeoutMs < 0 || *options.timeoutMs > kMaxTimeoutMs) {
      error = "timeoutMs " + std::to_string(*options.timeoutMs) +
              " is not in 0.." + std::to_string(kMaxTimeoutMs);
      return tleInvalidArgument;
    }
    timeoutNs = static_cast<uint64_t>(*options.timeoutMs) * 1000000u;
  } else if (!comms) {
    ResolvedConfig resolved;
    if (resolveConfig(nullptr, resolved) != tleSuccess) {
      error = lastErrorDetail();
      return tleInvalidArgument;
    }
    timeoutNs = resolved.timeoutNs;
  }
  std::vector<uint64_t> commTimeouts;
  if (tleResult_t r = planRanks(comms, nRanks, argsPerRank, timeoutFromComms,
                                spec, commTimeouts, error))
    return r;
  if (timeoutFromComms) {
    timeoutNs = uint64_t(TLE_DEFAULT_TIMEOUT_MS) * 1000000u;
    if (!commTimeouts.empty()) {
      bool forever = std::find(commTimeouts.begin(), commTimeouts.end(), 0) !=
                     commTimeouts.end();
      timeoutNs =
          forever ? 0
                  : *std::max_element(commTimeouts.begin(), commTimeouts.end());
    }
  }
  spec.timeoutNs = timeoutNs;
  return tleSuccess;
}

/// Everything launch() checks before it runs a thread: fills `spec` and
/// `footprint`, or returns the code launch() fails with and why in `error`.
/// The seed is resolved first, so that `spec.seed` is set even when a
/// later check fails.
tleResult_t plan(const tleComm_t *comms, int nRanks,
                 const LaunchOptions &options, void **const *argsPerRank,
                 Spec &spec, LaunchFootprint &footprint, std::string &error) {
  if (options.seed)
    spec.seed = *options.seed;
  else if (!defaultSeed(spec.seed, error))
    return tleInvalidArgument;
  if (nRanks < 1 || nRanks > kMaxRanks) {
    error = "nRanks " + std::to_string(nRanks) + " is not in 1.." +
            std::to_string(kMaxRanks);
    return tleInvalidArgument;
  }
  uint64_t threads = 0, blocks = 0;
  if (tleResult_t r = planShape(options, spec, threads, blocks, error))
    return r;
  if (tleResult_t r = planResidency(options, nRanks, threads, blocks, spec,
                                    footprint, error))
    return r;
  if (tleResult_t r =
          planTimeout(comms, nRanks, options, argsPerRank, spec, error))
    return r;
  footprint.timeoutMs = spec.timeoutNs / 1000000u;
  return tleSuccess;
}

/// Writes a deadlock into the record of the rank whose waiter the report
/// names, as the device library writes its failures, so that a caller that
/// only reads tleCommGetError after the launch sees it too. A signal wait's
/// record carries the word's values (`wait`).
void recordDeadlock(const DevComm *dc, const tleErrorInfo &e,
                    const WaitInfo &wait, const char *site) {
  ErrorRecord *rec = dc->error;
  uint32_t expected = 0;
  if (!rec || !__atomic_compare_exchange_n(&rec->state, &expected, 1, false,
                                           __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
    return;
  rec->code = wait.signal ? kDevErrSignalDeadlock : kDevErrDeadlock;
  rec->seen = wait.signal ? wait.seen : 0;
  rec->wanted = wait.signal ? wait.wanted : 0;
  rec->context = wait.signal ? wait.context : 0;
  // The record names the rank in its node, as the device library's do;
  // on several nodes its missing ranks are the world's (`e`'s).
  rec->rank = dc->nNodes > 1 ? dc->rank : e.rank;
  rec->slot = e.slot;
  rec->epoch = e.epoch;
  for (int w = 0; w < kMaxRanks / 64; ++w)
    rec->missing.words[w] = e.missingPeers[w];
  rec->block = e.block;
  rec->thread = e.thread;
  rec->nBarriers = dc->nBarriers;
  rec->aux = dc->nNodes > 1 ? kRecordWorldRanks : 0;
  rec->elapsedNs = 0;
  // The waiter's source location (the op's loc, the typed call's line), as
  // a site id of the process's table, so the job report names the line.
  rec->site = site ? tleSiteRegisterText(site) : 0;
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

/// The symmetric buffers of the launch's communicators, one region per
/// rank's copy, into spec.regions; or why the race checker cannot follow
/// the launch.
std::string raceRegions(const tleComm_t *comms, int nRanks,
                        const LaunchOptions &options, Spec &spec) {
  if (!comms)
    return "the launch has no communicators";
  if (spec.partial)
    return "the launch does not hold every rank of its communicator (the "
           "accesses of ranks elsewhere are invisible to it)";
  uint64_t threads = uint64_t(nRanks) * spec.grid.x * spec.grid.y *
                     spec.grid.z * spec.block.x * spec.block.y * spec.block.z;
  if (threads > detail::RaceChecker::kMaxThreads)
    return "the launch has " + std::to_string(threads) +
           " threads, more than the race checker's " +
           std::to_string(detail::RaceChecker::kMaxThreads) +
           " (its clocks have an entry per thread): use a smaller grid or "
           "block";
  // A buffer is the same allocation on every rank: in one process, rank
  // 0's copy has one address for all of them.
  std::map<const void *, std::string> names;
  for (const auto &[mem, name] : options.bufferNames) {
    std::shared_ptr<MemState> m;
    if (lookupMem(mem, m) == tleSuccess && m->view)
      names[m->view->ptr(0)] = name;
  }
  // A buffer's MemState names the rank in its node; reports name the
  // launch's (world) rank.
  std::map<const ErrorRecord *, std::pair<int32_t, int32_t>> ranks;
  for (const RankInfo &r : spec.ranks)
    if (devCommValid(r.devComm)) {
      const auto *dc = static_cast<const DevComm *>(r.devComm);
      ranks[dc->error] = {dc->rank, r.rank};
    }
  std::map<const void *, std::string> numbered;
  forEachMem([&](tleMem_t, const MemState &m) {
    auto it = ranks.find(m.error);
    if (it == ranks.end() || !m.view || it->second.first != m.rank)
      return;
    const void *id = m.view->ptr(0);
    auto named = names.find(id);
    auto [num, fresh] = numbered.try_emplace(id, "");
    if (fresh)
      num->second = named != names.end()
                        ? named->second
                        : "buffer " + std::to_string(numbered.size() - 1);
    spec.regions.push_back(
        {m.view->ptr(m.rank), m.bytes, num->second, it->second.second});
  });
  // Each rank's signal words: a reset is a plain write of its word, which
  // a read by another thread with nothing between them races with.
  std::set<const void *> words;
  for (const RankInfo &r : spec.ranks) {
    if (!devCommValid(r.devComm))
      continue;
    const auto *dc = static_cast<const DevComm *>(r.devComm);
    if (dc->signals && dc->nSignalWords && words.insert(dc->signals).second)
      spec.regions.push_back({dc->signals, uint64_t(dc->nSignalWords) * 8,
                              "signal words", r.rank, /*signalWords=*/true});
  }
  return "";
}

/// The ranks per node of a launch whose communicators span several nodes
/// (the scheduler's rule for naming ranks), else 0.
int32_t ranksPerNode(const detail::Spec &spec) {
  for (const detail::RankInfo &r : spec.ranks) {
    const auto *dc = static_cast<const DevComm *>(r.devComm);
    if (dc && dc->magic == kDevCommMagic && dc->version == kDevCommVersion &&
        dc->nNodes > 1)
      return dc->size;
  }
  return 0;
}

/// Keeps a launch's trace for lastTraceJson, with copies of its source
/// locations.
void keepTrace(const std::vector<detail::TraceRecord> &trace,
               int32_t ranksPerNode) {
  lastTraceRanksPerNode = ranksPerNode;
  lastTraceSites.clear();
  lastTrace = detail::toTraceRecords(trace);
  for (BarrierTraceRecord &r : lastTrace)
    if (r.site)
      r.site = lastTraceSites.insert(r.site).first->c_str();
}

LaunchResult run(const tleComm_t *comms, int nRanks,
                 const LaunchOptions &options, detail::Body body,
                 void **const *argsPerRank) {
  LaunchResult result;
  if (Scheduler::current())
    return failed(result, tleInvalidArgument,
                  "an emulator launch cannot start inside another launch");
  Spec spec;
  LaunchFootprint footprint;
  std::string error;
  tleResult_t code =
      plan(comms, nRanks, options, argsPerRank, spec, footprint, error);
  result.seed = spec.seed;
  if (code != tleSuccess)
    return failed(result, code, error);

  if (comms) {
    // A record left by an earlier failed launch that nobody read would
    // block this launch's first failure from being recorded.
    std::string detail = lastErrorDetail();
    tleErrorInfo stale;
    for (int i = 0; i < nRanks; ++i)
      tleCommGetError(comms[i], &stale);
    setLastErrorDetail(detail);
  }

  if (spec.raceCheck)
    result.raceCheckSkipped = raceRegions(comms, nRanks, options, spec);
  spec.raceCheck = spec.raceCheck && result.raceCheckSkipped.empty();

  RunResult run;
  try {
    Scheduler scheduler(spec, std::move(body));
    run = scheduler.run();
    keepTrace(scheduler.takeTrace(), ranksPerNode(spec));
  } catch (const detail::StackMapError &e) {
    return failed(result, tleSystemError, e.what());
  } catch (const std::system_error &e) {
    return failed(result, tleSystemError,
                  std::string("cannot start the launch's watchdog thread: ") +
                      e.what());
  }
  result.started = true;
  result.steps = run.steps;
  result.scheduleHash = run.scheduleHash;

  const RankInfo *rank = run.rankIndex >= 0
                             ? &spec.ranks[static_cast<size_t>(run.rankIndex)]
                             : nullptr;
  std::string where = rank ? "rank " + std::to_string(rank->rank) + " block " +
                                 std::to_string(run.block) + " thread " +
                                 std::to_string(run.thread)
                           : std::string();
  // Every report ends the same way: where the failing thread was in the
  // source (when the report does not already say), which ranks had exited,
  // and how to replay the schedule.
  auto tail = [&](bool withSite) {
    std::string out;
    if (withSite && run.site)
      out += "\n  at " + std::string(run.site);
    if (!run.rankStates.empty())
      out += "\n  " + run.rankStates;
    return out + "\n  " + replayHint(spec);
  };
  switch (run.outcome) {
  case Outcome::Completed:
    // A wait that gave up (tleCommAbort, a dead peer, a failure under
    // onError = return) recorded why and let the kernel run to its end.
    if (comms && collectRecords(comms, nRanks, 0, result.error)) {
      tleErrorInfo error = result.error;
      result = failed(result, error.result, error.message);
      result.error = error;
    }
    return result;
  case Outcome::Deadlock: {
    tleErrorInfo &e = result.error;
    e.rank = rank ? rank->rank : -1;
    e.slot = run.wait.slot;
    e.epoch = run.wait.epoch;
    // A signal wait misses no particular peer: any rank with threads left
    // could have signalled its word.
    PeerMask missing = run.wait.signal ? run.liveRanks : run.wait.missing;
    e.block = run.block;
    e.thread = run.thread;
    if (rank && devCommValid(rank->devComm)) {
      const auto *dc = static_cast<const DevComm *>(rank->devComm);
      // On several nodes an intra wait's peers are ranks of its node:
      // name world ranks, as the rest of the result does.
      if (dc->nNodes > 1 && !run.wait.signal && run.wait.team == 0) {
        int base = dc->node * dc->size;
        missing = {};
        for (int q = 0; q + base < kMaxRanks; ++q)
          if (run.wait.missing.words[q / 64] >> (q % 64) & 1)
            missing.words[(q + base) / 64] |= uint64_t(1) << ((q + base) % 64);
      }
      copyPeers(missing, e);
      e.nBarriers = dc->nBarriers;
      recordDeadlock(dc, e, run.wait, run.site);
    } else {
      copyPeers(missing, e);
    }
    return failed(result, tleDeadlock, run.message + tail(false));
  }
  case Outcome::NoProgress: {
    // Not written into a device record: no barrier slot or epoch is
    // involved, and the record's timeout message would say there was.
    tleErrorInfo &e = result.error;
    e.rank = rank ? rank->rank : -1;
    e.block = run.block;
    e.thread = run.thread;
    e.elapsedNs = spec.timeoutNs;
    return failed(result, tleTimeout, run.message + tail(false));
  }
  case Outcome::Aborted: {
    if (comms && collectRecords(comms, nRanks, run.rankIndex, result.error)) {
      tleErrorInfo error = result.error;
      result =
          failed(result, error.result, std::string(error.message) + tail(true));
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
                      why + tail(true));
  }
  case Outcome::KernelException:
    return failed(result, tleLaunchFailure,
                  where + ": " + run.message + tail(true));
  case Outcome::Internal:
    return failed(result, tleInternalError,
                  where + ": " + run.message + tail(true));
  case Outcome::CheckFailed:
    return failed(result, run.checkResult, run.message + tail(false));
  }
  return result;
}

/// A C entry point's refusal of its arguments, in `outError` too.
tleResult_t refusedC(tleResult_t code, tleErrorInfo *outError) {
  if (outError) {
    *outError = {};
    outError->result = code;
    std::snprintf(outError->message, sizeof outError->message, "%s",
                  tleGetLastErrorDetail());
  }
  return code;
}

/// launch() for the C entry points: a failure's message also becomes the
/// thread's error detail, and `outError` gets the record.
tleResult_t launchC(const char *api, const tleComm_t *comms, int nRanks,
                    const LaunchOptions &options, void (*kernel)(void **args),
                    void **const *argsPerRank, tleErrorInfo *outError) {
  LaunchResult result;
  tleResult_t code = guard(api, [&] {
    if (!kernel)
      return fail(tleInvalidArgument, "grid, block and kernel are required");
    try {
      result = run(
          comms, nRanks, options,
          [kernel](const RankInfo &info) { kernel(info.args); }, argsPerRank);
    } catch (const std::bad_alloc &) {
      return fail(tleSystemError, "out of memory for the launch's threads");
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

tleResult_t planLaunch(const tleComm_t *comms, int nRanks,
                       const LaunchOptions &options, LaunchFootprint &out,
                       std::string &error) {
  Spec spec;
  out = LaunchFootprint{};
  return plan(comms, nRanks, options, nullptr, spec, out, error);
}

tleResult_t environmentSeed(std::optional<uint64_t> &out, std::string &error) {
  out.reset();
  const char *env = std::getenv("TLE_EMU_SEED");
  if (!env || !*env)
    return tleSuccess;
  uint64_t seed = 0;
  if (!parseSeed(env, seed)) {
    error = "TLE_EMU_SEED='" + std::string(env).substr(0, 64) +
            "' is not a seed (decimal or 0x hex, at most 64 bits)";
    return tleInvalidArgument;
  }
  out = seed;
  return tleSuccess;
}

uint64_t physicalMemoryBytes() {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page) : 0;
}

std::string lastTraceJson() {
  return traceDocumentHead(TraceClock::Steps) +
         traceEventsJson(lastTrace, TraceClock::Steps, 0, std::nullopt,
                         lastTraceRanksPerNode) +
         kTraceDocumentTail;
}

std::string lastTraceEvents(uint64_t launch, uint64_t tsOffset) {
  if (lastTrace.empty())
    return "";
  std::vector<BarrierTraceRecord> shifted = lastTrace;
  for (BarrierTraceRecord &r : shifted)
    r.time += tsOffset;
  return traceEventsJson(shifted, TraceClock::Steps, 0, launch,
                         lastTraceRanksPerNode);
}

} // namespace tle::emu

extern "C" TLE_API tleResult_t tleEmuLaunch(const tleComm_t *comms, int nRanks,
                                            const uint32_t grid[3],
                                            const uint32_t block[3],
                                            uint64_t seed, int cooperative,
                                            void (*kernel)(void **args),
                                            void **const *argsPerRank,
                                            tleErrorInfo *outError) {
  tle::emu::LaunchOptions options;
  if (!grid || !block)
    return tle::emu::refusedC(
        tle::fail(tleInvalidArgument,
                  "tleEmuLaunch: grid, block and kernel are required"),
        outError);
  options.grid = {grid[0], grid[1], grid[2]};
  options.block = {block[0], block[1], block[2]};
  if (seed)
    options.seed = seed;
  options.cooperative = cooperative != 0;
  return tle::emu::launchC("tleEmuLaunch", comms, nRanks, options, kernel,
                           argsPerRank, outError);
}

extern "C" TLE_API tleResult_t tleEmuLaunchWithConfig(
    const tleComm_t *comms, int nRanks, const tleEmuLaunchConfig *config,
    void (*kernel)(void **args), void **const *argsPerRank,
    tleErrorInfo *outError) {
  tle::emu::LaunchOptions options;
  tleResult_t check = tleSuccess;
  if (!config)
    check = tle::fail(tleInvalidArgument,
                      "tleEmuLaunchWithConfig: config is required");
  else if (config->size < offsetof(tleEmuLaunchConfig, raceCheck))
    check = tle::fail(tleInvalidArgument,
                      "tleEmuLaunchWithConfig: config.size is %zu, expected "
                      "at least %zu: initialise the config with "
                      "TLE_EMU_LAUNCH_CONFIG_INITIALIZER",
                      config->size, offsetof(tleEmuLaunchConfig, raceCheck));
  else if (config->version / 100 != TLE_VERSION_MAJOR)
    check = tle::fail(tleInvalidArgument,
                      "tleEmuLaunchWithConfig: config.version %u is not of "
                      "this library's major version %d",
                      config->version, TLE_VERSION_MAJOR);
  else if (config->timeoutMs < -1)
    check = tle::fail(tleInvalidArgument,
                      "tleEmuLaunchWithConfig: config.timeoutMs %lld is not "
                      "-1 (the communicators') or a deadline",
                      static_cast<long long>(config->timeoutMs));
  if (check != tleSuccess)
    return tle::emu::refusedC(check, outError);
  options.grid = {config->grid[0], config->grid[1], config->grid[2]};
  options.block = {config->block[0], config->block[1], config->block[2]};
  if (config->seed)
    options.seed = config->seed;
  options.cooperative = config->cooperative != 0;
  options.maxResidentBlocks = config->maxResidentBlocks;
  options.stackBytes = config->stackBytes;
  if (config->timeoutMs >= 0)
    options.timeoutMs = config->timeoutMs;
  if (config->size >= offsetof(tleEmuLaunchConfig, raceCheck) + sizeof(int))
    options.raceCheck = config->raceCheck != 0;
  if (config->size >=
      offsetof(tleEmuLaunchConfig, netLatencySteps) + sizeof(int64_t)) {
    if (config->netLatencySteps < -1)
      return tle::emu::refusedC(
          tle::fail(tleInvalidArgument,
                    "tleEmuLaunchWithConfig: config.netLatencySteps %lld is "
                    "not -1 (the default) or a latency",
                    static_cast<long long>(config->netLatencySteps)),
          outError);
    if (config->netLatencySteps >= 0)
      options.netLatencySteps = static_cast<uint64_t>(config->netLatencySteps);
  }
  return tle::emu::launchC("tleEmuLaunchWithConfig", comms, nRanks, options,
                           kernel, argsPerRank, outError);
}
