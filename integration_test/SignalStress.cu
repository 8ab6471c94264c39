//===- SignalStress.cu - Data visibility across signals, on GPU pairs ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The memory-model test of point-to-point signals on real GPUs. Each group
// (a thread, a warp or a CTA) of each rank plays ping-pong with the same
// group of the peer: every round, every thread stores a round-stamped
// payload into the peer's symmetric buffer, the group signals the peer's
// word for the group (a release), waits until its own word shows the peer's
// signal of this round (an acquire), and loads the payload that a
// *different* thread of its group's partner stored here. A stale or torn
// value is a violation, counted on the device: the signal must publish the
// whole group's stores, and the wait must make them visible to the whole
// group. Payloads alternate between two halves by round parity; round r+1
// overwrites the half read in round r-1 only after the peer's round-r
// signal, which it sends after that read. `relaxed` waits promise no
// visibility: they run for progress only and their stale reads are
// reported, not failed.
//
// Each configuration starts by resetting this rank's words and a barrier
// (so no signal of it arrives before the reset), then runs `rounds`
// handoffs in each direction per group. Configurations: CTAs x group kinds
// x forms (the typed API and FlagCX's ABI, inc and add, acquire, acq_rel,
// seq_cst and relaxed waits), in one process with every GPU
// (tleCommInitAll) or one process per rank (fork before any CUDA call).
// Ranks play in pairs (r, r ^ 1) over one communicator of every GPU of the
// machine, rounded down to an even count (TLE_GPU_RANKS lowers it): a ring
// would let a rank's left neighbour run two rounds ahead of its read, since
// the neighbour waits on its own left, not on this rank.
//
//===----------------------------------------------------------------------===//

#include "GpuSupport.h"

#include "tle/device.h"
#include "tle/signal.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

using namespace tle::gpu;

