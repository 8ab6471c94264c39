//===- EmuHooks.h - What the CPU emulator offers running code ----*- C++ -*-===//
//
// The C entry points through which code running inside the CPU emulator
// reaches it: the host build of the device library (its platform layer) and
// kernels compiled by `tlec --target=host` (thread/block ids and
// `gpu.barrier` become these calls). They are valid only on an emulator
// fiber; called elsewhere they report an internal error and abort the launch.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_DETAIL_EMUHOOKS_H
#define TLE_DETAIL_EMUHOOKS_H

#include <stdint.h>

namespace tle {
/// What a spinning wait is waiting for, for the deadlock report.
struct WaitInfo {
  const void *comm;     ///< the DevComm being waited on (may be null)
  int32_t rank;         ///< the waiting rank
  uint32_t slot;        ///< barrier slot
  uint32_t epoch;       ///< epoch it waits for
  uint32_t missingMask; ///< peers that have not arrived yet
  const char *what;     ///< "barrier wait", "grid arrive", ...
};
} // namespace tle

extern "C" {
/// threadIdx / blockIdx / blockDim / gridDim, dim 0..2 = x..z.
uint32_t tleEmuThreadId(int32_t dim);
uint32_t tleEmuBlockId(int32_t dim);
uint32_t tleEmuBlockDim(int32_t dim);
uint32_t tleEmuGridDim(int32_t dim);
/// __syncthreads() / gpu.barrier: all threads of the block.
void tleEmuSyncBlock(void);
/// __syncwarp() over the full warp (32 lanes, or the block's tail).
void tleEmuSyncWarp(void);
/// A poll that did not make progress: yield to the scheduler. `info`
/// describes the wait for the deadlock report; it must stay valid until the
/// call returns.
void tleEmuSpinWait(const tle::WaitInfo *info);
/// End the current launch after an error was recorded in the comm's
/// ErrorRecord (the emulator's equivalent of a trap).
[[noreturn]] void tleEmuAbortLaunch(void);
/// Monotonic nanoseconds.
uint64_t tleEmuNowNs(void);
/// `n` zero-initialised words private to the calling block, persistent for
/// the launch (`id` distinguishes users; the device library uses 0).
uint32_t *tleEmuBlockScratch(uint32_t id, uint32_t n);
/// Trace hook: an arrive/wait event of the barrier (begin = 1, end = 0).
void tleEmuTraceEvent(const char *name, uint32_t slot, int32_t begin);
}

#endif // TLE_DETAIL_EMUHOOKS_H
