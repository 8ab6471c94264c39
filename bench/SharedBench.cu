//===- SharedBench.cu - Barrier paths with two ranks sharing one GPU ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The software cost of each barrier path where one GPU is all there is: two
// TLE ranks on device 0 (tleCommInitAll with devices {0, 0}), one stream per
// rank, the two ranks' kernels running side by side. Every row is the same
// loop of sync(acq_rel) rounds of a block-group barrier, 128 threads per
// CTA, one slot per CTA, timed in the kernel with %globaltimer after one
// untimed round; a launch's figure is the slowest CTA of either rank, per
// round; each row is the median of --reps launches with min and max.
// Results are CSV lines RESULT,<section>,<impl>,<x>,<us>,<note> (x: CTAs
// per rank), which bench/run.sh collects and bench/report.py judges.
//
// Section `shared`, the rows of docs/benchmarks.md ("One GPU"), every slot
// row on the same slots: launch i of each row on the placement i mod 8
// (kPlacements), the rows continuing each other's epochs:
//   stateless        flagcxIntraBarrierSyncS, what a compiler emitted before
//                    barrier sessions (the epoch read and written per call)
//   session          tle::BarrierSession (tle/session.h)
//   session-abi      the compiled session's entry points
//                    (tleIntraBarrierSession*) called from CUDA C++
//   tlec             bench/kernels/shared_loop.mlir compiled by tlec (its
//                    loop of stateless barriers becomes a session), PTX
//                    loaded from --tlec-ptx
//   triton           bench/kernels/triton_loop.py's session loop, compiled
//                    by Triton with TLE's bitcode, PTX from --triton-dir
//   triton-stateless the same kernel's loop of stateless barriers
//                    (--cubin: every PTX row loads FILE.cubin beside its
//                    FILE.ptx, compiled ahead of time, not the driver's JIT)
//   bare             a bare flag barrier on the slot's own words (two
//                    ranks): st.release.sys / ld.acquire.sys, addresses and
//                    epoch loaded once, no checks (bareSlotLoop)
//   bare-inbox       the same on symmetric memory of its own, one 128-byte
//                    line per CTA (the `bare` of runs before 38; the ladder's)
// Section `graph` checks rather than measures: tlec's session loop (or the
// session entry points from CUDA C++) of both ranks captured in one CUDA
// graph, replayed 20 times, then a stateless launch on the same slots; each
// slot's epoch word must have advanced by every round of every launch
// (CHECK,graph,PASS; exit status 1 otherwise).
// Section `ladder`: from `bare` towards the session one difference at a
// time (`bare-red`: the session's red.release.sys.add arrive instead of the
// store; `bare-red-epoch`: and its store of the epoch word before the
// poll; then the session without and with the fault-word look), at the
// shared section's CTA counts, to say where the session's cost over the
// bare protocol goes.
// Section `placement`: the session at 1 CTA per rank on slots spread over
// the slot space, two passes: how much a slot's place moves the figure.
// Section `shared-diag`: the session at 66 CTAs per rank took 39 µs per
// round in the second pass of an earlier run (docs/gpu-notes.md). Rows that
// tell its hypotheses apart, at 64, 65, 66 and 67 CTAs per rank, in two
// passes (note pass=1/2): session on slots that stateless launches just
// used (`session-reused`, the earlier run's case) and on fresh slots
// (`session-fresh`), with rank 1 launched first (`session-reversed`),
// without timeouts (`session-notimeout`) and without the waits' look at
// the fault word (`session-noabortcheck`), and `stateless` and `bare`
// beside them. Each note carries `multi=K`: the most SMs, over the
// launches, that ran more than one of the two ranks' CTAs (%smid), and
// `both=K`, the most SMs that ran CTAs of both ranks.
//
//===----------------------------------------------------------------------===//

#include "GpuSupport.h"

#include "tle/device.h"
#include "tle/session.h"

#include <cuda.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using namespace tle::gpu;

