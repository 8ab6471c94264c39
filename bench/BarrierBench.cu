//===- BarrierBench.cu - TLE barrier benchmarks on the GPUs of a node -----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Every TLE figure of the benchmark table, measured in one process that
// drives every GPU of the machine (tleCommInitAll; TLE_GPU_RANKS
// lowers it). Results are printed as CSV lines
//   RESULT,<section>,<impl>,<x>,<microseconds>,<note>
// that bench/run.sh collects. Sections:
//   flag      one-way GPU->GPU flag latency (ping-pong / 2, GPUs 0 and 1)
//   signal    one-way latency of a tle.signal ping-pong between GPUs 0 and
//             1 (signal, then wait for the peer's), thread and block groups
//   latency   sync(acq_rel) of group block in a kernel loop, slowest CTA,
//             vs CTAs; timeouts on and off, measured interleaved (one of
//             each per repetition, at least 5 repetitions; every one is
//             printed as a `timeout` row so that the report can state the
//             spread); the same loop without the waits' look at the
//             fault word (NoAbortCheck.cu, interleaved with them: what
//             tleCommAbort's check costs); reference epoch barriers with
//             packed and padded slots (why does latency grow with CTAs?);
//             the barrier's trace on
//   alloc     the same TLE loop over inboxes of each allocation type,
//             measured alternately in one run: cudaMalloc vs cuMem in one
//             process, legacy IPC vs cuMem file descriptors with one
//             process per GPU (this program re-executed per rank)
//   overlap   arrive, W us of independent work, wait: cost over the work
//   grid      grid barrier over all CTAs of all GPUs vs kernel boundaries
//   hostbar   one kernel per barrier, eager and CUDA-graph replayed
//   allreduce one-shot all-reduce (float sum) 8 KB - 1 MB, eager and graph
// In-kernel loops time themselves with %globaltimer after one untimed
// barrier that lines the ranks up; host-launched figures use CUDA events.
//
//===----------------------------------------------------------------------===//

#include "GpuSupport.h"

#include "tle/device.h"
#include "tle/session.h"
#include "tle/signal.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

using namespace tle::gpu;

/// Name of the TLE rows.
#define TLE_BENCH_TAG "tle"

