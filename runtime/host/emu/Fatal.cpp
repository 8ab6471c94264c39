//===- Fatal.cpp - Reports of emulator failures that end the process ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The fatal-signal handler and the watchdog thread. Why the process ends
// rather than only the launch: the faulting or runaway fiber was stopped at
// an arbitrary instruction, possibly holding a lock (malloc's, stdio's) or
// halfway through an update of memory other threads read. Switching away
// from it from a signal handler or another thread would leave that state
// behind for the rest of the process, so the only safe continuation is none.
//
//===----------------------------------------------------------------------===//

#include "emu/Fatal.h"

#include "emu/OffFiber.h"
#include "emu/Scheduler.h"
#include "tle/emu.h"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <mutex>

namespace tle::emu {
namespace {
std::atomic<FatalHook> fatalHook{nullptr};
} // namespace

void setFatalHook(FatalHook hook) {
  fatalHook.store(hook, std::memory_order_release);
}
} // namespace tle::emu

namespace tle::emu::detail {

namespace {
/// Writes `text` to stderr, lets the tool's hook finish its output, and
/// ends the process.
[[noreturn]] void endProcess(const SafeText &text) {
  text.writeTo(STDERR_FILENO);
  if (FatalHook hook = fatalHook.load(std::memory_order_acquire))
    hook(text.data(), text.size());
  _exit(1);
}
} // namespace

SafeText &SafeText::add(const char *s) noexcept {
  while (*s && len + 1 < sizeof buf)
    buf[len++] = *s++;
  buf[len] = '\0';
  return *this;
}

SafeText &SafeText::add(uint64_t value) noexcept {
  char digits[24];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value);
  char text[24];
  for (int i = 0; i < n; ++i)
    text[i] = digits[n - 1 - i];
  text[n] = '\0';
  return add(text);
}

SafeText &SafeText::addSigned(int64_t value) noexcept {
  if (value < 0) {
    add("-");
    return add(uint64_t(0) - static_cast<uint64_t>(value));
  }
  return add(static_cast<uint64_t>(value));
}

SafeText &SafeText::addHex(uint64_t value) noexcept {
  char text[19] = "0x";
  int n = 2;
  bool leading = true;
  for (int shift = 60; shift >= 0; shift -= 4) {
    unsigned nibble = (value >> shift) & 0xf;
    if (leading && nibble == 0 && shift > 0)
      continue;
    leading = false;
    text[n++] = "0123456789abcdef"[nibble];
  }
  text[n] = '\0';
  return add(text);
}

