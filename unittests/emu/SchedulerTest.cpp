//===- SchedulerTest.cpp - The emulator's scheduler on its own ------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Tests of the fiber scheduler that need no communicator and no device
// library: ids, block and warp sync, residency, determinism of the schedule,
// deadlock reports for hand-written spin waits and syncs, hand-written flags
// polled through spin hints and the no-progress deadline, exceptions and
// aborts, launch limits (stack size, threads alive at once, seeds), the C
// launch entry points and the trace.
//
//===----------------------------------------------------------------------===//

#include "tle/emu.h"

#include <gtest/gtest.h>

#include <cfenv>
#include <chrono>
#include <cstdlib>
#include <set>
#include <tuple>
#include <vector>

using namespace tle::emu;

namespace {

LaunchOptions options(Dim3 grid, Dim3 block, uint64_t seed) {
  LaunchOptions o;
  o.grid = grid;
  o.block = block;
  o.seed = seed;
  return o;
}

/// Spins through the emulator until `cond` holds.
template <typename Cond> void spinUntil(Cond cond, tle::WaitInfo info) {
  while (!cond())
    tleEmuSpinWait(&info);
}

TEST(EmuScheduler, IdsCoverTheGrid) {
  std::set<std::tuple<int, uint32_t, uint32_t>> seen;
  bool dimsOk = true;
  LaunchResult r =
      launch(nullptr, 2, options({3, 2, 1}, {4, 2, 2}, 1),
             [&](int rank, void *devComm) {
               Dim3 bd = blockDim(), gd = gridDim();
               dimsOk &= bd.x == 4 && bd.y == 2 && bd.z == 2 && gd.x == 3 &&
                         gd.y == 2 && gd.z == 1 && devComm == nullptr;
               Dim3 t = threadIdx(), b = blockIdx();
               dimsOk &= t.x < 4 && t.y < 2 && t.z < 2 && b.x < 3 && b.y < 2 &&
                         b.z == 0;
               seen.insert({rank, linearBlockId(), linearThreadId()});
             });
  ASSERT_EQ(r.result, tleSuccess) << r.message;
  EXPECT_TRUE(dimsOk);
  EXPECT_EQ(seen.size(), 2u * 6 * 16);
  EXPECT_EQ(r.seed, 1u);
}

/// A kernel whose interleaving shows in what it records: threads of two
/// ranks hand tokens to each other through spin waits and syncs.
std::vector<int> interleavedKernelOrder(uint64_t seed, LaunchResult &r) {
  std::vector<int> order;
  int tokens[2] = {0, 0};
  LaunchOptions o = options({2, 1, 1}, {8, 1, 1}, seed);
  o.trace = true;
  r = launch(nullptr, 2, o, [&](int rank, void *) {
    int me = rank * 1000 + int(linearBlockId()) * 100 + int(linearThreadId());
    order.push_back(me);
    tleEmuBarrierEvent(nullptr, tle::kBarrierWait, tle::kCoopThread,
                       linearBlockId(), tle::kOrderRelaxed, tle::kTraceBegin);
    ++tokens[rank];
    syncThreads();
    order.push_back(me);
    spinUntil([&] { return tokens[1 - rank] >= 8; },
              {nullptr, rank, 0, 0, {}, "token wait"});
    tleEmuBarrierEvent(nullptr, tle::kBarrierWait, tle::kCoopThread,
                       linearBlockId(), tle::kOrderRelaxed, tle::kTraceEnd);
    order.push_back(me);
  });
  return order;
}

TEST(EmuScheduler, SameSeedSameSchedule) {
  LaunchResult a, b;
  std::vector<int> orderA = interleavedKernelOrder(42, a);
  std::string traceA = lastTraceJson();
  std::vector<int> orderB = interleavedKernelOrder(42, b);
  std::string traceB = lastTraceJson();
  ASSERT_EQ(a.result, tleSuccess) << a.message;
  ASSERT_EQ(b.result, tleSuccess) << b.message;
  EXPECT_EQ(orderA, orderB);
  EXPECT_EQ(traceA, traceB);
  EXPECT_EQ(a.scheduleHash, b.scheduleHash);
  EXPECT_EQ(a.steps, b.steps);
}

TEST(EmuScheduler, DifferentSeedsDifferentSchedules) {
  std::set<std::vector<int>> orders;
  std::set<uint64_t> hashes;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    LaunchResult r;
    orders.insert(interleavedKernelOrder(seed, r));
    ASSERT_EQ(r.result, tleSuccess) << r.message;
    hashes.insert(r.scheduleHash);
  }
  EXPECT_EQ(orders.size(), 8u);
  EXPECT_EQ(hashes.size(), 8u);
}