namespace {

/// How the signals of one configuration are called.
enum class Form { IncAcquire, AddAcqRel, AbiSeqCst, Relaxed };

struct FormInfo {
  const char *name;
  Form form;
  bool checks; ///< whether visibility is guaranteed (and so checked)
};

constexpr FormInfo kForms[] = {
    {"inc/acquire", Form::IncAcquire, true},
    {"add/acq_rel", Form::AddAcqRel, true},
    {"abi/seq_cst", Form::AbiSeqCst, true},
    {"relaxed", Form::Relaxed, false},
};

struct KindInfo {
  const char *name;
  int coop;
  int threads; ///< threads per CTA
};

// `thread` groups use 32 threads per CTA so that 132 CTAs need 4224 words.
constexpr KindInfo kKinds[] = {
    {"thread", kCoopThread, 32},
    {"warp", kCoopWarp, 128},
    {"block", kCoopBlock, 128},
};

constexpr int kMaxCtas = 132;
constexpr uint32_t kWords = kMaxCtas * 32;
constexpr size_t kMaxThreads = size_t(kMaxCtas) * 128;
/// Two parities x two words per thread.
constexpr size_t kBufBytes = 2 * 2 * kMaxThreads * sizeof(uint32_t);
/// Rounds per configuration are capped so that salt + round never aliases
/// another configuration's stamps.
constexpr uint32_t kSaltShift = 22;
constexpr uint32_t kMaxRounds = (1u << kSaltShift) - 2;

struct Result {
  unsigned long long violations;
  uint32_t firstRound, firstWord, got, expected;
  unsigned long long elapsedNs; ///< slowest CTA
};

__device__ __forceinline__ uint32_t scramble(uint32_t word) {
  return word * 0x9E3779B9u;
}

/// What round r adds to the word in each form (the wait's target is the
/// running sum).
__device__ __forceinline__ uint64_t addend(Form form, uint32_t r) {
  switch (form) {
  case Form::AddAcqRel:
    return r % 5 + 1;
  case Form::AbiSeqCst:
    return 3;
  default:
    return 1;
  }
}

__device__ __forceinline__ void signalPeer(const void *comm, int peer,
                                           uint32_t word, int coop, Form form,
                                           uint64_t value) {
  switch (form) {
  case Form::AddAcqRel:
    tle::signalAdd(comm, peer, word, value, static_cast<tle::CoopKind>(coop));
    break;
  case Form::AbiSeqCst:
    flagcxDevSignalAdd(comm, tle::kTeamIntra, peer, word, value, 0, coop,
                       tle::kScopeSystem);
    break;
  default:
    tle::signalInc(comm, peer, word, static_cast<tle::CoopKind>(coop));
    break;
  }
}

__device__ __forceinline__ void waitFor(const void *comm, uint32_t word,
                                        uint64_t least, int coop, Form form) {
  switch (form) {
  case Form::AddAcqRel:
    tle::signalWait(comm, word, least, static_cast<tle::CoopKind>(coop),
                    kAcqRel);
    break;
  case Form::AbiSeqCst:
    flagcxDevWaitSignal(comm, word, least, 64, 0, coop, kSeqCst);
    break;
  case Form::Relaxed:
    tle::signalWait(comm, word, least, static_cast<tle::CoopKind>(coop),
                    kRelaxed);
    break;
  default:
    tle::signalWait(comm, word, least, static_cast<tle::CoopKind>(coop));
    break;
  }
}

__global__ void stressKernel(const void *comm, const void *mem, int rank,
                             int peer, int coop, Form form, uint32_t rounds,
                             uint32_t salt, Result *res) {
  const uint32_t n = gridDim.x * blockDim.x;
  const uint32_t gt = blockIdx.x * blockDim.x + threadIdx.x;
  uint32_t word, base, size;
  switch (coop) {
  case kCoopThread:
    word = gt, base = gt, size = 1;
    break;
  case kCoopWarp:
    word = gt / 32, base = gt & ~31u, size = 32;
    break;
  default: // block
    word = blockIdx.x, base = blockIdx.x * blockDim.x, size = blockDim.x;
    break;
  }
  const uint32_t partner = base + (gt - base + 1) % size;
  volatile uint32_t *peerBuf =
      static_cast<volatile uint32_t *>(flagcxGetIntraPointerS(mem, 0, peer));
  volatile uint32_t *myBuf =
      static_cast<volatile uint32_t *>(flagcxGetIntraPointerS(mem, 0, rank));

  // A fresh word: reset it, then a barrier of the same group, after which
  // the peer's first signal can only come after our reset.
  if (gt == base)
    tle::resetSignal(comm, word);
  flagcxIntraBarrierSyncS(comm, coop, word, false, kAcqRel);

  unsigned long long bad = 0;
  uint32_t firstRound = 0, firstWord = 0, firstGot = 0, firstExp = 0;
  uint64_t target = 0;
  const uint64_t t0 = globalTimer();
  for (uint32_t r = 0; r < rounds; ++r) {
    const uint32_t v = salt + r + 1;
    const size_t half = size_t(r & 1) * 2 * n;
    const uint64_t add = addend(form, r);
    target += add;
    // Two words in distant cache lines, so a signal that published one line
    // but not another is caught.
    peerBuf[half + gt] = v;
    peerBuf[half + n + gt] = v ^ scramble(gt);
    signalPeer(comm, peer, word, coop, form, add);
    waitFor(comm, word, target, coop, form);
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
  std::vector<std::string> kinds = {"thread", "warp", "block"};
  std::vector<std::string> forms = {"inc/acquire", "add/acq_rel", "abi/seq_cst",
                                    "relaxed"};
  uint32_t rounds = 20000;
};

struct Config {
  int ctas;
  const KindInfo *kind;
  const FormInfo *form;
};

std::vector<Config> expand(const Options &o) {
  std::vector<Config> out;
  for (int c : o.ctas)
    for (const std::string &k : o.kinds)
      for (const std::string &f : o.forms) {
        const KindInfo *ki = nullptr;
        const FormInfo *fi = nullptr;
        for (const KindInfo &x : kKinds)
          if (k == x.name)
            ki = &x;
        for (const FormInfo &x : kForms)
          if (f == x.name)
            fi = &x;
        if (!ki || !fi || c < 1 || c > kMaxCtas) {
          std::fprintf(stderr, "bad configuration: ctas=%d kind=%s form=%s\n",
                       c, k.c_str(), f.c_str());
          std::exit(2);
        }
        out.push_back({c, ki, fi});
      }
  return out;
}

/// Groups of one rank in a configuration (each receives `rounds` handoffs).
uint64_t groupsOf(const Config &c) {
  uint64_t threads = uint64_t(c.ctas) * c.kind->threads;
  return c.kind->coop == kCoopThread ? threads
         : c.kind->coop == kCoopWarp ? threads / 32
                                     : uint64_t(c.ctas);
}

void launch(const Config &c, int dev, const void *comm, const void *mem,
            int rank, uint32_t rounds, uint32_t salt, Result *res) {
  CK(cudaSetDevice(dev));
  CK(cudaMemset(res, 0, sizeof(Result)));
  stressKernel<<<c.ctas, c.kind->threads>>>(
      comm, mem, rank, rank ^ 1, c.kind->coop, c.form->form, rounds, salt, res);
  CK_LAUNCH();
}

/// Waits for rank `rank`'s launch and judges it; adds the handoffs it
/// checked to `handoffs`. Returns false on failure.
bool finish(const Config &c, int dev, int rank, uint32_t rounds,
            const char *tag, Result *res, tleComm_t comm, uint64_t &handoffs) {
  CK(cudaSetDevice(dev));
  cudaError_t err = cudaDeviceSynchronize();
  if (err != cudaSuccess) {
    tleErrorInfo info;
    tleCommGetError(comm, &info);
    std::printf("[%s rank %d] ctas=%d kind=%s form=%s: launch failed: %s; "
                "device record: %s\nFAIL\n",
                tag, rank, c.ctas, c.kind->name, c.form->name,
                cudaGetErrorString(err),
                info.result == tleSuccess ? "(none)" : info.message);
    std::fflush(stdout);
    // The context is dead after a trap: nothing more can run in it.
    std::_Exit(1);
  }
  Result h;
  CK(cudaMemcpy(&h, res, sizeof(h), cudaMemcpyDeviceToHost));
  bool pass = !c.form->checks || h.violations == 0;
  if (c.form->checks)
    handoffs += groupsOf(c) * rounds;
  double us = rounds ? h.elapsedNs / 1e3 / rounds : 0;
  std::printf("[%s rank %d] ctas=%-3d kind=%-6s form=%-11s rounds=%u: "
              "%.3f us/round trip, violations %llu%s %s\n",
              tag, rank, c.ctas, c.kind->name, c.form->name, rounds, us,
              h.violations, c.form->checks ? "" : " (not checked: relaxed)",
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

tleConfig_t stressConfig() {
  tleConfig_t cfg = cudaConfig(kWords);
  cfg.nSignals = kWords;
  return cfg;
}

/// The ranks of a run on `gpus` usable GPUs: pairs only.
int pairedRanks(int gpus) { return gpus & ~1; }

int runSingle(const Options &o) {
  int visible = gpusOrSkip(2);
  if (!visible)
    return kExitSkip;
  const int n = pairedRanks(ranksFor(visible));
  std::vector<Config> cfgs = expand(o);
  tleConfig_t cfg = stressConfig();
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
  uint64_t handoffs = 0;
  for (size_t i = 0; i < cfgs.size(); ++i) {
    uint64_t t0 = hostNowNs();
    for (int r = 0; r < n; ++r)
      launch(cfgs[i], r, dcomm[r], dmem[r], r, o.rounds, saltOf(i), res[r]);
    for (int r = 0; r < n; ++r)
      failures += !finish(cfgs[i], r, r, o.rounds, "single", res[r], comms[r],
                          handoffs);
    std::printf("    (%.2f s)\n", (hostNowNs() - t0) / 1e9);
  }
  for (int r = 0; r < n; ++r) {
    CK(cudaSetDevice(r));
    CK(cudaFree(res[r]));
    TK(tleMemFree(mems[r]));
    TK(tleCommDestroy(comms[r]));
  }
  std::printf("%s: %zu configurations x %d ranks, %llu checked handoffs, %d "
              "failed\n",
              failures ? "FAIL" : "PASS", cfgs.size(), n,
              (unsigned long long)handoffs, failures);
  return failures ? 1 : 0;
}

int rankMain(const Options &o, int rank, int n, int idPipe[2]) {
  int visible = 0;
  if (cudaGetDeviceCount(&visible) != cudaSuccess || visible < n) {
    std::printf("SKIPPED: rank %d sees %d CUDA devices, %d needed\n", rank,
                visible, n);
    return kExitSkip;
  }
  tleUniqueId id;
  if (rank == 0)
    TK(tleGetUniqueId(&id));
  if (!shareIdOverPipe(rank, idPipe, id, n)) {
    std::printf("rank %d: the unique id did not go through the pipe\n", rank);
    return rank == 0 ? 1 : kExitSkip;
  }
  std::vector<Config> cfgs = expand(o);
  tleConfig_t cfg = stressConfig();
  tleComm_t comm;
  TK(tleCommInitRank(&comm, n, &id, rank, rank, &cfg));
  tleMem_t mem;
  TK(tleMemAlloc(comm, kBufBytes, &mem));
  void *dcomm, *dmem;
  TK(tleCommGetDevComm(comm, &dcomm));
  TK(tleMemGetHandle(mem, &dmem));
  Result *res;
  CK(cudaSetDevice(rank));
  CK(cudaMalloc(&res, sizeof(Result)));
  int failures = 0;
  uint64_t handoffs = 0;
  for (size_t i = 0; i < cfgs.size(); ++i) {
    launch(cfgs[i], rank, dcomm, dmem, rank, o.rounds, saltOf(i), res);
    failures +=
        !finish(cfgs[i], rank, rank, o.rounds, "multi", res, comm, handoffs);
  }
  std::printf("[multi rank %d] %llu checked handoffs\n", rank,
              (unsigned long long)handoffs);
  CK(cudaFree(res));
  TK(tleMemFree(mem));
  TK(tleCommDestroy(comm));
  return failures ? 1 : 0;
}

int runMulti(const Options &o) {
  // No CUDA call may happen in this process before the fork: a forked child
  // cannot use a CUDA driver initialised by its parent. A child counts the
  // GPUs.
  const int n = pairedRanks(ranksFromChild());
  if (!n)
    return kExitSkip;
  int skipped, failed;
  if (!forkRanks(
          n, [&](int r, int *idPipe) { return rankMain(o, r, n, idPipe); },
          skipped, failed))
    return 1;
  if (skipped == n && failed == 0) {
    std::printf("SKIPPED: no CUDA device pair\n");
    return kExitSkip;
  }
  std::printf("%s: multi-process, %zu configurations x %d ranks\n",
              failed || skipped ? "FAIL" : "PASS", expand(o).size(), n);
  return failed || skipped ? 1 : 0;
}

void usage() {
  std::printf(
      "usage: tle-gpu-signal-stress [--mode single|multi] [--ctas 1,8,132]\n"
      "  [--kinds thread,warp,block]\n"
      "  [--forms inc/acquire,add/acq_rel,abi/seq_cst,relaxed]\n"
      "  [--rounds N]   (default 20000, at most %u; env TLE_STRESS_ROUNDS)\n",
      kMaxRounds);
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
    else if (a == "--forms" && v)
      o.forms = parseList(v), ++i;
    else if (a == "--rounds" && v)
      o.rounds = uint32_t(std::strtoul(v, nullptr, 10)), ++i;
    else {
      usage();
      return 2;
    }
  }
  if (o.rounds > kMaxRounds || o.rounds == 0) {
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
