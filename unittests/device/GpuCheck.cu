//===- GpuCheck.cu - The nvcc header build on two real GPUs ---------------===//
//
// A self-contained check of the device library's header build on a machine
// with two peer-capable GPUs, independent of the host runtime: it builds the
// DevComm and SymMem structs by hand (cudaMalloc'd inboxes, peer access,
// host-mapped error records), then
//   1. data visibility across the barrier for every group kind, in rounds
//      that each store to the peer, cross the barrier and read another
//      thread's store from the peer (0 violations expected);
//   2. barrier latency per sync at 1/8/32/132 CTAs for the block group, next
//      to a plain epoch barrier as in shared/anchors/p2p_barrier.cu (the
//      ratio is what matters), and the grid barrier;
//   3. an out-of-range index and a timeout, each in a child process: the
//      launch traps and leaves the specified record.
// Prints FAIL on any violation or wrong record. Not a ctest test: the unit
// tests run on machines without GPUs.
//
//===----------------------------------------------------------------------===//

#include "tle/device.h"

#include <cuda_runtime.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

using namespace tle;

#define CK(x)                                                                  \
  do {                                                                         \
    cudaError_t e = (x);                                                       \
    if (e != cudaSuccess) {                                                    \
      std::printf("FAIL: %s: %s\n", #x, cudaGetErrorString(e));                \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

namespace {

constexpr int kRanks = 2;
constexpr uint32_t kSlots = 8192;
constexpr uint32_t kStride = 32;
constexpr size_t kBufBytes = 8u << 20;

struct Rank {
  DevComm host;
  DevComm *comm;
  SymMem *mem;
  ErrorRecord *errHost;
  uint32_t *inbox;
  void *buf;
};

Rank ranks[kRanks];

void setup() {
  for (int r = 0; r < kRanks; ++r) {
    CK(cudaSetDevice(r));
    for (int q = 0; q < kRanks; ++q)
      if (q != r)
        CK(cudaDeviceEnablePeerAccess(q, 0));
    Rank &k = ranks[r];
    std::memset(&k.host, 0, sizeof(k.host));
    CK(cudaMalloc(&k.inbox, kSlots * kStride * 4));
    CK(cudaMemset(k.inbox, 0, kSlots * kStride * 4));
    CK(cudaMalloc(&k.host.epochs, kSlots * 4));
    CK(cudaMemset(k.host.epochs, 0, kSlots * 4));
    CK(cudaMalloc(&k.host.gridCount, kSlots * 4));
    CK(cudaMemset(k.host.gridCount, 0, kSlots * 4));
    CK(cudaHostAlloc(&k.errHost, sizeof(ErrorRecord), cudaHostAllocMapped));
    std::memset(k.errHost, 0, sizeof(ErrorRecord));
    CK(cudaHostGetDevicePointer(reinterpret_cast<void **>(&k.host.error),
                                k.errHost, 0));
    CK(cudaMalloc(&k.buf, kBufBytes));
    CK(cudaMemset(k.buf, 0, kBufBytes));
    CK(cudaMalloc(&k.comm, sizeof(DevComm)));
    CK(cudaMalloc(&k.mem, sizeof(SymMem)));
  }
  for (int r = 0; r < kRanks; ++r) {
    Rank &k = ranks[r];
    k.host.magic = kDevCommMagic;
    k.host.version = kDevCommVersion;
    k.host.rank = r;
    k.host.size = kRanks;
    k.host.nBarriers = kSlots;
    k.host.inboxStride = kStride;
    k.host.timeoutNs = 10ull * 1000 * 1000 * 1000;
    SymMem m{};
    m.magic = kSymMemMagic;
    m.rank = r;
    m.size = kRanks;
    m.bytes = kBufBytes;
    m.error = k.host.error;
    for (int q = 0; q < kRanks; ++q) {
      k.host.inbox[q] = ranks[q].inbox;
      m.ptrs[q] = ranks[q].buf;
    }
    fillRoutes(k.host);
    CK(cudaSetDevice(r));
    CK(cudaMemcpy(k.comm, &k.host, sizeof(DevComm), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(k.mem, &m, sizeof(SymMem), cudaMemcpyHostToDevice));
  }
}

enum Kind { kThread, kWarp, kBlock, kGrid, kSplit };
const char *kindName[] = {"thread", "warp", "block", "grid", "split"};

/// Each round: store `round` into the peer's buffer, cross the barrier,
/// read the word another member of the group got from the peer. Halves
/// alternate by round parity, so round r+2 cannot overwrite round r's word
/// before it was read (r+2 needs our arrival at r+1).
__global__ void visibility(const void *comm, const void *mem, int rounds,
                           int kind, unsigned *violations) {
  const int rank = flagcxDevCommGetIntraRank(comm);
  const int peer = (rank + 1) % flagcxDevCommGetIntraSize(comm);
  int *out = static_cast<int *>(flagcxGetIntraPointerS(mem, 0, peer));
  const int *in = static_cast<const int *>(flagcxGetLocalPointerS(mem, 0));
  const uint32_t bd = blockDim.x, t = threadIdx.x, b = blockIdx.x;
  const uint32_t per = gridDim.x * bd;
  uint32_t reader = b * bd + t;
  uint32_t slot = b;
  if (kind == kThread)
    slot = b * bd + t;
  else if (kind == kWarp) {
    slot = b * (bd / 32) + t / 32;
    reader = b * bd + (t & ~31u) + ((t + 1) & 31u);
  } else if (kind == kBlock || kind == kSplit)
    reader = b * bd + (t + 1) % bd;
  else if (kind == kGrid)
    reader = ((b + 1) % gridDim.x) * bd + t;
  unsigned bad = 0;
  for (int r = 1; r <= rounds; ++r) {
    uint32_t half = (r & 1) * per;
    out[half + b * bd + t] = r;
    switch (kind) {
    case kThread:
      flagcxIntraBarrierSyncS(comm, kCoopThread, slot, false, kOrderAcqRel);
      break;
    case kWarp:
      flagcxIntraBarrierSyncS(comm, kCoopWarp, slot, false, kOrderSeqCst);
      break;
    case kBlock:
      flagcxIntraBarrierSyncS(comm, kCoopBlock, slot, false, kOrderAcqRel);
      break;
    case kSplit:
      flagcxIntraBarrierArriveS(comm, kCoopBlock, slot, false, kOrderRelease);
      flagcxIntraBarrierWaitS(comm, kCoopBlock, slot, false, kOrderAcquire);
      break;
    case kGrid:
      tleIntraGridBarrierSyncS(comm, 8100, false, kOrderAcqRel);
      break;
    }
    int v = *reinterpret_cast<const volatile int *>(in + half + reader);
    bad += v != r;
  }
  if (bad)
    atomicAdd(violations, bad);
}

__device__ __forceinline__ uint64_t timer() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void benchTle(const void *comm, int iters, int grid,
                         unsigned long long *ns) {
  flagcxIntraBarrierSyncS(comm, kCoopBlock, blockIdx.x, false, kOrderAcqRel);
  uint64_t t0 = timer();
  if (grid)
    for (int i = 0; i < iters; ++i)
      tleIntraGridBarrierSyncS(comm, 1, false, kOrderAcqRel);
  else
    for (int i = 0; i < iters; ++i)
      flagcxIntraBarrierSyncS(comm, kCoopBlock, blockIdx.x, false,
                              kOrderAcqRel);
  if (threadIdx.x == 0)
    ns[blockIdx.x] = timer() - t0;
}

/// The anchor's plain epoch barrier, for a side-by-side ratio.
struct Plain {
  uint32_t *inbox[kRanks];
  int rank;
};
__global__ void benchPlain(Plain c, uint32_t base, int iters,
                           unsigned long long *ns) {
  uint32_t slot = blockIdx.x, epoch = base;
  uint32_t *dst = c.inbox[1 - c.rank] + slot * kStride + c.rank;
  const uint32_t *src = c.inbox[c.rank] + slot * kStride + (1 - c.rank);
  __syncthreads();
  uint64_t t0 = timer();
  for (int i = 0; i < iters; ++i) {
    __syncthreads();
    if (threadIdx.x == 0) {
      asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(dst),
                   "r"(epoch + 1)
                   : "memory");
      uint32_t v;
      do
        asm volatile("ld.acquire.sys.global.u32 %0, [%1];"
                     : "=r"(v)
                     : "l"(src)
                     : "memory");
      while (static_cast<int32_t>(v - (epoch + 1)) < 0);
    }
    ++epoch;
    __syncthreads();
  }
  if (threadIdx.x == 0)
    ns[blockIdx.x] = timer() - t0;
}

__global__ void hang(const void *comm, uint32_t slot) {
  flagcxIntraBarrierSyncS(comm, kCoopBlock, slot + blockIdx.x, false,
                          kOrderAcqRel);
}

bool failed = false;

void runVisibility(int kind, int ctas, int threads, int rounds) {
  unsigned *viol[kRanks];
  for (int r = 0; r < kRanks; ++r) {
    CK(cudaSetDevice(r));
    CK(cudaMalloc(&viol[r], 4));
    CK(cudaMemset(viol[r], 0, 4));
    CK(cudaMemset(ranks[r].buf, 0, kBufBytes));
  }
  for (int r = 0; r < kRanks; ++r) {
    CK(cudaSetDevice(r));
    CK(cudaDeviceSynchronize());
  }
  for (int r = 0; r < kRanks; ++r) {
    CK(cudaSetDevice(r));
    visibility<<<ctas, threads>>>(ranks[r].comm, ranks[r].mem, rounds, kind,
                                  viol[r]);
    CK(cudaGetLastError());
  }
  unsigned total = 0;
  for (int r = 0; r < kRanks; ++r) {
    CK(cudaSetDevice(r));
    CK(cudaDeviceSynchronize());
    unsigned v;
    CK(cudaMemcpy(&v, viol[r], 4, cudaMemcpyDeviceToHost));
    total += v;
    CK(cudaFree(viol[r]));
  }
  std::printf("%s visibility %-6s ctas=%3d threads=%3d rounds=%d: %u "
              "violations\n",
              total ? "FAIL:" : "ok  ", kindName[kind], ctas, threads, rounds,
              total);
  failed |= total != 0;
}

double timeOne(bool plain, bool grid, int ctas, int iters) {
  unsigned long long *ns[kRanks];
  static uint32_t plainBase[256];
  for (int r = 0; r < kRanks; ++r) {
    CK(cudaSetDevice(r));
    CK(cudaMalloc(&ns[r], ctas * 8));
    CK(cudaDeviceSynchronize());
  }
  for (int r = 0; r < kRanks; ++r) {
    CK(cudaSetDevice(r));
    if (plain) {
      // Slots [4096, 4096 + ctas) are the anchor's; its epochs live here.
      Plain p{
          {ranks[0].inbox + 4096 * kStride, ranks[1].inbox + 4096 * kStride},
          r};
      benchPlain<<<ctas, 128>>>(p, plainBase[ctas], iters, ns[r]);
    } else {
      benchTle<<<ctas, 128>>>(ranks[r].comm, iters, grid, ns[r]);
    }
    CK(cudaGetLastError());
  }
  if (plain)
    plainBase[ctas] += iters;
  double worst = 0;
  std::vector<unsigned long long> h(ctas);
  for (int r = 0; r < kRanks; ++r) {
    CK(cudaSetDevice(r));
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(h.data(), ns[r], ctas * 8, cudaMemcpyDeviceToHost));
    for (auto v : h)
      worst = std::max(worst, static_cast<double>(v));
    CK(cudaFree(ns[r]));
  }
  return worst / 1e3 / iters;
}

void runBench() {
  const int iters = 20000;
  for (int ctas : {1, 8, 32, 132}) {
    double tle = timeOne(false, false, ctas, iters);
    double plain = timeOne(true, false, ctas, iters);
    double tle2 = timeOne(false, false, ctas, iters);
    double plain2 = timeOne(true, false, ctas, iters);
    std::printf("bench block sync acq_rel ctas=%3d: tle %.3f/%.3f us, plain "
                "%.3f/%.3f us, ratio %.3f\n",
                ctas, tle, tle2, plain, plain2,
                std::min(tle, tle2) / std::min(plain, plain2));
  }
  for (int ctas : {1, 132})
    std::printf("bench grid sync acq_rel ctas=%3d: %.3f us\n", ctas,
                timeOne(false, true, ctas, iters / 4));
}

void checkRecord(int r, uint32_t code, const char *what) {
  const volatile ErrorRecord &e = *ranks[r].errHost;
  std::printf("%s %s: state %u code %u rank %d slot %u epoch %u missing 0x%x "
              "block %d thread %d nBarriers %u elapsed %.1f ms\n",
              e.state == 2 && e.code == code ? "ok  " : "FAIL:", what, e.state,
              e.code, e.rank, e.slot, e.epoch, e.missingMask, e.block, e.thread,
              e.nBarriers, e.elapsedNs / 1e6);
  failed |= !(e.state == 2 && e.code == code);
}

/// GPU 1: a slot index out of range.
void faultIndex() {
  CK(cudaSetDevice(1));
  hang<<<2, 64>>>(ranks[1].comm, kSlots - 1);
  cudaError_t e = cudaDeviceSynchronize();
  std::printf("index launch: %s\n", cudaGetErrorString(e));
  checkRecord(1, kDevErrIndexOutOfRange, "index record");
  failed |= e == cudaSuccess || ranks[1].errHost->slot != kSlots;
}

/// GPU 0: a barrier no peer joins, with a 50 ms deadline.
void faultTimeout() {
  DevComm c = ranks[0].host;
  c.timeoutNs = 50ull * 1000 * 1000;
  CK(cudaSetDevice(0));
  CK(cudaMemcpy(ranks[0].comm, &c, sizeof(c), cudaMemcpyHostToDevice));
  hang<<<4, 128>>>(ranks[0].comm, 4000);
  cudaError_t e = cudaDeviceSynchronize();
  std::printf("timeout launch: %s\n", cudaGetErrorString(e));
  checkRecord(0, kDevErrTimeout, "timeout record");
  const ErrorRecord &r = *ranks[0].errHost;
  failed |= e == cudaSuccess || r.missingMask != 2u || r.slot < 4000 ||
            r.slot > 4003 || r.epoch != 1 || r.elapsedNs < 50000000ull;
}

/// A trap poisons every context of the process that maps the trapping
/// GPU's memory, so each fault runs in a child process of its own, forked
/// before the parent touches CUDA.
bool runFaultInChild(void (*fault)()) {
  std::fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n < 2)
      _exit(0);
    setup();
    fault();
    std::fflush(stdout);
    _exit(failed ? 1 : 0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/// One-way GPU-to-GPU flag latency: ping-pong between the ranks, halved.
__global__ void pingPong(int rank, uint32_t *mine, uint32_t *peer, int iters,
                         unsigned long long *ns) {
  uint64_t t0 = timer();
  for (uint32_t i = 1; i <= static_cast<uint32_t>(iters); ++i) {
    uint32_t v;
    if (rank == 1)
      do
        asm volatile("ld.acquire.sys.global.u32 %0, [%1];"
                     : "=r"(v)
                     : "l"(mine)
                     : "memory");
      while (v < i);
    asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(peer), "r"(i)
                 : "memory");
    if (rank == 0)
      do
        asm volatile("ld.acquire.sys.global.u32 %0, [%1];"
                     : "=r"(v)
                     : "l"(mine)
                     : "memory");
      while (v < i);
  }
  *ns = timer() - t0;
}

void runPingPong() {
  const int iters = 20000;
  unsigned long long *ns[kRanks];
  // Words in the otherwise unused tail of slot 8191's line.
  uint32_t *flag[kRanks];
  for (int r = 0; r < kRanks; ++r) {
    CK(cudaSetDevice(r));
    flag[r] = ranks[r].inbox + 8191 * kStride + 16;
    CK(cudaMemset(flag[r], 0, 4));
    CK(cudaMalloc(&ns[r], 8));
    CK(cudaDeviceSynchronize());
  }
  for (int r = 0; r < kRanks; ++r) {
    CK(cudaSetDevice(r));
    pingPong<<<1, 1>>>(r, flag[r], flag[1 - r], iters, ns[r]);
  }
  unsigned long long h = 0;
  for (int r = kRanks - 1; r >= 0; --r) {
    CK(cudaSetDevice(r));
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(&h, ns[r], 8, cudaMemcpyDeviceToHost));
  }
  std::printf("bench one-way flag latency: %.3f us\n", h / 2e3 / iters);
}

} // namespace

int main() {
  for (void (*fault)() : {faultIndex, faultTimeout})
    if (!runFaultInChild(fault)) {
      std::printf("FAIL: fault check\n");
      failed = true;
    }
  int n = 0;
  CK(cudaGetDeviceCount(&n));
  if (n < 2) {
    std::printf("SKIPPED: needs 2 GPUs\n");
    return 0;
  }
  setup();
  runVisibility(kBlock, 1, 128, 100000);
  runVisibility(kBlock, 132, 128, 20000);
  runVisibility(kSplit, 32, 256, 20000);
  runVisibility(kWarp, 8, 128, 20000);
  runVisibility(kThread, 4, 32, 5000);
  runVisibility(kGrid, 132, 128, 5000);
  runVisibility(kBlock, 16, 1000, 5000);
  runPingPong();
  runBench();
  std::printf(failed ? "FAIL\n" : "PASS\n");
  return failed ? 1 : 0;
}
