//===- TransferBench.cu - One-sided transfers: bandwidth and latency ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Bandwidth and latency of moving bytes from rank 0 to rank 1, 8 B to
// 256 MB: TLE's put (flagcxDevPut), put with the remote signal the receiver
// waits for (flagcxDevPut_RSigInc + flagcxDevWaitSignal), get
// (flagcxDevGet), against a plain copy kernel through the same peer pointer
// (uint4 loads and stores, the same grid) and cudaMemcpyPeerAsync. Latency
// at 8 B is a ping-pong (rank 0 puts to rank 1 and signals, rank 1 waits
// and answers, 1000 rounds in one pair of kernels, half the round trip),
// for put+signal and for a plain 8-byte store followed by TLE's signal.
// NVSHMEM's putmem_signal_block needs one PE per GPU and its own bootstrap:
// it is tle-bench-nvshmem's (NvshmemBench.cu), not this program's.
//
// The two ranks are one tleCommInitAll set on the devices of
// TLE_TRANSFER_DEVICES ("0,0": both ranks on GPU 0, one stream each; "0,1"
// two GPUs). Every figure is the median of TLE_TRANSFER_REPS (default 7,
// at least 5) measurements, printed with min and max as RESULT lines
// (GpuSupport.h's printStats): section transfer-bw (GB/s) and
// transfer-lat (us).
//
//===----------------------------------------------------------------------===//

#include "GpuSupport.h"

#include "tle/device.h"
#include "tle/tle.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace tle::gpu;

namespace {

constexpr size_t kMaxBytes = size_t(256) << 20;
constexpr int kThreads = 512;

/// Blocks for a transfer of `bytes`: one per 256 KiB, up to 264 (two per SM
/// of an H200), so that put+signal's sender and receiver kernels are
/// co-resident when both ranks share one GPU.
int blocksFor(size_t bytes) {
  size_t b = (bytes + (256u << 10) - 1) / (256u << 10);
  return static_cast<int>(std::min<size_t>(std::max<size_t>(b, 1), 264));
}

/// Each block moves its slice of [0, bytes) with one call for the block.
enum Op { kPut, kPutSignal, kGet, kCopy };

__global__ void transferKernel(const void *comm, const void *src,
                               const void *dst, size_t bytes, int op,
                               int iters) {
  size_t slice = (bytes + gridDim.x - 1) / gridDim.x;
  slice = (slice + 15) / 16 * 16;
  size_t lo = min(bytes, blockIdx.x * slice);
  size_t n = min(bytes, lo + slice) - lo;
  for (int i = 0; i < iters; ++i) {
    if (n == 0)
      break;
    if (op == kPut)
      flagcxDevPut(comm, dst, lo, src, lo, n, tle::kTeamIntra, 1, 0,
                   tle::kCoopBlock, tle::kScopeSystem, tle::kOrderRelaxed);
    else if (op == kPutSignal)
      flagcxDevPut_RSigInc(comm, dst, lo, src, lo, n, tle::kTeamIntra, 1, 0,
                           tle::kCoopBlock, tle::kScopeSystem,
                           tle::kOrderRelaxed, blockIdx.x);
    else if (op == kGet)
      flagcxDevGet(comm, src, lo, dst, lo, n, tle::kTeamIntra, 1, 0,
                   tle::kCoopBlock, tle::kScopeSystem, tle::kOrderRelaxed);
    else {
      // The plain copy: the same peer pointer, uint4 per thread, strided.
      const uint4 *s =
          static_cast<const uint4 *>(flagcxGetLocalPointerS(src, lo));
      uint4 *d = static_cast<uint4 *>(flagcxGetIntraPointerS(dst, lo, 1));
      for (size_t k = threadIdx.x; k < n / 16; k += blockDim.x)
        d[k] = s[k];
      __syncthreads();
    }
  }
}

/// The receiver of kPutSignal: every block waits for its signal word to
/// reach `iters` (its slice's signals), then resets it.
__global__ void waitKernel(const void *comm, int iters) {
  flagcxDevWaitSignal(comm, blockIdx.x, iters, 64, 0, tle::kCoopBlock,
                      tle::kOrderAcquire);
  if (threadIdx.x == 0)
    flagcxDevResetSignal(comm, 0, blockIdx.x);
}

/// The 8-byte ping-pong: `rounds` rounds of rank `me` sending to the other
/// (put+signal, or a plain store then TLE's signal) and waiting for the
/// answer; rank 0 sends first. Rank 0 records the elapsed ns.
__global__ void pingPong(const void *comm, const void *buf, int me, int rounds,
                         int plain, unsigned long long *ns) {
  int peer = 1 - me;
  uint64_t t0 = globalTimer();
  for (int k = 0; k < rounds; ++k) {
    if (me == 1)
      flagcxDevWaitSignal(comm, 0, k + 1, 64, 0, tle::kCoopWarp,
                          tle::kOrderAcquire);
    if (plain) {
      if (threadIdx.x == 0)
        *static_cast<volatile uint64_t *>(
            flagcxGetIntraPointerS(buf, 8, peer)) = k;
      flagcxDevSignalInc(comm, tle::kTeamIntra, peer, 0, 0, tle::kCoopWarp,
                         tle::kScopeSystem);
    } else {
      flagcxDevPut_RSigInc(comm, buf, 8, buf, 0, 8, tle::kTeamIntra, peer, 0,
                           tle::kCoopWarp, tle::kScopeSystem,
                           tle::kOrderRelaxed, 0);
    }
    if (me == 0)
      flagcxDevWaitSignal(comm, 0, k + 1, 64, 0, tle::kCoopWarp,
                          tle::kOrderAcquire);
  }
  if (threadIdx.x == 0 && me == 0)
    *ns = globalTimer() - t0;
  if (threadIdx.x == 0)
    flagcxDevResetSignal(comm, 0, 0);
}

std::vector<int> devicesFromEnv() {
  const char *e = std::getenv("TLE_TRANSFER_DEVICES");
  std::vector<int> d = parseIntList(e && *e ? e : "0,0");
  if (d.size() != 2) {
    std::fprintf(stderr, "TLE_TRANSFER_DEVICES must name two devices\n");
    std::exit(2);
  }
  return d;
}

} // namespace

