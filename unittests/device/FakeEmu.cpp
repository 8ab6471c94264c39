//===- FakeEmu.cpp - A stand-in for the CPU emulator in unit tests --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Definitions of the EmuHooks symbols for the device library's unit tests
// (see FakeEmu.h): a single-threaded, sequential fake, enough for the paths
// of the barrier that never block and for the failure paths, which end the
// (child) process.
//
//===----------------------------------------------------------------------===//

#include "FakeEmu.h"

#include "tle/abi.h"

#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace tle::test {

void *sharedAlloc(uint64_t bytes) {
  void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    std::perror("mmap");
    std::abort();
  }
  return p;
}

FakeEmu &fake() {
  static FakeEmu *state = static_cast<FakeEmu *>(sharedAlloc(sizeof(FakeEmu)));
  return *state;
}

void resetFake() {
  FakeEmu &f = fake();
  std::memset(&f, 0, sizeof(f));
  for (int d = 0; d < 3; ++d)
    f.blockDim[d] = f.gridDim[d] = 1;
  f.clockStep = 1000;
  f.spinLimit = 1000;
}

int runInChild(void (*fn)(void *), void *arg) {
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    fn(arg);
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFEXITED(status))
    return WEXITSTATUS(status);
  return 128 + WTERMSIG(status);
}

} // namespace tle::test

// The libtle build of the device library (DeviceHost.cpp) counts into this
// table while an emulator launch runs; never here, so every count reaches
// the fake's tleEmuCountOp.
namespace tle::emu::detail {
constinit thread_local uint64_t *opTally = nullptr;
} // namespace tle::emu::detail

using tle::test::fake;

extern "C" {
uint32_t tleEmuThreadId(int32_t dim) { return fake().threadIdx[dim]; }
uint32_t tleEmuBlockId(int32_t dim) { return fake().blockIdx[dim]; }
uint32_t tleEmuBlockDim(int32_t dim) { return fake().blockDim[dim]; }
uint32_t tleEmuGridDim(int32_t dim) { return fake().gridDim[dim]; }
uint32_t tleEmuThreadRank(void) {
  const auto &f = fake();
  return f.threadIdx[0] +
         f.blockDim[0] * (f.threadIdx[1] + f.blockDim[1] * f.threadIdx[2]);
}
uint32_t tleEmuBlockThreads(void) {
  const auto &f = fake();
  return f.blockDim[0] * f.blockDim[1] * f.blockDim[2];
}
void tleEmuSyncBlock(void) { ++fake().syncBlocks; }
void tleEmuSyncWarp(void) { ++fake().syncWarps; }
void tleEmuSyncBlockTwice(void) { fake().syncBlocks += 2; }

void tleEmuSpinWait(const tle::WaitInfo *info) {
  tle::test::FakeEmu &f = fake();
  f.lastWait = *info;
  // The wait's state is valid only during this call (WaitInfo::peers).
  f.lastWait.missing = tle::waitMissing(*info);
  f.lastWait.peers = nullptr;
  f.lastWait.peersCtx = nullptr;
  std::snprintf(f.lastWhat, sizeof(f.lastWhat), "%s",
                info->what ? info->what : "");
  if (++f.spins >= f.spinLimit)
    _exit(tle::test::kSpinLimitExit);
}

void tleEmuSpinHint(const void *, uint64_t) { ++fake().spinHints; }

void tleEmuAbortLaunch(void) {
  ++fake().aborts;
  _exit(tle::test::kAbortExit);
}

uint64_t tleEmuNowNs(void) { return fake().now += fake().clockStep; }

uint32_t *tleEmuBlockScratch(uint32_t id, uint32_t n) {
  tle::test::FakeEmu &f = fake();
  uint32_t block =
      f.blockIdx[0] +
      f.gridDim[0] * (f.blockIdx[1] + f.gridDim[1] * f.blockIdx[2]);
  if (block >= tle::test::kMaxBlocks)
    std::abort();
  if (id == 0 && n == 1)
    return &f.scratch[block];
  if ((id == 1 || id == 2) && n <= 32)
    return f.reduceScratch[block];
  std::abort();
}

void tleEmuBarrierEvent(const void *, int32_t, int32_t, uint32_t, int32_t,
                        int32_t) {
  ++fake().traceEvents;
}
void tleEmuSite(const char *) {}
void tleEmuEnterCall(const char *name, const char *file, uint32_t line) {
  tle::test::FakeEmu &f = fake();
  ++f.callsEntered;
  if (f.callDepth++ > 0)
    return;
  std::snprintf(f.callName, sizeof f.callName, "%s", name ? name : "");
  std::snprintf(f.callFile, sizeof f.callFile, "%s", file ? file : "");
  f.callLine = line;
}
// libtle's table of call sites (diag/Sites.cpp), which the typed API's
// host build registers its callers' lines in: here only the id.
uint32_t tleSiteRegisterText(const char *text) {
  return tle::abi::siteId(text, std::strlen(text));
}
void tleEmuLeaveCall(void) {
  tle::test::FakeEmu &f = fake();
  ++f.callsLeft;
  --f.callDepth;
}
void tleEmuAccess(const void *, uint64_t, int32_t, int32_t, const char *) {}
void tleEmuCountOp(int32_t) {}
void tleEmuSignal(const void *, int32_t, uint64_t, uint64_t, int32_t) {}
void tleEmuNetAdd(const void *, const void *word, uint64_t value) {
  __atomic_fetch_add(static_cast<uint64_t *>(const_cast<void *>(word)), value,
                     __ATOMIC_RELEASE);
}
// The network's transfers land at once here (no latency to simulate).
void tleEmuNetCopy(const void *, const void *dst, const void *src,
                   uint64_t bytes, const void *signal, uint64_t signalValue,
                   const void *counter, uint64_t counterValue) {
  if (bytes)
    memcpy(const_cast<void *>(dst), src, bytes);
  if (counter)
    tleEmuNetAdd(nullptr, counter, counterValue);
  if (signal)
    tleEmuNetAdd(nullptr, signal, signalValue);
}
void tleEmuNetValue(const void *comm, const void *dst, uint64_t value,
                    const void *signal, uint64_t signalValue) {
  tleEmuNetCopy(comm, dst, &value, sizeof(value), signal, signalValue, nullptr,
                0);
}
uint64_t tleEmuNetFlush(const void *) { return 0; }
}