TEST(EmuScheduler, TraceIsChromeJson) {
  LaunchResult r;
  interleavedKernelOrder(7, r);
  std::string json = lastTraceJson();
  // The clock is declared (scheduler steps, not nanoseconds), processes and
  // threads are named, and each event says what it is.
  EXPECT_EQ(
      json.rfind("{\"otherData\":{\"clock\":\"emulator scheduler steps", 0), 0u)
      << json;
  EXPECT_NE(json.find("{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,"
                      "\"args\":{\"name\":\"rank 1\"}}"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,"
                      "\"tid\":1025,\"args\":{\"name\":\"block 1 thread 1\"}"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"name\":\"wait\",\"cat\":\"barrier\",\"ph\":\"B\","
                      "\"pid\":1"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"ph\":\"E\""), std::string::npos);
  EXPECT_EQ(json.find("displayTimeUnit"), std::string::npos);
}

TEST(EmuScheduler, BlockSyncSeparatesPhases) {
  constexpr int kPhases = 4;
  constexpr uint32_t kThreads = 96;
  int arrived[2][kPhases] = {};
  int violations = 0;
  LaunchResult r = launch(nullptr, 1, options({2, 1, 1}, {kThreads, 1, 1}, 3),
                          [&](int, void *) {
                            uint32_t b = linearBlockId();
                            for (int p = 0; p < kPhases; ++p) {
                              ++arrived[b][p];
                              syncThreads();
                              violations += arrived[b][p] != int(kThreads);
                            }
                          });
  ASSERT_EQ(r.result, tleSuccess) << r.message;
  EXPECT_EQ(violations, 0);
}

// A switch keeps each fiber's registers and floating-point control words
// (emu/Fiber.h): a thread that changes its rounding mode changes nobody
// else's, however the threads interleave, and values in callee-saved
// registers live across syncs.
TEST(EmuScheduler, EachThreadKeepsItsRoundingModeAndRegisters) {
  constexpr uint32_t kThreads = 64;
  int wrongMode = 0, wrongValue = 0;
  for (uint64_t seed : {1, 2, 3}) {
    LaunchResult r =
        launch(nullptr, 1, options({2, 1, 1}, {kThreads, 1, 1}, seed),
               [&](int, void *) {
                 uint32_t t = linearThreadId();
                 int mine = t % 2 ? FE_UPWARD : FE_TONEAREST;
                 std::fesetround(mine);
                 volatile double third = 1.0;
                 double sum = 0;
                 for (int p = 0; p < 8; ++p) {
                   sum += third / 3.0 + t;
                   syncThreads();
                   wrongMode += std::fegetround() != mine;
                 }
                 // 1/3 rounds up under FE_UPWARD: the sums differ in the last
                 // bit.
                 double expect = 0;
                 for (int p = 0; p < 8; ++p)
                   expect += third / 3.0 + t;
                 wrongValue += sum != expect;
                 std::fesetround(FE_TONEAREST);
               });
    ASSERT_EQ(r.result, tleSuccess) << r.message;
  }
  EXPECT_EQ(wrongMode, 0);
  EXPECT_EQ(wrongValue, 0);
  EXPECT_EQ(std::fegetround(), FE_TONEAREST);
}

TEST(EmuScheduler, WarpSyncCoversTheTail) {
  // 40 threads: warp 0 has 32 lanes, warp 1 the 8 tail lanes.
  int arrived[2][3] = {};
  int violations = 0;
  LaunchResult r =
      launch(nullptr, 1, options({1, 1, 1}, {40, 1, 1}, 5), [&](int, void *) {
        uint32_t w = linearThreadId() / 32;
        int lanes = w == 0 ? 32 : 8;
        for (int p = 0; p < 3; ++p) {
          ++arrived[w][p];
          tleEmuSyncWarp();
          violations += arrived[w][p] != lanes;
        }
      });
  ASSERT_EQ(r.result, tleSuccess) << r.message;
  EXPECT_EQ(violations, 0);
}

TEST(EmuScheduler, ExitedThreadsLeaveBlockSync) {
  int after = 0;
  LaunchResult r =
      launch(nullptr, 1, options({1, 1, 1}, {64, 1, 1}, 9), [&](int, void *) {
        if (linearThreadId() % 2)
          return;
        syncThreads();
        ++after;
      });
  ASSERT_EQ(r.result, tleSuccess) << r.message;
  EXPECT_EQ(after, 32);
}

