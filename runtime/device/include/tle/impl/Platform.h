//===- Platform.h - What the barrier needs from the machine -----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The small layer between the barrier logic (Barrier.h, written once) and
// the machine it runs on. PlatformCuda.h implements it for GPUs (nvcc, and
// clang in CUDA mode for the bitcode build) with inline PTX; PlatformHost.h
// implements it for the CPU emulator with compiler atomics and the EmuHooks
// calls. Both define, in namespace tle::impl, exactly this:
//
//   ids:      threadRank()  linear thread id in the block
//             blockThreads() threads in the block
//             blockRank()   linear block id in the grid
//             gridBlocks()  blocks in the grid
//   groups:   syncWarp()    all lanes of the caller's warp (or the block's
//                           tail); syncBlock() all threads of the block;
//                           syncBlockTwice() two syncBlock()s with nothing
//                           between (one step of the emulator's)
//             syncWarpMax(v) / syncBlockMax(v)  the same, returning the
//                           largest v (< 256) of the group's threads
//   flags:    loadAcquireSys / loadRelaxedSys / storeReleaseSys /
//             storeRelaxedSys   32-bit flag accesses at system scope (peers
//                               are other GPUs)
//             fenceAcqRelSys / fenceSeqCstSys
//             addReleaseSys / addRelaxedSys   the same, as an atomic add
//             loadAcquireSys / loadRelaxedSys / storeRelaxedSys /
//             addReleaseSys on uint64_t   the signal words (SignalOps.h)
//   handles:  loadConst, loadConstPair   fields of the DevComm / SymMem,
//                           which nothing writes during a launch
//   counters: loadRelaxedGpu / storeRelaxedGpu   this GPU's own words
//             fetchAddAcqRelGpu  the one ordered read-modify-write
//             casRelaxedSys      claims the error record
//   faults:   loadFaultWord / storeFaultWord  ErrorRecord::abort, relaxed
//                           at system scope (the host writes it mid-launch)
//   reports:  peekFlagSys   a relaxed load of a flag for a report's missing
//                           peers: no synchronization, so the emulator's race
//                           checker does not take it as one (and it is not
//                           counted as a barrier's memory traffic)
//   time:     nowNs(); kPollsPerClockRead failed polls between two clock
//             reads (and two loads of the fault word)
//   waiting:  kPlatformYields (true: every failed poll must call
//             spinWait(info) so that the emulator can schedule and detect
//             deadlocks; false: spin), spinWait(info); pollHint(addr,
//             value) after a load that may be a poll of the caller's own
//             loop (a signal read): a yield on the emulator
//             (tleEmuSpinHint), nothing on GPUs
//   failure:  abortLaunch() [[noreturn]], ends the whole launch
//   scratch:  blockScratch() one zero-initialised word per block, kept for
//             the launch (the grid barrier's per-CTA target epoch)
//   signals:  storeSignalSys(word, v) a signal word's (or counter's) reset,
//             relaxed at system scope; noteSignal(word, event, value,
//             operand, order) tells the emulator's race checker a wait's
//             target or a read's value (tleEmuSignal; the host build's
//             64-bit addReleaseSys and storeSignalSys tell it the add and
//             the reset); empty on GPUs
//   trace:    emuBarrierEvent(comm, kind, coop, slot, order, phase) tells
//             the emulator a barrier event (Trace.h; empty on GPUs);
//             fetchAddRelaxed(uint64_t *, v) takes a trace ring index
//   calls:    enterCall(name, site) / leaveCall() bracket one call of the
//             library (an entry point `name`, or a typed API call from
//             `site`; CallScope below): the emulator's reports fold the
//             call's threads into one line and name the caller's line
//             (tleEmuEnterCall); nothing on GPUs
//   sites:    siteOf(CallSite) the site id of a typed API call
//             (docs/design.md, "Call sites"): its file:line registered in
//             the host's table (tleSiteRegisterText); 0 on GPUs
//
// TLE_DEV_INLINE marks the small functions (always inlined on GPUs),
// TLE_DEV_COLD the failure paths (kept out of line so that the hot path
// stays short), TLE_DEV_GLOBAL_CONST a read-only object in global memory.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_IMPL_PLATFORM_H
#define TLE_IMPL_PLATFORM_H

#include "tle/detail/DevComm.h"
#include "tle/detail/EmuHooks.h"
#include "tle/impl/CallSite.h"
#include "tle/impl/Mutation.h"

#include <stdint.h>

#if defined(__CUDACC__)
#include "tle/impl/PlatformCuda.h"
#elif defined(TLE_TEST_PLATFORM)
// A test's own implementation of this contract (unittests/device's
// recording platform, which logs every ordered operation the barrier issues).
#include TLE_TEST_PLATFORM
#else
#include "tle/impl/PlatformHost.h"
#endif

namespace tle::impl {

/// Brackets one call of the library for the platform layer (enterCall,
/// leaveCall): a typed API call from `site`, or entry point `name`.
class CallScope {
public:
  TLE_DEV_INLINE explicit CallScope(CallSite site) { enterCall(nullptr, site); }
  TLE_DEV_INLINE explicit CallScope(const char *name) {
    enterCall(name, CallSite{});
  }
  TLE_DEV_INLINE ~CallScope() { leaveCall(); }
  CallScope(const CallScope &) = delete;
  CallScope &operator=(const CallScope &) = delete;
};

} // namespace tle::impl

#endif // TLE_IMPL_PLATFORM_H
