//===- GinProbe.cu - NCCL's GPU-initiated networking on this machine ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Issue 19's GPU check: what a communicator past one node does on the GPUs
// at hand. It cannot span nodes here, so it asks for the network on one:
//
//  1. layout: NCCL 2.28's ncclDevCommRequirements and ncclDevComm against
//     the copies libtle passes (runtime/host/backends/nccl/NcclNet.h), at
//     compile time;
//  2. nccl:   a one-rank NCCL communicator on GPU 0, then
//     ncclDevCommCreate without GIN (prints the LSA team and the GIN
//     contexts NCCL made) and with GIN forced on (prints NCCL's answer);
//  3. tle:    tleCommInitFromNccl with TLE_NETWORK=gin, which makes the same
//     request. Where NCCL makes GIN, a kernel built with
//     -DTLE_WITH_NCCL_GIN runs signals and WORLD/INTER barriers through
//     it (a signal to itself, which GIN carries like any other) and prints
//     GIN-ROUND-US; where NCCL cannot, TLE's refusal must be
//     tleNotSupported with NCCL's error in the detail;
//  4. one node: the same kernel on a communicator without a network,
//     where INTER is the rank alone and WORLD its node (ONE-NODE-ROUND-US);
//  5. windows: ncclCommWindowRegister (NCCL_WIN_COLL_SYMMETRIC, what
//     tleMemAlloc asks for on a GIN communicator) of cudaMalloc memory
//     (TLE's buffers with one process per rank) and of ncclMemAlloc memory,
//     printing NCCL's answer for each: whether GIN puts can have a window
//     on TLE's memory (docs/runtime.md, "One-sided transfers over GIN").
//     Informational: either answer passes.
//
// Prints one RESULT line per step; exits 0 when every step did what it
// must (success, or the clear refusal), 1 otherwise, 77 without a GPU.
//
//===----------------------------------------------------------------------===//

#include "GpuSupport.h"
#include "backends/nccl/NcclNet.h"

#include "tle/detail/DevComm.h"
#include "tle/device.h"

#include <nccl.h>
#include <nccl_device.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

// 1. The layout libtle assumes, checked against NCCL's header.
static_assert(sizeof(tle::NcclDevCommRequirements228) ==
                  sizeof(ncclDevCommRequirements),
              "ncclDevCommRequirements changed size");
static_assert(offsetof(tle::NcclDevCommRequirements228, ginForceEnable) ==
                      offsetof(ncclDevCommRequirements, ginForceEnable) &&
                  offsetof(tle::NcclDevCommRequirements228, ginContextCount) ==
                      offsetof(ncclDevCommRequirements, ginContextCount) &&
                  offsetof(tle::NcclDevCommRequirements228, ginSignalCount) ==
                      offsetof(ncclDevCommRequirements, ginSignalCount),
              "ncclDevCommRequirements moved a field TLE sets");
static_assert(sizeof(tle::NcclDevComm228) == sizeof(ncclDevComm) &&
                  offsetof(tle::NcclDevComm228, lsaRank) ==
                      offsetof(ncclDevComm, lsaRank) &&
                  offsetof(tle::NcclDevComm228, lsaSize) ==
                      offsetof(ncclDevComm, lsaSize) &&
                  offsetof(tle::NcclDevComm228, nRanks) ==
                      offsetof(ncclDevComm, nRanks),
              "ncclDevComm moved a field TLE reads");