namespace {

/// Ranks of the run: every GPU of the machine (set in main).
int gRanks = 2;
constexpr int kThreads = 128;
constexpr uint32_t kSlots = 1024;
/// Slot ranges per section, so sections never share epochs by accident.
constexpr uint32_t kSlotLatency = 0;   // 132 slots
constexpr uint32_t kSlotHost = 200;    // 1
constexpr uint32_t kSlotOverlap = 256; // 132
constexpr uint32_t kSlotGrid = 400;    // 1
constexpr uint32_t kSlotReduce = 512;  // up to 132

struct Options {
  std::vector<std::string> sections = {"flag",    "signal",   "latency",
                                       "alloc",   "overlap",  "grid",
                                       "hostbar", "allreduce"};
  std::vector<int> ctas = {1, 8, 32, 132};
  int iters = 20000; ///< in-kernel rounds per measurement
  int reps = 7;      ///< measurements; median, min and max are reported
  /// Interleaved on/off pairs for the cost of the timeout checks, which is
  /// a few percent at most: smaller than the drift between runs, so it is
  /// only meaningful as paired differences, with their spread.
  int timeoutReps = 7;
  int hostIters = 2000;
  bool reference = true; ///< also run the reference epoch barriers
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// Every rank's communicator and a symmetric scratch buffer.
struct World {
  std::vector<tleComm_t> comm;
  std::vector<void *> dcomm;
  std::vector<tleMem_t> mem;
  std::vector<void *> dmem;
  std::vector<void *> local;
  std::vector<unsigned long long *> out; ///< per-CTA nanoseconds
};

constexpr size_t kMemBytes = 8u << 20;

/// Creates `w`; false (after printing why) when the communicator cannot be
/// made with `alloc`, which only an explicit allocation type may cause.
bool tryMakeWorld(World &w, int64_t timeoutMs,
                  tleAllocType_t alloc = tleAllocDefault) {
  tleConfig_t cfg = cudaConfig(kSlots, timeoutMs);
  cfg.allocType = alloc;
  w.comm.assign(gRanks, nullptr);
  w.dcomm.assign(gRanks, nullptr);
  w.mem.assign(gRanks, nullptr);
  w.dmem.assign(gRanks, nullptr);
  w.local.assign(gRanks, nullptr);
  w.out.assign(gRanks, nullptr);
  std::vector<int> devs(gRanks);
  for (int r = 0; r < gRanks; ++r)
    devs[r] = r;
  if (tleResult_t r =
          tleCommInitAll(w.comm.data(), gRanks, devs.data(), &cfg)) {
    std::printf("communicator with allocation type %d: %s: %s\n", int(alloc),
                tleGetErrorString(r), tleGetLastErrorDetail());
    return false;
  }
  TK(tleMemAllocAll(w.comm.data(), gRanks, kMemBytes, w.mem.data()));
  for (int r = 0; r < gRanks; ++r) {
    TK(tleCommGetDevComm(w.comm[r], &w.dcomm[r]));
    TK(tleMemGetHandle(w.mem[r], &w.dmem[r]));
    TK(tleMemGetLocalPtr(w.mem[r], &w.local[r]));
    CK(cudaSetDevice(r));
    CK(cudaMalloc(&w.out[r], 1024 * sizeof(unsigned long long)));
  }
  return true;
}

void makeWorld(World &w, int64_t timeoutMs) {
  if (!tryMakeWorld(w, timeoutMs))
    std::exit(1);
}

void freeWorld(World &w) {
  for (int r = 0; r < gRanks; ++r) {
    CK(cudaSetDevice(r));
    CK(cudaDeviceSynchronize());
    CK(cudaFree(w.out[r]));
    TK(tleMemFree(w.mem[r]));
    TK(tleCommDestroy(w.comm[r]));
  }
}

/// Waits for every GPU and returns the slowest of `n` per-CTA times (ns).
double slowest(World &w, int n) {
  double worst = 0;
  std::vector<unsigned long long> h(n);
  for (int r = 0; r < gRanks; ++r) {
    CK(cudaSetDevice(r));
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(h.data(), w.out[r], n * sizeof(h[0]),
                  cudaMemcpyDeviceToHost));
    for (auto v : h)
      worst = std::max(worst, double(v));
  }
  return worst;
}

//===----------------------------------------------------------------------===//
// flag: ping-pong
//===----------------------------------------------------------------------===//

// The reference barriers use the device library's one PTX helper, so that
// they differ from TLE only in protocol, not in the instructions.
using tle::impl::Ptx;

/// Rank 0 serves, rank 1 returns; one round trip per iteration. Flags are
/// fresh words, so values start at 1.
__global__ void pingPong(int rank, uint32_t *mine, uint32_t *peers, int iters,
                         unsigned long long *out) {
  const uint64_t t0 = globalTimer();
  for (uint32_t i = 1; i <= uint32_t(iters); ++i) {
    if (rank == 0) {
      Ptx::stReleaseSys(peers, i);
      while (int32_t(Ptx::ldAcquireSys(mine) - i) < 0) {
      }
    } else {
      while (int32_t(Ptx::ldAcquireSys(mine) - i) < 0) {
      }
      Ptx::stReleaseSys(peers, i);
    }
  }
  out[0] = globalTimer() - t0;
}

/// Between GPUs 0 and 1: the floor of one hop, whatever the rank count.
void benchFlag(World &w, const Options &o) {
  std::vector<double> oneWay;
  for (int rep = 0; rep < o.reps; ++rep) {
    // A fresh pair of flag words per repetition (offset by 4 KB each), so
    // no reset is needed between them.
    size_t off = 4096 * size_t(rep + 1);
    uint32_t *flag[2];
    for (int r = 0; r < 2; ++r)
      flag[r] =
          reinterpret_cast<uint32_t *>(static_cast<char *>(w.local[r]) + off);
    for (int r = 0; r < 2; ++r) {
      CK(cudaSetDevice(r));
      pingPong<<<1, 1>>>(r, flag[r], flag[1 - r], o.iters, w.out[r]);
      CK_LAUNCH();
    }
    double ns = 0;
    for (int r = 0; r < 2; ++r) {
      CK(cudaSetDevice(r));
      CK(cudaDeviceSynchronize());
    }
    unsigned long long h;
    CK(cudaSetDevice(0));
    CK(cudaMemcpy(&h, w.out[0], sizeof(h), cudaMemcpyDeviceToHost));
    ns = double(h);
    oneWay.push_back(ns / 2e3 / o.iters);
  }
  printStats("flag", "flag-oneway", "1", oneWay, "ping-pong/2");
}

//===----------------------------------------------------------------------===//
// signal: ping-pong through signal words
//===----------------------------------------------------------------------===//

/// Rank 0 signals word `word` of rank 1 and waits for rank 1's signal on
/// its own word; rank 1 does the reverse. One untimed round trip lines the
/// ranks up. Each word receives iters + 1 signals per launch, so launch k
/// starts from `first` = k * (iters + 1) and no reset is needed.
__global__ void signalPingPong(const void *comm, int rank, uint32_t word,
                               int coop, int iters, uint64_t first,
                               unsigned long long *out) {
  const int peer = 1 - rank;
  const auto g = static_cast<tle::CoopKind>(coop);
  uint64_t t0 = 0;
  for (int i = 0; i <= iters; ++i) {
    if (i == 1)
      t0 = globalTimer();
    const uint64_t target = first + uint64_t(i) + 1;
    if (rank == 0) {
      tle::signalInc(comm, peer, word, g);
      tle::signalWait(comm, word, target, g);
    } else {
      tle::signalWait(comm, word, target, g);
      tle::signalInc(comm, peer, word, g);
    }
  }
  if (threadIdx.x == 0)
    out[0] = globalTimer() - t0;
}

void benchSignal(World &w, const Options &o) {
  struct Variant {
    const char *x;
    int coop, threads;
    uint32_t word;
  };
  const Variant variants[] = {{"thread", kCoopThread, 1, 0},
                              {"block", kCoopBlock, kThreads, 1}};
  for (const Variant &v : variants) {
    std::vector<double> oneWay;
    for (int rep = 0; rep < o.reps; ++rep) {
      uint64_t first = uint64_t(rep) * uint64_t(o.iters + 1);
      for (int r = 0; r < 2; ++r) {
        CK(cudaSetDevice(r));
        signalPingPong<<<1, v.threads>>>(w.dcomm[r], r, v.word, v.coop, o.iters,
                                         first, w.out[r]);
        CK_LAUNCH();
      }
      // Rank 0 times whole round trips.
      for (int r = 0; r < 2; ++r) {
        CK(cudaSetDevice(r));
        CK(cudaDeviceSynchronize());
      }
      unsigned long long h;
      CK(cudaSetDevice(0));
      CK(cudaMemcpy(&h, w.out[0], sizeof(h), cudaMemcpyDeviceToHost));
      oneWay.push_back(double(h) / 2e3 / o.iters);
    }
    printStats("signal", "tle-signal", v.x, oneWay,
               std::string("ping-pong/2: signal inc + signal_wait acquire; "
                           "group ") +
                   v.x + ", timeouts on");
  }
}

//===----------------------------------------------------------------------===//
// latency: TLE sync and reference epoch barriers
//===----------------------------------------------------------------------===//

__global__ void tleSyncLoop(const void *comm, uint32_t slotBase, int iters,
                            unsigned long long *out) {
  const uint32_t slot = slotBase + blockIdx.x;
  // Untimed: lines this CTA up with its peer.
  flagcxIntraBarrierSyncS(comm, kCoopBlock, slot, false, kRelaxed);
  const uint64_t t0 = globalTimer();
  for (int i = 0; i < iters; ++i)
    flagcxIntraBarrierSyncS(comm, kCoopBlock, slot, false, kAcqRel);
  const uint64_t dt = globalTimer() - t0;
  if (threadIdx.x == 0)
    out[blockIdx.x] = dt;
}

/// The same loop through tle::BarrierSession (tle/session.h), which loads
/// the communicator once instead of on every call.
__global__ void tleSessionLoop(const void *comm, uint32_t slotBase, int iters,
                               unsigned long long *out) {
  tle::BarrierSession bar(comm, kCoopBlock, slotBase + blockIdx.x);
  bar.sync(kRelaxed);
  const uint64_t t0 = globalTimer();
  for (int i = 0; i < iters; ++i)
    bar.sync(kAcqRel);
  const uint64_t dt = globalTimer() - t0;
  if (threadIdx.x == 0)
    out[blockIdx.x] = dt;
}

/// How a reference epoch barrier signals and polls.
enum class Ref {
  StoreAcquire,      ///< st.release.sys; ld.acquire.sys polls
  StoreRelaxedFence, ///< st.release.sys; ld.relaxed.sys polls, then a fence
  RedAcquire,        ///< red.release.sys.add (TLE's arrive); acquire polls
  NoFence,           ///< st.relaxed.sys; relaxed polls: no ordering at all
                     ///< (not a valid barrier: the cost of the signal alone)
};

/// Every rank's inbox of a reference barrier, as this rank maps it.
struct Inboxes {
  uint32_t *of[tle::kMaxRanks];
};

/// A minimal epoch barrier written out here (no timeout, no bounds check)
/// to separate the cost of the protocol from the cost of the slot layout:
/// slot s of rank r lives at inbox[r][s * stride], where word q is rank q's
/// flag; thread j < n-1 signals peer (rank + 1 + j) % n and polls that
/// peer's word in its own inbox.
template <Ref kRef>
__global__ void refBarrierLoop(Inboxes inbox, int rank, int n, uint32_t stride,
                               int iters, unsigned long long *out) {
  const int q = (rank + 1 + int(threadIdx.x)) % n;
  uint32_t *mine = inbox.of[rank] + blockIdx.x * stride + q;
  uint32_t *theirs = inbox.of[q] + blockIdx.x * stride + rank;
  uint32_t epoch = 0; // fresh words: both sides start at 0
  uint64_t t0 = 0;
  for (int i = -1; i < iters; ++i) {
    if (i == 0)
      t0 = globalTimer();
    __syncthreads();
    if (threadIdx.x < unsigned(n - 1)) {
      ++epoch;
      if (kRef == Ref::RedAcquire)
        Ptx::redAddReleaseSys(theirs, 1);
      else if (kRef == Ref::NoFence)
        Ptx::stRelaxedSys(theirs, epoch);
      else
        Ptx::stReleaseSys(theirs, epoch);
      if (kRef == Ref::StoreAcquire || kRef == Ref::RedAcquire) {
        while (int32_t(Ptx::ldAcquireSys(mine) - epoch) < 0) {
        }
      } else {
        // Relaxed polls are cheaper than acquire polls; one fence after
        // the flag was seen gives the same acquire ordering.
        while (int32_t(Ptx::ldRelaxedSys(mine) - epoch) < 0) {
        }
        if (kRef == Ref::StoreRelaxedFence)
          Ptx::fenceAcqRelSys();
      }
    }
    __syncthreads();
  }
  const uint64_t dt = globalTimer() - t0;
  if (threadIdx.x == 0)
    out[blockIdx.x] = dt;
}

template <Ref kRef>
void launchRef(int ctas, const Inboxes &inbox, int rank, uint32_t stride,
               int iters, unsigned long long *out) {
  refBarrierLoop<kRef>
      <<<ctas, kThreads>>>(inbox, rank, gRanks, stride, iters, out);
}

} // namespace

