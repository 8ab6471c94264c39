//===- AllocFailTest.cpp - Launches whose allocations fail ----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Every allocation a launch makes may fail: the launch's setup, a block's
// start, the race checker's clocks and shadow, the scheduler's lists, and
// the scheduler's own step on a yielding fiber (which the fiber hands back
// to the scheduler's loop). This binary replaces the global operator new
// with one that throws std::bad_alloc at the n-th allocation after a
// switch, and sweeps n over a barrier launch with the race checker on:
// every launch must end with a result (success when the failure fell
// outside it, else an error with a message), never a crash or a hang, and
// a normal launch afterwards must still work. Its own binary: the
// replacement would slow every other test's allocations.
//
//===----------------------------------------------------------------------===//

#include "EmuTestUtil.h"

#include <atomic>
#include <cstdlib>
#include <functional>
#include <new>

namespace {
/// Allocations left before the one that fails; negative: none fails.
std::atomic<long> allocationsLeft{-1};
std::atomic<bool> allocationFailed{false};
} // namespace

void *operator new(std::size_t n) {
  if (allocationsLeft.load(std::memory_order_relaxed) >= 0 &&
      allocationsLeft.fetch_sub(1, std::memory_order_relaxed) == 0) {
    allocationFailed.store(true, std::memory_order_relaxed);
    throw std::bad_alloc();
  }
  if (void *p = std::malloc(n ? n : 1))
    return p;
  throw std::bad_alloc();
}
void operator delete(void *p) noexcept { std::free(p); }
void operator delete(void *p, std::size_t) noexcept { std::free(p); }

using namespace tle;
using namespace tle::emu;
using namespace tle::emutest;

namespace {

/// Two ranks of two blocks of 64 threads, four block-group syncs each.
LaunchResult barrierLaunch(const Ranks &ranks, uint64_t seed) {
  LaunchOptions o = shape({2, 1, 1}, {64, 1, 1});
  o.seed = seed;
  return launch(ranks.comms.data(), ranks.size(), o, [&](int rank, void *) {
    void *dc = ranks.dev(rank);
    for (int round = 0; round < 4; ++round)
      flagcxIntraBarrierSyncS(dc, kCoopBlock, linearBlockId(), false,
                              kOrderAcqRel);
  });
}

/// Two ranks of one block of 64 threads: each puts 1000 bytes into the
/// other's buffer with a signal and waits for the peer's (the signal's
/// value read first: a failed launch leaves it wherever it got), then
/// reads what arrived. The race checker follows the copy, the signal's
/// history and the reads.
LaunchResult putLaunch(const Ranks &ranks, const SymBuffer &src,
                       const SymBuffer &dst, uint64_t seed) {
  LaunchOptions o = shape({1, 1, 1}, {64, 1, 1});
  o.seed = seed;
  return launch(ranks.comms.data(), ranks.size(), o, [&](int rank, void *dc) {
    uint64_t base = flagcxDevReadSignal(dc, 0, 64, 0, kOrderRelaxed);
    flagcxIntraBarrierSyncS(dc, kCoopBlock, 0, false, kOrderAcqRel);
    flagcxDevPut_RSigInc(dc, dst.handle(rank), 0, src.handle(rank), 0, 1000,
                         kTeamIntra, 1 - rank, 0, kCoopBlock, kScopeSystem,
                         kOrderRelaxed, 0);
    flagcxDevWaitSignal(dc, 0, base + 1, 64, 0, kCoopBlock, kOrderAcquire);
    auto *got = static_cast<const uint8_t *>(
        flagcxGetLocalPointerS(dst.handle(rank), 0));
    if (linearThreadId() == 0) {
      tleEmuAccess(got, 1000, kAccessLoad, kOrderRelaxed, "the read");
      (void)got[999];
    }
    flagcxIntraBarrierSyncS(dc, kCoopBlock, 0, false, kOrderAcqRel);
  });
}

/// Fails allocation n of `run` for n = 0, 1, ... (then every 37th) until a
/// launch makes fewer; each must end cleanly and leave the communicators
/// serving `run` again.
void sweep(const std::vector<tleComm_t> &comms,
           const std::function<LaunchResult(uint64_t)> &run) {
  int failedLaunches = 0, errors = 0;
  bool reachedTheEnd = false;
  for (long n = 0; n < 20000 && !reachedTheEnd; n += n < 400 ? 1 : 37) {
    allocationFailed.store(false);
    allocationsLeft.store(n);
    LaunchResult r = run(1 + n % 7);
    allocationsLeft.store(-1);
    if (!allocationFailed.load()) {
      EXPECT_EQ(r.result, tleSuccess) << "n " << n << ": " << r.message;
      reachedTheEnd = true;
      break;
    }
    ++failedLaunches;
    // A failure inside the launch is an error that says so (the kernel
    // allocates nothing: every failure is the emulator's); one in what
    // tolerates it (a report's formatting, an optional trace) may still
    // let it succeed.
    if (r.result != tleSuccess) {
      ++errors;
      EXPECT_TRUE(r.result == tleSystemError || r.result == tleLaunchFailure)
          << "n " << n << ": " << r.result;
      EXPECT_NE(r.message.find("out of memory"), std::string::npos)
          << "n " << n << ": " << r.message;
    }
    // The communicators stay usable after every failure.
    tleErrorInfo stale;
    for (tleComm_t c : comms)
      tleCommGetError(c, &stale);
    LaunchResult again = run(3);
    ASSERT_EQ(again.result, tleSuccess)
        << "after a failure at allocation " << n << ": " << again.message;
  }
  EXPECT_TRUE(reachedTheEnd) << "the sweep did not pass the launch's last "
                                "allocation";
  EXPECT_GT(failedLaunches, 100);
  EXPECT_GT(errors, 100);
}

TEST(EmuAllocFail, EveryFailedAllocationOfABarrierLaunchEndsItCleanly) {
  Ranks ranks(2);
  ASSERT_EQ(ranks.status, tleSuccess);
  sweep(ranks.comms, [&](uint64_t seed) { return barrierLaunch(ranks, seed); });
}

TEST(EmuAllocFail, EveryFailedAllocationOfAPutLaunchEndsItCleanly) {
  Ranks ranks(2, 64, -1, 64);
  ASSERT_EQ(ranks.status, tleSuccess);
  SymBuffer src(ranks, 1000), dst(ranks, 1000);
  ASSERT_EQ(src.status, tleSuccess);
  ASSERT_EQ(dst.status, tleSuccess);
  sweep(ranks.comms,
        [&](uint64_t seed) { return putLaunch(ranks, src, dst, seed); });
}

/// Two simulated nodes of two ranks: WORLD barriers cross the emulator's
/// network, whose messages are in flight when an allocation fails.
TEST(EmuAllocFail, EveryFailedAllocationOfANodesLaunchEndsItCleanly) {
  tleConfig_t config = TLE_CONFIG_INITIALIZER;
  config.ranksPerNode = 2;
  std::vector<tleComm_t> comms(4);
  ASSERT_EQ(tleCommInitAll(comms.data(), 4, nullptr, &config), tleSuccess);
  sweep(comms, [&](uint64_t seed) {
    LaunchOptions o = shape({1, 1, 1}, {64, 1, 1});
    o.seed = seed;
    return launch(comms.data(), 4, o, [](int, void *dc) {
      for (int round = 0; round < 3; ++round)
        flagcxDevBarrierSync(dc, kTeamWorld, 0, 0, kCoopBlock, kOrderAcqRel,
                             kScopeSystem);
    });
  });
  for (tleComm_t c : comms)
    tleCommDestroy(c);
}

} // namespace
