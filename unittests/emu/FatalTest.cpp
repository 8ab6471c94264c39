//===- FatalTest.cpp - Failures that end the process end it with a report -===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A stack overflow, a wild pointer and an infinite loop on an emulator fiber
// cannot be recovered from: each must end the process with exit status 1
// and a report naming rank, block, thread and the seed, never a bare signal
// or a hang. Each case runs in a forked child whose stderr the test reads;
// the child is killed if it outlives a generous limit, so a hang fails the
// test instead of stalling the suite. Faults off the emulator's fibers must
// still reach the handler that was there before.
//
//===----------------------------------------------------------------------===//

#include "tle/device.h"
#include "tle/emu.h"

#include <gtest/gtest.h>

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <string>

using namespace tle::emu;

namespace {

struct ChildResult {
  int exitCode = -1;   ///< -1 unless it exited
  int signal = 0;      ///< the signal that killed it, if one did
  bool killed = false; ///< outlived the limit
  double seconds = 0;
  std::string err; ///< what it wrote to stderr
};

/// Runs `body` in a forked child with its stderr captured; the child exits
/// with 0 if `body` returns.
ChildResult runChild(const std::function<void()> &body, double limitSeconds) {
  ChildResult out;
  int fds[2];
  if (pipe(fds) != 0) {
    ADD_FAILURE() << "pipe failed";
    return out;
  }
  auto start = std::chrono::steady_clock::now();
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    dup2(fds[1], STDERR_FILENO);
    body();
    _exit(0);
  }
  close(fds[1]);
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         start)
        .count();
  };
  for (;;) {
    double left = limitSeconds - elapsed();
    if (left <= 0) {
      kill(pid, SIGKILL);
      out.killed = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left * 1000) + 1) <= 0)
      continue;
    char buf[4096];
    ssize_t n = read(fds[0], buf, sizeof buf);
    if (n <= 0)
      break;
    out.err.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  out.seconds = elapsed();
  if (WIFEXITED(status))
    out.exitCode = WEXITSTATUS(status);
  else if (WIFSIGNALED(status))
    out.signal = WTERMSIG(status);
  return out;
}

bool contains(const std::string &s, const std::string &part) {
  return s.find(part) != std::string::npos;
}

LaunchOptions options(Dim3 grid, Dim3 block, uint64_t seed) {
  LaunchOptions o;
  o.grid = grid;
  o.block = block;
  o.seed = seed;
  o.timeoutMs = 0;
  return o;
}

/// Recursion of about 1 KiB per frame that the compiler can neither turn
/// into a loop nor shrink: a volatile frame indexed at run time and read
/// after the call.
__attribute__((noinline)) uint64_t recurse(uint64_t depth) {
  volatile char frame[1024];
  frame[depth % sizeof frame] = static_cast<char>(depth);
  if (depth == 0)
    return 0;
  return recurse(depth - 1) + frame[depth % sizeof frame];
}

TEST(EmuFatal, StackOverflowNamesRankBlockThreadAndSeed) {
  ChildResult r = runChild(
      [] {
        launch(nullptr, 2, options({2, 1, 1}, {32, 1, 1}, 1234),
               [](int rank, void *) {
                 syncThreads();
                 if (rank == 1 && linearBlockId() == 1 && linearThreadId() == 5)
                   recurse(1u << 30);
               });
      },
      20);
  EXPECT_EQ(r.exitCode, 1) << "signal " << r.signal << ": " << r.err;
  EXPECT_TRUE(contains(r.err, "stack overflow in rank 1 block 1 thread 5"))
      << r.err;
  EXPECT_TRUE(contains(r.err, "65536-byte stack")) << r.err;
  EXPECT_TRUE(contains(r.err, "replay with TLE_EMU_SEED=1234")) << r.err;
}

TEST(EmuFatal, EveryStackOfABigLaunchIsGuarded) {
  // 16 resident blocks of 1024 threads: more stacks than the emulator used
  // to guard, so the overflow used to run into a neighbour's stack.
  ChildResult r = runChild(
      [] {
        launch(nullptr, 1, options({16, 1, 1}, {1024, 1, 1}, 77),
               [](int, void *) {
                 syncThreads();
                 if (linearBlockId() == 9 && linearThreadId() == 700)
                   recurse(1u << 30);
               });
      },
      60);
  EXPECT_EQ(r.exitCode, 1) << "signal " << r.signal << ": " << r.err;
  EXPECT_TRUE(contains(r.err, "stack overflow in rank 0 block 9 thread 700"))
      << r.err;
}

TEST(EmuFatal, LargerStacksLetADeepKernelFinish) {
  // About 160 KiB deep: past the 64 KiB default, within 1 MiB.
  auto deepLaunch = [](size_t stackBytes) {
    LaunchOptions o = options({1, 1, 1}, {4, 1, 1}, 3);
    o.stackBytes = stackBytes;
    return launch(nullptr, 1, o, [](int, void *) { recurse(150); });
  };
  ChildResult small = runChild([&] { deepLaunch(0); }, 20);
  EXPECT_EQ(small.exitCode, 1) << small.err;
  EXPECT_TRUE(contains(small.err, "stack overflow")) << small.err;
  LaunchResult r = deepLaunch(size_t(1) << 20);
  EXPECT_EQ(r.result, tleSuccess) << r.message;
}