/// NoAbortCheck.cu: tleSyncLoop compiled with TLE_NO_ABORT_CHECK.
void launchSyncLoopNoAbortCheck(int ctas, int threads, const void *comm,
                                uint32_t slotBase, int iters,
                                unsigned long long *out);

namespace {

/// `reps` (default o.reps) measurements of TLE's sync loop on `w` (with
/// `noAbortCheck`, NoAbortCheck.cu's build of it).
std::vector<double> runTleLatency(World &w, int ctas, const Options &o,
                                  bool session = false, int reps = 0,
                                  bool noAbortCheck = false) {
  std::vector<double> v;
  for (int rep = 0; rep < (reps ? reps : o.reps); ++rep) {
    for (int r = 0; r < gRanks; ++r) {
      CK(cudaSetDevice(r));
      if (noAbortCheck)
        launchSyncLoopNoAbortCheck(ctas, kThreads, w.dcomm[r], kSlotLatency,
                                   o.iters, w.out[r]);
      else if (session)
        tleSessionLoop<<<ctas, kThreads>>>(w.dcomm[r], kSlotLatency, o.iters,
                                           w.out[r]);
      else
        tleSyncLoop<<<ctas, kThreads>>>(w.dcomm[r], kSlotLatency, o.iters,
                                        w.out[r]);
      CK_LAUNCH();
    }
    v.push_back(slowest(w, ctas) / 1e3 / o.iters);
  }
  return v;
}

void benchLatency(World &w, World &noTimeout, const Options &o) {
  for (int ctas : o.ctas) {
    // Timeouts on and off, interleaved: each repetition measures both, in
    // alternating order, so that drift over the run (clocks, temperature)
    // falls on both alike. Every measurement is printed (section
    // `timeout`, note rep=<i>), the medians go into the latency table.
    std::vector<double> on, off, noAbort;
    std::string x = std::to_string(ctas);
    for (int rep = 0; rep < std::max(5, o.timeoutReps); ++rep) {
      for (int k = 0; k < 2; ++k) {
        bool timeouts = (rep + k) % 2 == 0;
        double us = runTleLatency(timeouts ? w : noTimeout, ctas, o,
                                  /*session=*/false, /*reps=*/1)[0];
        (timeouts ? on : off).push_back(us);
        printResult("timeout", timeouts ? "on" : "off", x, us,
                    "rep=" + std::to_string(rep));
      }
      double us = runTleLatency(w, ctas, o, /*session=*/false, /*reps=*/1,
                                /*noAbortCheck=*/true)[0];
      noAbort.push_back(us);
      printResult("timeout", "noabortcheck", x, us,
                  "rep=" + std::to_string(rep));
    }
    printStats("latency", TLE_BENCH_TAG, x, on,
               "sync acq_rel block 128thr, timeouts on; median of " +
                   std::to_string(on.size()) + " interleaved with off");
    printStats("latency", TLE_BENCH_TAG "-notimeout", x, off,
               "timeoutMs=0; median of " + std::to_string(off.size()) +
                   " interleaved with on");
    printStats("latency", TLE_BENCH_TAG "-noabortcheck", x, noAbort,
               "timeouts on, built with TLE_NO_ABORT_CHECK (no look at the "
               "fault word); median of " +
                   std::to_string(noAbort.size()) + " interleaved with on");
    printStats("latency", TLE_BENCH_TAG "-session", x,
               runTleLatency(w, ctas, o, /*session=*/true),
               "tle::BarrierSession sync acq_rel block 128thr, timeouts on");
    // The same with the barrier's trace on (the rows above have it off,
    // which must cost nothing): every sync records a begin and an end.
    for (size_t r = 0; r < w.comm.size(); ++r)
      TK(tleCommTraceStart(w.comm[r], 1u << 20));
    printStats("latency", TLE_BENCH_TAG "-trace", x, runTleLatency(w, ctas, o),
               "trace on (tleCommTraceStart; ring in host memory)");
    printStats("latency", TLE_BENCH_TAG "-session-trace", x,
               runTleLatency(w, ctas, o, /*session=*/true),
               "BarrierSession, trace on");
    for (size_t r = 0; r < w.comm.size(); ++r)
      TK(tleCommTraceStop(w.comm[r]));
  }
  if (!o.reference)
    return;
  // Reference barriers on the second half of the scratch buffer. Each
  // variant gets fresh words (zero), and epochs restart at 0.
  struct Variant {
    const char *name;
    uint32_t stride;
    void (*launch)(int, const Inboxes &, int, uint32_t, int,
                   unsigned long long *);
    const char *what;
  };
  const Variant variants[] = {
      {"ref-packed", uint32_t(gRanks), launchRef<Ref::StoreAcquire>,
       "slots nRanks words apart as NCCL's index*nRanks+peer; store/acquire"},
      {"ref-padded", 32, launchRef<Ref::StoreAcquire>,
       "one 128-byte line per slot; store/acquire"},
      {"ref-padded-relaxedpoll", 32, launchRef<Ref::StoreRelaxedFence>,
       "padded; relaxed polls + one fence"},
      {"ref-padded-red", 32, launchRef<Ref::RedAcquire>,
       "padded; red.release.sys.add arrive as TLE"},
      {"ref-padded-nofence", 32, launchRef<Ref::NoFence>,
       "padded; relaxed store and polls: signal cost only, not a barrier"},
  };
  size_t off = kMemBytes / 2;
  for (const Variant &v : variants) {
    for (int ctas : o.ctas) {
      std::vector<double> t;
      for (int rep = 0; rep < o.reps; ++rep) {
        // Rank r's scratch as rank p maps it: the buffer's handle.
        std::vector<Inboxes> inbox(gRanks);
        for (int p = 0; p < gRanks; ++p) {
          tle::SymMem h;
          CK(cudaMemcpy(&h, w.dmem[p], sizeof(h), cudaMemcpyDeviceToHost));
          for (int r = 0; r < gRanks; ++r)
            inbox[p].of[r] = reinterpret_cast<uint32_t *>(
                static_cast<char *>(h.ptrs[r]) + off);
        }
        off += size_t(132) * 32 * 4 + 4096;
        if (off + size_t(132) * 32 * 4 > kMemBytes) {
          std::fprintf(stderr, "scratch exhausted\n");
          std::exit(1);
        }
        for (int r = 0; r < gRanks; ++r) {
          CK(cudaSetDevice(r));
          v.launch(ctas, inbox[r], r, v.stride, o.iters, w.out[r]);
          CK_LAUNCH();
        }
        t.push_back(slowest(w, ctas) / 1e3 / o.iters);
      }
      printStats("latency", v.name, std::to_string(ctas), t, v.what);
    }
  }
}

//===----------------------------------------------------------------------===//
// overlap
//===----------------------------------------------------------------------===//

/// mode 0: work only; 1: arrive, work, wait; 2: sync, then work.
__global__ void overlapLoop(const void *comm, uint32_t slotBase, int mode,
                            uint64_t workNs, int iters,
                            unsigned long long *out) {
  const uint32_t slot = slotBase + blockIdx.x;
  if (mode != 0)
    flagcxIntraBarrierSyncS(comm, kCoopBlock, slot, false, kRelaxed);
  const uint64_t t0 = globalTimer();
  for (int i = 0; i < iters; ++i) {
    if (mode == 1) {
      flagcxIntraBarrierArriveS(comm, kCoopBlock, slot, false, kRelease);
      spinNs(workNs);
      flagcxIntraBarrierWaitS(comm, kCoopBlock, slot, false, kAcquire);
    } else if (mode == 2) {
      flagcxIntraBarrierSyncS(comm, kCoopBlock, slot, false, kAcqRel);
      spinNs(workNs);
    } else {
      spinNs(workNs);
      __syncthreads();
    }
  }
  const uint64_t dt = globalTimer() - t0;
  if (threadIdx.x == 0)
    out[blockIdx.x] = dt;
}

void benchOverlap(World &w, const Options &o) {
  const int iters = std::max(1000, o.iters / 4);
  for (int ctas : {1, 132}) {
    for (int workUs = 0; workUs <= 5; ++workUs) {
      double t[3];
      for (int mode = 0; mode < 3; ++mode) {
        std::vector<double> v;
        for (int rep = 0; rep < o.reps; ++rep) {
          for (int r = 0; r < gRanks; ++r) {
            CK(cudaSetDevice(r));
            overlapLoop<<<ctas, kThreads>>>(w.dcomm[r], kSlotOverlap, mode,
                                            uint64_t(workUs) * 1000, iters,
                                            w.out[r]);
            CK_LAUNCH();
          }
          v.push_back(slowest(w, ctas) / 1e3 / iters);
        }
        t[mode] = median(v);
      }
      std::string x = std::to_string(workUs);
      std::string c = std::to_string(ctas);
      printResult("overlap", "work-only-" + c + "cta", x, t[0]);
      printResult("overlap", "arrive-work-wait-" + c + "cta", x, t[1]);
      printResult("overlap", "sync-then-work-" + c + "cta", x, t[2]);
      printResult("overlap", "cost-split-" + c + "cta", x, t[1] - t[0],
                  "arrive+W+wait minus W alone");
      printResult("overlap", "cost-sync-" + c + "cta", x, t[2] - t[0],
                  "sync+W minus W alone");
    }
  }
}

//===----------------------------------------------------------------------===//
// grid barrier vs kernel boundaries
//===----------------------------------------------------------------------===//

__global__ void gridLoop(const void *comm, uint32_t slot, int iters,
                         unsigned long long *out) {
  tleIntraGridBarrierSyncS(comm, slot, false, kRelaxed);
  const uint64_t t0 = globalTimer();
  for (int i = 0; i < iters; ++i)
    tleIntraGridBarrierSyncS(comm, slot, false, kAcqRel);
  const uint64_t dt = globalTimer() - t0;
  if (threadIdx.x == 0)
    out[blockIdx.x] = dt;
}

__global__ void emptyKernel() {}

/// One host thread per GPU runs `body(rank, stream)`; returns the slowest
/// rank's seconds as measured by `body`.
template <typename Body> double perRank(Body body) {
  std::vector<double> secs(gRanks);
  std::vector<std::thread> th;
  for (int r = 0; r < gRanks; ++r)
    th.emplace_back([&, r] {
      CK(cudaSetDevice(r));
      cudaStream_t s;
      CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
      secs[r] = body(r, s);
      CK(cudaStreamSynchronize(s));
      CK(cudaStreamDestroy(s));
    });
  for (auto &t : th)
    t.join();
  return *std::max_element(secs.begin(), secs.end());
}

void benchGrid(World &w, const Options &o) {
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  int perSm = 0;
  CK(cudaSetDevice(0));
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, gridLoop, kThreads,
                                                   0));
  const int ctas = sms; // one CTA per SM: all co-resident
  if (perSm < 1) {
    std::printf("grid: gridLoop cannot be resident\n");
    return;
  }
  const int iters = std::max(1000, o.iters / 4);
  std::vector<double> v;
  for (int rep = 0; rep < o.reps; ++rep) {
    for (int r = 0; r < gRanks; ++r) {
      CK(cudaSetDevice(r));
      const void *comm = w.dcomm[r];
      uint32_t slot = kSlotGrid;
      int it = iters;
      unsigned long long *out = w.out[r];
      void *args[] = {&comm, &slot, &it, &out};
      CK(cudaLaunchCooperativeKernel((const void *)gridLoop, dim3(ctas),
                                     dim3(kThreads), args, 0, nullptr));
      CK_LAUNCH();
    }
    v.push_back(slowest(w, ctas) / 1e3 / iters);
  }
  std::string x = std::to_string(ctas);
  printStats("grid", "tle-grid-barrier", x, v,
             "all CTAs of all GPUs, cooperative launch");

  const int n = o.hostIters;
  // Kernel boundary alone: back-to-back launches on each GPU, no cross-GPU
  // synchronization at all (a lower bound for any host-side scheme).
  double kb = perRank([&](int, cudaStream_t s) {
    emptyKernel<<<ctas, kThreads, 0, s>>>();
    CK_LAUNCH();
    return timed(s, [&] {
      for (int i = 0; i < n; ++i) {
        emptyKernel<<<ctas, kThreads, 0, s>>>();
        CK_LAUNCH();
      }
    });
  });
  printResult("grid", "kernel-boundary", x, kb / n * 1e6,
              "empty kernel launches, no cross-GPU sync");
  // Kernel boundary + host barrier: what a user without a device barrier
  // does: launch, wait for the GPU, meet the other rank's thread.
  HostBarrier meet(gRanks);
  double hb = perRank([&](int, cudaStream_t s) {
    emptyKernel<<<ctas, kThreads, 0, s>>>();
    CK_LAUNCH();
    CK(cudaStreamSynchronize(s));
    meet.arriveAndWait();
    uint64_t t0 = hostNowNs();
    for (int i = 0; i < n; ++i) {
      emptyKernel<<<ctas, kThreads, 0, s>>>();
      CK_LAUNCH();
      CK(cudaStreamSynchronize(s));
      meet.arriveAndWait();
    }
    return (hostNowNs() - t0) / 1e9;
  });
  printResult("grid", "kernel+host-barrier", x, hb / n * 1e6,
              "launch, cudaStreamSynchronize, std::barrier");
}

