//===- BarrierLab.cu - Run 5: the barrier lab on two GPUs -----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// One process drives both GPUs through three experiments; docs/gpu-notes.md
// ("Run 5 plan: the barrier lab") says what each outcome would mean.
//   1  NCCL's LSA barrier against the same protocol written here, with the
//      memory held constant: on NCCL's own barrier words, on a fresh buffer
//      of NCCL's resource window, on cudaMalloc + peer access, on cuMem
//      memory mapped to both GPUs; .global against generic addresses; TLE's
//      stateless ABI and session; two launch orders (one host thread in rank
//      order as tle-bench-barrier, one thread per rank as tle-bench-nccl);
//      20,000 against 5,000 rounds.
//   2  what the stateless call costs over the session, and candidate fixes
//      (LabBarriers.cuh): a shared-memory communicator cache, loads the
//      compiler may hoist, poll loops with and without deadline bookkeeping.
//   3  a one-shot all-reduce replayed from CUDA graphs: an empty kernel, the
//      reads and writes alone, with the entry barrier, with both; a sweep of
//      CTAs and threads; ncclAllReduce captured the same way as the baseline.
// In-kernel figures: N rounds per CTA after one untimed round, %globaltimer
// per CTA, the slowest CTA over both ranks, and the SM clock of CTA 0
// (clock64 delta / globaltimer delta, MHz; the CSV keeps the lower rank's).
// Repetitions are interleaved round-robin over every implementation of a
// CTA count (or of a message size), with a rotating start, so that drift
// hits all alike. Every figure is written to the CSV as it is measured:
//   exp,impl,ctas,iters,rep,us,mhz
// Experiment 3 rows have exp "3-<bytes>", iters = kernels per timing and no
// mhz. A host watchdog ends the program (exit 3) when a launch has not
// finished after --hang-s seconds. Multicast is never used.
//
//===----------------------------------------------------------------------===//

#include "GpuSupport.h"
#include "LabBarriers.cuh"

#include "tle/session.h"

#include <cuda.h>
#include <nccl.h>
#include <nccl_device.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

using namespace tle::gpu;