TEST(EmuFatal, WildPointerIsReported) {
  ChildResult r = runChild(
      [] {
        volatile uintptr_t address = 0x10;
        launch(nullptr, 1, options({1, 1, 1}, {8, 1, 1}, 5), [&](int, void *) {
          if (linearThreadId() == 3)
            *reinterpret_cast<volatile int *>(address) = 1;
        });
      },
      20);
  EXPECT_EQ(r.exitCode, 1) << "signal " << r.signal << ": " << r.err;
  EXPECT_TRUE(contains(r.err, "segmentation fault (SIGSEGV) in rank 0 block "
                              "0 thread 3 at address 0x10"))
      << r.err;
  EXPECT_TRUE(contains(r.err, "replay with TLE_EMU_SEED=5")) << r.err;
}

TEST(EmuFatal, FaultOffAFiberReachesThePreviousHandler) {
  // After a launch installed the emulator's handler, a fault in plain host
  // code still kills the process with SIGSEGV (the default action here).
  ChildResult r = runChild(
      [] {
        launch(nullptr, 1, options({1, 1, 1}, {1, 1, 1}, 1),
               [](int, void *) {});
        volatile uintptr_t address = 0x10;
        *reinterpret_cast<volatile int *>(address) = 1;
      },
      20);
  EXPECT_EQ(r.signal, SIGSEGV) << "exit " << r.exitCode << ": " << r.err;
  EXPECT_FALSE(contains(r.err, "tle emulator")) << r.err;
}

TEST(EmuFatal, ABadCallFromAHostThreadSaysWhatFailedBeforeTheEnd) {
  // The device ABI called from the program's own host thread, outside any
  // launch: nothing returns the error record, so the process prints what
  // it holds (the slot out of range, with the call) before it ends.
  ChildResult r = runChild(
      [] {
        tleConfig_t cfg = TLE_CONFIG_INITIALIZER;
        cfg.nBarriers = 8;
        tleComm_t comm = nullptr;
        if (tleCommInitAll(&comm, 1, nullptr, &cfg) != tleSuccess)
          _exit(3);
        void *dc = nullptr;
        tleCommGetDevComm(comm, &dc);
        flagcxIntraBarrierSyncS(dc, tle::kCoopThread, 9999, false,
                                tle::kOrderRelaxed);
      },
      20);
  EXPECT_EQ(r.signal, SIGABRT) << "exit " << r.exitCode << ": " << r.err;
  EXPECT_TRUE(contains(r.err, "slot 9999 out of range")) << r.err;
  EXPECT_TRUE(contains(r.err, "flagcxIntraBarrierSyncS")) << r.err;
  EXPECT_TRUE(contains(r.err, "outside an emulator launch")) << r.err;
}

TEST(EmuFatal, InfiniteLoopIsReportedWithinTwiceTheDeadline) {
  // A spin the emulator cannot see (no hook): the fiber never returns to
  // the scheduler, so only the watchdog thread can end it.
  static constexpr int64_t kDeadlineMs = 500;
  ChildResult r = runChild(
      [] {
        std::atomic<int> flag{0};
        LaunchOptions o = options({2, 1, 1}, {4, 1, 1}, 99);
        o.timeoutMs = kDeadlineMs;
        launch(nullptr, 2, o, [&](int rank, void *) {
          if (rank == 1 && linearBlockId() == 1 && linearThreadId() == 2)
            while (flag.load(std::memory_order_acquire) == 0) {
            }
        });
      },
      20);
  EXPECT_EQ(r.exitCode, 1) << "signal " << r.signal << ", killed " << r.killed
                           << ": " << r.err;
  EXPECT_GE(r.seconds, kDeadlineMs / 1000.0);
  EXPECT_LT(r.seconds, 2 * kDeadlineMs / 1000.0);
  EXPECT_TRUE(contains(r.err, "rank 1 block 1 thread 2 made no progress for "))
      << r.err;
  EXPECT_TRUE(contains(r.err, "an infinite loop or a spin the emulator cannot "
                              "see"))
      << r.err;
  EXPECT_TRUE(contains(r.err, "replay with TLE_EMU_SEED=99")) << r.err;
}

TEST(EmuFatal, NoWatchdogWithoutADeadline) {
  // A fiber busy for 300 ms without a hook is fine when the deadline is 0
  // (wait forever), and ends the process with a 100 ms deadline.
  auto busyLaunch = [](int64_t timeoutMs) {
    return [timeoutMs] {
      LaunchOptions o = options({1, 1, 1}, {1, 1, 1}, 4);
      o.timeoutMs = timeoutMs;
      LaunchResult r = launch(nullptr, 1, o, [](int, void *) {
        auto until =
            std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
        while (std::chrono::steady_clock::now() < until) {
        }
      });
      _exit(r.result == tleSuccess ? 0 : 3);
    };
  };
  ChildResult forever = runChild(busyLaunch(0), 20);
  EXPECT_EQ(forever.exitCode, 0) << forever.err;
  ChildResult short_ = runChild(busyLaunch(100), 20);
  EXPECT_EQ(short_.exitCode, 1) << short_.err;
  EXPECT_TRUE(contains(short_.err, "made no progress")) << short_.err;
}

} // namespace
