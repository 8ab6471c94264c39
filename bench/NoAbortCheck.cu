//===- NoAbortCheck.cu - The latency loop without the fault-word look -----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The control of the `latency` section's `tle-noabortcheck` row: the same
// loop as BarrierBench.cu's tleSyncLoop, compiled with TLE_NO_ABORT_CHECK,
// under which a wait skips its look at the communicator's fault word
// (impl/Signal.h) and keeps everything else, the clock read included. In a
// file of its own because the definition changes the device library's
// inline code: each translation unit is its own device module (no -rdc),
// so the two builds of the library never meet.
//
//===----------------------------------------------------------------------===//

#define TLE_NO_ABORT_CHECK 1

#include "GpuSupport.h"

#include "tle/device.h"

using namespace tle::gpu;

namespace {

__global__ void tleSyncLoopNoAbortCheck(const void *comm, uint32_t slotBase,
                                        int iters, unsigned long long *out) {
  const uint32_t slot = slotBase + blockIdx.x;
  flagcxIntraBarrierSyncS(comm, kCoopBlock, slot, false, kRelaxed);
  const uint64_t t0 = globalTimer();
  for (int i = 0; i < iters; ++i)
    flagcxIntraBarrierSyncS(comm, kCoopBlock, slot, false, kAcqRel);
  const uint64_t dt = globalTimer() - t0;
  if (threadIdx.x == 0)
    out[blockIdx.x] = dt;
}

} // namespace

/// Launches the loop on the current device (BarrierBench.cu declares it).
void launchSyncLoopNoAbortCheck(int ctas, int threads, const void *comm,
                                uint32_t slotBase, int iters,
                                unsigned long long *out) {
  tleSyncLoopNoAbortCheck<<<ctas, threads>>>(comm, slotBase, iters, out);
}
