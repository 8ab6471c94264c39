//===- BarrierStress.cu - Data visibility across the barrier, on N GPUs ---===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The memory-model test of the barrier on real GPUs. Every thread of every
// round stores a round-stamped payload (`--words` words in distant cache
// lines) into the next rank's symmetric buffer, crosses the barrier, and
// loads the payload that a *different* thread of its group stored there
// from the previous rank (its own words for group `thread`). With an order
// that releases on arrive and acquires on wait, the barrier must make every
// one of those stores visible: a stale or torn value is a violation,
// counted on the device. Payloads alternate between two halves by round
// parity, so a fast peer writing round r+1 cannot overwrite round r's
// payload before it was read (round r+2 needs our arrival at r+1 first).
//
// "0 violations" means something only if the test can see a violation, so
// every run judges controls too: barriers that leave out the release
// (`no_release`: arrive relaxed, wait acquire), the acquire (`no_acquire`:
// arrive release, wait relaxed) or both (`relaxed`). Each control must show
// stale reads in its configuration, or the run fails. Two things make
// staleness visible at any CTA count: the payload is read with weak loads
// that L1 may serve (ld.global.ca; a line read two rounds earlier stays in
// L1 unless an acquire invalidates it), which is what a missing acquire
// leaves behind; and every thread writes several lines over NVLink before
// its group's worker signals, so that a signal without release can overtake
// them. The grid barrier has no unordered mode (it is acq_rel whatever the
// order, docs/device-library.md), so its controls are a grid barrier of the
// same shape written here with relaxed atomics (controlGridBarrier).
//
// Configurations: CTAs x group kinds x orders, on every GPU of the machine
// (--ranks lowers it), in one process driving all of them
// (tleCommInitAll) or one process per rank (fork before any CUDA call, the
// unique id passed through a pipe). All configurations share one
// communicator, so slot epochs also carry across launches. --alloc chooses
// the CUDA backend's memory for the inboxes and the buffer (cudaMalloc with
// peer access or legacy IPC, or cuMem); --from-nccl (one process per rank)
// makes the communicator from an NCCL communicator (tleCommInitFromNccl) in
// a build that found NCCL.
//
//===----------------------------------------------------------------------===//

#include "GpuSupport.h"

#include "tle/device.h"

#ifdef TLE_STRESS_WITH_NCCL
#include <nccl.h>
#endif

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

using namespace tle::gpu;