//===----------------------------------------------------------------------===//
// hostbar: one kernel per barrier
//===----------------------------------------------------------------------===//

__global__ void syncOnce(const void *comm, uint32_t slot) {
  flagcxIntraBarrierSyncS(comm, kCoopBlock, slot, false, kAcqRel);
}

void benchHostBarrier(World &w, const Options &o) {
  const int n = o.hostIters;
  HostBarrier meet(gRanks);
  double eager = perRank([&](int r, cudaStream_t s) {
    syncOnce<<<1, kThreads, 0, s>>>(w.dcomm[r], kSlotHost);
    CK_LAUNCH();
    CK(cudaStreamSynchronize(s));
    meet.arriveAndWait();
    return timed(s, [&] {
      for (int i = 0; i < n; ++i) {
        syncOnce<<<1, kThreads, 0, s>>>(w.dcomm[r], kSlotHost);
        CK_LAUNCH();
      }
    });
  });
  printResult("hostbar", "tle", "eager", eager / n * 1e6,
              "one <<<1,128>>> kernel per barrier");
  // The epoch lives in device memory, so a captured graph replays the
  // barrier correctly with no host involvement.
  const int perGraph = 100, replays = std::max(1, n / perGraph);
  double graph = perRank([&](int r, cudaStream_t s) {
    cudaGraph_t g;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < perGraph; ++i)
      syncOnce<<<1, kThreads, 0, s>>>(w.dcomm[r], kSlotHost);
    CK(cudaStreamEndCapture(s, &g));
    return timeGraphReplays(s, g, replays, meet);
  });
  printResult("hostbar", "tle", "graph", graph / (perGraph * replays) * 1e6,
              "100 barrier kernels per graph");
}

