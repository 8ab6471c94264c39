//===- Fatal.h - Emulator failures that end the process ---------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Two failures cannot be turned into a failed launch, because the fiber
// they happen on cannot be resumed or stopped: a fatal signal on a fiber
// (a stack overflow into the guard region, a wild pointer, a trap), and a
// fiber that runs longer than the launch's deadline without returning to
// the scheduler (an infinite loop: the scheduler shares its OS thread and
// cannot preempt it). Both write a report naming rank, block, thread and
// the seed to stderr and end the process with exit status 1, instead of a
// bare signal or a hang. This header declares the signal handling, the
// per-launch watchdog thread, the heartbeat the scheduler publishes for it,
// and the allocation-free text buffer both use for their reports.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_HOST_EMU_FATAL_H
#define TLE_HOST_EMU_FATAL_H

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>

namespace tle::emu::detail {

/// Text built in a fixed buffer without allocating, so that a signal
/// handler can format its report; what does not fit is cut off.
class SafeText {
public:
  SafeText &add(const char *s) noexcept;
  SafeText &add(uint64_t value) noexcept;
  SafeText &addSigned(int64_t value) noexcept;
  SafeText &addHex(uint64_t value) noexcept;
  /// Writes the text to `fd`, retrying short writes.
  void writeTo(int fd) const noexcept;
  const char *data() const noexcept { return buf; }
  size_t size() const noexcept { return len; }

private:
  char buf[1024];
  size_t len = 0;
};

/// What the scheduler publishes around every fiber it resumes, for the
/// watchdog thread: which thread runs, and a step count that changes with
/// every resume.
struct Heartbeat {
  std::atomic<uint64_t> step{0};
  std::atomic<bool> inFiber{false};
  std::atomic<int32_t> rank{-1};
  std::atomic<uint32_t> block{0};
  std::atomic<uint32_t> thread{0};
};

/// A thread that ends the process when one fiber of a launch has run for
/// `timeoutNs` without yielding (a new step). Constructed at the start
/// of a launch, joined at its end; with `timeoutNs` 0 it starts nothing.
class Watchdog {
public:
  /// `replayWith` (the replay hint before the seed) outlives the watchdog.
  Watchdog(const Heartbeat &beat, uint64_t timeoutNs, uint64_t seed,
           const char *replayWith);
  ~Watchdog();
  Watchdog(const Watchdog &) = delete;
  Watchdog &operator=(const Watchdog &) = delete;

private:
  void watch();
  [[noreturn]] void fire(uint64_t stuckNs) const;

  const Heartbeat &beat;
  uint64_t timeoutNs;
  uint64_t seed;
  const char *replayWith;
  std::mutex mutex;
  std::condition_variable wake;
  bool done = false;
  std::thread thread;
};

/// Installs, once per process, the handlers of SIGSEGV, SIGBUS, SIGILL and
/// SIGFPE that report a fault on an emulator fiber and exit with status 1
/// (a fault elsewhere goes to the handler that was installed before), and
/// gives the calling thread an alternate signal stack if it has none, since
/// a stack overflow leaves no room on the fiber's own stack to handle it.
void prepareFatalHandling();

} // namespace tle::emu::detail

#endif // TLE_HOST_EMU_FATAL_H