namespace {

/// How the barrier is called in one configuration.
enum class Mode {
  SyncRelaxed,
  SplitNoRelease, ///< arrive relaxed, wait acquire
  SplitNoAcquire, ///< arrive release, wait relaxed
  SyncAcqRel,
  SyncSeqCst,
  SplitRelAcq,
  SplitAcqRel
};

struct ModeInfo {
  const char *name;
  Mode mode;
  /// true: the orders guarantee visibility, and a stale read fails the run;
  /// false: a control, which must show stale reads or the run fails.
  bool checks;
};

constexpr ModeInfo kModes[] = {
    {"relaxed", Mode::SyncRelaxed, false},
    {"no_release", Mode::SplitNoRelease, false},
    {"no_acquire", Mode::SplitNoAcquire, false},
    {"acq_rel", Mode::SyncAcqRel, true},
    {"seq_cst", Mode::SyncSeqCst, true},
    {"release/acquire", Mode::SplitRelAcq, true},
    {"split_acq_rel", Mode::SplitAcqRel, true},
};

struct KindInfo {
  const char *name;
  int coop;
  int threads; ///< threads per CTA
};

// `thread` groups use 32 threads per CTA so that 132 CTAs need 4224 slots,
// not 16896; the other kinds use the benchmarks' 128.
constexpr KindInfo kKinds[] = {
    {"thread", kCoopThread, 32},
    {"warp", kCoopWarp, 128},
    {"block", kCoopBlock, 128},
    {"grid", kCoopGrid, 128},
};

constexpr int kMaxCtas = 132;
constexpr uint32_t kSlots = kMaxCtas * 32;
constexpr size_t kMaxThreads = size_t(kMaxCtas) * 128;
constexpr uint32_t kMaxWords = 32;
/// Two parities x kMaxWords words per thread, then the control grid
/// barrier's flags (word q written by rank q).
constexpr size_t kFlagWord = 2 * kMaxWords * kMaxThreads;
constexpr size_t kBufBytes = (kFlagWord + tle::kMaxRanks) * sizeof(uint32_t);
/// Polls after which a control grid barrier gives up (a bug in the test,
/// not a finding): about a second.
constexpr uint32_t kControlPolls = 1u << 24;
/// Rounds per configuration are capped so that salt + round never aliases
/// another configuration's stamps.
constexpr uint32_t kSaltShift = 22;
constexpr uint32_t kMaxRounds = (1u << kSaltShift) - 2;

/// Per-launch results on the device.
struct Result {
  unsigned long long violations;
  uint32_t firstRound, firstWord, got, expected;
  unsigned long long elapsedNs; ///< slowest CTA
  uint32_t controlHung;         ///< a control grid barrier gave up
};

__device__ __forceinline__ uint32_t scramble(uint32_t word) {
  return word * 0x9E3779B9u;
}

/// What word k of thread t holds in the round stamped v: distinct for every
/// round, thread and word.
__device__ __forceinline__ uint32_t payload(uint32_t v, uint32_t t,
                                            uint32_t k) {
  return v ^ scramble(t * kMaxWords + k);
}

using tle::impl::Ptx;

/// The grid barrier's controls: TLE's shape (the CTAs of a rank meet on a
/// counter, the last one signals every other rank, every CTA waits for the
/// whole rank and for every other rank's signal) with the orders left to
/// the template. Release: a fence before the CTA is counted and before the
/// signals; Acquire: acquire polls. With neither, nothing orders the
/// payload. `count` is this rank's, zeroed before the launch; the flags
/// (kFlagWord + q in each rank's buffer, written by rank q) carry the
/// round's stamp, which only grows.
template <bool Release, bool Acquire>
__device__ void controlGridBarrier(const void *mem, int rank, int nRanks,
                                   uint32_t *count, uint32_t stamp,
                                   uint32_t round, Result *res) {
  __syncthreads();
  if (threadIdx.x == 0) {
    if (Release)
      Ptx::fenceAcqRelSys();
    const uint32_t all = gridDim.x * (round + 1);
    if (atomicAdd(count, 1u) + 1 == all) {
      if (Release)
        Ptx::fenceAcqRelSys();
      for (int q = 0; q < nRanks; ++q)
        if (q != rank)
          Ptx::stRelaxedSys(
              static_cast<uint32_t *>(flagcxGetIntraPointerS(mem, 0, q)) +
                  kFlagWord + rank,
              stamp);
    }
    // Every CTA of this rank arrived (so none can be a round ahead and
    // count its next arrival into this round), and every other rank
    // signalled.
    const uint32_t *flags =
        static_cast<const uint32_t *>(flagcxGetIntraPointerS(mem, 0, rank)) +
        kFlagWord;
    uint32_t polls = 0;
    auto gaveUp = [&] {
      if (++polls < kControlPolls)
        return false;
      atomicExch(&res->controlHung, 1u);
      return true;
    };
    while (int32_t(Ptx::ldRelaxedGpu(count) - all) < 0 && !gaveUp()) {
    }
    for (int q = 0; q < nRanks; ++q)
      while (q != rank &&
             int32_t((Acquire ? Ptx::ldAcquireSys(flags + q)
                              : Ptx::ldRelaxedSys(flags + q)) -
                     stamp) < 0 &&
             !gaveUp()) {
      }
  }
  __syncthreads();
}

__device__ __forceinline__ void doBarrier(const void *comm, int coop,
                                          uint32_t slot, Mode mode) {
  int a, w; // arrive / wait orders of a split barrier
  int s;    // order of sync
  switch (mode) {
  case Mode::SyncRelaxed:
    s = kRelaxed;
    break;
  case Mode::SyncAcqRel:
    s = kAcqRel;
    break;
  case Mode::SyncSeqCst:
    s = kSeqCst;
    break;
  case Mode::SplitNoRelease:
    a = kRelaxed;
    w = kAcquire;
    s = -1;
    break;
  case Mode::SplitNoAcquire:
    a = kRelease;
    w = kRelaxed;
    s = -1;
    break;
  case Mode::SplitRelAcq:
    a = kRelease;
    w = kAcquire;
    s = -1;
    break;
  case Mode::SplitAcqRel:
  default:
    a = kAcqRel;
    w = kAcqRel;
    s = -1;
    break;
  }
  if (coop == kCoopGrid) {
    if (s >= 0) {
      tleIntraGridBarrierSyncS(comm, slot, false, s);
    } else {
      tleIntraGridBarrierArriveS(comm, slot, false, a);
      tleIntraGridBarrierWaitS(comm, slot, false, w);
    }
    return;
  }
  if (s >= 0) {
    flagcxIntraBarrierSyncS(comm, coop, slot, false, s);
  } else {
    flagcxIntraBarrierArriveS(comm, coop, slot, false, a);
    flagcxIntraBarrierWaitS(comm, coop, slot, false, w);
  }
}

/// One barrier of the grid group: TLE's, or for a control mode the control
/// barrier above.
__device__ __forceinline__ void gridRound(const void *comm, const void *mem,
                                          int rank, int nRanks, Mode mode,
                                          uint32_t *count, uint32_t stamp,
                                          uint32_t round, Result *res) {
  switch (mode) {
  case Mode::SyncRelaxed:
    return controlGridBarrier<false, false>(mem, rank, nRanks, count, stamp,
                                            round, res);
  case Mode::SplitNoRelease:
    return controlGridBarrier<false, true>(mem, rank, nRanks, count, stamp,
                                           round, res);
  case Mode::SplitNoAcquire:
    return controlGridBarrier<true, false>(mem, rank, nRanks, count, stamp,
                                           round, res);
  default:
    doBarrier(comm, kCoopGrid, 0, mode);
  }
}

__global__ void stressKernel(const void *comm, const void *mem, int rank,
                             int nRanks, int peer, int coop, Mode mode,
                             uint32_t rounds, uint32_t words, uint32_t salt,
                             uint32_t *count, Result *res) {
  const uint32_t n = gridDim.x * blockDim.x;
  const uint32_t gt = blockIdx.x * blockDim.x + threadIdx.x;
  uint32_t slot, base, size;
  switch (coop) {
  case kCoopThread:
    slot = gt, base = gt, size = 1;
    break;
  case kCoopWarp:
    slot = gt / 32, base = gt & ~31u, size = 32;
    break;
  case kCoopBlock:
    slot = blockIdx.x, base = blockIdx.x * blockDim.x, size = blockDim.x;
    break;
  default: // grid
    slot = 0, base = 0, size = n;
    break;
  }
  // The word this thread checks: written on the peer by the next thread of
  // the same group, so the barrier must order other threads' stores too.
  const uint32_t partner = base + (gt - base + 1) % size;
  uint32_t *peerBuf =
      static_cast<uint32_t *>(flagcxGetIntraPointerS(mem, 0, peer));
  const uint32_t *myBuf =
      static_cast<const uint32_t *>(flagcxGetIntraPointerS(mem, 0, rank));

  unsigned long long bad = 0;
  uint32_t firstRound = 0, firstWord = 0, firstGot = 0, firstExp = 0;
  const uint64_t t0 = globalTimer();
  for (uint32_t r = 0; r < rounds; ++r) {
    const uint32_t v = salt + r + 1;
    const size_t half = size_t(r & 1) * kMaxWords * n;
    // Words in distant cache lines (n words apart), so a barrier that made
    // one line visible but not another is caught, and enough of them that
    // a signal sent without release can overtake some.
    for (uint32_t k = 0; k < words; ++k)
      peerBuf[half + k * n + gt] = payload(v, gt, k);
    if (coop == kCoopGrid)
      gridRound(comm, mem, rank, nRanks, mode, count, v, r, res);
    else
      doBarrier(comm, coop, slot, mode);
    // Weak loads that L1 may serve (ld.global.ca): only the barrier's
    // acquire makes them see the previous rank's new stores (see the file
    // comment).
    for (uint32_t k = 0; k < words; ++k) {
      uint32_t got = __ldca(myBuf + half + k * n + partner);
      uint32_t want = payload(v, partner, k);
      if (got != want) {
        if (bad == 0) {
          firstRound = r;
          firstWord = partner;
          firstGot = got;
          firstExp = want;
        }
        ++bad;
      }
    }
  }
  const uint64_t dt = globalTimer() - t0;
  if (bad) {
    if (atomicAdd(&res->violations, bad) == 0) {
      res->firstRound = firstRound;
      res->firstWord = firstWord;
      res->got = firstGot;
      res->expected = firstExp;
    }
  }
  if (threadIdx.x == 0)
    atomicMax(&res->elapsedNs, (unsigned long long)dt);
}

struct Options {
  std::string mode = "single";
  std::vector<int> ctas = {1, 8, 132};
  std::vector<std::string> kinds = {"thread", "warp", "block", "grid"};
  std::vector<std::string> orders = {"relaxed",    "no_release",
                                     "no_acquire", "acq_rel",
                                     "seq_cst",    "release/acquire"};
  uint32_t rounds = 20000;
  /// Rounds of a control: enough to see stale reads, which come by the
  /// thousands when they come at all.
  uint32_t controlRounds = 20000;
  uint32_t words = 16;
  /// Report the controls' stale reads without judging them (runs that are
  /// not about visibility: compute-sanitizer's, a handful of rounds).
  bool judgeControls = true;
  int ranks = 0; ///< 0: every GPU (ranksFor)
  tleAllocType_t alloc = tleAllocDefault;
  bool fromNccl = false;
};

uint32_t roundsOf(const Options &o, const ModeInfo &m) {
  return m.checks ? o.rounds : std::min(o.rounds, o.controlRounds);
}

/// The communicator configuration of every run.
tleConfig_t stressConfig(const Options &o) {
  tleConfig_t cfg = cudaConfig(kSlots);
  cfg.allocType = o.alloc;
  return cfg;
}

/// What a run is, for its verdict lines.
std::string describe(const Options &o, int n) {
  static const char *allocs[] = {"default", "cudamalloc", "cumem", "auto"};
  return std::to_string(n) + " ranks, alloc " + allocs[o.alloc] +
         (o.fromNccl ? ", from NCCL" : "");
}

struct Config {
  int ctas;
  const KindInfo *kind;
  const ModeInfo *mode;
};

std::vector<Config> expand(const Options &o) {
  std::vector<Config> out;
  for (int c : o.ctas)
    for (const std::string &k : o.kinds)
      for (const std::string &m : o.orders) {
        const KindInfo *ki = nullptr;
        const ModeInfo *mi = nullptr;
        for (const KindInfo &x : kKinds)
          if (k == x.name)
            ki = &x;
        for (const ModeInfo &x : kModes)
          if (m == x.name)
            mi = &x;
        if (!ki || !mi || c < 1 || c > kMaxCtas) {
          std::fprintf(stderr, "bad configuration: ctas=%d kind=%s order=%s\n",
                       c, k.c_str(), m.c_str());
          std::exit(2);
        }
        out.push_back({c, ki, mi});
      }
  return out;
}

/// Device memory of one rank for the launches: the results and the control
/// grid barrier's CTA counter (this rank's CTAs only, so zeroing it before
/// each launch on the rank's own stream is safe).
struct Scratch {
  Result *res;
  uint32_t *count;
};

Scratch allocScratch(int dev) {
  Scratch s;
  CK(cudaSetDevice(dev));
  CK(cudaMalloc(&s.res, sizeof(Result)));
  CK(cudaMalloc(&s.count, sizeof(uint32_t)));
  return s;
}

void freeScratch(int dev, Scratch &s) {
  CK(cudaSetDevice(dev));
  CK(cudaFree(s.res));
  CK(cudaFree(s.count));
}

/// One rank's part of one configuration: launch (cooperatively for `grid`,
/// which needs all CTAs co-resident), without waiting.
void launch(const Config &c, const Options &o, int dev, const void *comm,
            const void *mem, int rank, int nRanks, uint32_t salt, Scratch sc) {
  CK(cudaSetDevice(dev));
  CK(cudaMemset(sc.res, 0, sizeof(Result)));
  CK(cudaMemset(sc.count, 0, sizeof(uint32_t)));
  int coop = c.kind->coop;
  Mode mode = c.mode->mode;
  // Stores go to the next rank, so every rank's buffer is written by the
  // previous one: a ring covers every pair of neighbours.
  int peer = (rank + 1) % nRanks;
  uint32_t rounds = roundsOf(o, *c.mode);
  uint32_t words = o.words;
  uint32_t *count = sc.count;
  Result *res = sc.res;
  if (coop == kCoopGrid) {
    void *args[] = {&comm, &mem,    &rank,  &nRanks, &peer,  &coop,
                    &mode, &rounds, &words, &salt,   &count, &res};
    CK(cudaLaunchCooperativeKernel((const void *)stressKernel, dim3(c.ctas),
                                   dim3(c.kind->threads), args, 0, nullptr));
  } else {
    stressKernel<<<c.ctas, c.kind->threads>>>(comm, mem, rank, nRanks, peer,
                                              coop, mode, rounds, words, salt,
                                              count, res);
  }
  CK_LAUNCH();
}

/// Waits for rank `rank`'s launch and returns what it found (exits when the
/// launch failed: the context is dead after a trap).
Result collect(const Config &c, int dev, int rank, const char *tag, Result *res,
               tleComm_t comm) {
  CK(cudaSetDevice(dev));
  cudaError_t err = cudaDeviceSynchronize();
  if (err != cudaSuccess) {
    tleErrorInfo info;
    tleCommGetError(comm, &info);
    std::printf("[%s rank %d] ctas=%d kind=%s order=%s: launch failed: %s; "
                "device record: %s\n",
                tag, rank, c.ctas, c.kind->name, c.mode->name,
                cudaGetErrorString(err),
                info.result == tleSuccess ? "(none)" : info.message);
    std::fflush(stdout);
    // The context is dead after a trap: nothing more can run in it.
    std::_Exit(1);
  }
  Result h;
  CK(cudaMemcpy(&h, res, sizeof(h), cudaMemcpyDeviceToHost));
  return h;
}

/// Prints rank `rank`'s line. A checked mode passes with no stale read; a
/// control's verdict is given by judgeControl, over every rank it saw.
bool report(const Config &c, const Options &o, int rank, const char *tag,
            const Result &h) {
  uint32_t rounds = roundsOf(o, *c.mode);
  bool pass = c.mode->checks ? h.violations == 0 : !h.controlHung;
  double us = rounds ? h.elapsedNs / 1e3 / rounds : 0;
  std::printf("[%s rank %d] ctas=%-3d kind=%-6s order=%-15s rounds=%u: "
              "%.3f us/round, %s %llu%s%s\n",
              tag, rank, c.ctas, c.kind->name, c.mode->name, rounds, us,
              c.mode->checks ? "violations" : "stale reads", h.violations,
              h.controlHung ? " (control barrier gave up)" : "",
              c.mode->checks ? (pass ? " PASS" : " FAIL") : "");
  if (h.violations)
    std::printf("    first: round %u word %u got 0x%08x expected 0x%08x\n",
                h.firstRound, h.firstWord, h.got, h.expected);
  std::fflush(stdout);
  return pass;
}

/// A control passes when it found stale reads: otherwise the stress could
/// not have seen the bug the control stands for, in this configuration.
bool judgeControl(const Config &c, const Options &o, const char *tag,
                  unsigned long long staleReads) {
  if (!o.judgeControls)
    return true;
  bool pass = staleReads > 0;
  std::printf("[%s] ctas=%-3d kind=%-6s control %-15s stale reads %llu: %s\n",
              tag, c.ctas, c.kind->name, c.mode->name, staleReads,
              pass ? "PASS (the stress sees what this order lets through)"
                   : "FAIL (the control found nothing: the stress cannot "
                     "tell this order from a correct one here)");
  std::fflush(stdout);
  return pass;
}

uint32_t saltOf(size_t configIndex) {
  return uint32_t(configIndex + 1) << kSaltShift;
}

int runSingle(const Options &o) {
  int visible = gpusOrSkip(2);
  if (!visible)
    return kExitSkip;
  const int n =
      o.ranks ? std::min(o.ranks, ranksFor(visible)) : ranksFor(visible);
  std::vector<Config> cfgs = expand(o);
  tleConfig_t cfg = stressConfig(o);
  std::vector<tleComm_t> comms(n);
  std::vector<int> devs(n);
  for (int r = 0; r < n; ++r)
    devs[r] = r;
  TK(tleCommInitAll(comms.data(), n, devs.data(), &cfg));
  std::vector<tleMem_t> mems(n);
  TK(tleMemAllocAll(comms.data(), n, kBufBytes, mems.data()));
  std::vector<void *> dcomm(n), dmem(n);
  std::vector<Scratch> sc(n);
  for (int r = 0; r < n; ++r) {
    TK(tleCommGetDevComm(comms[r], &dcomm[r]));
    TK(tleMemGetHandle(mems[r], &dmem[r]));
    sc[r] = allocScratch(r);
  }
  int failures = 0;
  for (size_t i = 0; i < cfgs.size(); ++i) {
    const Config &c = cfgs[i];
    uint64_t t0 = hostNowNs();
    // One host thread launches on every GPU: launches are asynchronous, so
    // the kernels run concurrently and meet at the barrier.
    for (int r = 0; r < n; ++r)
      launch(c, o, r, dcomm[r], dmem[r], r, n, saltOf(i), sc[r]);
    unsigned long long stale = 0;
    for (int r = 0; r < n; ++r) {
      Result h = collect(c, r, r, "single", sc[r].res, comms[r]);
      failures += !report(c, o, r, "single", h);
      stale += h.violations;
    }
    if (!c.mode->checks)
      failures += !judgeControl(c, o, "single", stale);
    std::printf("    (%.2f s)\n", (hostNowNs() - t0) / 1e9);
  }
  for (int r = 0; r < n; ++r) {
    freeScratch(r, sc[r]);
    CK(cudaSetDevice(r));
    TK(tleMemFree(mems[r]));
    TK(tleCommDestroy(comms[r]));
  }
  std::printf("%s: %zu configurations x %s, %d failed\n",
              failures ? "FAIL" : "PASS", cfgs.size(), describe(o, n).c_str(),
              failures);
  return failures ? 1 : 0;
}

/// This rank's communicator made from an NCCL communicator: rank 0's NCCL
/// unique id goes through the pipe, then ncclCommInitRank and
/// tleCommInitFromNccl, which finds this program's libnccl by itself.
/// Returns false after printing why.
bool commFromNccl(const Options &o, int rank, int n, int idPipe[2],
                  tleComm_t &comm, void *&nccl) {
#ifdef TLE_STRESS_WITH_NCCL
  ncclUniqueId id;
  if (rank == 0 && ncclGetUniqueId(&id) != ncclSuccess) {
    std::printf("rank 0: ncclGetUniqueId failed\n");
    return false;
  }
  if (!shareIdOverPipe(rank, idPipe, id, n)) {
    std::printf("rank %d: the NCCL unique id did not go through the pipe\n",
                rank);
    return false;
  }
  ncclComm_t nc;
  ncclResult_t r = ncclCommInitRank(&nc, n, id, rank);
  if (r != ncclSuccess) {
    std::printf("rank %d: ncclCommInitRank failed: %s\n", rank,
                ncclGetErrorString(r));
    return false;
  }
  tleConfig_t cfg = stressConfig(o);
  TK(tleCommInitFromNccl(&comm, nc, nullptr, &cfg));
  nccl = nc;
  return true;
#else
  (void)o, (void)rank, (void)n, (void)idPipe, (void)comm, (void)nccl;
  std::printf("rank %d: built without NCCL (configure with "
              "TLE_NCCL_INCLUDE_DIR and TLE_NCCL_LIBRARY)\n",
              rank);
  return false;
#endif
}

/// One rank process of the multi-process mode. Rank 0 creates the unique id
/// and writes it to the pipe; the others read it (EOF: rank 0 gave up).
int rankMain(const Options &o, int rank, int n, int idPipe[2]) {
  int visible = 0;
  if (cudaGetDeviceCount(&visible) != cudaSuccess || visible < n) {
    std::printf("SKIPPED: rank %d sees %d CUDA devices, %d needed\n", rank,
                visible, n);
    return kExitSkip;
  }
  CK(cudaSetDevice(rank));
  std::vector<Config> cfgs = expand(o);
  tleComm_t comm;
  void *nccl = nullptr;
  if (o.fromNccl) {
    if (!commFromNccl(o, rank, n, idPipe, comm, nccl))
      return 1;
  } else {
    tleUniqueId id;
    if (rank == 0)
      TK(tleGetUniqueId(&id));
    if (!shareIdOverPipe(rank, idPipe, id, n)) {
      std::printf("rank %d: the unique id did not go through the pipe\n", rank);
      return rank == 0 ? 1 : kExitSkip;
    }
    tleConfig_t cfg = stressConfig(o);
    TK(tleCommInitRank(&comm, n, &id, rank, rank, &cfg));
  }
  tleMem_t mem;
  TK(tleMemAlloc(comm, kBufBytes, &mem));
  void *dcomm, *dmem;
  TK(tleCommGetDevComm(comm, &dcomm));
  TK(tleMemGetHandle(mem, &dmem));
  Scratch sc = allocScratch(rank);
  const char *tag = o.fromNccl ? "nccl" : "multi";
  int failures = 0;
  for (size_t i = 0; i < cfgs.size(); ++i) {
    const Config &c = cfgs[i];
    launch(c, o, rank, dcomm, dmem, rank, n, saltOf(i), sc);
    Result h = collect(c, rank, rank, tag, sc.res, comm);
    failures += !report(c, o, rank, tag, h);
    // Each rank process sees only its own reads: each must find staleness.
    if (!c.mode->checks) {
      std::string who = std::string(tag) + " rank " + std::to_string(rank);
      failures += !judgeControl(c, o, who.c_str(), h.violations);
    }
  }
  freeScratch(rank, sc);
  TK(tleMemFree(mem));
  TK(tleCommDestroy(comm));
#ifdef TLE_STRESS_WITH_NCCL
  // After TLE's communicator: its collectives ran on this one.
  if (nccl)
    ncclCommDestroy(static_cast<ncclComm_t>(nccl));
#endif
  return failures ? 1 : 0;
}

int runMulti(const Options &o) {
  // No CUDA call may happen in this process before the fork: a forked child
  // cannot use a CUDA driver initialised by its parent. A child counts the
  // GPUs.
  int n = ranksFromChild();
  if (!n)
    return kExitSkip;
  if (o.ranks)
    n = std::min(n, o.ranks);
  int skipped, failed;
  if (!forkRanks(
          n, [&](int r, int *idPipe) { return rankMain(o, r, n, idPipe); },
          skipped, failed))
    return 1;
  if (skipped == n && failed == 0) {
    std::printf("SKIPPED: no CUDA device pair\n");
    return kExitSkip;
  }
  std::printf("%s: multi-process, %zu configurations x %s\n",
              failed || skipped ? "FAIL" : "PASS", expand(o).size(),
              describe(o, n).c_str());
  return failed || skipped ? 1 : 0;
}

void usage() {
  std::printf(
      "usage: tle-gpu-barrier-stress [--mode single|multi] [--ctas 1,8,132]\n"
      "  [--kinds thread,warp,block,grid]\n"
      "  [--orders relaxed,no_release,no_acquire,acq_rel,seq_cst,\n"
      "            release/acquire,split_acq_rel]\n"
      "  [--rounds N]   (default 20000, at most %u; env TLE_STRESS_ROUNDS)\n"
      "  [--control-rounds N]  rounds of the controls relaxed, no_release,\n"
      "                 no_acquire (default 20000, at most --rounds)\n"
      "  [--unjudged-controls]  report the controls' stale reads only\n"
      "  [--words N]    payload words per thread and round (1..%u, default "
      "16)\n"
      "  [--ranks N]    (default: every GPU, at most %d)\n"
      "  [--alloc cudamalloc|cumem|auto]   (default: TLE_CUDA_ALLOC or "
      "TLE's)\n"
      "  [--from-nccl]  (--mode multi: a communicator made from NCCL's)\n"
      "Exit status: 0 pass, 1 a violation or a control that saw nothing, 2\n"
      "usage, %d no pair of GPUs (skipped).\n",
      kMaxRounds, kMaxWords, tle::kMaxRanks, kExitSkip);
}

} // namespace