//===----------------------------------------------------------------------===//
// allreduce
//===----------------------------------------------------------------------===//

/// One-shot all-reduce of `n` floats from every rank's symmetric buffer into
/// `out`. CTA b uses slot slotBase + b and reduces the same index range on
/// every rank, so the pairwise per-CTA barriers suffice: the first makes
/// each peer's input (written by earlier work on its stream) visible, the
/// second keeps a rank from reusing its input while a peer still reads it.
__global__ void oneShotAllReduce(const void *comm, const void *mem, float *out,
                                 uint32_t n4, uint32_t slotBase) {
  const uint32_t slot = slotBase + blockIdx.x;
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
  flagcxIntraBarrierSyncS(comm, kCoopBlock, slot, false, kAcqRel);
}

__global__ void fillInput(float *p, uint32_t n, float v) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += gridDim.x * blockDim.x)
    p[i] = v * float(1 + (i % 7));
}

constexpr int kReduceThreads = 512;

int reduceCtas(uint32_t n4) {
  // From the lab's sweep in CUDA graphs (docs/gpu-notes.md, run 6): the
  // peer reads dominate, so more CTAs in flight pay off sooner than
  // bandwidth suggests: one CTA per 8 KiB up to 64 KiB, then 32 (the best
  // at 128 and 256 KiB), and past 512 KiB about two float4 per thread, at
  // most 64 CTAs (each CTA's slot pair must meet too).
  const size_t bytes = size_t(n4) * 16;
  if (bytes <= (64u << 10))
    return std::max(1, int(bytes / (8u << 10)));
  int c = int((n4 + 2 * kReduceThreads - 1) / (2 * kReduceThreads));
  return std::clamp(c, 32, 64);
}