namespace {

constexpr int kRanks = 2;
constexpr int kThreads = 128;
constexpr uint32_t kSlots = 1536;
/// Slot ranges: each row family has its own, so no two share epochs by
/// accident (the diag section chooses reuse on purpose).
constexpr uint32_t kSlotRows = 0; // kPlacements bases of 128 slots
/// The shared section's placements: launch `rep` of every slot row runs on
/// slots kSlotRows + (rep % kPlacements) * 128 + [0, ctas). Where a slot's
/// words lie moves a row by up to 9% at 8 CTAs per rank with the same code
/// (docs/gpu-notes.md, run 33), so rows on ranges of their own compared
/// placements as much as code; now every row meets the same placements in
/// the same order, and its median is over them.
constexpr uint32_t kPlacements = 8;
constexpr uint32_t kSlotFresh =
    1024; // the diag section's fresh slots (2 passes)
constexpr uint32_t kSlotGraph = 1280;  // the graph check's C++ loop
constexpr uint32_t kSlotLadder = 1408; // the ladder section's session rows
constexpr int kMaxCtas = 128;
/// The bare barriers' regions of kMaxCtas lines each: `bare` and the
/// `ladder` section's two variants, which count differently.
constexpr int kBareRegions = 3;

struct Options {
  std::vector<std::string> sections = {"shared", "graph", "shared-diag",
                                       "ladder", "placement"};
  std::vector<int> ctas = {1, 8, 32, 66};
  std::vector<int> diagCtas = {64, 65, 66, 67};
  int iters = 10000;
  int reps = 7;
  std::string tlecPtx;
  std::string tritonDir;
  /// Load FILE.cubin beside each FILE.ptx (ptxas ahead of time, as
  /// Triton's own launcher does) instead of the driver's JIT of the PTX.
  bool cubin = false;
};

/// %smid of the calling thread's SM.
__device__ __forceinline__ uint32_t smId() {
  uint32_t id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}

/// Per-CTA output: nanoseconds of the timed loop and the SM it ran on.
struct Out {
  unsigned long long *ns;
  uint32_t *sm;
};

__device__ void finish(Out out, uint64_t t0) {
  uint64_t dt = globalTimer() - t0;
  if (threadIdx.x == 0) {
    out.ns[blockIdx.x] = dt;
    out.sm[blockIdx.x] = smId();
  }
}

__global__ void statelessLoop(const void *comm, uint32_t slotBase, int iters,
                              Out out) {
  const uint32_t slot = slotBase + blockIdx.x;
  flagcxIntraBarrierSyncS(comm, tle::kCoopBlock, slot, false,
                          tle::kOrderRelaxed);
  const uint64_t t0 = globalTimer();
  for (int i = 0; i < iters; ++i)
    flagcxIntraBarrierSyncS(comm, tle::kCoopBlock, slot, false,
                            tle::kOrderAcqRel);
  finish(out, t0);
}

__global__ void sessionLoop(const void *comm, uint32_t slotBase, int iters,
                            Out out) {
  tle::BarrierSession bar(comm, tle::kCoopBlock, slotBase + blockIdx.x);
  bar.sync(tle::kOrderRelaxed);
  const uint64_t t0 = globalTimer();
  for (int i = 0; i < iters; ++i)
    bar.sync(tle::kOrderAcqRel);
  finish(out, t0);
}

__global__ void sessionAbiLoop(const void *comm, uint32_t slotBase, int iters,
                               Out out) {
  const uint32_t slot = slotBase + blockIdx.x;
  uint32_t e = tleIntraBarrierSessionOpen(comm, tle::kCoopBlock, slot);
  e = tleIntraBarrierSessionSync(comm, tle::kCoopBlock, slot,
                                 tle::kOrderRelaxed, e);
  const uint64_t t0 = globalTimer();
  for (int i = 0; i < iters; ++i)
    e = tleIntraBarrierSessionSync(comm, tle::kCoopBlock, slot,
                                   tle::kOrderAcqRel, e);
  finish(out, t0);
  tleIntraBarrierSessionClose(comm, tle::kCoopBlock, slot, e);
}

/// Every rank's inbox of the bare barrier, as this rank maps it.
struct Inboxes {
  uint32_t *of[kRanks];
};

/// Region `k` (of kBareRegions) of every rank's inbox.
Inboxes region(Inboxes in, int k) {
  for (uint32_t *&p : in.of)
    p += size_t(k) * kMaxCtas * 32;
  return in;
}

/// The bare flag barrier: CTA b of rank r stores its epoch into word b*32
/// of the peer's inbox (release) and polls its own (acquire); no checks,
/// no timeout, the epoch in a register. The `ladder` section's variants
/// step from it towards what the session does, one difference at a time:
/// `Red` signals with red.release.sys.add of 1 (the session's arrive)
/// instead of the store, and `EpochStore` also stores the epoch into a
/// word of this rank's own memory before it polls (the session's store of
/// its slot's epoch).
/// Each CTA's epoch carries over launches in `epochs` (this rank's device
/// memory, one word per CTA): with red, a word counts the rounds its CTA
/// pair has done, which differs between CTA counts.
/// The rounds of a bare barrier (bareLoop's and bareSlotLoop's): one
/// untimed round, then `iters` timed ones; thread 0 signals `theirs` and
/// polls `mine`, with EpochStore also storing the epoch into `spare`.
/// Returns the timed rounds' start; `epoch` (thread 0's) is advanced.
template <bool Red, bool EpochStore>
__device__ uint64_t bareRounds(uint32_t *theirs, const uint32_t *mine,
                               uint32_t *spare, uint32_t &epoch, int iters) {
  uint64_t t0 = 0;
  for (int i = -1; i < iters; ++i) {
    if (i == 0)
      t0 = globalTimer();
    __syncthreads();
    if (threadIdx.x == 0) {
      ++epoch;
      if constexpr (Red)
        tle::impl::Ptx::redAddReleaseSys(theirs, 1);
      else
        tle::impl::Ptx::stReleaseSys(theirs, epoch);
      if constexpr (EpochStore)
        tle::impl::Ptx::stRelaxedGpu(spare, epoch);
      while (int32_t(tle::impl::Ptx::ldAcquireSys(mine) - epoch) < 0) {
      }
    }
    __syncthreads();
  }
  return t0;
}

template <bool Red = false, bool EpochStore = false>
__global__ void bareLoop(Inboxes inbox, int rank, int iters, uint32_t *epochs,
                         Out out) {
  uint32_t *theirs = inbox.of[1 - rank] + blockIdx.x * 32;
  uint32_t *mine = inbox.of[rank] + blockIdx.x * 32;
  uint32_t epoch = epochs[blockIdx.x];
  uint64_t t0 =
      bareRounds<Red, EpochStore>(theirs, mine, mine + 16, epoch, iters);
  finish(out, t0);
  if (threadIdx.x == 0)
    epochs[blockIdx.x] = epoch;
}

/// The bare flag barrier on a slot's own words (two ranks): the same
/// protocol on the same words as the session (its store arrive writes the
/// count the word reaches, epoch + 1; the poll waits for it), with the
/// words' addresses and the epoch loaded once, no checks, no timeout, and
/// the epoch word written back at the end, so that the slot's other rows
/// continue from it. What is left of a session's round once its software
/// is gone, on the placements the session rows meet.
__global__ void bareSlotLoop(const void *comm, uint32_t slotBase, int iters,
                             Out out) {
  using namespace tle::impl;
  const uint32_t slot = slotBase + blockIdx.x;
  uint32_t *theirs = nullptr, *epochs = nullptr;
  const uint32_t *mine = nullptr;
  uint32_t epoch = 0;
  if (threadIdx.x == 0) {
    Comm c = checkSlot(comm, slot, 0, kSessionFn);
    theirs = outFlag(c, slot, 0);
    mine = inFlag(c, slot, 0);
    epochs = epochWord(c, slot);
    epoch = loadRelaxedGpu(epochs);
  }
  uint64_t t0 = bareRounds<false, false>(theirs, mine, nullptr, epoch, iters);
  finish(out, t0);
  if (threadIdx.x == 0)
    storeRelaxedGpu(epochs, epoch);
}

} // namespace