/// tleEmuSyncBlockTwice is two block syncs: a thread that takes both in
/// one step passes neither before every other thread reached it, and the
/// others may work between them. Every third thread takes the pair; the
/// others count in between, and everybody checks both counts after.
TEST(EmuScheduler, TwoSyncsInOneStepAreTwoSyncs) {
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    constexpr uint32_t kThreads = 48;
    constexpr int kRounds = 3;
    int first[kRounds] = {}, between[kRounds] = {};
    int violations = 0;
    LaunchResult r =
        launch(nullptr, 1, options({1, 1, 1}, {kThreads, 1, 1}, seed),
               [&](int, void *) {
                 bool pair = linearThreadId() % 3 == 0;
                 int workers = int(kThreads - kThreads / 3);
                 for (int p = 0; p < kRounds; ++p) {
                   ++first[p];
                   if (pair) {
                     tleEmuSyncBlockTwice();
                   } else {
                     syncThreads();
                     violations += first[p] != int(kThreads);
                     ++between[p];
                     syncThreads();
                   }
                   violations += first[p] != int(kThreads);
                   violations += between[p] != workers;
                 }
               });
    ASSERT_EQ(r.result, tleSuccess) << r.message;
    EXPECT_EQ(violations, 0) << "seed " << seed;
  }
}

/// A block whose threads all take the pair passes both at once; a thread
/// that exits between the two syncs of the others releases the second.
TEST(EmuScheduler, TwoSyncsInOneStepMeetExitsAndThemselves) {
  int after = 0;
  LaunchResult r =
      launch(nullptr, 1, options({1, 1, 1}, {64, 1, 1}, 4), [&](int, void *) {
        tleEmuSyncBlockTwice();
        tleEmuSyncBlockTwice();
        if (linearThreadId() == 5) {
          syncThreads();
          return; // leaves before the others' second sync
        }
        tleEmuSyncBlockTwice();
        ++after;
      });
  ASSERT_EQ(r.result, tleSuccess) << r.message;
  EXPECT_EQ(after, 63);
}

/// A thread left waiting in the second sync of its pair is reported as a
/// thread in a block sync, with the count of that sync.
TEST(EmuScheduler, TwoSyncsInOneStepDeadlockIsReported) {
  LaunchResult r =
      launch(nullptr, 1, options({1, 1, 1}, {2, 1, 1}, 5), [&](int, void *) {
        if (linearThreadId() == 0) {
          syncThreads();
          spinUntil([] { return false; }, {nullptr, 0, 1, 2, {}, "flag wait"});
        } else {
          tleEmuSyncBlockTwice();
        }
      });
  ASSERT_EQ(r.result, tleDeadlock);
  EXPECT_NE(r.message.find("rank 0 block 0 thread 1 waits in block sync (1 of "
                           "2 live threads arrived)"),
            std::string::npos)
      << r.message;
}

TEST(EmuScheduler, ResidentBlocksAreBoundedAndStartInOrder) {
  int resident = 0, maxResident = 0;
  std::vector<uint32_t> started;
  LaunchOptions o = options({20, 1, 1}, {4, 1, 1}, 11);
  o.maxResidentBlocks = 4;
  LaunchResult r = launch(nullptr, 1, o, [&](int, void *) {
    if (linearThreadId() == 0) {
      ++resident;
      started.push_back(linearBlockId());
    }
    maxResident = std::max(maxResident, resident);
    syncThreads();
    syncThreads();
    if (linearThreadId() == 0)
      --resident;
  });
  ASSERT_EQ(r.result, tleSuccess) << r.message;
  EXPECT_EQ(maxResident, 4);
  ASSERT_EQ(started.size(), 20u);
  // Blocks become resident in order, as on a GPU.
  for (uint32_t i = 0; i < 4; ++i)
    EXPECT_LT(started[i], 4u);
  for (uint32_t i = 4; i < 20; ++i)
    EXPECT_GE(started[i], 4u);
}

TEST(EmuScheduler, CooperativeLaunchNeedsResidency) {
  LaunchOptions o = options({32, 1, 1}, {32, 1, 1}, 1);
  o.cooperative = true;
  o.maxResidentBlocks = 16;
  bool ran = false;
  LaunchResult r = launch(nullptr, 1, o, [&](int, void *) { ran = true; });
  EXPECT_EQ(r.result, tleInvalidArgument);
  EXPECT_NE(r.message.find("co-resident"), std::string::npos) << r.message;
  EXPECT_FALSE(ran);
  o.maxResidentBlocks = 32;
  r = launch(nullptr, 1, o, [&](int, void *) { ran = true; });
  EXPECT_EQ(r.result, tleSuccess) << r.message;
  EXPECT_TRUE(ran);
}