int main() {
  std::vector<int> devs = devicesFromEnv();
  int visible = 0;
  if (cudaGetDeviceCount(&visible) != cudaSuccess ||
      visible <= std::max(devs[0], devs[1])) {
    std::printf("SKIPPED: needs device %d\n", std::max(devs[0], devs[1]));
    return kExitSkip;
  }
  const char *r = std::getenv("TLE_TRANSFER_REPS");
  int reps = std::max(5, r && *r ? std::atoi(r) : 7);
  tleConfig_t cfg = cudaConfig(8);
  cfg.nSignals = 1024;
  tleComm_t comm[2];
  TK(tleCommInitAll(comm, 2, devs.data(), &cfg));
  tleMem_t src[2], dst[2];
  TK(tleMemAllocAll(comm, 2, kMaxBytes, src));
  TK(tleMemAllocAll(comm, 2, kMaxBytes, dst));
  void *dc[2], *hs[2], *hd[2], *ls[2], *ld[2];
  cudaStream_t stream[2];
  unsigned long long *ns;
  for (int q = 0; q < 2; ++q) {
    TK(tleCommGetDevComm(comm[q], &dc[q]));
    TK(tleMemGetHandle(src[q], &hs[q]));
    TK(tleMemGetHandle(dst[q], &hd[q]));
    TK(tleMemGetLocalPtr(src[q], &ls[q]));
    TK(tleMemGetLocalPtr(dst[q], &ld[q]));
    CK(cudaSetDevice(devs[q]));
    CK(cudaStreamCreateWithFlags(&stream[q], cudaStreamNonBlocking));
  }
  CK(cudaSetDevice(devs[0]));
  CK(cudaMalloc(&ns, sizeof(*ns)));
  std::string where =
      "devices " + std::to_string(devs[0]) + "," + std::to_string(devs[1]);
  std::vector<size_t> sizes;
  for (size_t b = 8; b < kMaxBytes; b *= 4)
    sizes.push_back(b);
  sizes.push_back(kMaxBytes);
  cudaEvent_t start, stop;
  CK(cudaSetDevice(devs[0]));
  CK(cudaEventCreate(&start));
  CK(cudaEventCreate(&stop));
  const char *names[] = {"tle-put", "tle-put-signal", "tle-get", "copy-kernel",
                         "cudaMemcpyPeerAsync"};
  for (size_t bytes : sizes) {
    // Enough repetitions inside one timing that it lasts >= ~1 ms.
    int iters = static_cast<int>(
        std::clamp<size_t>((size_t(64) << 20) / bytes, 1, 1000));
    int blocks = blocksFor(bytes);
    for (int m = 0; m < 5; ++m) {
      std::vector<double> gbps;
      for (int rep = 0; rep <= reps; ++rep) {
        CK(cudaSetDevice(devs[0]));
        CK(cudaEventRecord(start, stream[0]));
        if (m == 4) {
          for (int i = 0; i < iters; ++i)
            CK(cudaMemcpyPeerAsync(ld[1], devs[1], ls[0], devs[0], bytes,
                                   stream[0]));
        } else if (m == kPutSignal) {
          // One launch per put so the receiver's waits can count them.
          for (int i = 0; i < iters; ++i) {
            transferKernel<<<blocks, kThreads, 0, stream[0]>>>(
                dc[0], hs[0], hd[0], bytes, kPutSignal, 1);
            CK(cudaSetDevice(devs[1]));
            waitKernel<<<blocks, kThreads, 0, stream[1]>>>(dc[1], 1);
            CK(cudaSetDevice(devs[0]));
          }
          CK(cudaSetDevice(devs[1]));
          CK(cudaStreamSynchronize(stream[1]));
          CK(cudaSetDevice(devs[0]));
        } else {
          transferKernel<<<blocks, kThreads, 0, stream[0]>>>(
              dc[0], hs[0], hd[0], bytes, m, iters);
        }
        CK_LAUNCH();
        CK(cudaEventRecord(stop, stream[0]));
        CK(cudaEventSynchronize(stop));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, start, stop));
        if (rep > 0) // the first is a warm-up
          gbps.push_back(double(bytes) * iters / (ms * 1e6));
      }
      printStats("transfer-bw", names[m], std::to_string(bytes), gbps,
                 "GB/s; " + std::to_string(blocks) + "x" +
                     std::to_string(kThreads) + " threads; " + where);
    }
  }
  // Latency at 8 B: a ping-pong of 1000 rounds, half the round trip.
  constexpr int kRounds = 1000;
  for (int plain = 0; plain < 2; ++plain) {
    std::vector<double> us;
    for (int rep = 0; rep <= reps; ++rep) {
      for (int q = 1; q >= 0; --q) {
        CK(cudaSetDevice(devs[q]));
        pingPong<<<1, 32, 0, stream[q]>>>(dc[q], hs[q], q, kRounds, plain, ns);
        CK_LAUNCH();
      }
      for (int q = 0; q < 2; ++q) {
        CK(cudaSetDevice(devs[q]));
        CK(cudaStreamSynchronize(stream[q]));
      }
      unsigned long long t = 0;
      CK(cudaSetDevice(devs[0]));
      CK(cudaMemcpy(&t, ns, sizeof(t), cudaMemcpyDeviceToHost));
      if (rep > 0)
        us.push_back(double(t) / kRounds / 2 / 1000);
    }
    printStats("transfer-lat", plain ? "store+tle-signal" : "tle-put-signal",
               "8", us, "us one way (half a ping-pong round trip); " + where);
  }
  for (int q = 0; q < 2; ++q) {
    TK(tleMemFree(src[q]));
    TK(tleMemFree(dst[q]));
    TK(tleCommDestroy(comm[q]));
  }
  return 0;
}
