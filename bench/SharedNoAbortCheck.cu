//===- SharedNoAbortCheck.cu - The shared-GPU session loop, no abort look -===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// SharedBench.cu's session loop compiled with TLE_NO_ABORT_CHECK: the same
// loop without the waits' periodic look at the fault word in host memory,
// the `session-noabortcheck` row of the shared-diag section (does the look
// explain a slow case?). A translation unit of its own because the macro
// changes the device library's inline functions.
//
//===----------------------------------------------------------------------===//

#define TLE_NO_ABORT_CHECK 1

#include "GpuSupport.h"

#include "tle/session.h"

namespace {

__global__ void sessionLoopNoAbortCheck(const void *comm, uint32_t slotBase,
                                        int iters, unsigned long long *ns,
                                        uint32_t *sm) {
  tle::BarrierSession bar(comm, tle::kCoopBlock, slotBase + blockIdx.x);
  bar.sync(tle::kOrderRelaxed);
  const uint64_t t0 = tle::gpu::globalTimer();
  for (int i = 0; i < iters; ++i)
    bar.sync(tle::kOrderAcqRel);
  const uint64_t dt = tle::gpu::globalTimer() - t0;
  if (threadIdx.x == 0) {
    uint32_t id;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
    ns[blockIdx.x] = dt;
    sm[blockIdx.x] = id;
  }
}

} // namespace

void launchSessionNoAbortCheck(int ctas, int threads, cudaStream_t stream,
                               const void *comm, uint32_t slotBase, int iters,
                               unsigned long long *ns, uint32_t *sm) {
  sessionLoopNoAbortCheck<<<ctas, threads, 0, stream>>>(comm, slotBase, iters,
                                                        ns, sm);
}