TEST(EmuScheduler, SpinDeadlockIsReportedAtOnce) {
  // Rank 0's threads wait for a flag rank 1 never sets.
  int flag = 0;
  LaunchResult r = launch(
      nullptr, 2, options({2, 1, 1}, {64, 1, 1}, 77), [&](int rank, void *) {
        if (rank == 1)
          return;
        spinUntil([&] { return flag != 0; },
                  {nullptr, 0, linearBlockId() + 5, 7, {{0x2}}, "test wait"});
      });
  ASSERT_EQ(r.result, tleDeadlock);
  EXPECT_NE(r.message.find("rank 0 block 0 threads 0-63 wait in test wait on "
                           "slot 5 for epoch 7; missing peers: 1"),
            std::string::npos)
      << r.message;
  EXPECT_NE(r.message.find("rank 0 block 1 threads 0-63 wait in test wait on "
                           "slot 6"),
            std::string::npos)
      << r.message;
  EXPECT_NE(r.message.find("replay with TLE_EMU_SEED=77"), std::string::npos);
  EXPECT_EQ(r.error.result, tleDeadlock);
  EXPECT_EQ(r.error.rank, 0);
  EXPECT_EQ(r.error.slot, 5u);
  EXPECT_EQ(r.error.epoch, 7u);
  EXPECT_EQ(r.error.missingMask, 0x2u);
  EXPECT_EQ(std::string(tleGetLastErrorDetail()), r.message);
}

TEST(EmuScheduler, SyncDeadlockIsReported) {
  // Thread 0 waits for a flag that thread 1 sets only after a block sync
  // that thread 0 never reaches.
  int flag = 0;
  LaunchResult r =
      launch(nullptr, 1, options({1, 1, 1}, {2, 1, 1}, 5), [&](int, void *) {
        if (linearThreadId() == 0) {
          spinUntil([&] { return flag != 0; },
                    {nullptr, 0, 1, 2, {}, "flag wait"});
          syncThreads();
        } else {
          syncThreads();
          flag = 1;
        }
      });
  ASSERT_EQ(r.result, tleDeadlock);
  EXPECT_NE(r.message.find("rank 0 block 0 thread 0 waits in flag wait"),
            std::string::npos)
      << r.message;
  EXPECT_NE(r.message.find("rank 0 block 0 thread 1 waits in block sync (1 of "
                           "2 live threads arrived)"),
            std::string::npos)
      << r.message;
}

TEST(EmuScheduler, ResidencyDeadlockNamesUnstartedBlocks) {
  // Block 0 waits for the last block, which cannot start while block 0 holds
  // the only residency slot: a kernel that assumes co-residency.
  int lastStarted = 0;
  LaunchOptions o = options({3, 1, 1}, {1, 1, 1}, 2);
  o.maxResidentBlocks = 1;
  LaunchResult r = launch(nullptr, 1, o, [&](int, void *) {
    if (linearBlockId() == 2)
      lastStarted = 1;
    else
      spinUntil([&] { return lastStarted != 0; },
                {nullptr, 0, 0, 0, {}, "grid wait"});
  });
  ASSERT_EQ(r.result, tleDeadlock);
  EXPECT_NE(r.message.find("rank 0 blocks 1-2 not started"), std::string::npos)
      << r.message;
}

TEST(EmuScheduler, SpinWaitsCompleteUnderManySeeds) {
  // A hand-written two-rank flag barrier, 50 rounds, every seed completes.
  for (uint64_t seed = 100; seed < 120; ++seed) {
    uint32_t counter[2] = {0, 0};
    int violations = 0;
    LaunchResult r = launch(
        nullptr, 2, options({1, 1, 1}, {1, 1, 1}, seed), [&](int rank, void *) {
          for (uint32_t round = 1; round <= 50; ++round) {
            counter[rank] = round;
            spinUntil([&] { return counter[1 - rank] >= round; },
                      {nullptr, rank, 0, round, {{1u << (1 - rank)}}, "flag"});
            violations += counter[1 - rank] > round + 1;
          }
        });
    ASSERT_EQ(r.result, tleSuccess) << r.message;
    EXPECT_EQ(violations, 0);
  }
}