/// SharedNoAbortCheck.cu: sessionLoop built with TLE_NO_ABORT_CHECK.
void launchSessionNoAbortCheck(int ctas, int threads, cudaStream_t stream,
                               const void *comm, uint32_t slotBase, int iters,
                               unsigned long long *ns, uint32_t *sm);

namespace {

#define CU(call)                                                               \
  do {                                                                         \
    CUresult r_ = (call);                                                      \
    if (r_ != CUDA_SUCCESS) {                                                  \
      const char *s_ = nullptr;                                                \
      cuGetErrorString(r_, &s_);                                               \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,       \
                   s_ ? s_ : "?");                                             \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

/// A kernel from PTX compiled on another machine (tlec's, Triton's): its
/// parameters are `args` (8 bytes each) followed by `nullTail` null
/// pointers (Triton's scratch pointers).
struct PtxKernel {
  CUfunction fn = nullptr;
  int threads = kThreads;
  unsigned shared = 0;
  int nullTail = 0;
  bool argIters = false; ///< takes (comm, out, iters), else (comm, out)
  /// Takes the row's first slot next (block b syncs on it + b); a kernel
  /// prepared before that argument syncs on slot b, the stateless row's.
  bool argBase = false;
  int iters = 0; ///< the rounds baked into a kernel without argIters
};

std::string readFile(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

/// Whether loadPtx takes the cubin beside each PTX (Options::cubin).
bool gCubin = false;

/// Loads the PTX entry `name` of `path` (with gCubin, of the cubin beside
/// it); false (after saying why) if absent.
bool loadPtx(const std::string &path, const char *name, PtxKernel &k) {
  std::string file = path;
  if (gCubin && file.size() > 4 && file.substr(file.size() - 4) == ".ptx")
    file = file.substr(0, file.size() - 4) + ".cubin";
  std::string image = readFile(file);
  if (image.empty()) {
    std::printf("INFO,skip,%s: no %s at %s\n", name, gCubin ? "cubin" : "PTX",
                file.c_str());
    return false;
  }
  std::printf("INFO,load,%s,%s\n", name, file.c_str());
  CUmodule mod;
  CU(cuModuleLoadData(&mod, image.c_str()));
  CU(cuModuleGetFunction(&k.fn, mod, name));
  return true;
}

/// The two ranks on device 0, one stream each, and their buffers.
struct World {
  tleComm_t comm[kRanks] = {};
  void *dcomm[kRanks] = {};
  tleMem_t mem[kRanks] = {};
  Inboxes inbox[kRanks] = {};
  cudaStream_t stream[kRanks] = {};
  unsigned long long *ns[kRanks] = {};
  uint32_t *sm[kRanks] = {};
  /// The bare barriers' epochs per region and CTA, in device memory.
  uint32_t *bareEpochs[kRanks] = {};
};

void makeWorld(World &w, int64_t timeoutMs) {
  tleConfig_t cfg = cudaConfig(kSlots, timeoutMs);
  int devs[kRanks] = {0, 0};
  TK(tleCommInitAll(w.comm, kRanks, devs, &cfg));
  TK(tleMemAllocAll(w.comm, kRanks, size_t(kBareRegions) * kMaxCtas * 128,
                    w.mem));
  CK(cudaSetDevice(0));
  for (int r = 0; r < kRanks; ++r) {
    TK(tleCommGetDevComm(w.comm[r], &w.dcomm[r]));
    void *handle = nullptr;
    TK(tleMemGetHandle(w.mem[r], &handle));
    tle::SymMem h;
    CK(cudaMemcpy(&h, handle, sizeof(h), cudaMemcpyDeviceToHost));
    for (int p = 0; p < kRanks; ++p)
      w.inbox[r].of[p] = static_cast<uint32_t *>(h.ptrs[p]);
    CK(cudaStreamCreateWithFlags(&w.stream[r], cudaStreamNonBlocking));
    CK(cudaMalloc(&w.ns[r], kMaxCtas * sizeof(unsigned long long)));
    CK(cudaMalloc(&w.sm[r], kMaxCtas * sizeof(uint32_t)));
    CK(cudaMalloc(&w.bareEpochs[r],
                  kBareRegions * kMaxCtas * sizeof(uint32_t)));
    CK(cudaMemset(w.bareEpochs[r], 0,
                  kBareRegions * kMaxCtas * sizeof(uint32_t)));
  }
}

void freeWorld(World &w) {
  CK(cudaDeviceSynchronize());
  for (int r = 0; r < kRanks; ++r) {
    CK(cudaStreamDestroy(w.stream[r]));
    CK(cudaFree(w.ns[r]));
    CK(cudaFree(w.sm[r]));
    CK(cudaFree(w.bareEpochs[r]));
    TK(tleMemFree(w.mem[r]));
    TK(tleCommDestroy(w.comm[r]));
  }
}

enum class Path {
  Stateless,
  Session,
  SessionAbi,
  SessionNoAbortCheck,
  Tlec,
  Triton,
  TritonStateless,
  Bare,
  BareSlot,
  BareRed,
  BareRedEpoch
};

struct Kernels {
  PtxKernel tlec, triton, tritonStateless;
  bool haveTlec = false, haveTriton = false, haveTritonStateless = false;
};

void launchPtx(const PtxKernel &k, int ctas, cudaStream_t s, void *comm,
               unsigned long long *ns, int iters, uint32_t slotBase) {
  void *null = nullptr;
  std::vector<void *> params = {&comm, &ns};
  if (k.argIters)
    params.push_back(&iters);
  if (k.argBase)
    params.push_back(&slotBase);
  for (int i = 0; i < k.nullTail; ++i)
    params.push_back(&null);
  CU(cuLaunchKernel(k.fn, ctas, 1, 1, k.threads, 1, 1, k.shared,
                    reinterpret_cast<CUstream>(s), params.data(), nullptr));
}

/// One launch of `path` on both ranks (rank order `first` then the other);
/// returns µs per round of the slowest CTA, and the SM counts.
double launchOnce(World &w, const Kernels &k, const Options &o, Path path,
                  int ctas, uint32_t slotBase, int first, int &multi,
                  int &both) {
  for (int i = 0; i < kRanks; ++i) {
    int r = (first + i) % kRanks;
    cudaStream_t s = w.stream[r];
    Out out{w.ns[r], w.sm[r]};
    switch (path) {
    case Path::Stateless:
      statelessLoop<<<ctas, kThreads, 0, s>>>(w.dcomm[r], slotBase, o.iters,
                                              out);
      break;
    case Path::Session:
      sessionLoop<<<ctas, kThreads, 0, s>>>(w.dcomm[r], slotBase, o.iters, out);
      break;
    case Path::SessionAbi:
      sessionAbiLoop<<<ctas, kThreads, 0, s>>>(w.dcomm[r], slotBase, o.iters,
                                               out);
      break;
    case Path::SessionNoAbortCheck:
      launchSessionNoAbortCheck(ctas, kThreads, s, w.dcomm[r], slotBase,
                                o.iters, out.ns, out.sm);
      break;
    case Path::Bare:
      bareLoop<<<ctas, kThreads, 0, s>>>(w.inbox[r], r, o.iters,
                                         w.bareEpochs[r], out);
      break;
    case Path::BareSlot:
      bareSlotLoop<<<ctas, kThreads, 0, s>>>(w.dcomm[r], slotBase, o.iters,
                                             out);
      break;
    case Path::BareRed:
      bareLoop<true><<<ctas, kThreads, 0, s>>>(
          region(w.inbox[r], 1), r, o.iters, w.bareEpochs[r] + kMaxCtas, out);
      break;
    case Path::BareRedEpoch:
      bareLoop<true, true>
          <<<ctas, kThreads, 0, s>>>(region(w.inbox[r], 2), r, o.iters,
                                     w.bareEpochs[r] + 2 * kMaxCtas, out);
      break;
    case Path::Tlec:
      launchPtx(k.tlec, ctas, s, w.dcomm[r], w.ns[r], o.iters, slotBase);
      break;
    case Path::Triton:
      launchPtx(k.triton, ctas, s, w.dcomm[r], w.ns[r], o.iters, slotBase);
      break;
    case Path::TritonStateless:
      launchPtx(k.tritonStateless, ctas, s, w.dcomm[r], w.ns[r], o.iters,
                slotBase);
      break;
    }
    CK_LAUNCH();
  }
  CK(cudaDeviceSynchronize());
  // The PTX kernels run their own number of rounds.
  int iters = o.iters;
  if (path == Path::Tlec && !k.tlec.argIters)
    iters = k.tlec.iters;
  if ((path == Path::Triton || path == Path::TritonStateless) &&
      !k.triton.argIters)
    iters = k.triton.iters;
  double worst = 0;
  std::map<uint32_t, int> perSm;
  std::map<uint32_t, int> rankMask;
  bool smKnown = path != Path::Tlec && path != Path::Triton &&
                 path != Path::TritonStateless;
  for (int r = 0; r < kRanks; ++r) {
    std::vector<unsigned long long> ns(ctas);
    std::vector<uint32_t> sm(ctas);
    CK(cudaMemcpy(ns.data(), w.ns[r], ctas * sizeof(ns[0]),
                  cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(sm.data(), w.sm[r], ctas * sizeof(sm[0]),
                  cudaMemcpyDeviceToHost));
    for (int c = 0; c < ctas; ++c) {
      worst = std::max(worst, double(ns[c]));
      if (smKnown) {
        ++perSm[sm[c]];
        rankMask[sm[c]] |= 1 << r;
      }
    }
  }
  multi = 0;
  both = 0;
  for (auto &[sm, n] : perSm)
    multi += n > 1;
  for (auto &[sm, mask] : rankMask)
    both += mask == 3;
  return worst / 1e3 / iters;
}

struct Row {
  std::vector<double> us;
  int multi = 0, both = 0;
};

/// `reps` launches of `path`; with `placements` > 1, launch `rep` runs on
/// slots slotBase + (rep % placements) * 128 (see kPlacements).
Row measure(World &w, const Kernels &k, const Options &o, Path path, int ctas,
            uint32_t slotBase, int first = 0, uint32_t placements = 1) {
  Row row;
  for (int rep = 0; rep < o.reps; ++rep) {
    int multi = 0, both = 0;
    uint32_t base = slotBase + uint32_t(rep) % placements * 128;
    row.us.push_back(launchOnce(w, k, o, path, ctas, base, first, multi, both));
    row.multi = std::max(row.multi, multi);
    row.both = std::max(row.both, both);
  }
  return row;
}

void print(const char *section, const std::string &impl, int ctas,
           const Row &row, const std::string &note) {
  printStats(section, impl, std::to_string(ctas), row.us,
             note + ";multi=" + std::to_string(row.multi) +
                 ";both=" + std::to_string(row.both));
}

void benchShared(World &w, const Kernels &k, const Options &o) {
  struct Variant {
    const char *impl;
    Path path;
    bool have;
    const char *what;
  };
  const Variant variants[] = {
      {"stateless", Path::Stateless, true,
       "flagcxIntraBarrierSyncS sync acq_rel block 128thr"},
      {"session", Path::Session, true, "tle::BarrierSession"},
      {"session-abi", Path::SessionAbi, true,
       "tleIntraBarrierSession* from CUDA C++"},
      {"tlec", Path::Tlec, k.haveTlec,
       "bench/kernels/shared_loop.mlir by tlec (session formed)"},
      {"triton", Path::Triton, k.haveTriton,
       "bench/kernels/triton_loop.py session loop"},
      {"triton-stateless", Path::TritonStateless, k.haveTritonStateless,
       "bench/kernels/triton_loop.py stateless loop"},
      {"bare", Path::BareSlot, true,
       "st.release.sys/ld.acquire.sys on the slot's words, epoch in a "
       "register"},
      {"bare-inbox", Path::Bare, true,
       "the same on memory of its own, one line per CTA"},
  };
  // Every row on the same placements (kPlacements): the rows share slots,
  // each path continuing the epochs the one before left in the slot's
  // epoch word (a path that did not would hang or fail here).
  for (const Variant &v : variants) {
    if (!v.have) {
      std::printf("INFO,skip,shared %s: not prepared\n", v.impl);
      continue;
    }
    for (int ctas : o.ctas)
      print("shared", v.impl, ctas,
            measure(w, k, o, v.path, ctas, kSlotRows, 0, kPlacements), v.what);
  }
}

/// Section `ladder`: from the bare barrier to the session one difference at
/// a time, in one pass at the shared section's CTA counts, to say where
/// the session's cost over the bare protocol goes.
void benchLadder(World &w, const Kernels &k, const Options &o) {
  const uint32_t base = kSlotLadder;
  struct Step {
    const char *impl;
    Path path;
    uint32_t slots;
    const char *what;
  };
  const Step steps[] = {
      {"bare", Path::Bare, 0, "st.release.sys, poll ld.acquire.sys"},
      {"bare-red", Path::BareRed, 0,
       "red.release.sys.add instead of the store"},
      {"bare-red-epoch", Path::BareRedEpoch, 0,
       "bare-red + st.relaxed.gpu of the epoch before the poll"},
      {"session-noabortcheck", Path::SessionNoAbortCheck, base,
       "tle::BarrierSession built with TLE_NO_ABORT_CHECK"},
      {"session", Path::Session, base, "tle::BarrierSession"},
  };
  // Two passes, the steps interleaved, so that a difference between steps
  // can be told from the drift between passes.
  for (int pass = 1; pass <= 2; ++pass)
    for (int ctas : o.ctas)
      for (const Step &s : steps)
        print("ladder", s.impl, ctas, measure(w, k, o, s.path, ctas, s.slots),
              std::string(s.what) + ";pass=" + std::to_string(pass));
}

/// Section `placement`: the session at one CTA per rank on slots spread
/// over the slot space (the shared section's base and the ladder's among
/// them). The same code measured 0.96 us per round on the shared section's
/// slots and 0.87 on the ladder's in one run (docs/gpu-notes.md, run 24):
/// if where a slot's words lie moves the figure by that much, the spread
/// over these slots shows it, and the 1-CTA comparison with the bare
/// barrier (its own lines) is as much placement as code.
void benchPlacement(World &w, const Kernels &k, const Options &o) {
  const uint32_t bases[] = {128, 200, 333, 512, 700, 901, 1100, 1408, 1500};
  for (int pass = 1; pass <= 2; ++pass)
    for (uint32_t base : bases)
      print("placement", "session", static_cast<int>(base),
            measure(w, k, o, Path::Session, 1, base),
            "x is the slot;pass=" + std::to_string(pass));
}

void benchDiag(World &w, World &noTimeout, const Kernels &k, const Options &o) {
  // The slots the stateless rows of this section use, reused by
  // session-reused right after them.
  const uint32_t reused = 7 * 128;
  for (int pass = 1; pass <= 2; ++pass) {
    std::string p = "pass=" + std::to_string(pass);
    for (int ctas : o.diagCtas) {
      print("shared-diag", "stateless", ctas,
            measure(w, k, o, Path::Stateless, ctas, reused), p);
      print("shared-diag", "session-reused", ctas,
            measure(w, k, o, Path::Session, ctas, reused),
            p + ";slots the stateless row just used");
      // Fresh slots: this pass's own, never touched before.
      uint32_t fresh = kSlotFresh + uint32_t(pass - 1) * 128;
      print("shared-diag", "session-fresh", ctas,
            measure(w, k, o, Path::Session, ctas, fresh),
            p + ";slots no launch used before");
      print("shared-diag", "session-reversed", ctas,
            measure(w, k, o, Path::Session, ctas, reused, /*first=*/1),
            p + ";rank 1 launched first");
      print("shared-diag", "session-notimeout", ctas,
            measure(noTimeout, k, o, Path::Session, ctas, reused),
            p + ";timeoutMs=0");
      print("shared-diag", "session-noabortcheck", ctas,
            measure(w, k, o, Path::SessionNoAbortCheck, ctas, reused),
            p + ";TLE_NO_ABORT_CHECK");
      // The trace ring takes one fetch-add on a counter in host memory per
      // event (Trace.h), so its cost grows with the CTAs that share it.
      for (tleComm_t c : w.comm)
        TK(tleCommTraceStart(c, 1u << 16));
      print("shared-diag", "session-trace", ctas,
            measure(w, k, o, Path::Session, ctas, reused),
            p + ";trace on (tleCommTraceStart)");
      for (tleComm_t c : w.comm)
        TK(tleCommTraceStop(c));
      print("shared-diag", "bare", ctas, measure(w, k, o, Path::Bare, ctas, 0),
            p);
    }
  }
}

/// Slot `slot`'s epoch word of rank `r` (device memory, read back).
uint32_t epochOf(World &w, int r, uint32_t slot) {
  tle::DevComm dc;
  CK(cudaMemcpy(&dc, w.dcomm[r], sizeof(dc), cudaMemcpyDeviceToHost));
  uint32_t e = 0;
  CK(cudaMemcpy(&e, dc.epochs + slot, sizeof(e), cudaMemcpyDeviceToHost));
  return e;
}

/// Section `graph`, a check rather than a figure: the compiled session's
/// loop (tlec's PTX when prepared, else the session entry points from CUDA
/// C++) captured for both ranks into one CUDA graph and replayed, then a
/// stateless launch on the same slots: every replay continues the slots'
/// epochs from the last one's close, and the stateless launch from the
/// last replay's. Prints CHECK,graph,PASS (or FAIL with the epochs) and
/// returns false on a mismatch.
bool checkGraph(World &w, const Kernels &k) {
  const int ctas = 8, iters = 100, replays = 20;
  // Slots no other row uses (a tlec kernel prepared before the slot base
  // argument takes block b's slot b).
  const uint32_t slot0 = k.haveTlec && !k.tlec.argBase ? 0 : kSlotGraph;
  uint32_t before[kRanks][ctas];
  for (int r = 0; r < kRanks; ++r)
    for (int c = 0; c < ctas; ++c)
      before[r][c] = epochOf(w, r, slot0 + c);
  cudaEvent_t fork, join;
  CK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
  CK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
  // Both ranks' kernels in one graph, side by side (a fork and a join).
  CK(cudaStreamBeginCapture(w.stream[0], cudaStreamCaptureModeThreadLocal));
  CK(cudaEventRecord(fork, w.stream[0]));
  CK(cudaStreamWaitEvent(w.stream[1], fork, 0));
  for (int r = 0; r < kRanks; ++r) {
    if (k.haveTlec)
      launchPtx(k.tlec, ctas, w.stream[r], w.dcomm[r], w.ns[r], iters, slot0);
    else
      sessionAbiLoop<<<ctas, kThreads, 0, w.stream[r]>>>(
          w.dcomm[r], slot0, iters, Out{w.ns[r], w.sm[r]});
    CK_LAUNCH();
  }
  CK(cudaEventRecord(join, w.stream[1]));
  CK(cudaStreamWaitEvent(w.stream[0], join, 0));
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CK(cudaStreamEndCapture(w.stream[0], &graph));
  CK(cudaGraphInstantiate(&exec, graph, 0));
  for (int i = 0; i < replays; ++i)
    CK(cudaGraphLaunch(exec, w.stream[0]));
  CK(cudaStreamSynchronize(w.stream[0]));
  for (int r = 0; r < kRanks; ++r) {
    statelessLoop<<<ctas, kThreads, 0, w.stream[r]>>>(w.dcomm[r], slot0, iters,
                                                      Out{w.ns[r], w.sm[r]});
    CK_LAUNCH();
  }
  CK(cudaDeviceSynchronize());
  // Each launch, replayed or not, completes iters + 1 epochs on each slot.
  bool ok = true;
  std::string detail;
  for (int r = 0; r < kRanks; ++r)
    for (int c = 0; c < ctas; ++c) {
      uint32_t got = epochOf(w, r, slot0 + c);
      uint32_t want = before[r][c] + uint32_t(replays + 1) * (iters + 1);
      if (got != want) {
        ok = false;
        detail += "; rank " + std::to_string(r) + " slot " +
                  std::to_string(slot0 + c) + " epoch " + std::to_string(got) +
                  " != " + std::to_string(want);
      }
    }
  std::printf("CHECK,graph,%s,%d replays of %s on both ranks then a stateless "
              "launch on the same slots%s\n",
              ok ? "PASS" : "FAIL", replays,
              k.haveTlec ? "tlec's session loop" : "the session entry points",
              detail.c_str());
  CK(cudaGraphExecDestroy(exec));
  CK(cudaGraphDestroy(graph));
  CK(cudaEventDestroy(fork));
  CK(cudaEventDestroy(join));
  return ok;
}

/// Reads `key=value` lines of a prepared kernel's description.
std::map<std::string, std::string> readMeta(const std::string &path) {
  std::map<std::string, std::string> m;
  std::ifstream f(path);
  std::string line;
  while (std::getline(f, line)) {
    auto eq = line.find('=');
    if (eq != std::string::npos)
      m[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return m;
}

bool loadTriton(const std::string &dir, const char *stem, PtxKernel &k) {
  auto meta = readMeta(dir + "/" + stem + ".meta");
  if (meta.empty()) {
    std::printf("INFO,skip,%s: no %s/%s.meta\n", stem, dir.c_str(), stem);
    return false;
  }
  if (!loadPtx(dir + "/" + stem + ".ptx", meta["name"].c_str(), k))
    return false;
  k.threads = std::atoi(meta["threads"].c_str());
  k.shared = unsigned(std::atoi(meta["shared"].c_str()));
  k.nullTail = std::atoi(meta["null_tail"].c_str());
  k.argBase = meta["slot_base"] == "1";
  k.iters = std::atoi(meta["iters"].c_str());
  if (k.shared > 48 * 1024)
    CU(cuFuncSetAttribute(k.fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                          int(k.shared)));
  return true;
}

bool wants(const Options &o, const char *s) {
  return std::find(o.sections.begin(), o.sections.end(), s) != o.sections.end();
}

} // namespace

int main(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : nullptr;
    if (a == "--sections" && v)
      o.sections = parseList(v), ++i;
    else if (a == "--ctas" && v)
      o.ctas = parseIntList(v), ++i;
    else if (a == "--diag-ctas" && v)
      o.diagCtas = parseIntList(v), ++i;
    else if (a == "--reps" && v)
      o.reps = std::max(5, std::atoi(v)), ++i;
    else if (a == "--tlec-ptx" && v)
      o.tlecPtx = v, ++i;
    else if (a == "--triton-dir" && v)
      o.tritonDir = v, ++i;
    else if (a == "--cubin")
      o.cubin = true;
    else {
      std::printf("usage: tle-bench-shared [--sections "
                  "shared,graph,shared-diag,ladder,placement] "
                  "[--ctas 1,8,32,66] [--diag-ctas 64,65,66,67] [--reps N "
                  "(>= 5)] [--tlec-ptx FILE] [--triton-dir DIR] [--cubin]\n");
      return 2;
    }
  }
  for (int c : o.ctas)
    if (c < 1 || c > kMaxCtas)
      return std::printf("CTA counts must be in 1..%d\n", kMaxCtas), 2;
  for (int c : o.diagCtas)
    if (c < 1 || c > kMaxCtas)
      return std::printf("CTA counts must be in 1..%d\n", kMaxCtas), 2;
  setvbuf(stdout, nullptr, _IOLBF, 0);
  if (!gpusOrSkip(1))
    return kExitSkip;
  CK(cudaSetDevice(0));
  CK(cudaFree(nullptr)); // the primary context, which the PTX modules use
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("INFO,gpu,%s,%d SMs,two ranks on device 0\n", prop.name,
              prop.multiProcessorCount);
  gCubin = o.cubin;
  Kernels k;
  if (!o.tlecPtx.empty() && loadPtx(o.tlecPtx, "shared_loop", k.tlec)) {
    k.haveTlec = true;
    k.tlec.argIters = true;
    // bench/kernels/shared_loop.mlir's fourth parameter, the slot base.
    k.tlec.argBase =
        readFile(o.tlecPtx).find("shared_loop_param_3") != std::string::npos;
  }
  if (!o.tritonDir.empty()) {
    k.haveTriton = loadTriton(o.tritonDir, "triton_session", k.triton);
    k.haveTritonStateless =
        loadTriton(o.tritonDir, "triton_stateless", k.tritonStateless);
    if (k.haveTriton && k.haveTritonStateless &&
        k.triton.iters != k.tritonStateless.iters)
      return std::printf("the Triton kernels' rounds differ\n"), 1;
  }
  World w, noTimeout;
  makeWorld(w, -1);
  makeWorld(noTimeout, 0);
  if (wants(o, "shared"))
    benchShared(w, k, o);
  bool graphOk = !wants(o, "graph") || checkGraph(w, k);
  if (wants(o, "ladder"))
    benchLadder(w, k, o);
  if (wants(o, "placement"))
    benchPlacement(w, k, o);
  if (wants(o, "shared-diag"))
    benchDiag(w, noTimeout, k, o);
  freeWorld(noTimeout);
  freeWorld(w);
  return graphOk ? 0 : 1;
}
