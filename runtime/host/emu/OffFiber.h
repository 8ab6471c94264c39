//===- OffFiber.h - Emulator hooks called off an emulator fiber --*- C++
//-*-===//
//
// What the emulator's hooks do when they are called outside a launch (the
// host device library used directly, or a libtle built without fibers): the
// caller is a 1x1 launch of its own. Shared by Hooks.cpp and NoFibers.cpp so
// both builds behave the same.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_HOST_EMU_OFFFIBER_H
#define TLE_HOST_EMU_OFFFIBER_H

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace tle::emu::detail {

/// The deadline clock: steady, in nanoseconds.
inline uint64_t steadyNowNs() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::steady_clock::now().time_since_epoch())
          .count());
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

/// A device-side failure with no launch to end: the host equivalent of a
/// trap outside any kernel, which nothing can recover from.
[[noreturn]] inline void offFiberAbort() {
  std::fprintf(stderr, "tle: tleEmuAbortLaunch called outside an emulator "
                       "launch (a device-side error off the emulator)\n");
  std::abort();
}

} // namespace tle::emu::detail

#endif // TLE_HOST_EMU_OFFFIBER_H
