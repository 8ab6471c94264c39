//===- BarrierStress.cu - Data visibility across the barrier, on N GPUs ---===//
//
// The memory-model test of the barrier on real GPUs. Every thread of every
// round stores a round-stamped payload into the next rank's symmetric
// buffer, crosses the barrier, and loads the payload that a *different*
// thread of its group stored there from the previous rank (its own word for
// group `thread`). With an
// order that releases on arrive and acquires on wait, the barrier must make
// every one of those stores visible: a stale or torn value is a violation,
// counted on the device. Payloads alternate between two halves by round
// parity, so a fast peer writing round r+1 cannot overwrite round r's
// payload before it was read (round r+2 needs our arrival at r+1 first).
// `relaxed` promises no visibility: it runs for the barrier's progress only
// and its stale reads are reported, not failed.
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
  SyncAcqRel,
  SyncSeqCst,
  SplitRelAcq,
  SplitAcqRel
};

struct ModeInfo {
  const char *name;
  Mode mode;
  bool checks; ///< whether visibility is guaranteed (and so checked)
};

constexpr ModeInfo kModes[] = {
    {"relaxed", Mode::SyncRelaxed, false},
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
/// Two parities x two words per thread.
constexpr size_t kBufBytes = 2 * 2 * kMaxThreads * sizeof(uint32_t);
/// Rounds per configuration are capped so that salt + round never aliases
/// another configuration's stamps.
constexpr uint32_t kSaltShift = 22;
constexpr uint32_t kMaxRounds = (1u << kSaltShift) - 2;

/// Per-launch results on the device.
struct Result {
  unsigned long long violations;
  uint32_t firstRound, firstWord, got, expected;
  unsigned long long elapsedNs; ///< slowest CTA
};

__device__ __forceinline__ uint32_t scramble(uint32_t word) {
  return word * 0x9E3779B9u;
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

__global__ void stressKernel(const void *comm, const void *mem, int rank,
                             int peer, int coop, Mode mode, uint32_t rounds,
                             uint32_t salt, Result *res) {
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
  volatile uint32_t *peerBuf =
      static_cast<volatile uint32_t *>(flagcxGetIntraPointerS(mem, 0, peer));
  volatile uint32_t *myBuf =
      static_cast<volatile uint32_t *>(flagcxGetIntraPointerS(mem, 0, rank));

  unsigned long long bad = 0;
  uint32_t firstRound = 0, firstWord = 0, firstGot = 0, firstExp = 0;
  const uint64_t t0 = globalTimer();
  for (uint32_t r = 0; r < rounds; ++r) {
    const uint32_t v = salt + r + 1;
    const size_t half = size_t(r & 1) * 2 * n;
    // Two words in distant cache lines, so a barrier that made one line
    // visible but not another is caught.
    peerBuf[half + gt] = v;
    peerBuf[half + n + gt] = v ^ scramble(gt);
    doBarrier(comm, coop, slot, mode);
    uint32_t g0 = myBuf[half + partner];
    uint32_t g1 = myBuf[half + n + partner];
    uint32_t e1 = v ^ scramble(partner);
    if (g0 != v || g1 != e1) {
      if (bad == 0) {
        firstRound = r;
        firstWord = partner;
        firstGot = g0 != v ? g0 : g1;
        firstExp = g0 != v ? v : e1;
      }
      ++bad;
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
  std::vector<std::string> orders = {"relaxed", "acq_rel", "seq_cst",
                                     "release/acquire"};
  uint32_t rounds = 20000;
  int ranks = 0; ///< 0: every GPU (ranksFor)
  tleAllocType_t alloc = tleAllocDefault;
  bool fromNccl = false;
};

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

/// One rank's part of one configuration: launch (cooperatively for `grid`,
/// which needs all CTAs co-resident), without waiting.
void launch(const Config &c, int dev, const void *comm, const void *mem,
            int rank, int nRanks, uint32_t rounds, uint32_t salt, Result *res) {
  CK(cudaSetDevice(dev));
  CK(cudaMemset(res, 0, sizeof(Result)));
  int coop = c.kind->coop;
  Mode mode = c.mode->mode;
  // Stores go to the next rank, so every rank's buffer is written by the
  // previous one: a ring covers every pair of neighbours.
  int peer = (rank + 1) % nRanks;
  if (coop == kCoopGrid) {
    void *args[] = {&comm, &mem,    &rank, &peer, &coop,
                    &mode, &rounds, &salt, &res};
    CK(cudaLaunchCooperativeKernel((const void *)stressKernel, dim3(c.ctas),
                                   dim3(c.kind->threads), args, 0, nullptr));
  } else {
    stressKernel<<<c.ctas, c.kind->threads>>>(comm, mem, rank, peer, coop, mode,
                                              rounds, salt, res);
  }
  CK_LAUNCH();
}

/// Waits for rank `rank`'s launch and judges it. Returns false on failure.
bool finish(const Config &c, int dev, int rank, uint32_t rounds,
            const char *tag, Result *res, tleComm_t comm) {
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
  bool pass = !c.mode->checks || h.violations == 0;
  double us = rounds ? h.elapsedNs / 1e3 / rounds : 0;
  std::printf("[%s rank %d] ctas=%-3d kind=%-6s order=%-15s rounds=%u: "
              "%.3f us/round, violations %llu%s %s\n",
              tag, rank, c.ctas, c.kind->name, c.mode->name, rounds, us,
              h.violations, c.mode->checks ? "" : " (not checked: relaxed)",
              pass ? "PASS" : "FAIL");
  if (h.violations)
    std::printf("    first: round %u word %u got 0x%08x expected 0x%08x\n",
                h.firstRound, h.firstWord, h.got, h.expected);
  std::fflush(stdout);
  return pass;
}

uint32_t saltOf(size_t configIndex) {
  return uint32_t(configIndex + 1) << kSaltShift;
}

int runSingle(const Options &o) {
  int visible = gpusOrSkip(2);
  if (!visible)
    return 0;
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
  std::vector<Result *> res(n);
  for (int r = 0; r < n; ++r) {
    TK(tleCommGetDevComm(comms[r], &dcomm[r]));
    TK(tleMemGetHandle(mems[r], &dmem[r]));
    CK(cudaSetDevice(r));
    CK(cudaMalloc(&res[r], sizeof(Result)));
  }
  int failures = 0;
  for (size_t i = 0; i < cfgs.size(); ++i) {
    const Config &c = cfgs[i];
    uint64_t t0 = hostNowNs();
    // One host thread launches on every GPU: launches are asynchronous, so
    // the kernels run concurrently and meet at the barrier.
    for (int r = 0; r < n; ++r)
      launch(c, r, dcomm[r], dmem[r], r, n, o.rounds, saltOf(i), res[r]);
    for (int r = 0; r < n; ++r)
      failures += !finish(c, r, r, o.rounds, "single", res[r], comms[r]);
    std::printf("    (%.2f s)\n", (hostNowNs() - t0) / 1e9);
  }
  for (int r = 0; r < n; ++r) {
    CK(cudaSetDevice(r));
    CK(cudaFree(res[r]));
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
  Result *res;
  CK(cudaSetDevice(rank));
  CK(cudaMalloc(&res, sizeof(Result)));
  int failures = 0;
  for (size_t i = 0; i < cfgs.size(); ++i) {
    launch(cfgs[i], rank, dcomm, dmem, rank, n, o.rounds, saltOf(i), res);
    failures += !finish(cfgs[i], rank, rank, o.rounds,
                        o.fromNccl ? "nccl" : "multi", res, comm);
  }
  CK(cudaFree(res));
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
    return 0;
  if (o.ranks)
    n = std::min(n, o.ranks);
  int idPipe[2];
  if (pipe(idPipe) != 0) {
    std::perror("pipe");
    return 1;
  }
  std::fflush(stdout);
  std::vector<pid_t> pids(n);
  for (int r = 0; r < n; ++r) {
    pids[r] = fork();
    if (pids[r] < 0) {
      std::perror("fork");
      return 1;
    }
    if (pids[r] == 0) {
      int rc = rankMain(o, r, n, idPipe);
      std::fflush(stdout);
      std::_Exit(rc);
    }
  }
  close(idPipe[0]);
  close(idPipe[1]);
  int skipped = 0, failed = 0;
  for (int r = 0; r < n; ++r) {
    int status;
    waitpid(pids[r], &status, 0);
    if (WIFEXITED(status) && WEXITSTATUS(status) == kExitSkip)
      ++skipped;
    else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::printf("rank %d process: %s %d\n", r,
                  WIFEXITED(status) ? "exit status" : "killed by signal",
                  WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
      ++failed;
    }
  }
  if (skipped == n && failed == 0) {
    std::printf("SKIPPED: no CUDA device pair\n");
    return 0;
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
      "  [--orders relaxed,acq_rel,seq_cst,release/acquire,split_acq_rel]\n"
      "  [--rounds N]   (default 20000, at most %u; env TLE_STRESS_ROUNDS)\n"
      "  [--ranks N]    (default: every GPU, at most %d)\n"
      "  [--alloc cudamalloc|cumem|auto]   (default: TLE_CUDA_ALLOC or "
      "TLE's)\n"
      "  [--from-nccl]  (--mode multi: a communicator made from NCCL's)\n",
      kMaxRounds, tle::kMaxRanks);
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
  if (o.rounds > kMaxRounds || (o.ranks && o.ranks < 2) ||
      (o.fromNccl && o.mode != "multi")) {
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