TEST(EmuScheduler, KernelExceptionFailsTheLaunch) {
  LaunchResult r = launch(
      nullptr, 2, options({2, 1, 1}, {8, 1, 1}, 4), [&](int rank, void *) {
        if (rank == 1 && linearBlockId() == 1 && linearThreadId() == 3)
          throw std::runtime_error("boom");
        syncThreads();
      });
  EXPECT_EQ(r.result, tleLaunchFailure);
  EXPECT_NE(r.message.find("rank 1 block 1 thread 3: kernel threw: boom"),
            std::string::npos)
      << r.message;
}

TEST(EmuScheduler, AbortAbandonsTheOtherThreads) {
  // The aborting thread's peers are suspended in syncs and spins; the launch
  // ends anyway and a new launch runs normally (stacks were reclaimed).
  for (int i = 0; i < 3; ++i) {
    LaunchResult r =
        launch(nullptr, 2, options({4, 1, 1}, {64, 1, 1}, 8 + i),
               [&](int rank, void *) {
                 syncThreads();
                 if (rank == 0 && linearBlockId() == 2 && linearThreadId() == 5)
                   tleEmuAbortLaunch();
                 syncThreads();
               });
    // With no record to read, an abort means the device library could not
    // trust its comm pointer.
    EXPECT_EQ(r.result, tleInvalidComm);
    EXPECT_NE(r.message.find("rank 0 block 2 thread 5 aborted the launch "
                             "without an error record"),
              std::string::npos)
        << r.message;
  }
  int done = 0;
  LaunchResult ok = launch(nullptr, 1, options({1, 1, 1}, {32, 1, 1}, 1),
                           [&](int, void *) { ++done; });
  EXPECT_EQ(ok.result, tleSuccess);
  EXPECT_EQ(done, 32);
}

TEST(EmuScheduler, BlockScratchIsZeroedAndPerBlock) {
  std::set<uint32_t *> pointers;
  int violations = 0;
  LaunchOptions o = options({4, 1, 1}, {16, 1, 1}, 6);
  o.maxResidentBlocks = 4;
  LaunchResult r = launch(nullptr, 2, o, [&](int, void *) {
    uint32_t *s = tleEmuBlockScratch(3, 8);
    if (linearThreadId() == 0) {
      pointers.insert(s);
      for (int i = 0; i < 8; ++i)
        violations += s[i] != 0;
    }
    syncThreads();
    ++s[0];
    syncThreads();
    violations += s[0] != 16;
    violations += tleEmuBlockScratch(3, 4) != s;
  });
  ASSERT_EQ(r.result, tleSuccess) << r.message;
  EXPECT_EQ(violations, 0);
  EXPECT_EQ(pointers.size(), 8u);
}

TEST(EmuScheduler, NestedLaunchIsRefused) {
  tleResult_t inner = tleSuccess;
  LaunchResult r =
      launch(nullptr, 1, options({1, 1, 1}, {1, 1, 1}, 1), [&](int, void *) {
        inner = launch(nullptr, 1, LaunchOptions{}, [](int, void *) {}).result;
      });
  EXPECT_EQ(r.result, tleSuccess);
  EXPECT_EQ(inner, tleInvalidArgument);
}

TEST(EmuScheduler, SeedComesFromTheEnvironment) {
  setenv("TLE_EMU_SEED", "0x1234", 1);
  LaunchOptions o;
  LaunchResult r = launch(nullptr, 1, o, [](int, void *) {});
  EXPECT_EQ(r.seed, 0x1234u);
  EXPECT_TRUE(r.started);
  setenv("TLE_EMU_SEED", "18446744073709551615", 1);
  EXPECT_EQ(launch(nullptr, 1, o, [](int, void *) {}).seed, UINT64_MAX);
  // Anything but decimal or 0x hex digits that fit in 64 bits is refused
  // before a thread runs: there is no schedule to replay.
  for (const char *bad : {"soon", "-1", " 5", "+5", "5 ", "0x", "1e3",
                          "18446744073709551616", "0x10000000000000000"}) {
    setenv("TLE_EMU_SEED", bad, 1);
    bool ran = false;
    r = launch(nullptr, 1, o, [&](int, void *) { ran = true; });
    EXPECT_EQ(r.result, tleInvalidArgument) << bad;
    EXPECT_FALSE(r.started) << bad;
    EXPECT_FALSE(ran) << bad;
    EXPECT_NE(r.message.find("is not a seed"), std::string::npos) << r.message;
    EXPECT_EQ(r.message.find("replay"), std::string::npos) << r.message;
    // Tools check it up front with the same rule.
    std::optional<uint64_t> seed;
    std::string why;
    EXPECT_EQ(environmentSeed(seed, why), tleInvalidArgument) << bad;
    EXPECT_EQ(why, r.message);
  }
  unsetenv("TLE_EMU_SEED");
  std::optional<uint64_t> unset = 1;
  std::string why;
  EXPECT_EQ(environmentSeed(unset, why), tleSuccess);
  EXPECT_FALSE(unset);
  LaunchResult a = launch(nullptr, 1, o, [](int, void *) {});
  LaunchResult b = launch(nullptr, 1, o, [](int, void *) {});
  EXPECT_NE(a.seed, b.seed);
}