int main(int argc, char **argv) {
  Options o;
  if (const char *env = std::getenv("TLE_STRESS_ROUNDS"))
    o.rounds = uint32_t(std::strtoul(env, nullptr, 10));
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : nullptr;
    if (a == "--mode" && v)
      o.mode = v, ++i;
    else if (a == "--ctas" && v)
      o.ctas = parseIntList(v), ++i;
    else if (a == "--kinds" && v)
      o.kinds = parseList(v), ++i;
    else if (a == "--orders" && v)
      o.orders = parseList(v), ++i;
    else if (a == "--rounds" && v)
      o.rounds = uint32_t(std::strtoul(v, nullptr, 10)), ++i;
    else if (a == "--control-rounds" && v)
      o.controlRounds = uint32_t(std::strtoul(v, nullptr, 10)), ++i;
    else if (a == "--words" && v)
      o.words = uint32_t(std::strtoul(v, nullptr, 10)), ++i;
    else if (a == "--unjudged-controls")
      o.judgeControls = false;
    else if (a == "--ranks" && v)
      o.ranks = std::atoi(v), ++i;
    else if (a == "--alloc" && v) {
      std::string t = v;
      ++i;
      if (t == "cudamalloc")
        o.alloc = tleAllocCudaMalloc;
      else if (t == "cumem")
        o.alloc = tleAllocCuMem;
      else if (t == "auto")
        o.alloc = tleAllocAuto;
      else {
        usage();
        return 2;
      }
    } else if (a == "--from-nccl")
      o.fromNccl = true;
    else {
      usage();
      return 2;
    }
  }
  if (o.rounds > kMaxRounds || o.words < 1 || o.words > kMaxWords ||
      (o.ranks && o.ranks < 2) || (o.fromNccl && o.mode != "multi")) {
    usage();
    return 2;
  }
  setvbuf(stdout, nullptr, _IOLBF, 0);
  if (o.mode == "single")
    return runSingle(o);
  if (o.mode == "multi")
    return runMulti(o);
  usage();
  return 2;
}