void benchAllReduce(World &w, const Options &o) {
  std::vector<float *> out(gRanks);
  for (int r = 0; r < gRanks; ++r) {
    CK(cudaSetDevice(r));
    CK(cudaMalloc(&out[r], 1 << 20));
  }
  for (size_t bytes = 8 << 10; bytes <= (1u << 20); bytes *= 2) {
    const uint32_t n = uint32_t(bytes / 4), n4 = n / 4;
    const int ctas = reduceCtas(n4);
    for (int r = 0; r < gRanks; ++r) {
      CK(cudaSetDevice(r));
      fillInput<<<64, 256>>>(static_cast<float *>(w.local[r]), n, float(r + 1));
      CK_LAUNCH();
      CK(cudaDeviceSynchronize());
    }
    // The result, checked after the first call and after each timed
    // series (whose output is cleared first, so that it is theirs): the sum
    // over ranks of (r+1) * (1 + i % 7). A wrong sum ends the program.
    const float sumOfRanks = float(gRanks * (gRanks + 1) / 2);
    auto clearOut = [&] {
      for (int r = 0; r < gRanks; ++r) {
        CK(cudaSetDevice(r));
        CK(cudaDeviceSynchronize());
        CK(cudaMemset(out[r], 0, bytes));
        CK(cudaDeviceSynchronize());
      }
    };
    auto expectSum = [&](const char *what) {
      size_t wrong = 0;
      std::vector<float> h(n);
      for (int r = 0; r < gRanks; ++r) {
        CK(cudaSetDevice(r));
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(h.data(), out[r], bytes, cudaMemcpyDeviceToHost));
        for (uint32_t i = 0; i < n; ++i)
          wrong += h[i] != sumOfRanks * float(1 + (i % 7));
      }
      if (wrong) {
        std::printf("allreduce %zu bytes, %s: %zu wrong elements: FAIL\n",
                    bytes, what, wrong);
        std::exit(1);
      }
    };
    clearOut();
    for (int r = 0; r < gRanks; ++r) {
      CK(cudaSetDevice(r));
      oneShotAllReduce<<<ctas, kReduceThreads>>>(w.dcomm[r], w.dmem[r], out[r],
                                                 n4, kSlotReduce);
      CK_LAUNCH();
    }
    expectSum("first call");
    clearOut();
    const int iters = 1000;
    HostBarrier meet(gRanks);
    std::vector<double> eager, graph;
    for (int rep = 0; rep < o.reps; ++rep)
      eager.push_back(perRank([&](int r, cudaStream_t s) {
                        meet.arriveAndWait();
                        return timed(s, [&] {
                          for (int i = 0; i < iters; ++i) {
                            oneShotAllReduce<<<ctas, kReduceThreads, 0, s>>>(
                                w.dcomm[r], w.dmem[r], out[r], n4, kSlotReduce);
                            CK_LAUNCH();
                          }
                        });
                      }) /
                      iters * 1e6);
    expectSum("eager series");
    std::string x = std::to_string(bytes);
    printStats("allreduce", "tle-oneshot", x, eager,
               std::to_string(ctas) + " CTAs x " +
                   std::to_string(kReduceThreads) + "; sum checked");
    clearOut();
    const int perGraph = 50, replays = 10;
    for (int rep = 0; rep < o.reps; ++rep)
      graph.push_back(
          perRank([&](int r, cudaStream_t s) {
            cudaGraph_t g;
            CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
            for (int i = 0; i < perGraph; ++i)
              oneShotAllReduce<<<ctas, kReduceThreads, 0, s>>>(
                  w.dcomm[r], w.dmem[r], out[r], n4, kSlotReduce);
            CK(cudaStreamEndCapture(s, &g));
            return timeGraphReplays(s, g, replays, meet);
          }) /
          (perGraph * replays) * 1e6);
    expectSum("graph replays");
    printStats("allreduce", "tle-oneshot-graph", x, graph, "sum checked");
  }
  for (int r = 0; r < gRanks; ++r) {
    CK(cudaSetDevice(r));
    CK(cudaFree(out[r]));
  }
}

//===----------------------------------------------------------------------===//
// alloc: the barrier over inboxes of each allocation type
//===----------------------------------------------------------------------===//