void cKernel(void **args) {
  int *counts = *static_cast<int **>(args[0]);
  int scale = *static_cast<int *>(args[1]);
  counts[tleEmuBlockId(0)] += scale;
  tleEmuSyncBlock();
}

TEST(EmuScheduler, CLaunchPassesArgsPerRank) {
  int counts0[2] = {}, counts1[2] = {};
  int *p0 = counts0, *p1 = counts1;
  int scale0 = 1, scale1 = 10;
  void *args0[] = {&p0, &scale0};
  void *args1[] = {&p1, &scale1};
  void **const argsPerRank[] = {args0, args1};
  uint32_t grid[3] = {2, 1, 1}, block[3] = {3, 1, 1};
  tleErrorInfo info;
  EXPECT_EQ(
      tleEmuLaunch(nullptr, 2, grid, block, 5, 0, cKernel, argsPerRank, &info),
      tleSuccess);
  EXPECT_EQ(info.result, tleSuccess);
  EXPECT_EQ(counts0[0], 3);
  EXPECT_EQ(counts0[1], 3);
  EXPECT_EQ(counts1[0], 30);
  EXPECT_EQ(counts1[1], 30);
  uint32_t bad[3] = {0, 1, 1};
  EXPECT_EQ(
      tleEmuLaunch(nullptr, 2, bad, block, 5, 0, cKernel, argsPerRank, &info),
      tleInvalidArgument);
  EXPECT_EQ(info.result, tleInvalidArgument);
  EXPECT_NE(std::string(info.message).find("dims"), std::string::npos);
}

TEST(EmuScheduler, HooksOffAFiberActAsOneThread) {
  EXPECT_EQ(tleEmuThreadId(0), 0u);
  EXPECT_EQ(tleEmuBlockDim(1), 1u);
  tleEmuSyncBlock();
  tleEmuSpinWait(nullptr);
  uint64_t a = tleEmuNowNs(), b = tleEmuNowNs();
  EXPECT_LE(a, b);
}

/// Polls `flag` the way a compiled kernel does: an acquire load followed
/// by the spin hint.
uint32_t pollFlag(const uint32_t *flag) {
  uint32_t v = __atomic_load_n(flag, __ATOMIC_ACQUIRE);
  tleEmuSpinHint(flag, v);
  return v;
}

TEST(EmuScheduler, HandWrittenFlagWithSpinHintsCompletes) {
  // Rank 0 waits for a flag that rank 1 sets with a plain store after a
  // block sync, then rank 1 waits for rank 0's acknowledgement: the
  // reproducer of a spin that never yielded. Every seed completes.
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    uint32_t flag = 0, ack = 0;
    int seen = 0;
    LaunchResult r = launch(nullptr, 2, options({1, 1, 1}, {4, 1, 1}, seed),
                            [&](int rank, void *) {
                              if (rank == 0 && linearThreadId() == 0) {
                                while (pollFlag(&flag) == 0) {
                                }
                                seen = 1;
                                __atomic_store_n(&ack, 1, __ATOMIC_RELEASE);
                              } else if (rank == 1) {
                                syncThreads();
                                if (linearThreadId() == 3) {
                                  __atomic_store_n(&flag, 1, __ATOMIC_RELEASE);
                                  while (pollFlag(&ack) == 0) {
                                  }
                                }
                              }
                            });
    ASSERT_EQ(r.result, tleSuccess) << r.message;
    EXPECT_EQ(seen, 1);
  }
}