namespace {

constexpr uint32_t kSlots = 4;
constexpr uint32_t kSignals = 4;

/// Rounds of: a WORLD signal to this rank itself, its wait, an INTER and
/// a WORLD barrier; `first` is the word's value before the launch (words
/// carry across launches), so every wait waits for this round's signal.
/// Records the final word.
__global__ void ginRounds(const void *comm, int rounds, uint64_t first,
                          uint64_t *word) {
  int self = flagcxDevCommGetRank(comm);
  for (int i = 0; i < rounds; ++i) {
    flagcxDevSignalInc(comm, tle::kTeamWorld, self, 0, 0, tle::kCoopBlock,
                       tle::kScopeSystem);
    flagcxDevWaitSignal(comm, 0, first + uint64_t(i + 1), 64, 0,
                        tle::kCoopBlock, tle::kOrderAcquire);
    flagcxDevBarrierSync(comm, tle::kTeamInter, 0, 0, tle::kCoopBlock,
                         tle::kOrderAcqRel, tle::kScopeSystem);
    flagcxDevBarrierSync(comm, tle::kTeamWorld, 1, 0, tle::kCoopBlock,
                         tle::kOrderAcqRel, tle::kScopeSystem);
  }
  if (threadIdx.x == 0)
    *word = flagcxDevReadSignal(comm, 0, 64, 0, tle::kOrderAcquire);
}

constexpr int kTimedLaunches = 7;

/// Runs ginRounds on `comm`: a warm-up launch of 10 rounds, then
/// kTimedLaunches launches of `rounds`, each timed. The word only grows, so
/// after launch i it must count 10 + i * rounds. Prints `RESULT,gin-probe,
/// <step>,ok|FAILED` and, when ok, `<figure>` per round: the median, min
/// and max over the timed launches.
bool runRounds(tleComm_t comm, const char *step, const char *figure,
               int rounds) {
  void *dc = nullptr;
  tleCommGetDevComm(comm, &dc);
  uint64_t *word = nullptr;
  CK(cudaMalloc(&word, sizeof(uint64_t)));
  std::vector<double> us;
  uint64_t want = 10, got = 0;
  ginRounds<<<1, 128>>>(dc, 10, 0, word);
  cudaError_t e = cudaDeviceSynchronize();
  if (e == cudaSuccess)
    cudaMemcpy(&got, word, sizeof(got), cudaMemcpyDeviceToHost);
  for (int i = 0; i < kTimedLaunches && e == cudaSuccess && got == want; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    ginRounds<<<1, 128>>>(dc, rounds, want, word);
    e = cudaDeviceSynchronize();
    us.push_back(std::chrono::duration<double, std::micro>(
                     std::chrono::steady_clock::now() - t0)
                     .count() /
                 rounds);
    want += uint64_t(rounds);
    if (e == cudaSuccess)
      cudaMemcpy(&got, word, sizeof(got), cudaMemcpyDeviceToHost);
  }
  tleErrorInfo info = {};
  tleCommGetError(comm, &info);
  bool ok =
      e == cudaSuccess && got == want && us.size() == size_t(kTimedLaunches);
  printf("RESULT,gin-probe,%s,%s,word=%llu (want %llu) cuda=\"%s\" "
         "device=\"%s\"\n",
         step, ok ? "ok" : "FAILED", static_cast<unsigned long long>(got),
         static_cast<unsigned long long>(want), cudaGetErrorString(e),
         info.message);
  if (ok) {
    std::sort(us.begin(), us.end());
    printf("%s median %.3f min %.3f max %.3f (us per round over %d launches "
           "of %d rounds: a signal to itself, its wait, an INTER and a WORLD "
           "barrier, one rank)\n",
           figure, us[us.size() / 2], us.front(), us.back(), kTimedLaunches,
           rounds);
  }
  cudaFree(word);
  return ok;
}

bool ncclStep(ncclComm_t comm) {
  printf("step: ncclDevCommCreate without GIN\n");
  ncclDevCommRequirements plain = {};
  ncclDevComm dc = {};
  ncclResult_t r = ncclDevCommCreate(comm, &plain, &dc);
  printf("RESULT,gin-probe,nccl-devcomm,%s,rank=%d nRanks=%d lsaRank=%d "
         "lsaSize=%d ginContexts=%d ginType0=%d\n",
         r == ncclSuccess ? "ok" : ncclGetErrorString(r), dc.rank, dc.nRanks,
         dc.lsaRank, dc.lsaSize, int(dc.ginContextCount), int(dc.ginTypes[0]));
  if (r == ncclSuccess)
    ncclDevCommDestroy(comm, &dc);
  printf("step: ncclDevCommCreate with GIN forced on\n");
  ncclDevCommRequirements gin = {};
  gin.ginForceEnable = true;
  gin.ginContextCount = 1;
  gin.ginSignalCount = int(kSignals + 2 * kSlots);
  ncclDevComm dg = {};
  ncclResult_t rg = ncclDevCommCreate(comm, &gin, &dg);
  const char *last = ncclGetLastError(comm);
  printf("RESULT,gin-probe,nccl-gin,%s,ginContexts=%d ginType0=%d "
         "last-error=\"%s\"\n",
         rg == ncclSuccess ? "ok" : ncclGetErrorString(rg),
         int(dg.ginContextCount), int(dg.ginTypes[0]), last ? last : "");
  if (rg == ncclSuccess)
    ncclDevCommDestroy(comm, &dg);
  return r == ncclSuccess;
}

bool tleStep(ncclComm_t nccl) {
  printf("step: tleCommInitFromNccl with TLE_NETWORK=gin\n");
  setenv("TLE_NETWORK", "gin", 1);
  tleConfig_t cfg = TLE_CONFIG_INITIALIZER;
  cfg.backend = tleBackendCuda;
  cfg.nBarriers = kSlots;
  cfg.nSignals = kSignals;
  cfg.timeoutMs = 10000;
  tleComm_t comm = nullptr;
  tleResult_t r = tleCommInitFromNccl(&comm, nccl, nullptr, &cfg);
  std::string detail = tleGetLastErrorDetail();
  if (r != tleSuccess) {
    bool clear = r == tleNotSupported &&
                 detail.find("ncclDevCommCreate") != std::string::npos;
    printf("RESULT,gin-probe,tle-create,%s,%s\n",
           clear ? "refused-clearly" : "FAILED", detail.c_str());
    return clear;
  }
  bool ok = runRounds(comm, "tle-kernel", "GIN-ROUND-US", 1000);
  tleCommDestroy(comm);
  return ok;
}

/// The same kernel on a one-rank communicator without a network (netKind
/// none): INTER is this rank alone, WORLD its node, signals TLE's words.
bool oneNodeStep() {
  tleConfig_t cfg = TLE_CONFIG_INITIALIZER;
  cfg.backend = tleBackendCuda;
  cfg.nBarriers = kSlots;
  cfg.nSignals = kSignals;
  cfg.timeoutMs = 10000;
  tleComm_t comm = nullptr;
  int dev = 0;
  if (tleCommInitAll(&comm, 1, &dev, &cfg) != tleSuccess) {
    printf("RESULT,gin-probe,one-node-create,FAILED,%s\n",
           tleGetLastErrorDetail());
    return false;
  }
  bool ok = runRounds(comm, "one-node-kernel", "ONE-NODE-ROUND-US", 10000);
  tleCommDestroy(comm);
  return ok;
}

/// Registers `bytes` at `p` as a symmetric window of `comm` and prints
/// NCCL's answer as RESULT line `what`.
void registerOnce(ncclComm_t comm, void *p, size_t bytes, const char *what) {
  ncclWindow_t win = nullptr;
  ncclResult_t r =
      ncclCommWindowRegister(comm, p, bytes, &win, NCCL_WIN_COLL_SYMMETRIC);
  const char *last = ncclGetLastError(comm);
  printf("RESULT,gin-probe,%s,%s,window=%p last-error=\"%s\"\n", what,
         r == ncclSuccess && win ? "registered" : ncclGetErrorString(r),
         static_cast<void *>(win), last ? last : "");
  if (r == ncclSuccess && win)
    ncclCommWindowDeregister(comm, win);
}

void windowStep(ncclComm_t comm) {
  printf("step: NCCL windows over cudaMalloc and ncclMemAlloc memory\n");
  constexpr size_t kBytes = size_t(1) << 21;
  void *plain = nullptr;
  CK(cudaMalloc(&plain, kBytes));
  registerOnce(comm, plain, kBytes, "window-cudamalloc");
  CK(cudaFree(plain));
  void *mem = nullptr;
  if (ncclMemAlloc(&mem, kBytes) == ncclSuccess) {
    registerOnce(comm, mem, kBytes, "window-ncclmemalloc");
    ncclMemFree(mem);
  } else {
    printf("RESULT,gin-probe,window-ncclmemalloc,alloc-failed\n");
  }
}

} // namespace

int main() {
  // Line-buffered: a crash inside NCCL must not swallow the steps before.
  setvbuf(stdout, nullptr, _IOLBF, 0);
  if (!tle::gpu::gpusOrSkip(1))
    return 77;
  CK(cudaSetDevice(0));
  int version = 0;
  ncclGetVersion(&version);
  printf("RESULT,gin-probe,nccl-version,%d\n", version);
  ncclComm_t nccl;
  int dev = 0;
  if (ncclCommInitAll(&nccl, 1, &dev) != ncclSuccess) {
    printf("RESULT,gin-probe,nccl-init,FAILED\n");
    return 1;
  }
  bool ok = ncclStep(nccl);
  ncclCommDestroy(nccl);
  // A fresh NCCL communicator for TLE: one whose GIN request failed may
  // not be the same afterwards (run 10 crashed on a second request).
  if (ncclCommInitAll(&nccl, 1, &dev) != ncclSuccess) {
    printf("RESULT,gin-probe,nccl-init,FAILED\n");
    return 1;
  }
  ok = tleStep(nccl) && ok;
  ok = oneNodeStep() && ok;
  windowStep(nccl);
  ncclCommDestroy(nccl);
  printf("RESULT,gin-probe,overall,%s\n", ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