/// Repetitions of the alloc section, alternating between the types so that
/// drift during the run hits both alike.
int allocReps(const Options &o) { return std::max(o.reps, 5); }

/// One process: inboxes from cudaMalloc reached by peer access, and from
/// cuMem mapped with access granted to every device.
void benchAllocInProcess(const Options &o) {
  World plain, vmm;
  if (!tryMakeWorld(plain, -1, tleAllocCudaMalloc))
    return;
  if (!tryMakeWorld(vmm, -1, tleAllocCuMem)) {
    std::printf("SKIPPED alloc (one process): no cuMem communicator\n");
    freeWorld(plain);
    return;
  }
  for (int ctas : o.ctas) {
    std::vector<double> a, b;
    for (int rep = 0; rep < allocReps(o); ++rep) {
      a.push_back(runTleLatency(plain, ctas, o, false, 1)[0]);
      b.push_back(runTleLatency(vmm, ctas, o, false, 1)[0]);
    }
    std::string x = std::to_string(ctas);
    printStats("alloc", "cudamalloc-peer", x, a,
               "one process; inboxes cudaMalloc, peer access");
    printStats("alloc", "cumem-peer", x, b,
               "one process; inboxes cuMem, cuMemSetAccess per device");
  }
  freeWorld(vmm);
  freeWorld(plain);
}

std::string toHex(const void *data, size_t bytes) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < bytes; ++i) {
    unsigned char c = static_cast<const unsigned char *>(data)[i];
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

bool fromHex(const char *text, void *data, size_t bytes) {
  if (std::strlen(text) != 2 * bytes)
    return false;
  for (size_t i = 0; i < bytes; ++i) {
    unsigned v;
    if (std::sscanf(text + 2 * i, "%2x", &v) != 1)
      return false;
    static_cast<unsigned char *>(data)[i] = static_cast<unsigned char>(v);
  }
  return true;
}

/// The allocation types of the multi-process rows, in the order the rank
/// processes create their communicators.
constexpr tleAllocType_t kProcessAllocs[] = {tleAllocCudaMalloc, tleAllocCuMem};
const char *const kProcessAllocRows[] = {"cudamalloc-ipc", "cumem-fd"};
const char *const kProcessAllocNotes[] = {
    "one process per GPU; inboxes cudaMalloc, legacy CUDA IPC",
    "one process per GPU; inboxes cuMem, POSIX fd over the bootstrap"};

/// A rank process of the multi-process rows (this program re-executed with
/// --alloc-child RANK NRANKS ID... CTAS ITERS REPS): one communicator per
/// allocation type, the sync loop alternately on each, and per measurement
/// a line ALLOC,<type index>,<ctas>,<rep>,<slowest CTA ns> for the parent.
int allocChild(int argc, char **argv) {
  constexpr int kTypes = sizeof(kProcessAllocs) / sizeof(kProcessAllocs[0]);
  if (argc != 7 + kTypes)
    return 2;
  const int rank = std::atoi(argv[2]), n = std::atoi(argv[3]);
  std::vector<int> ctasList = parseIntList(argv[4 + kTypes]);
  const int iters = std::atoi(argv[5 + kTypes]),
            reps = std::atoi(argv[6 + kTypes]);
  gRanks = n;
  CK(cudaSetDevice(rank));
  void *dcomm[kTypes] = {};
  tleComm_t comm[kTypes] = {};
  for (int k = 0; k < kTypes; ++k) {
    tleUniqueId id;
    if (!fromHex(argv[4 + k], &id, sizeof(id)))
      return 2;
    tleConfig_t cfg = cudaConfig(kSlots, -1);
    cfg.allocType = kProcessAllocs[k];
    // Every rank fails alike (the bootstrap shares a failure), so a type
    // the machine cannot serve is left out by all of them.
    if (tleResult_t r = tleCommInitRank(&comm[k], n, &id, rank, rank, &cfg)) {
      if (rank == 0)
        std::printf("SKIPPED alloc row %s: %s: %s\n", kProcessAllocRows[k],
                    tleGetErrorString(r), tleGetLastErrorDetail());
      comm[k] = nullptr;
      continue;
    }
    TK(tleCommGetDevComm(comm[k], &dcomm[k]));
  }
  unsigned long long *out;
  CK(cudaMalloc(&out, 1024 * sizeof(unsigned long long)));
  std::vector<unsigned long long> h(1024);
  for (int ctas : ctasList)
    for (int rep = 0; rep < reps; ++rep)
      for (int k = 0; k < kTypes; ++k) {
        if (!comm[k])
          continue;
        tleSyncLoop<<<ctas, kThreads>>>(dcomm[k], kSlotLatency, iters, out);
        CK_LAUNCH();
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(h.data(), out, ctas * sizeof(h[0]),
                      cudaMemcpyDeviceToHost));
        std::printf("ALLOC,%d,%d,%d,%llu\n", k, ctas, rep,
                    *std::max_element(h.begin(), h.begin() + ctas));
      }
  std::fflush(stdout);
  CK(cudaFree(out));
  for (tleComm_t c : comm)
    if (c)
      TK(tleCommDestroy(c));
  return 0;
}