void SafeText::writeTo(int fd) const noexcept {
  size_t done = 0;
  while (done < len) {
    ssize_t n = ::write(fd, buf + done, len - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return;
    done += static_cast<size_t>(n);
  }
}

Watchdog::Watchdog(const Heartbeat &beat, uint64_t timeoutNs, uint64_t seed,
                   const char *replayWith)
    : beat(beat), timeoutNs(timeoutNs), seed(seed), replayWith(replayWith) {
  if (timeoutNs)
    thread = std::thread([this] { watch(); });
}

Watchdog::~Watchdog() {
  if (!thread.joinable())
    return;
  {
    std::lock_guard<std::mutex> lock(mutex);
    done = true;
  }
  wake.notify_one();
  thread.join();
}

void Watchdog::watch() {
  // Sampling every tenth of the deadline reports a runaway fiber between 1
  // and 1.1 deadlines after it was resumed.
  auto period = std::chrono::nanoseconds(
      std::clamp<uint64_t>(timeoutNs / 10, 1000000, 100000000));
  uint64_t seenStep = ~0ull, since = steadyNowNs();
  std::unique_lock<std::mutex> lock(mutex);
  while (!wake.wait_for(lock, period, [this] { return done; })) {
    uint64_t now = steadyNowNs();
    bool inFiber = beat.inFiber.load(std::memory_order_acquire);
    uint64_t step = beat.step.load(std::memory_order_acquire);
    if (!inFiber || step != seenStep) {
      seenStep = inFiber ? step : ~0ull;
      since = now;
      continue;
    }
    if (now - since >= timeoutNs)
      fire(now - since);
  }
}

void Watchdog::fire(uint64_t stuckNs) const {
  SafeText text;
  text.add("tle emulator: rank ")
      .addSigned(beat.rank.load(std::memory_order_relaxed))
      .add(" block ")
      .add(uint64_t(beat.block.load(std::memory_order_relaxed)))
      .add(" thread ")
      .add(uint64_t(beat.thread.load(std::memory_order_relaxed)))
      .add(" made no progress for ")
      .add(stuckNs / 1000000)
      .add(" ms (an infinite loop or a spin the emulator cannot see: a spin "
           "loop must call tleEmuSpinHint or tleEmuSpinWait; a kernel that is "
           "only slow needs a longer timeout); replay with ")
      .add(replayWith)
      .add(seed)
      .add("\ntle emulator: a running fiber cannot be stopped: the process "
           "ends\n");
  endProcess(text);
}

namespace {
constexpr int kFatalSignals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE};
struct sigaction previous[std::size(kFatalSignals)];

/// Hands a signal that is not the emulator's to whoever had it before.
void chain(int sig, siginfo_t *info, void *context) {
  for (size_t i = 0; i < std::size(kFatalSignals); ++i) {
    if (kFatalSignals[i] != sig)
      continue;
    const struct sigaction &old = previous[i];
    if (old.sa_flags & SA_SIGINFO) {
      if (old.sa_sigaction) {
        old.sa_sigaction(sig, info, context);
        return;
      }
    } else if (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN) {
      old.sa_handler(sig);
      return;
    }
    // The default action: a fault re-raises itself when the instruction
    // runs again; a signal sent by kill() must be raised anew.
    signal(sig, SIG_DFL);
    if (info->si_code <= 0)
      raise(sig);
    return;
  }
}

void onFatalSignal(int sig, siginfo_t *info, void *context) {
  Scheduler *s = Scheduler::current();
  if (!s || !s->currentThread()) {
    chain(sig, info, context);
    return;
  }
  SafeText text;
  s->describeFault(text, sig, info->si_addr);
  endProcess(text);
}

/// The calling thread's alternate signal stack, if this file installed it.
struct AltStack {
  void *base = nullptr;
  size_t bytes = 0;
  ~AltStack() {
    if (!base)
      return;
    stack_t off{};
    off.ss_flags = SS_DISABLE;
    sigaltstack(&off, nullptr);
    munmap(base, bytes);
  }
};

void ensureAltStack() {
  thread_local AltStack mine;
  if (mine.base)
    return;
  stack_t current{};
  if (sigaltstack(nullptr, &current) != 0 || !(current.ss_flags & SS_DISABLE))
    return; // one is set already (by the application, or a sanitizer)
  constexpr size_t kBytes = size_t(64) << 10;
  void *base = mmap(nullptr, kBytes, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED)
    return; // a fault then kills the process without a report, as before
  stack_t stack{};
  stack.ss_sp = base;
  stack.ss_size = kBytes;
  if (sigaltstack(&stack, nullptr) != 0) {
    munmap(base, kBytes);
    return;
  }
  mine.base = base;
  mine.bytes = kBytes;
}
} // namespace

void prepareFatalHandling() {
  static std::once_flag installed;
  std::call_once(installed, [] {
    for (size_t i = 0; i < std::size(kFatalSignals); ++i) {
      struct sigaction action {};
      action.sa_sigaction = onFatalSignal;
      action.sa_flags = SA_SIGINFO | SA_ONSTACK;
      sigemptyset(&action.sa_mask);
      sigaction(kFatalSignals[i], &action, &previous[i]);
    }
  });
  ensureAltStack();
}

} // namespace tle::emu::detail
