//===- NoFibers.cpp - The emulator in a build without Boost.Context -------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A CUDA build on a machine without Boost.Context still links the host build
// of the device library into libtle, which calls the emulator's hooks. This
// file provides them as Hooks.cpp does off a fiber (OffFiber.h: the
// caller's program or a 1x1 launch, syncs no-ops, spins yield or sleep), so
// Triton's interpreter works there too (Interp.cpp), and makes every
// emulator launch fail with tleNotSupported.
//
//===----------------------------------------------------------------------===//

#include "diag/Error.h"
#include "emu/InterpCheck.h"
#include "emu/OffFiber.h"
#include "tle/emu.h"

#include <unistd.h>

#include <cstdio>

namespace tle::emu {

namespace {
constexpr const char *kNoFibers =
    "this libtle was built without Boost.Context: the CPU emulator cannot "
    "run launches (install libboost-context-dev and rebuild)";
} // namespace

LaunchResult launch(const tleComm_t *, int, const LaunchOptions &,
                    const KernelFn &) {
  LaunchResult result;
  result.result = tleNotSupported;
  result.error.result = tleNotSupported;
  result.message = kNoFibers;
  setLastErrorDetail(kNoFibers);
  return result;
}

tleResult_t planLaunch(const tleComm_t *, int, const LaunchOptions &,
                       LaunchFootprint &out, std::string &error) {
  out = LaunchFootprint{};
  error = kNoFibers;
  return tleNotSupported;
}

uint64_t physicalMemoryBytes() {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page) : 0;
}

tleResult_t environmentSeed(std::optional<uint64_t> &out, std::string &) {
  out.reset();
  return tleSuccess;
}

std::string lastTraceJson() { return "{\"traceEvents\":[]}"; }

std::string lastTraceEvents(uint64_t, uint64_t) { return ""; }

// Declared for every build (tle/emu.h) and called by tlerun: without it the
// GPU preset's tlerun failed to link on machines without Boost.Context.
// No launch runs here, so no fatal error ever calls the hook.
void setFatalHook(FatalHook) {}

} // namespace tle::emu

extern "C" {

TLE_API tleResult_t tleEmuLaunch(const tleComm_t *, int, const uint32_t *,
                                 const uint32_t *, uint64_t, int,
                                 void (*)(void **), void **const *,
                                 tleErrorInfo *outError) {
  if (outError) {
    *outError = {};
    outError->result = tleNotSupported;
    std::snprintf(outError->message, sizeof outError->message, "%s",
                  tle::emu::kNoFibers);
  }
  return tle::fail(tleNotSupported, "%s", tle::emu::kNoFibers);
}

TLE_API tleResult_t tleEmuLaunchWithConfig(const tleComm_t *comms, int nRanks,
                                           const tleEmuLaunchConfig *,
                                           void (*kernel)(void **),
                                           void **const *argsPerRank,
                                           tleErrorInfo *outError) {
  return tleEmuLaunch(comms, nRanks, nullptr, nullptr, 0, 0, kernel,
                      argsPerRank, outError);
}

TLE_API uint32_t tleEmuThreadId(int32_t) { return 0; }
TLE_API uint32_t tleEmuBlockId(int32_t dim) {
  return tle::emu::detail::offFiberBlockId(dim);
}
TLE_API uint32_t tleEmuBlockDim(int32_t) { return 1; }
TLE_API uint32_t tleEmuGridDim(int32_t dim) {
  return tle::emu::detail::offFiberGridDim(dim);
}
TLE_API uint32_t tleEmuThreadRank(void) { return 0; }
TLE_API uint32_t tleEmuBlockThreads(void) { return 1; }
TLE_API void tleEmuSyncBlock(void) {}
TLE_API void tleEmuSyncWarp(void) {}
TLE_API void tleEmuSyncBlockTwice(void) {}
TLE_API void tleEmuSpinWait(const tle::WaitInfo *info) {
  tle::emu::detail::offFiberSpinWait(info);
}

TLE_API void tleEmuSpinHint(const void *, uint64_t) {
  std::this_thread::yield();
}

TLE_API void tleEmuAbortLaunch(void) { tle::emu::detail::offFiberAbort(); }

TLE_API uint64_t tleEmuNowNs(void) { return tle::emu::detail::steadyNowNs(); }

TLE_API uint32_t *tleEmuBlockScratch(uint32_t id, uint32_t n) {
  return tle::emu::detail::offFiberScratch(id, n);
}

TLE_API void tleEmuBarrierEvent(const void *comm, int32_t barrierKind,
                                int32_t coopKind, uint32_t slot, int32_t order,
                                int32_t phase) {
  if (tle::emu::detail::interpChecking)
    tle::emu::detail::interpCheckHookEvent(comm, barrierKind, coopKind, slot,
                                           order, phase);
}
TLE_API void tleEmuSite(const char *) {}
TLE_API void tleEmuEnterCall(const char *, const char *, uint32_t) {}
TLE_API void tleEmuLeaveCall(void) {}
TLE_API void tleEmuAccess(const void *addr, uint64_t bytes, int32_t kind,
                          int32_t order, const char *) {
  if (tle::emu::detail::interpChecking)
    tle::emu::detail::interpCheckHookAccess(addr, bytes, kind, order);
}

TLE_API void tleEmuSignal(const void *word, int32_t event, uint64_t, uint64_t,
                          int32_t order) {
  tle::emu::detail::interpCheckHookSignal(word, event, order);
}

// No scheduler to delay it: the network delivers at once.
TLE_API void tleEmuNetAdd(const void *, const void *word, uint64_t value) {
  tle::emu::detail::offFiberNetAdd(
      static_cast<uint64_t *>(const_cast<void *>(word)), value);
}

TLE_API void tleEmuNetCopy(const void *, const void *dst, const void *src,
                           uint64_t bytes, const void *signal,
                           uint64_t signalValue, const void *counter,
                           uint64_t counterValue) {
  tle::emu::detail::offFiberNetCopy(
      const_cast<void *>(dst), src, bytes,
      static_cast<uint64_t *>(const_cast<void *>(signal)), signalValue,
      static_cast<uint64_t *>(const_cast<void *>(counter)), counterValue);
}
TLE_API void tleEmuNetValue(const void *, const void *dst, uint64_t value,
                            const void *signal, uint64_t signalValue) {
  tle::emu::detail::offFiberNetCopy(
      const_cast<void *>(dst), &value, sizeof(value),
      static_cast<uint64_t *>(const_cast<void *>(signal)), signalValue, nullptr,
      0);
}
TLE_API uint64_t tleEmuNetFlush(const void *) {
  return tle::emu::detail::offFiberNetFlush();
}

} // extern "C"

namespace tle::emu {
uint64_t netNow() { return 0; }
} // namespace tle::emu