TEST(EmuScheduler, HintedLoopThatStoresIsNoDeadlock) {
  // One thread alone, loading and storing between hints: the scheduler
  // cannot see its stores, so it must keep running it rather than report
  // a deadlock while other threads wait for it in a block sync.
  uint32_t words[256] = {};
  LaunchResult r =
      launch(nullptr, 1, options({1, 1, 1}, {8, 1, 1}, 5), [&](int, void *) {
        if (linearThreadId() == 0)
          for (uint32_t i = 1; i < 256; ++i)
            __atomic_store_n(&words[i], pollFlag(&words[i - 1]) + 1,
                             __ATOMIC_RELAXED);
        syncThreads();
      });
  ASSERT_EQ(r.result, tleSuccess) << r.message;
  EXPECT_EQ(words[255], 255u);
}

TEST(EmuScheduler, UnsetFlagEndsWithTimeoutAfterTheDeadline) {
  uint32_t flag = 0;
  LaunchOptions o = options({1, 1, 1}, {2, 1, 1}, 31);
  o.timeoutMs = 200;
  auto start = std::chrono::steady_clock::now();
  LaunchResult r = launch(nullptr, 2, o, [&](int rank, void *) {
    if (rank == 0)
      while (pollFlag(&flag) == 0) {
      }
  });
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  ASSERT_EQ(r.result, tleTimeout) << r.message;
  EXPECT_GE(seconds, 0.2);
  EXPECT_LT(seconds, 0.4);
  EXPECT_NE(r.message.find("no progress for 200 ms"), std::string::npos)
      << r.message;
  EXPECT_NE(r.message.find("rank 0 block 0 threads 0-1 poll 0x"),
            std::string::npos)
      << r.message;
  EXPECT_NE(r.message.find(" (last value 0)"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("replay with TLE_EMU_SEED=31"), std::string::npos);
  EXPECT_EQ(r.error.result, tleTimeout);
  EXPECT_EQ(r.error.rank, 0);
  EXPECT_TRUE(r.started);
}

TEST(EmuScheduler, LivelockOfPollsEndsWithTimeout) {
  // Two threads bump each other's counters forever: values change, but no
  // thread ever leaves its loop. The deadline still ends it.
  uint32_t counter[2] = {0, 0};
  LaunchOptions o = options({1, 1, 1}, {1, 1, 1}, 8);
  o.timeoutMs = 100;
  LaunchResult r = launch(nullptr, 2, o, [&](int rank, void *) {
    for (;;)
      __atomic_store_n(&counter[rank], pollFlag(&counter[1 - rank]) + 1,
                       __ATOMIC_RELEASE);
  });
  EXPECT_EQ(r.result, tleTimeout) << r.message;
  EXPECT_GT(counter[0] + counter[1], 0u);
}

TEST(EmuScheduler, StackBytesIsValidated) {
  for (size_t bad : {size_t(1000), size_t(8) << 10, (size_t(16) << 10) + 1,
                     size_t(128) << 20}) {
    LaunchOptions o = options({1, 1, 1}, {1, 1, 1}, 1);
    o.stackBytes = bad;
    bool ran = false;
    LaunchResult r = launch(nullptr, 1, o, [&](int, void *) { ran = true; });
    EXPECT_EQ(r.result, tleInvalidArgument) << bad;
    EXPECT_NE(r.message.find("stackBytes " + std::to_string(bad)),
              std::string::npos)
        << r.message;
    EXPECT_FALSE(ran);
  }
  LaunchOptions o = options({1, 1, 1}, {1, 1, 1}, 1);
  o.stackBytes = kMinStackBytes;
  EXPECT_EQ(launch(nullptr, 1, o, [](int, void *) {}).result, tleSuccess);
}

TEST(EmuScheduler, DimsWhoseProductWrapsAreRefused) {
  // 2^22 x 2^22 x 2^20 threads is 2^64: a 64-bit product wraps to 0.
  LaunchOptions o = options({1, 1, 1}, {1u << 22, 1u << 22, 1u << 20}, 1);
  bool ran = false;
  LaunchResult r = launch(nullptr, 1, o, [&](int, void *) { ran = true; });
  EXPECT_EQ(r.result, tleInvalidArgument);
  EXPECT_NE(r.message.find("a block of 4194304 x 4194304 x 1048576 threads "
                           "exceeds 1024"),
            std::string::npos)
      << r.message;
  o = options({1u << 22, 1u << 22, 1u << 20}, {1, 1, 1}, 1);
  r = launch(nullptr, 1, o, [&](int, void *) { ran = true; });
  EXPECT_EQ(r.result, tleInvalidArgument);
  EXPECT_NE(r.message.find("more than 2^32 blocks"), std::string::npos)
      << r.message;
  EXPECT_FALSE(ran);
}

TEST(EmuScheduler, LiveThreadsAreBounded) {
  // The default residency shrinks for big blocks: 8 ranks of 1024-thread
  // blocks keep 3 resident blocks per rank.
  LaunchFootprint f;
  std::string why;
  LaunchOptions o = options({64, 1, 1}, {1024, 1, 1}, 1);
  ASSERT_EQ(planLaunch(nullptr, 8, o, f, why), tleSuccess) << why;
  EXPECT_EQ(f.residentBlocks, 3u);
  EXPECT_EQ(f.liveThreads, 8u * 3 * 1024);
  EXPECT_LE(f.liveThreads, kMaxLiveThreads);
  EXPECT_GT(f.bytes, f.liveThreads * 4096);
  // Small blocks keep the GPU-like default.
  ASSERT_EQ(planLaunch(nullptr, 2, options({64, 1, 1}, {64, 1, 1}, 1), f, why),
            tleSuccess);
  EXPECT_EQ(f.residentBlocks, kDefaultResidentBlocks);
  // An explicit residency that does not fit is refused.
  o.maxResidentBlocks = 16;
  EXPECT_EQ(planLaunch(nullptr, 8, o, f, why), tleInvalidArgument);
  EXPECT_NE(why.find("keeps 131072 threads alive at once (8 ranks x 16 "
                     "resident blocks x 1024 threads"),
            std::string::npos)
      << why;
}

TEST(EmuScheduler, HugeCooperativeLaunchIsRefusedBeforeItStarts) {
  // The launch of the report: 8 ranks x 4096 blocks x 1024 threads, all
  // resident, would need over 200 GiB.
  LaunchOptions o = options({4096, 1, 1}, {1024, 1, 1}, 1);
  o.cooperative = true;
  o.maxResidentBlocks = 4096;
  bool ran = false;
  auto start = std::chrono::steady_clock::now();
  LaunchResult r = launch(nullptr, 8, o, [&](int, void *) { ran = true; });
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  EXPECT_EQ(r.result, tleInvalidArgument);
  EXPECT_FALSE(ran);
  EXPECT_FALSE(r.started);
  EXPECT_LT(seconds, 1.0);
  EXPECT_NE(r.message.find("33554432 threads alive at once"), std::string::npos)
      << r.message;
  EXPECT_NE(r.message.find(" GiB"), std::string::npos) << r.message;
}

TEST(EmuScheduler, TraceEventsCarryTheLaunch) {
  LaunchResult r;
  interleavedKernelOrder(7, r);
  std::string events = lastTraceEvents(3, 1000);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.front(), '{');
  EXPECT_NE(events.find("\"launch\":3}"), std::string::npos) << events;
  // Every ts is shifted: none is below the offset.
  for (size_t at = events.find("\"ts\":"); at != std::string::npos;
       at = events.find("\"ts\":", at + 1))
    EXPECT_GE(std::stoull(events.substr(at + 5)), 1000u);
  EXPECT_EQ(lastTraceJson().find("\"launch\""), std::string::npos);
}

