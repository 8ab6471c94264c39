//===- GinKernels.cu - The device library over NCCL GIN, compiled ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Kernels for ctest device-ptx-gin-nvcc: the nvcc header build with
// TLE_WITH_NCCL_GIN, where net words are NCCL's GIN signals
// (tle/impl/NetNccl.h). ptx-gin.check says what each must contain.
//
//===----------------------------------------------------------------------===//

#include "tle/device.h"

__global__ void worldSignal(const void *comm, int peer) {
  flagcxDevSignalInc(comm, tle::kTeamWorld, peer, 0, 0, tle::kCoopBlock,
                     tle::kScopeSystem);
}

__global__ void waitSignal(const void *comm) {
  flagcxDevWaitSignal(comm, 0, 1, 64, 0, tle::kCoopBlock, tle::kOrderAcquire);
}

__global__ void interSync(const void *comm) {
  flagcxDevBarrierSync(comm, tle::kTeamInter, 0, 0, tle::kCoopBlock,
                       tle::kOrderAcqRel, tle::kScopeSystem);
}

__global__ void worldSync(const void *comm) {
  flagcxDevBarrierSync(comm, tle::kTeamWorld, 0, 0, tle::kCoopBlock,
                       tle::kOrderAcqRel, tle::kScopeSystem);
}

__global__ void intraSync(const void *comm) {
  flagcxDevBarrierSync(comm, tle::kTeamIntra, 0, 0, tle::kCoopBlock,
                       tle::kOrderAcqRel, tle::kScopeSystem);
}

__global__ void worldPut(const void *comm, const void *dst, const void *src,
                         int peer) {
  flagcxDevPut_RSigInc_LCtrInc(comm, dst, 0, src, 0, 4096, tle::kTeamWorld,
                               peer, 0, tle::kCoopBlock, tle::kScopeSystem,
                               tle::kOrderRelaxed, 1, 0);
}

__global__ void worldPutValue(const void *comm, const void *dst, int peer) {
  flagcxDevPutValue(comm, dst, 8, 42, tle::kTeamWorld, peer, 0, tle::kCoopBlock,
                    tle::kScopeSystem, tle::kOrderRelaxed);
}

__global__ void counterWait(const void *comm) {
  flagcxDevWaitCounter(comm, 0, 1, 64, 0, tle::kCoopBlock, tle::kOrderAcquire);
}

__global__ void flush(const void *comm) {
  flagcxDevFlush(comm, 0, tle::kCoopBlock, tle::kOrderAcqRel);
}
