//===- CudaSample.cu - tle/device.h as a CUDA C++ user sees it ------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A compile-only check of the nvcc header build: a kernel that includes
// tle/device.h (and tle/session.h) and calls every ABI function inline and
// the session API, compiled for sm_90
// without -rdc and without any library. Built when TLE_ENABLE_CUDA is on
// (and by hand: nvcc -arch=sm_90 -std=c++20 -I runtime/include -c).
//
//===----------------------------------------------------------------------===//

#include "tle/device.h"
#include "tle/session.h"

__global__ void tleSampleKernel(const void *comm, const void *mem, int *out,
                                int rounds) {
  using namespace tle;
  const uint32_t slot = blockIdx.x;
  int rank = flagcxDevCommGetIntraRank(comm);
  int size = flagcxDevCommGetIntraSize(comm);
  int *mine = static_cast<int *>(flagcxGetLocalPointerS(mem, 0));
  for (int i = 0; i < rounds; ++i) {
    // Publish, cross the barrier, read what the next rank published.
    if (threadIdx.x == 0)
      mine[blockIdx.x] = i;
    flagcxIntraBarrierArriveS(comm, kCoopBlock, slot, false, kOrderRelease);
    flagcxIntraBarrierWaitS(comm, kCoopBlock, slot, false, kOrderAcquire);
    const int *peer = static_cast<const int *>(
        flagcxGetIntraPointerS(mem, 0, (rank + 1) % size));
    if (threadIdx.x == 0 && peer[blockIdx.x] != i)
      atomicAdd(out, 1);
    flagcxIntraBarrierSyncS(comm, kCoopWarp, slot, false, kOrderAcqRel);
    if (threadIdx.x == 0)
      flagcxIntraBarrierSyncS(comm, kCoopThread, slot, false, kOrderSeqCst);
    flagcxDevBarrierSync(comm, kTeamIntra, slot, 0, kCoopBlock, kOrderAcqRel,
                         kScopeSystem);
  }
  tleIntraGridBarrierSyncS(comm, 0, false, kOrderAcqRel);
}

__global__ void tleSampleSessionKernel(const void *comm, int rounds) {
  using namespace tle;
  BarrierSession bar(comm, kCoopBlock, blockIdx.x);
  for (int i = 0; i < rounds; ++i) {
    bar.arrive(kOrderRelease);
    bar.wait(kOrderAcquire);
    bar.sync(kOrderAcqRel);
  }
}