/// One process per GPU: legacy CUDA IPC against cuMem file descriptors.
/// This process has initialised CUDA, so the ranks are this program
/// executed afresh (--alloc-child), their output read through pipes.
void benchAllocProcesses(const Options &o) {
  constexpr int kTypes = sizeof(kProcessAllocs) / sizeof(kProcessAllocs[0]);
  std::vector<std::string> args = {"/proc/self/exe", "--alloc-child", "", ""};
  for (int k = 0; k < kTypes; ++k) {
    tleUniqueId id;
    TK(tleGetUniqueId(&id));
    args.push_back(toHex(&id, sizeof(id)));
  }
  std::string ctas;
  for (int c : o.ctas)
    ctas += (ctas.empty() ? "" : ",") + std::to_string(c);
  args.push_back(ctas);
  args.push_back(std::to_string(o.iters));
  args.push_back(std::to_string(allocReps(o)));
  args[3] = std::to_string(gRanks);
  std::vector<pid_t> pids;
  std::vector<int> outs;
  std::fflush(stdout);
  for (int r = 0; r < gRanks; ++r) {
    args[2] = std::to_string(r);
    std::vector<char *> argv;
    for (std::string &a : args)
      argv.push_back(a.data());
    argv.push_back(nullptr);
    int fds[2];
    if (pipe(fds) != 0) {
      std::perror("pipe");
      break;
    }
    pid_t pid = fork();
    if (pid == 0) {
      dup2(fds[1], 1);
      close(fds[0]);
      close(fds[1]);
      execv(argv[0], argv.data());
      _exit(127);
    }
    close(fds[1]);
    pids.push_back(pid);
    outs.push_back(fds[0]);
  }
  // (type, ctas, rep) -> slowest CTA over the ranks, in ns.
  std::map<std::tuple<int, int, int>, double> worst;
  std::vector<std::string> pending(outs.size());
  const uint64_t deadline = hostNowNs() + 120ull * 1000000000ull;
  size_t open = outs.size();
  while (open && hostNowNs() < deadline) {
    std::vector<pollfd> p;
    for (int fd : outs)
      p.push_back({fd, short(fd >= 0 ? POLLIN : 0), 0});
    if (poll(p.data(), p.size(), 1000) <= 0)
      continue;
    for (size_t i = 0; i < outs.size(); ++i) {
      if (outs[i] < 0 || !(p[i].revents & (POLLIN | POLLHUP)))
        continue;
      char buf[4096];
      ssize_t k = read(outs[i], buf, sizeof(buf));
      if (k <= 0) {
        close(outs[i]);
        outs[i] = -1;
        --open;
        continue;
      }
      pending[i].append(buf, size_t(k));
      size_t nl;
      while ((nl = pending[i].find('\n')) != std::string::npos) {
        std::string line = pending[i].substr(0, nl);
        pending[i].erase(0, nl + 1);
        int type, c, rep;
        unsigned long long ns;
        if (std::sscanf(line.c_str(), "ALLOC,%d,%d,%d,%llu", &type, &c, &rep,
                        &ns) == 4) {
          double &w = worst[{type, c, rep}];
          w = std::max(w, double(ns));
        } else {
          std::printf("[alloc rank %zu] %s\n", i, line.c_str());
        }
      }
    }
  }
  for (size_t i = 0; i < pids.size(); ++i) {
    if (outs[i] >= 0) {
      std::printf("alloc rank %zu: no end of output in time; killing it\n", i);
      kill(pids[i], SIGKILL);
      close(outs[i]);
    }
    int status;
    waitpid(pids[i], &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
      std::printf("alloc rank %zu: wait status 0x%x\n", i, status);
  }
  for (int k = 0; k < kTypes; ++k)
    for (int c : o.ctas) {
      std::vector<double> v;
      for (int rep = 0; rep < allocReps(o); ++rep) {
        auto it = worst.find({k, c, rep});
        if (it != worst.end())
          v.push_back(it->second / 1e3 / o.iters);
      }
      if (int(v.size()) == allocReps(o))
        printStats("alloc", kProcessAllocRows[k], std::to_string(c), v,
                   kProcessAllocNotes[k]);
    }
}

bool wants(const Options &o, const char *s) {
  return std::find(o.sections.begin(), o.sections.end(), s) != o.sections.end();
}

} // namespace

int main(int argc, char **argv) {
  if (argc > 1 && std::string(argv[1]) == "--alloc-child") {
    setvbuf(stdout, nullptr, _IOLBF, 0);
    return allocChild(argc, argv);
  }
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : nullptr;
    if (a == "--sections" && v)
      o.sections = parseList(v), ++i;
    else if (a == "--ctas" && v)
      o.ctas = parseIntList(v), ++i;
    else if (a == "--iters" && v)
      o.iters = std::atoi(v), ++i;
    else if (a == "--reps" && v)
      o.reps = std::max(1, std::atoi(v)), ++i;
    else if (a == "--timeout-reps" && v)
      o.timeoutReps = std::max(5, std::atoi(v)), ++i;
    else if (a == "--host-iters" && v)
      o.hostIters = std::atoi(v), ++i;
    else if (a == "--no-reference")
      o.reference = false;
    else {
      std::printf(
          "usage: tle-bench-barrier [--sections flag,signal,latency,alloc,"
          "overlap,grid,hostbar,allreduce] [--ctas 1,8,32,132] "
          "[--iters N] [--reps N] [--timeout-reps N (>= 5)] "
          "[--host-iters N] [--no-reference]\n");
      return 2;
    }
  }
  setvbuf(stdout, nullptr, _IOLBF, 0);
  int visible = gpusOrSkip(2);
  if (!visible)
    return kExitSkip;
  gRanks = ranksFor(visible);
  std::printf("INFO,ranks,%d GPUs\n", gRanks);
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  int driver = 0, runtime = 0;
  CK(cudaDriverGetVersion(&driver));
  CK(cudaRuntimeGetVersion(&runtime));
  std::printf("INFO,gpu,%s,%d SMs,driver %d,runtime %d\n", prop.name,
              prop.multiProcessorCount, driver, runtime);

  World w, noTimeout;
  makeWorld(w, -1);
  makeWorld(noTimeout, 0);
  uint64_t t0 = hostNowNs();
  auto step = [&](const char *s) {
    std::printf("# %s done at %.1f s\n", s, (hostNowNs() - t0) / 1e9);
  };
  if (wants(o, "flag"))
    benchFlag(w, o), step("flag");
  if (wants(o, "signal"))
    benchSignal(w, o), step("signal");
  if (wants(o, "latency"))
    benchLatency(w, noTimeout, o), step("latency");
  if (wants(o, "alloc")) {
    benchAllocInProcess(o);
    benchAllocProcesses(o);
    step("alloc");
  }
  if (wants(o, "overlap"))
    benchOverlap(w, o), step("overlap");
  if (wants(o, "grid"))
    benchGrid(w, o), step("grid");
  if (wants(o, "hostbar"))
    benchHostBarrier(w, o), step("hostbar");
  if (wants(o, "allreduce"))
    benchAllReduce(w, o), step("allreduce");
  freeWorld(noTimeout);
  freeWorld(w);
  return 0;
}