TEST(EmuScheduler, CLaunchWithConfig) {
  int counts[2] = {};
  int *p = counts;
  int scale = 2;
  void *args[] = {&p, &scale};
  void **const argsPerRank[] = {args};
  tleEmuLaunchConfig config = TLE_EMU_LAUNCH_CONFIG_INITIALIZER;
  config.grid[0] = 2;
  config.block[0] = 5;
  config.seed = 9;
  config.stackBytes = size_t(32) << 10;
  config.timeoutMs = 1000;
  tleErrorInfo info;
  EXPECT_EQ(
      tleEmuLaunchWithConfig(nullptr, 1, &config, cKernel, argsPerRank, &info),
      tleSuccess)
      << info.message;
  EXPECT_EQ(counts[0], 10);
  EXPECT_EQ(counts[1], 10);
  config.stackBytes = 1000;
  EXPECT_EQ(
      tleEmuLaunchWithConfig(nullptr, 1, &config, cKernel, argsPerRank, &info),
      tleInvalidArgument);
  EXPECT_NE(std::string(info.message).find("stackBytes 1000"),
            std::string::npos)
      << info.message;
  config = TLE_EMU_LAUNCH_CONFIG_INITIALIZER;
  config.size = 8;
  EXPECT_EQ(
      tleEmuLaunchWithConfig(nullptr, 1, &config, cKernel, argsPerRank, &info),
      tleInvalidArgument);
  EXPECT_NE(std::string(info.message).find("TLE_EMU_LAUNCH_CONFIG_INITIALIZER"),
            std::string::npos)
      << info.message;
}

} // namespace