#define NK(call)                                                               \
  do {                                                                         \
    ncclResult_t nkRes_ = (call);                                              \
    if (nkRes_ != ncclSuccess) {                                               \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__,       \
                   #call, ncclGetErrorString(nkRes_));                         \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

#define CU(call)                                                               \
  do {                                                                         \
    CUresult cuRes_ = (call);                                                  \
    if (cuRes_ != CUDA_SUCCESS) {                                              \
      const char *cuMsg_ = nullptr;                                            \
      cuGetErrorString(cuRes_, &cuMsg_);                                       \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__,       \
                   #call, cuMsg_ ? cuMsg_ : "unknown error");                  \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

namespace {

constexpr int kRanks = 2;
constexpr int kThreads = 128;        ///< per CTA in experiments 1 and 2
constexpr uint32_t kTleSlots = 1024; ///< 0..: latency; kSlotReduce..: exp 3
constexpr uint32_t kSlotReduce = 512;
constexpr size_t kSymBytes = 8u << 20;

//===----------------------------------------------------------------------===//
// Options, CSV, watchdog
//===----------------------------------------------------------------------===//

struct Options {
  std::vector<int> exps = {1, 2, 3};
  std::vector<int> ctas = {1, 8, 32, 132};
  int iters = 20000;     ///< rounds per in-kernel measurement
  int shortIters = 5000; ///< the iteration-count control (NCCL, ref); 0: off
  int reps = 11;         ///< interleaved repetitions (experiments 1, 2)
  std::vector<size_t> sizes = {8 << 10,  16 << 10,  32 << 10,
                               64 << 10, 128 << 10, 256 << 10};
  std::vector<int> arCtas = {1, 2, 4, 8, 16, 32};
  std::vector<int> arThreads = {128, 256, 512};
  int arReps = 7;              ///< interleaved repetitions (experiment 3)
  int perGraph = 50;           ///< kernels per captured graph
  int replays = 10;            ///< graph launches per timing
  double hangS = 20;           ///< a launch not done by then ends the run
  double budgetS = 330;        ///< no new block starts after this
  std::string csv = "lab.csv"; ///< where the rows go
};

FILE *gCsv = nullptr;
uint64_t gHangNs = 0;
uint64_t gStartNs = 0;

double elapsedS() { return (hostNowNs() - gStartNs) / 1e9; }

void csvRow(const std::string &exp, const std::string &impl, int ctas,
            long iters, int rep, double us, double mhz) {
  if (mhz > 0)
    std::fprintf(gCsv, "%s,%s,%d,%ld,%d,%.4f,%.0f\n", exp.c_str(),
                 impl.c_str(), ctas, iters, rep, us, mhz);
  else
    std::fprintf(gCsv, "%s,%s,%d,%ld,%d,%.4f,\n", exp.c_str(), impl.c_str(),
                 ctas, iters, rep, us);
  std::fflush(gCsv);
}

/// Ends the program when the GPU work `what` is stuck: a hung barrier would
/// otherwise eat the whole run. The rows measured so far are in the CSV.
[[noreturn]] void hang(const std::string &what) {
  std::printf("HANG: %s not finished after %.0f s; ending the run (%.1f s)\n",
              what.c_str(), gHangNs / 1e9, elapsedS());
  std::fflush(stdout);
  if (gCsv)
    std::fflush(gCsv);
  std::_Exit(3);
}

/// cudaStreamSynchronize with the watchdog (the caller's device).
void waitStream(cudaStream_t s, const std::string &what) {
  const uint64_t t0 = hostNowNs();
  for (;;) {
    cudaError_t e = cudaStreamQuery(s);
    if (e == cudaSuccess)
      return;
    if (e != cudaErrorNotReady)
      CK(e);
    if (hostNowNs() - t0 > gHangNs)
      hang(what);
    std::this_thread::yield();
  }
}

/// cudaEventSynchronize with the watchdog.
void waitEvent(cudaEvent_t ev, const std::string &what) {
  const uint64_t t0 = hostNowNs();
  for (;;) {
    cudaError_t e = cudaEventQuery(ev);
    if (e == cudaSuccess)
      return;
    if (e != cudaErrorNotReady)
      CK(e);
    if (hostNowNs() - t0 > gHangNs)
      hang(what);
    std::this_thread::yield();
  }
}

/// Runs fn(rank) on one host thread per rank and joins them.
template <typename Fn> void onRankThreads(Fn fn) {
  std::vector<std::thread> th;
  for (int r = 0; r < kRanks; ++r)
    th.emplace_back([&fn, r] {
      CK(cudaSetDevice(r));
      fn(r);
    });
  for (auto &t : th)
    t.join();
}

struct Stats {
  double med, min, max;
};

Stats stats(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  if (v.empty())
    return {0, 0, 0};
  return {v[v.size() / 2], v.front(), v.back()};
}

//===----------------------------------------------------------------------===//
// Kernels of experiments 1 and 2
//===----------------------------------------------------------------------===//

/// Start of a timed loop: globaltimer and the SM clock.
struct LoopClock {
  uint64_t ns;
  uint64_t clk;
};

__device__ __forceinline__ LoopClock loopStart() {
  LoopClock k;
  k.ns = globalTimer();
  k.clk = static_cast<uint64_t>(clock64());
  return k;
}

/// out[2b] = the CTA's nanoseconds, out[2b+1] its SM clock cycles.
__device__ __forceinline__ void loopEnd(const LoopClock &k,
                                        unsigned long long *out) {
  const uint64_t clk = static_cast<uint64_t>(clock64());
  const uint64_t ns = globalTimer();
  if (threadIdx.x == 0) {
    out[2 * blockIdx.x] = ns - k.ns;
    out[2 * blockIdx.x + 1] = clk - k.clk;
  }
}

/// NCCL's LSA barrier, as tle-bench-nccl times it.
__global__ void ncclLsaLoop(ncclDevComm dc, int iters,
                            unsigned long long *out) {
  ncclLsaBarrierSession<ncclCoopCta> bar(ncclCoopCta(), dc, ncclTeamLsa(dc),
                                         dc.lsaBarrier, blockIdx.x);
  bar.sync(ncclCoopCta(), cuda::memory_order_relaxed); // untimed: line up
  const LoopClock k = loopStart();
  for (int i = 0; i < iters; ++i)
    bar.sync(ncclCoopCta(), cuda::memory_order_acq_rel);
  loopEnd(k, out);
}

/// One rank's words of a reference barrier, in the layout of NCCL's LSA
/// barrier buffer (nB slots, n ranks): epochs at word nB + b, rank r's
/// inbox word for slot b and peer q at word 3 nB + b n + q. CTA b polls
/// poll[b * stride] and signals signal[b * stride].
struct RefWords {
  const uint32_t *poll;
  uint32_t *signal;
  uint32_t stride;
  uint32_t *epochs;
};

/// The minimal protocol (LabBarriers.cuh, refRound). The epoch is read at
/// the start and written back at the end, as NCCL's session does, so that
/// launches, and NCCL's own barrier on the same words, continue each other.
template <bool kGeneric>
__global__ void refLoop(RefWords w, int iters, unsigned long long *out) {
  const uint32_t *mine = w.poll + blockIdx.x * w.stride;
  uint32_t *theirs = w.signal + blockIdx.x * w.stride;
  uint32_t epoch = threadIdx.x == 0 ? w.epochs[blockIdx.x] : 0;
  tle::lab::refRound<kGeneric>(mine, theirs, epoch);
  const LoopClock k = loopStart();
  for (int i = 0; i < iters; ++i)
    tle::lab::refRound<kGeneric>(mine, theirs, epoch);
  loopEnd(k, out);
  if (threadIdx.x == 0)
    w.epochs[blockIdx.x] = epoch;
}

/// BarrierBench.cu's tleSyncLoop: the stateless ABI, slot = CTA.
__global__ void tleSyncLoop(const void *comm, int iters,
                            unsigned long long *out) {
  const uint32_t slot = blockIdx.x;
  flagcxIntraBarrierSyncS(comm, kCoopBlock, slot, false, kRelaxed);
  const LoopClock k = loopStart();
  for (int i = 0; i < iters; ++i)
    flagcxIntraBarrierSyncS(comm, kCoopBlock, slot, false, kAcqRel);
  loopEnd(k, out);
}

/// BarrierBench.cu's tleSessionLoop: tle::BarrierSession.
__global__ void tleSessionLoop(const void *comm, int iters,
                               unsigned long long *out) {
  tle::BarrierSession bar(comm, kCoopBlock, blockIdx.x);
  bar.sync(kRelaxed);
  const LoopClock k = loopStart();
  for (int i = 0; i < iters; ++i)
    bar.sync(kAcqRel);
  loopEnd(k, out);
}

/// Experiment 2's variants of the stateless call (LabBarriers.cuh).
template <class Src, class Poll>
__global__ void labLoop(const void *comm, int iters, unsigned long long *out) {
  const uint32_t slot = blockIdx.x;
  tle::lab::labSync<Src, Poll>(comm, slot);
  const LoopClock k = loopStart();
  for (int i = 0; i < iters; ++i)
    tle::lab::labSync<Src, Poll>(comm, slot);
  loopEnd(k, out);
}

/// This rank's copy of NCCL resource buffer `h` and the peer's, through
/// NCCL's public device API (the LSA barrier's buffer for
/// h = dc.lsaBarrier.bufHandle). out[2] is the local pointer as
/// ncclGetResourceBufferLocalPointer gives it (must equal out[0]).
__global__ void ncclResourceBases(ncclDevComm dc, ncclDevResourceHandle h,
                                  uint32_t **out) {
  const ncclTeam team = ncclTeamLsa(dc);
  const int peer = (team.rank + 1) % team.nRanks;
  out[0] = static_cast<uint32_t *>(
      ncclGetResourceBufferPeerPointer(dc, h, team, team.rank));
  out[1] = static_cast<uint32_t *>(
      ncclGetResourceBufferPeerPointer(dc, h, team, peer));
  out[2] = static_cast<uint32_t *>(ncclGetResourceBufferLocalPointer(dc, h));
}

/// dst[3b..3b+2] = epoch, polled word, and this rank's own (never written)
/// word of slot b.
__global__ void snapshotWords(RefWords w, const uint32_t *unused, uint32_t n,
                              uint32_t *dst) {
  for (uint32_t b = threadIdx.x; b < n; b += blockDim.x) {
    dst[3 * b] = w.epochs[b];
    dst[3 * b + 1] = w.poll[b * w.stride];
    dst[3 * b + 2] = unused[b * w.stride];
  }
}

//===----------------------------------------------------------------------===//
// Kernels of experiment 3
//===----------------------------------------------------------------------===//

/// What a one-shot variant does: nothing; the reads and writes; plus the
/// entry barrier; plus the exit barrier (BarrierBench.cu's oneShotAllReduce).
enum ArMode : int { kArEmpty = 0, kArRw = 1, kArEntry = 2, kArBoth = 3 };
const char *const kArModeName[] = {"empty", "rw", "entry", "oneshot"};

template <int kMode>
__global__ void oneShotLab(const void *comm, const void *mem, float *out,
                           uint32_t n4, uint32_t slotBase) {
  if (kMode == kArEmpty)
    return;
  const uint32_t slot = slotBase + blockIdx.x;
  if (kMode >= kArEntry)
    flagcxIntraBarrierSyncS(comm, kCoopBlock, slot, false, kAcqRel);
  const int nRanks = flagcxDevCommGetIntraSize(comm);
  const float4 *in[tle::kMaxRanks];
  for (int p = 0; p < nRanks; ++p)
    in[p] = static_cast<const float4 *>(flagcxGetIntraPointerS(mem, 0, p));
  float4 *o = reinterpret_cast<float4 *>(out);
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n4;
       i += gridDim.x * blockDim.x) {
    float4 s = in[0][i];
    for (int p = 1; p < nRanks; ++p) {
      float4 v = in[p][i];
      s.x += v.x, s.y += v.y, s.z += v.z, s.w += v.w;
    }
    o[i] = s;
  }
  if (kMode == kArBoth)
    flagcxIntraBarrierSyncS(comm, kCoopBlock, slot, false, kAcqRel);
}

using OneShotFn = void (*)(const void *, const void *, float *, uint32_t,
                           uint32_t);
const OneShotFn kOneShot[] = {oneShotLab<kArEmpty>, oneShotLab<kArRw>,
                              oneShotLab<kArEntry>, oneShotLab<kArBoth>};

__global__ void fillInput(float *p, uint32_t n, float v) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += gridDim.x * blockDim.x)
    p[i] = v * float(1 + (i % 7));
}

/// BarrierBench.cu's CTA count for the one-shot all-reduce (512 threads).
int benchReduceCtas(uint32_t n4) {
  int c = int((n4 + 2 * 512 - 1) / (2 * 512));
  return std::clamp(c, 1, 64);
}

//===----------------------------------------------------------------------===//
// Host state
//===----------------------------------------------------------------------===//

/// A TLE communicator pair (CUDA backend) and a symmetric buffer.
struct TleWorld {
  tleComm_t comm[kRanks];
  void *dcomm[kRanks];
  tleMem_t mem[kRanks];
  void *dmem[kRanks];
  void *local[kRanks];
};

void tleWorldInit(TleWorld &w, int64_t timeoutMs) {
  tleConfig_t cfg = cudaConfig(kTleSlots, timeoutMs);
  int devs[kRanks] = {0, 1};
  TK(tleCommInitAll(w.comm, kRanks, devs, &cfg));
  TK(tleMemAllocAll(w.comm, kRanks, kSymBytes, w.mem));
  for (int r = 0; r < kRanks; ++r) {
    TK(tleCommGetDevComm(w.comm[r], &w.dcomm[r]));
    TK(tleMemGetHandle(w.mem[r], &w.dmem[r]));
    TK(tleMemGetLocalPtr(w.mem[r], &w.local[r]));
  }
}

void tleWorldFree(TleWorld &w) {
  for (int r = 0; r < kRanks; ++r) {
    TK(tleMemFree(w.mem[r]));
    TK(tleCommDestroy(w.comm[r]));
  }
}

/// The words of one reference barrier on both ranks, and where they live.
struct RefSet {
  std::string what;
  bool ok = false;
  RefWords w[kRanks];
  const uint32_t *unused[kRanks]; ///< each rank's never-written own word
};

/// A reference set in NCCL's LSA layout over two copies of a buffer of
/// 5 nB words: base[r] is rank r's copy, peerBase[r] the peer's copy as
/// rank r addresses it.
RefSet refSetOver(const std::string &what, uint32_t *const base[kRanks],
                  uint32_t *const peerBase[kRanks], uint32_t nB) {
  RefSet s;
  s.what = what;
  s.ok = true;
  for (int r = 0; r < kRanks; ++r) {
    const int peer = (r + 1) % kRanks;
    s.w[r].poll = base[r] + 3 * nB + peer;
    s.w[r].signal = peerBase[r] + 3 * nB + r;
    s.w[r].stride = kRanks;
    s.w[r].epochs = base[r] + nB;
    s.unused[r] = base[r] + 3 * nB + r;
  }
  return s;
}

constexpr size_t refWordsFor(uint32_t nB) { return 3 * size_t(nB) + kRanks * nB; }

struct CuMemBuffer {
  CUmemGenericAllocationHandle handle = 0;
  CUdeviceptr ptr = 0;
  size_t size = 0;
};

struct Lab {
  Options o;
  int maxCtas = 132;
  ncclComm_t nccl[kRanks];
  ncclDevComm dc[kRanks];                          ///< lsaBarrierCount = maxCtas
  std::map<int, std::vector<ncclDevComm>> dcByCtas; ///< as tle-bench-nccl
  ncclDevComm dcRes[kRanks];                       ///< with a resource buffer
  ncclDevResourceHandle resHandle[kRanks] = {0, 0};
  bool resOk = false; ///< dcRes exists
  bool ncclLsaOk = true; ///< NCCL's barrier on dc usable (layout check)
  RefSet ncclWords, ncclRes, cudaMem, cuMem;
  uint32_t *cudaAlloc[kRanks] = {nullptr, nullptr};
  CuMemBuffer cuAlloc[kRanks];
  TleWorld tle, tleNoTimeout;
  unsigned long long *out[kRanks];
  uint32_t *scratch[kRanks]; ///< snapshots and pointer results
};

//===----------------------------------------------------------------------===//
// In-kernel measurements (experiments 1 and 2)
//===----------------------------------------------------------------------===//

using LaunchFn = std::function<void(int rank, int ctas, int iters,
                                    unsigned long long *out)>;

struct Impl {
  const char *exp;
  std::string name;
  int iters;
  bool threaded; ///< one host thread per rank launching at once
  LaunchFn launch;
};

struct Meas {
  double us = 0;
  double mhz[kRanks] = {0, 0};
};

/// Slowest CTA over both ranks (µs per round) and CTA 0's clock per rank.
Meas collect(Lab &L, int ctas, int iters, const std::string &what) {
  Meas m;
  std::vector<unsigned long long> h(2 * size_t(ctas));
  for (int r = 0; r < kRanks; ++r) {
    CK(cudaSetDevice(r));
    CK(cudaMemcpy(h.data(), L.out[r], h.size() * sizeof(h[0]),
                  cudaMemcpyDeviceToHost));
    for (int b = 0; b < ctas; ++b) {
      if (h[2 * b] == 0) {
        std::printf("ERROR: %s: rank %d CTA %d wrote no time\n", what.c_str(),
                    r, b);
        std::exit(1);
      }
      m.us = std::max(m.us, double(h[2 * b]) / 1e3 / iters);
    }
    m.mhz[r] = double(h[1]) * 1e3 / double(h[0]);
  }
  return m;
}

Meas measure(Lab &L, const Impl &im, int ctas) {
  const std::string what = im.name + " at " + std::to_string(ctas) + " CTAs";
  const size_t bytes = 2 * size_t(ctas) * sizeof(unsigned long long);
  if (im.threaded) {
    HostBarrier go(kRanks);
    onRankThreads([&](int r) {
      CK(cudaMemsetAsync(L.out[r], 0, bytes));
      go.arriveAndWait();
      im.launch(r, ctas, im.iters, L.out[r]);
      CK_LAUNCH();
      waitStream(0, what);
    });
  } else {
    for (int r = 0; r < kRanks; ++r) {
      CK(cudaSetDevice(r));
      CK(cudaMemsetAsync(L.out[r], 0, bytes));
    }
    for (int r = 0; r < kRanks; ++r) {
      CK(cudaSetDevice(r));
      im.launch(r, ctas, im.iters, L.out[r]);
      CK_LAUNCH();
    }
    for (int r = 0; r < kRanks; ++r) {
      CK(cudaSetDevice(r));
      waitStream(0, what);
    }
  }
  return collect(L, ctas, im.iters, what);
}

LaunchFn ncclLaunch(const ncclDevComm *dcs) {
  return [dcs](int r, int c, int it, unsigned long long *o) {
    ncclLsaLoop<<<c, kThreads>>>(dcs[r], it, o);
  };
}

template <bool kGeneric> LaunchFn refLaunch(const RefSet *s) {
  return [s](int r, int c, int it, unsigned long long *o) {
    refLoop<kGeneric><<<c, kThreads>>>(s->w[r], it, o);
  };
}

template <class Src, class Poll> LaunchFn labLaunch(const TleWorld *w) {
  return [w](int r, int c, int it, unsigned long long *o) {
    labLoop<Src, Poll><<<c, kThreads>>>(w->dcomm[r], it, o);
  };
}

bool wants(const Options &o, int exp) {
  return std::find(o.exps.begin(), o.exps.end(), exp) != o.exps.end();
}

/// Every implementation timed at one CTA count, in one round-robin.
std::vector<Impl> latencyImpls(Lab &L, int ctas) {
  using namespace tle::lab;
  const int n = L.o.iters, s = L.o.shortIters;
  std::vector<Impl> v;
  if (wants(L.o, 1)) {
    if (L.ncclLsaOk) {
      v.push_back({"1", "nccl-lsa", n, true, ncclLaunch(L.dc)});
      v.push_back({"1", "nccl-lsa-seq", n, false, ncclLaunch(L.dc)});
    }
    v.push_back({"1", "nccl-lsa-nb", n, true, ncclLaunch(L.dcByCtas[ctas].data())});
    if (L.ncclWords.ok)
      v.push_back({"1", "ref-on-nccl-mem", n, true, refLaunch<false>(&L.ncclWords)});
    if (L.ncclRes.ok)
      v.push_back({"1", "ref-on-nccl-res", n, true, refLaunch<false>(&L.ncclRes)});
    if (L.cudaMem.ok) {
      v.push_back({"1", "ref-cudamalloc", n, false, refLaunch<false>(&L.cudaMem)});
      v.push_back({"1", "ref-cudamalloc-thr", n, true, refLaunch<false>(&L.cudaMem)});
      v.push_back({"1", "ref-generic", n, false, refLaunch<true>(&L.cudaMem)});
    }
    if (L.cuMem.ok)
      v.push_back({"1", "ref-cumem", n, false, refLaunch<false>(&L.cuMem)});
    if (s > 0 && L.ncclLsaOk)
      v.push_back({"1", "nccl-lsa", s, true, ncclLaunch(L.dc)});
    if (s > 0 && L.cudaMem.ok)
      v.push_back({"1", "ref-cudamalloc", s, false, refLaunch<false>(&L.cudaMem)});
  }
  if (wants(L.o, 1) || wants(L.o, 2)) {
    TleWorld *w = &L.tle, *w0 = &L.tleNoTimeout;
    v.push_back({"1", "tle-stateless", n, false,
                 [w](int r, int c, int it, unsigned long long *o) {
                   tleSyncLoop<<<c, kThreads>>>(w->dcomm[r], it, o);
                 }});
    v.push_back({"1", "tle-stateless-notimeout", n, false,
                 [w0](int r, int c, int it, unsigned long long *o) {
                   tleSyncLoop<<<c, kThreads>>>(w0->dcomm[r], it, o);
                 }});
    v.push_back({"1", "tle-session", n, false,
                 [w](int r, int c, int it, unsigned long long *o) {
                   tleSessionLoop<<<c, kThreads>>>(w->dcomm[r], it, o);
                 }});
  }
  if (wants(L.o, 2)) {
    const TleWorld *w = &L.tle;
    v.push_back({"2", "lab-stateless", n, false, labLaunch<SrcLib, PollLib>(w)});
    v.push_back({"2", "stateless-smemcache", n, false,
                 labLaunch<SrcSmemCache, PollLib>(w)});
    v.push_back({"2", "stateless-hoistable", n, false,
                 labLaunch<SrcHoistable, PollLib>(w)});
    v.push_back({"2", "stateless-ldg-before", n, false,
                 labLaunch<SrcLdg, PollLib>(w)});
    v.push_back({"2", "poll-none", n, false, labLaunch<SrcLib, PollNone>(w)});
    v.push_back({"2", "poll-twophase", n, false,
                 labLaunch<SrcLib, PollTwoPhase<8>>(w)});
    v.push_back({"2", "smemcache-twophase", n, false,
                 labLaunch<SrcSmemCache, PollTwoPhase<8>>(w)});
  }
  return v;
}

void latencyBlock(Lab &L, int ctas) {
  const std::vector<Impl> impls = latencyImpls(L, ctas);
  const size_t n = impls.size();
  std::vector<std::vector<double>> us(n), mhz0(n), mhz1(n);
  std::printf("[%6.1f s] %d CTAs: %zu implementations x %d reps\n", elapsedS(),
              ctas, n, L.o.reps);
  for (int rep = 0; rep < L.o.reps; ++rep) {
    for (size_t j = 0; j < n; ++j) {
      const size_t k = (j + size_t(rep)) % n; // rotate the start
      const Impl &im = impls[k];
      const Meas m = measure(L, im, ctas);
      us[k].push_back(m.us);
      mhz0[k].push_back(m.mhz[0]);
      mhz1[k].push_back(m.mhz[1]);
      csvRow(im.exp, im.name, ctas, im.iters, rep, m.us,
             std::min(m.mhz[0], m.mhz[1]));
    }
  }
  std::printf("  %-26s %6s %8s %8s %8s %11s\n", "impl", "iters", "median",
              "min", "max", "MHz r0/r1");
  for (size_t k = 0; k < n; ++k) {
    const Stats s = stats(us[k]);
    std::printf("  %-26s %6d %8.3f %8.3f %8.3f %5.0f/%-5.0f\n",
                impls[k].name.c_str(), impls[k].iters, s.med, s.min, s.max,
                stats(mhz0[k]).med, stats(mhz1[k]).med);
  }
  std::fflush(stdout);
}

//===----------------------------------------------------------------------===//
// Setup of experiment 1's memories, and their checks
//===----------------------------------------------------------------------===//

/// Both ranks' copies of NCCL resource buffer h[r] as NCCL's device API
/// addresses them.
void ncclBases(Lab &L, const ncclDevComm *dcs, const ncclDevResourceHandle *h,
               uint32_t *base[kRanks], uint32_t *peerBase[kRanks],
               bool &sameLocal) {
  sameLocal = true;
  for (int r = 0; r < kRanks; ++r) {
    CK(cudaSetDevice(r));
    uint32_t **d = reinterpret_cast<uint32_t **>(L.scratch[r]);
    ncclResourceBases<<<1, 1>>>(dcs[r], h[r], d);
    CK_LAUNCH();
    waitStream(0, "ncclResourceBases");
    uint32_t *p[3];
    CK(cudaMemcpy(p, d, sizeof(p), cudaMemcpyDeviceToHost));
    base[r] = p[0];
    peerBase[r] = p[1];
    sameLocal &= p[0] == p[2];
  }
}

/// Every slot's (epoch, polled word, own unused word) on rank r.
std::vector<uint32_t> snapshot(Lab &L, const RefSet &s, int r, uint32_t n) {
  CK(cudaSetDevice(r));
  snapshotWords<<<1, 256>>>(s.w[r], s.unused[r], n, L.scratch[r]);
  CK_LAUNCH();
  waitStream(0, "snapshotWords");
  std::vector<uint32_t> h(3 * size_t(n));
  CK(cudaMemcpy(h.data(), L.scratch[r], h.size() * 4, cudaMemcpyDeviceToHost));
  return h;
}

/// Runs `im` (K rounds + 1 untimed, every slot) on the words of `s` and
/// checks that every slot's epoch advanced by K + 1 on both ranks, that the
/// polled word (the peer's count) equals the epoch, and that the rank's own
/// word was not touched. Proves the layout (and that the memory works)
/// before anything is timed on it.
bool checkWords(Lab &L, const RefSet &s, const Impl &im) {
  const uint32_t n = uint32_t(L.maxCtas);
  std::vector<uint32_t> before[kRanks], after[kRanks];
  for (int r = 0; r < kRanks; ++r)
    before[r] = snapshot(L, s, r, n);
  measure(L, im, L.maxCtas);
  for (int r = 0; r < kRanks; ++r)
    after[r] = snapshot(L, s, r, n);
  int bad = 0;
  for (int r = 0; r < kRanks; ++r)
    for (uint32_t b = 0; b < n; ++b) {
      const uint32_t *x = &before[r][3 * b], *y = &after[r][3 * b];
      const bool ok = y[0] - x[0] == uint32_t(im.iters) + 1 && y[1] == y[0] &&
                      y[2] == x[2];
      if (!ok && bad++ < 4)
        std::printf("  %s rank %d slot %u: epoch %u -> %u, polled %u -> %u, "
                    "own %u -> %u\n",
                    s.what.c_str(), r, b, x[0], y[0], x[1], y[1], x[2], y[2]);
    }
  std::printf("check %-40s %s\n", (s.what + " with " + im.name).c_str(),
              bad ? "FAILED" : "ok");
  return bad == 0;
}

void setupNccl(Lab &L) {
  int devs[kRanks] = {0, 1};
  NK(ncclCommInitAll(L.nccl, kRanks, devs));
  std::vector<int> counts = L.o.ctas;
  onRankThreads([&](int r) {
    ncclDevCommRequirements reqs = {};
    reqs.lsaBarrierCount = L.maxCtas;
    NK(ncclDevCommCreate(L.nccl[r], &reqs, &L.dc[r]));
  });
  for (int c : counts) {
    L.dcByCtas[c].resize(kRanks);
    onRankThreads([&](int r) {
      ncclDevCommRequirements reqs = {};
      reqs.lsaBarrierCount = c;
      NK(ncclDevCommCreate(L.nccl[r], &reqs, &L.dcByCtas[c][r]));
    });
  }
  // A fresh buffer in NCCL's resource window (the public resource API),
  // for the protocol on NCCL-allocated memory whatever NCCL's own layout.
  bool resOk[kRanks] = {false, false};
  onRankThreads([&](int r) {
    ncclDevResourceRequirements res = {};
    res.bufferSize = refWordsFor(uint32_t(L.maxCtas)) * sizeof(uint32_t);
    res.bufferAlign = 128;
    res.outBufferHandle = &L.resHandle[r];
    ncclDevCommRequirements reqs = {};
    reqs.resourceRequirementsList = &res;
    ncclResult_t e = ncclDevCommCreate(L.nccl[r], &reqs, &L.dcRes[r]);
    resOk[r] = e == ncclSuccess;
    if (!resOk[r])
      std::printf("ncclDevCommCreate with a resource buffer on rank %d: %s "
                  "(ref-on-nccl-res skipped)\n",
                  r, ncclGetErrorString(e));
  });
  for (int r = 0; r < kRanks; ++r)
    if (L.dc[r].lsaSize != kRanks || L.dc[r].lsaRank != r) {
      std::printf("ERROR: NCCL's LSA team is rank %d of %d on GPU %d\n",
                  L.dc[r].lsaRank, L.dc[r].lsaSize, r);
      std::exit(1);
    }

  // ref-on-nccl-mem: NCCL's own LSA barrier words, addressed with NCCL's
  // public device API and the layout of lsa_barrier__types.h.
  uint32_t *base[kRanks], *peerBase[kRanks];
  bool same = false;
  ncclDevResourceHandle h[kRanks] = {L.dc[0].lsaBarrier.bufHandle,
                                     L.dc[1].lsaBarrier.bufHandle};
  ncclBases(L, L.dc, h, base, peerBase, same);
  const uint32_t nB = uint32_t(L.dc[0].lsaBarrier.nBarriers);
  std::printf("NCCL LSA barrier buffer: rank 0 %p (peer's %p), rank 1 %p "
              "(peer's %p), nBarriers %u, local pointer %s\n",
              static_cast<void *>(base[0]), static_cast<void *>(peerBase[0]),
              static_cast<void *>(base[1]), static_cast<void *>(peerBase[1]),
              nB, same ? "matches" : "DIFFERS");
  L.ncclWords = refSetOver("NCCL's LSA barrier words", base, peerBase, nB);
  const Impl ncclCheck{"", "nccl-lsa", 100, true, ncclLaunch(L.dc)};
  const Impl refCheck{"", "ref", 100, true, refLaunch<false>(&L.ncclWords)};
  L.ncclWords.ok = same && nB >= uint32_t(L.maxCtas) &&
                   checkWords(L, L.ncclWords, ncclCheck);
  if (L.ncclWords.ok) {
    // The protocol written here must continue NCCL's epochs and NCCL must
    // continue ours; if not, NCCL's words may be inconsistent now.
    L.ncclWords.ok = checkWords(L, L.ncclWords, refCheck);
    L.ncclLsaOk = L.ncclWords.ok && checkWords(L, L.ncclWords, ncclCheck);
    if (!L.ncclLsaOk)
      std::printf("NCCL's words after the reference barrier are not "
                  "consistent: nccl-lsa and ref-on-nccl-mem skipped\n");
  } else {
    std::printf("NCCL's LSA barrier layout not confirmed: ref-on-nccl-mem "
                "skipped (ref-on-nccl-res still runs on NCCL's memory)\n");
  }

  L.resOk = resOk[0] && resOk[1];
  if (L.resOk) {
    ncclBases(L, L.dcRes, L.resHandle, base, peerBase, same);
    for (int r = 0; r < kRanks; ++r) {
      CK(cudaSetDevice(r));
      CK(cudaMemset(base[r], 0,
                    refWordsFor(uint32_t(L.maxCtas)) * sizeof(uint32_t)));
      CK(cudaDeviceSynchronize());
    }
    L.ncclRes = refSetOver("a buffer of NCCL's resource window", base,
                           peerBase, uint32_t(L.maxCtas));
    L.ncclRes.ok = same && checkWords(L, L.ncclRes,
                                      {"", "ref", 100, true,
                                       refLaunch<false>(&L.ncclRes)});
  }
}

void setupLocalMemories(Lab &L) {
  const uint32_t nB = uint32_t(L.maxCtas);
  const size_t bytes = refWordsFor(nB) * sizeof(uint32_t);
  // cudaMalloc + peer access (TLE's own allocation type).
  for (int r = 0; r < kRanks; ++r) {
    CK(cudaSetDevice(r));
    CK(cudaMalloc(&L.cudaAlloc[r], bytes));
    CK(cudaMemset(L.cudaAlloc[r], 0, bytes));
    cudaError_t e = cudaDeviceEnablePeerAccess((r + 1) % kRanks, 0);
    if (e == cudaErrorPeerAccessAlreadyEnabled)
      (void)cudaGetLastError();
    else
      CK(e);
    CK(cudaDeviceSynchronize());
  }
  uint32_t *base[kRanks], *peerBase[kRanks];
  for (int r = 0; r < kRanks; ++r) {
    base[r] = L.cudaAlloc[r];
    peerBase[r] = L.cudaAlloc[(r + 1) % kRanks];
  }
  L.cudaMem = refSetOver("cudaMalloc + peer access", base, peerBase, nB);
  L.cudaMem.ok = checkWords(L, L.cudaMem,
                            {"", "ref", 100, false, refLaunch<false>(&L.cudaMem)});

  // cuMem: physical memory on GPU r, one mapping of it readable and
  // writable by both GPUs (one process: one address space).
  for (int r = 0; r < kRanks; ++r) {
    CK(cudaSetDevice(r));
    CK(cudaFree(nullptr)); // the primary context, current for the driver API
    CuMemBuffer &m = L.cuAlloc[r];
    CUmemAllocationProp prop = {};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = r;
    size_t gran = 0;
    CU(cuMemGetAllocationGranularity(&gran, &prop,
                                     CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
    m.size = (bytes + gran - 1) / gran * gran;
    CU(cuMemCreate(&m.handle, m.size, &prop, 0));
    CU(cuMemAddressReserve(&m.ptr, m.size, 0, 0, 0));
    CU(cuMemMap(m.ptr, m.size, 0, m.handle, 0));
    CUmemAccessDesc access[kRanks] = {};
    for (int d = 0; d < kRanks; ++d) {
      access[d].location.type = CU_MEM_LOCATION_TYPE_DEVICE;
      access[d].location.id = d;
      access[d].flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    }
    CU(cuMemSetAccess(m.ptr, m.size, access, kRanks));
    CK(cudaMemset(reinterpret_cast<void *>(m.ptr), 0, bytes));
    CK(cudaDeviceSynchronize());
  }
  for (int r = 0; r < kRanks; ++r) {
    base[r] = reinterpret_cast<uint32_t *>(L.cuAlloc[r].ptr);
    peerBase[r] = reinterpret_cast<uint32_t *>(L.cuAlloc[(r + 1) % kRanks].ptr);
  }
  L.cuMem = refSetOver("cuMem mapped to both GPUs", base, peerBase, nB);
  L.cuMem.ok = checkWords(L, L.cuMem,
                          {"", "ref", 100, false, refLaunch<false>(&L.cuMem)});
}

void freeLocalMemories(Lab &L) {
  for (int r = 0; r < kRanks; ++r) {
    CK(cudaSetDevice(r));
    CK(cudaFree(L.cudaAlloc[r]));
    CuMemBuffer &m = L.cuAlloc[r];
    CU(cuMemUnmap(m.ptr, m.size));
    CU(cuMemAddressFree(m.ptr, m.size));
    CU(cuMemRelease(m.handle));
  }
}

//===----------------------------------------------------------------------===//
// Experiment 3: one-shot all-reduce replayed from CUDA graphs
//===----------------------------------------------------------------------===//

struct ArCfg {
  std::string impl;
  int mode; ///< an ArMode, or -1: ncclAllReduce
  int ctas;
  int threads;
};

/// Seconds for `replays` launches of `ge` on `s`, with the watchdog.
double timeReplays(cudaGraphExec_t ge, cudaStream_t s, int replays,
                   const std::string &what) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  CK(cudaEventRecord(a, s));
  for (int i = 0; i < replays; ++i)
    CK(cudaGraphLaunch(ge, s));
  CK(cudaEventRecord(b, s));
  waitEvent(b, what);
  float ms = 0;
  CK(cudaEventElapsedTime(&ms, a, b));
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  return ms / 1e3;
}

void allReduceSize(Lab &L, size_t bytes) {
  const Options &o = L.o;
  const uint32_t n = uint32_t(bytes / 4), n4 = n / 4;
  const std::string exp = "3-" + std::to_string(bytes);
  std::vector<ArCfg> cfgs;
  for (int c : o.arCtas)
    for (int t : o.arThreads)
      for (int mode = kArEmpty; mode <= kArBoth; ++mode)
        cfgs.push_back({std::string(kArModeName[mode]) + "-t" +
                            std::to_string(t),
                        mode, c, t});
  cfgs.push_back({"nccl", -1, 0, 0});
  const size_t nc = cfgs.size();
  for (int r = 0; r < kRanks; ++r) {
    CK(cudaSetDevice(r));
    fillInput<<<64, 256>>>(static_cast<float *>(L.tle.local[r]), n,
                           float(r + 1));
    CK_LAUNCH();
    CK(cudaDeviceSynchronize());
  }
  std::printf("[%6.1f s] all-reduce %zu bytes: %zu configurations x %d reps\n",
              elapsedS(), bytes, nc, o.arReps);
  std::vector<double> secs[kRanks];
  std::vector<size_t> wrong[kRanks];
  HostBarrier meet(kRanks);
  onRankThreads([&](int r) {
    secs[r].assign(size_t(o.arReps) * nc, 0);
    wrong[r].assign(nc, 0);
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    float *out, *ncclIn, *ncclOut;
    CK(cudaMalloc(&out, bytes));
    CK(cudaMalloc(&ncclIn, bytes));
    CK(cudaMalloc(&ncclOut, bytes));
    CK(cudaMemcpy(ncclIn, L.tle.local[r], bytes, cudaMemcpyDeviceToDevice));
    // NCCL sets up its channels on first use.
    for (int i = 0; i < 5; ++i)
      NK(ncclAllReduce(ncclIn, ncclOut, n, ncclFloat, ncclSum, L.nccl[r], s));
    waitStream(s, "ncclAllReduce warm-up");
    std::vector<cudaGraphExec_t> ge(nc);
    for (size_t k = 0; k < nc; ++k) {
      const ArCfg &c = cfgs[k];
      cudaGraph_t g;
      CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
      for (int i = 0; i < o.perGraph; ++i) {
        if (c.mode < 0) {
          NK(ncclAllReduce(ncclIn, ncclOut, n, ncclFloat, ncclSum, L.nccl[r],
                           s));
        } else {
          kOneShot[c.mode]<<<c.ctas, c.threads, 0, s>>>(
              L.tle.dcomm[r], L.tle.dmem[r], out, n4, kSlotReduce);
          CK_LAUNCH();
        }
      }
      CK(cudaStreamEndCapture(s, &g));
      CK(cudaGraphInstantiate(&ge[k], g, 0));
      CK(cudaGraphDestroy(g));
    }
    // One untimed replay of each, and the results checked.
    std::vector<float> h(n);
    for (size_t k = 0; k < nc; ++k) {
      float *dst = cfgs[k].mode < 0 ? ncclOut : out;
      CK(cudaMemsetAsync(dst, 0, bytes, s));
      CK(cudaGraphLaunch(ge[k], s));
      waitStream(s, exp + " " + cfgs[k].impl + " warm-up");
      if (cfgs[k].mode == kArEmpty)
        continue;
      CK(cudaMemcpy(h.data(), dst, bytes, cudaMemcpyDeviceToHost));
      for (uint32_t i = 0; i < n; ++i)
        wrong[r][k] += h[i] != 3.0f * float(1 + (i % 7));
    }
    for (int rep = 0; rep < o.arReps; ++rep)
      for (size_t j = 0; j < nc; ++j) {
        const size_t k = (j + size_t(rep)) % nc;
        meet.arriveAndWait();
        secs[r][size_t(rep) * nc + k] =
            timeReplays(ge[k], s, o.replays, exp + " " + cfgs[k].impl);
      }
    for (auto e : ge)
      CK(cudaGraphExecDestroy(e));
    CK(cudaFree(out));
    CK(cudaFree(ncclIn));
    CK(cudaFree(ncclOut));
    CK(cudaStreamDestroy(s));
  });
  const double perCall = double(o.perGraph) * o.replays;
  std::vector<Stats> st(nc);
  for (size_t k = 0; k < nc; ++k) {
    std::vector<double> v;
    for (int rep = 0; rep < o.arReps; ++rep) {
      const size_t i = size_t(rep) * nc + k;
      const double us = std::max(secs[0][i], secs[1][i]) / perCall * 1e6;
      v.push_back(us);
      csvRow(exp, cfgs[k].impl, cfgs[k].ctas, long(perCall), rep, us, 0);
    }
    st[k] = stats(v);
    if (wrong[0][k] || wrong[1][k])
      std::printf("  WRONG RESULT: %s at %d CTAs: %zu / %zu elements wrong\n",
                  cfgs[k].impl.c_str(), cfgs[k].ctas, wrong[0][k],
                  wrong[1][k]);
  }
  // The fastest correct one-shot configuration, and what its parts cost.
  size_t best = nc;
  for (size_t k = 0; k < nc; ++k)
    if (cfgs[k].mode == kArBoth && !wrong[0][k] && !wrong[1][k] &&
        (best == nc || st[k].med < st[best].med))
      best = k;
  auto find = [&](int mode, int c, int t) {
    for (size_t k = 0; k < nc; ++k)
      if (cfgs[k].mode == mode && cfgs[k].ctas == c && cfgs[k].threads == t)
        return k;
    return nc;
  };
  auto show = [&](const char *label, size_t k) {
    if (k < nc)
      std::printf("  %-10s %-16s %2d CTAs  %7.2f us (%.2f-%.2f)\n", label,
                  cfgs[k].impl.c_str(), cfgs[k].ctas, st[k].med, st[k].min,
                  st[k].max);
  };
  show("nccl", nc - 1);
  if (best < nc)
    for (int mode = kArEmpty; mode <= kArBoth; ++mode)
      show(mode == kArBoth ? "best" : "  parts", find(mode, cfgs[best].ctas,
                                                    cfgs[best].threads));
  show("bench cfg", find(kArBoth, benchReduceCtas(n4), 512));
  std::fflush(stdout);
}

//===----------------------------------------------------------------------===//
// Budget
//===----------------------------------------------------------------------===//

/// Seconds the run should take (printed before it starts): rounds of
/// 1.6-2.5 µs, a few ms of host work per launch, 4 µs per graph-replayed
/// kernel, fixed costs of NCCL and TLE setup.
double estimateS(const Options &o, size_t implsPerBlock) {
  double s = 20; // communicators, device communicators, checks
  for (int c : o.ctas) {
    const double round = (1.6 + 0.9 * std::min(c, 132) / 132.0) * 1e-6;
    s += double(o.reps) * implsPerBlock * (o.iters * round + 0.006);
  }
  if (wants(o, 3)) {
    const double cfgs = double(o.arCtas.size() * o.arThreads.size() * 4 + 1);
    s += o.sizes.size() * cfgs *
         (o.arReps * (o.perGraph * o.replays * 4e-6 + 0.001) + 0.01);
  }
  return s;
}

} // namespace

int main(int argc, char **argv) {
  Options o;
  // --quick first, wherever it stands, so that other options refine it.
  const bool quick =
      std::find_if(argv + 1, argv + argc, [](const char *a) {
        return std::string(a) == "--quick";
      }) != argv + argc;
  if (quick) { // about 30 s: two CTA counts, two message sizes
    o.ctas = {1, 32};
    o.iters = 5000;
    o.shortIters = 0;
    o.reps = 5;
    o.sizes = {8 << 10, 64 << 10};
    o.arCtas = {1, 4, 16};
    o.arThreads = {256, 512};
    o.arReps = 5;
  }
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : nullptr;
    if (a == "--quick")
      continue;
    else if (a == "--exps" && v)
      o.exps = parseIntList(v), ++i;
    else if (a == "--ctas" && v)
      o.ctas = parseIntList(v), ++i;
    else if (a == "--iters" && v)
      o.iters = std::max(1, std::atoi(v)), ++i;
    else if (a == "--short-iters" && v)
      o.shortIters = std::max(0, std::atoi(v)), ++i;
    else if (a == "--reps" && v)
      o.reps = std::max(1, std::atoi(v)), ++i;
    else if (a == "--sizes" && v) {
      o.sizes.clear();
      for (int kb : parseIntList(v))
        o.sizes.push_back(size_t(kb) << 10);
      ++i;
    } else if (a == "--ar-ctas" && v)
      o.arCtas = parseIntList(v), ++i;
    else if (a == "--ar-threads" && v)
      o.arThreads = parseIntList(v), ++i;
    else if (a == "--ar-reps" && v)
      o.arReps = std::max(1, std::atoi(v)), ++i;
    else if (a == "--hang-s" && v)
      o.hangS = std::atof(v), ++i;
    else if (a == "--budget-s" && v)
      o.budgetS = std::atof(v), ++i;
    else if (a == "--csv" && v)
      o.csv = v, ++i;
    else {
      std::printf(
          "usage: tle-bench-lab [--quick] [--exps 1,2,3] [--ctas 1,8,32,132]\n"
          "  [--iters N] [--short-iters N] [--reps N] [--sizes KB,KB,...]\n"
          "  [--ar-ctas 1,2,...] [--ar-threads 128,...] [--ar-reps N]\n"
          "  [--hang-s S] [--budget-s S] [--csv PATH]\n");
      return 2;
    }
  }
  for (int c : o.ctas)
    if (c < 1 || c > 1024) {
      std::printf("--ctas: %d out of range\n", c);
      return 2;
    }
  for (int c : o.arCtas)
    if (c < 1 || uint32_t(c) > kTleSlots - kSlotReduce) {
      std::printf("--ar-ctas: %d out of range\n", c);
      return 2;
    }
  setvbuf(stdout, nullptr, _IOLBF, 0);
  // Multicast stays off whoever starts the program (scripts/gpu-lab.sh
  // exports the same): NCCL would otherwise create multicast objects for
  // ncclAllReduce on NVLink SHARP-capable systems.
  setenv("NCCL_NVLS_ENABLE", "0", 1);
  gStartNs = hostNowNs();
  gHangNs = uint64_t(o.hangS * 1e9);

  Lab L;
  L.o = o;
  L.maxCtas = std::max(132, *std::max_element(o.ctas.begin(), o.ctas.end()));
  const size_t perBlock = (wants(o, 1) ? 11 : 0) +
                          (wants(o, 1) || wants(o, 2) ? 3 : 0) +
                          (wants(o, 2) ? 6 : 0);
  std::printf("tle-bench-lab%s: exps", quick ? " --quick" : "");
  for (int e : o.exps)
    std::printf(" %d", e);
  std::printf(", CTAs");
  for (int c : o.ctas)
    std::printf(" %d", c);
  std::printf(", %d rounds (and %d), %d reps; all-reduce %zu sizes x %zu CTA "
              "counts x %zu thread counts, %d reps\n",
              o.iters, o.shortIters, o.reps, o.sizes.size(), o.arCtas.size(),
              o.arThreads.size(), o.arReps);
  std::printf("estimated run time: %.0f s (budget %.0f s, watchdog %.0f s per "
              "launch)\n",
              estimateS(o, perBlock), o.budgetS, o.hangS);
  if (!gpusOrSkip(2))
    return kExitSkip;
  gCsv = std::fopen(o.csv.c_str(), "w");
  if (!gCsv) {
    std::printf("cannot write %s\n", o.csv.c_str());
    return 1;
  }
  std::fprintf(gCsv, "exp,impl,ctas,iters,rep,us,mhz\n");
  std::fflush(gCsv);

  int driver = 0, runtime = 0, version = 0;
  CK(cudaDriverGetVersion(&driver));
  CK(cudaRuntimeGetVersion(&runtime));
  NK(ncclGetVersion(&version));
  for (int r = 0; r < kRanks; ++r) {
    cudaDeviceProp prop;
    int clockKHz = 0;
    CK(cudaGetDeviceProperties(&prop, r));
    CK(cudaDeviceGetAttribute(&clockKHz, cudaDevAttrClockRate, r));
    std::printf("GPU %d: %s, %d SMs, max SM clock %d MHz\n", r, prop.name,
                prop.multiProcessorCount, clockKHz / 1000);
  }
  std::printf("driver %d, runtime %d, NCCL %d (headers %d)%s\n", driver,
              runtime, version, NCCL_VERSION_CODE,
              version == NCCL_VERSION_CODE ? "" : " MISMATCH");
  for (const char *env : {"NCCL_NVLS_ENABLE", "NCCL_CUMEM_ENABLE",
                          "TLE_BARRIER_TIMEOUT_MS", "CUDA_MODULE_LOADING"}) {
    const char *val = std::getenv(env);
    std::printf("%s=%s ", env, val ? val : "(unset)");
  }
  std::printf("\n");

  for (int r = 0; r < kRanks; ++r) {
    CK(cudaSetDevice(r));
    CK(cudaMalloc(&L.out[r], 2 * size_t(L.maxCtas) * sizeof(unsigned long long)));
    CK(cudaMalloc(&L.scratch[r], 3 * size_t(L.maxCtas) * sizeof(uint32_t)));
  }
  // NCCL first (its device communicators map its windows); TLE's backend
  // accepts peer access that is already enabled.
  if (wants(o, 1) || wants(o, 3))
    setupNccl(L);
  else
    L.ncclLsaOk = false;
  tleWorldInit(L.tle, -1);
  tleWorldInit(L.tleNoTimeout, 0);
  if (wants(o, 1))
    setupLocalMemories(L);
  std::printf("[%6.1f s] setup done\n", elapsedS());

  const uint64_t deadline = gStartNs + uint64_t(o.budgetS * 1e9);
  if (wants(o, 1) || wants(o, 2))
    for (int c : o.ctas) {
      if (hostNowNs() > deadline) {
        std::printf("SKIPPED %d CTAs: out of the time budget\n", c);
        continue;
      }
      latencyBlock(L, c);
    }
  if (wants(o, 3))
    for (size_t b : o.sizes) {
      if (hostNowNs() > deadline) {
        std::printf("SKIPPED all-reduce %zu bytes: out of the time budget\n",
                    b);
        continue;
      }
      allReduceSize(L, b);
    }

  std::fclose(gCsv);
  gCsv = nullptr;
  for (int r = 0; r < kRanks; ++r) {
    CK(cudaSetDevice(r));
    CK(cudaDeviceSynchronize());
    CK(cudaFree(L.out[r]));
    CK(cudaFree(L.scratch[r]));
  }
  if (wants(o, 1))
    freeLocalMemories(L);
  tleWorldFree(L.tleNoTimeout);
  tleWorldFree(L.tle);
  if (wants(o, 1) || wants(o, 3)) {
    onRankThreads([&](int r) {
      NK(ncclDevCommDestroy(L.nccl[r], &L.dc[r]));
      for (auto &kv : L.dcByCtas)
        NK(ncclDevCommDestroy(L.nccl[r], &kv.second[r]));
      if (L.resOk)
        NK(ncclDevCommDestroy(L.nccl[r], &L.dcRes[r]));
    });
    for (auto c : L.nccl)
      NK(ncclCommDestroy(c));
  }
  std::printf("[%6.1f s] done\n", elapsedS());
  return 0;
}
