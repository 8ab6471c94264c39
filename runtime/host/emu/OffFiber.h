//===- OffFiber.h - Emulator hooks called off an emulator fiber --*- C++
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//-*-===//
//
// What the emulator's hooks do when they are called outside a launch, on a
// plain OS thread. Shared by Hooks.cpp and NoFibers.cpp so both builds
// behave the same. Two modes:
//
// - no program (the host device library used directly, e.g. a host test
//   calling it from one OS thread per rank): the caller is a 1x1 launch of
//   its own; an abort ends the process, as a trap outside any kernel would.
// - a program (Interp.cpp runs a device function for Triton's interpreter):
//   the thread is block `blockIdx` of a grid `gridDim`, one thread per
//   block; a wait sleeps between polls instead of spinning, and an abort
//   returns to the entry point that started the program (longjmp) instead
//   of ending the process.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_HOST_EMU_OFFFIBER_H
#define TLE_HOST_EMU_OFFFIBER_H

#include <chrono>
#include <csetjmp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace tle::emu::detail {

/// The deadline clock: steady, in nanoseconds.
inline uint64_t steadyNowNs() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

/// A program that runs device code on the calling OS thread: block
/// `blockIdx` of `gridDim` blocks, each of one thread.
struct OffFiberProgram {
  uint32_t blockIdx[3];
  uint32_t gridDim[3];
  /// Failed polls since the entry point started (see offFiberSpinWait).
  uint32_t misses;
  /// Where tleEmuAbortLaunch returns to. Only trivially destructible frames
  /// (the device library's) lie between the setjmp and the longjmp, so
  /// skipping them is what a throw would do.
  std::jmp_buf abort;
};

/// The program the calling OS thread runs, or null.
inline thread_local OffFiberProgram *currentProgram = nullptr;

inline uint32_t offFiberBlockId(int32_t dim) {
  const OffFiberProgram *p = currentProgram;
  return p && dim >= 0 && dim < 3 ? p->blockIdx[dim] : 0;
}

inline uint32_t offFiberGridDim(int32_t dim) {
  const OffFiberProgram *p = currentProgram;
  return p && dim >= 0 && dim < 3 ? p->gridDim[dim] : 1;
}

/// Polls of a program before its wait starts to sleep. The peers are other
/// processes that need the CPU to reach the barrier (CI runs four ranks on
/// two cores), so a program yields for a few polls, which keeps a wait whose
/// peer is already close cheap, then sleeps between polls.
constexpr uint32_t kYieldsBeforeSleep = 64;
constexpr std::chrono::microseconds kPollSleep{20};

/// A failed poll off a fiber.
inline void offFiberSpinWait() {
  OffFiberProgram *p = currentProgram;
  if (p && ++p->misses > kYieldsBeforeSleep)
    std::this_thread::sleep_for(kPollSleep);
  else
    std::this_thread::yield();
}

/// Off a fiber the caller is its own block: one scratch per OS thread.
inline uint32_t *offFiberScratch(uint32_t id, uint32_t n) {
  thread_local std::vector<std::vector<uint32_t>> scratch;
  if (scratch.size() <= id)
    scratch.resize(id + 1);
  if (scratch[id].size() < n)
    scratch[id].resize(n, 0);
  return scratch[id].data();
}

/// A device-side failure off a fiber: back to the entry point that runs the
/// program, or, with none, the host equivalent of a trap outside any
/// kernel, which nothing can recover from.
/// tleEmuNetCopy / tleEmuNetValue off a fiber: no scheduler to delay it,
/// so the network delivers at once (the data, then the adds).
inline void offFiberNetCopy(void *dst, const void *src, uint64_t bytes,
                            uint64_t *signal, uint64_t signalValue,
                            uint64_t *counter, uint64_t counterValue) {
  if (bytes)
    std::memcpy(dst, src, bytes);
  if (counter)
    __atomic_fetch_add(counter, counterValue, __ATOMIC_RELEASE);
  if (signal)
    __atomic_fetch_add(signal, signalValue, __ATOMIC_RELEASE);
}

[[noreturn]] inline void offFiberAbort() {
  if (OffFiberProgram *p = currentProgram)
    std::longjmp(p->abort, 1);
  std::fprintf(stderr, "tle: tleEmuAbortLaunch called outside an emulator "
                       "launch (a device-side error off the emulator)\n");
  std::abort();
}

} // namespace tle::emu::detail

#endif // TLE_HOST_EMU_OFFFIBER_H
