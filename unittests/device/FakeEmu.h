//===- FakeEmu.h - A stand-in for the CPU emulator in unit tests ----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The device library's host build calls the emulator through EmuHooks.h.
// These tests replace the emulator with a fake that runs one thread at a
// time on the calling OS thread: ids come from FakeEmu, group syncs only
// count, the clock advances by a fixed step per read, and a spin or an abort
// ends the process (tests that expect one run the call in a forked child).
// The fake's state lives in shared memory so that a parent sees what a
// child did.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_UNITTESTS_DEVICE_FAKEEMU_H
#define TLE_UNITTESTS_DEVICE_FAKEEMU_H

#include "tle/detail/EmuHooks.h"

#include <stdint.h>

namespace tle::test {

/// Exit status of a child whose launch was aborted by the device library.
constexpr int kAbortExit = 42;
/// Exit status of a child that reached spinLimit failed polls.
constexpr int kSpinLimitExit = 43;
constexpr uint32_t kMaxBlocks = 16;

struct FakeEmu {
  uint32_t threadIdx[3];
  uint32_t blockIdx[3];
  uint32_t blockDim[3];
  uint32_t gridDim[3];
  uint64_t now; ///< tleEmuNowNs() returns now += clockStep
  uint64_t clockStep;
  uint32_t spins;     ///< failed polls seen by tleEmuSpinWait
  uint32_t spinLimit; ///< exit(kSpinLimitExit) when spins reaches it
  WaitInfo lastWait;  ///< `what` copied into lastWhat
  char lastWhat[32];
  uint32_t syncBlocks;
  uint32_t syncWarps;
  uint32_t aborts;
  uint32_t traceEvents;
  uint32_t spinHints; ///< tleEmuSpinHint calls (signal reads)
  /// tleEmuEnterCall / tleEmuLeaveCall: the calls entered and left, the
  /// depth now, and the outermost call's name, file and line.
  uint32_t callsEntered, callsLeft, callDepth, callLine;
  char callName[48], callFile[128];
  uint32_t scratch[kMaxBlocks];
  /// The status reductions' words (scratch ids 1 and 2: PlatformHost.h).
  uint32_t reduceScratch[kMaxBlocks][32];
};

/// The fake's state, in a MAP_SHARED mapping; reset() zeroes it and sets a
/// 1x1x1 launch.
FakeEmu &fake();
void resetFake();

/// Runs `fn` in a forked child and returns its exit status (or 128 + the
/// signal that killed it).
int runInChild(void (*fn)(void *), void *arg);

/// Memory shared with forked children (zero-filled, page aligned).
void *sharedAlloc(uint64_t bytes);

} // namespace tle::test

#endif // TLE_UNITTESTS_DEVICE_FAKEEMU_H
