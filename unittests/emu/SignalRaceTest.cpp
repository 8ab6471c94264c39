//===- SignalRaceTest.cpp - What the race checker takes from signal words -===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The device library's signal ops as the race checker hears them
// (tleEmuSignal; docs/emulator.md, "What a signal wait acquires"): a wait
// acquires the adds of the word's history up to the first that reached its
// target, on this node and across the simulated network, whatever the
// schedule; a word left set by an earlier launch gives a wait nothing; and
// the signal words are watched, so a read_signal and a reset_signal that
// nothing orders are a race naming both. Every verdict holds on every seed.
//
//===----------------------------------------------------------------------===//

#include "EmuTestUtil.h"

#include "tle/detail/EmuHooks.h"
#include "tle/device.h"
#include "tle/signal.h"

#include <string>

using namespace tle;
using namespace tle::emu;
using namespace tle::emutest;

namespace {

constexpr uint64_t kSeeds = 12;

/// Ranks 1 and 2 each write their slot of rank 0's buffer and add 1 to
/// rank 0's word 0; rank 0 waits for the word >= `target` and reads both
/// slots. Rank 0 needs both adds, so only a target of 2 orders both reads.
LaunchResult twoProducers(const Ranks &ranks, const SymBuffer &buf,
                          uint64_t target, uint64_t seed) {
  LaunchOptions o = shape({1, 1, 1}, {1, 1, 1});
  o.seed = seed;
  return launch(ranks.comms.data(), ranks.size(), o, [&](int rank, void *dc) {
    const void *mem = buf.handle(rank);
    if (rank != 0) {
      write(static_cast<uint32_t *>(
                flagcxGetIntraPointerS(mem, rank * sizeof(uint32_t), 0)),
            uint32_t(rank), "the store");
      signalInc(dc, 0, 0, kCoopThread);
      return;
    }
    signalWait(dc, 0, target, kCoopThread, kOrderAcquire);
    for (int q = 1; q <= 2; ++q)
      (void)read(static_cast<uint32_t *>(
                     flagcxGetLocalPointerS(mem, q * sizeof(uint32_t))),
                 "the load");
  });
}

TEST(SignalRace, AWaitAcquiresTheAddsUpToItsTargetOnEverySeed) {
  // Fresh ranks per launch: a failed one leaves its word set.
  for (uint64_t target : {1, 2})
    for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
      Ranks ranks(3);
      ASSERT_EQ(ranks.status, tleSuccess) << tleGetLastErrorDetail();
      SymBuffer buf(ranks, 64);
      LaunchResult r = twoProducers(ranks, buf, target, seed);
      if (target == 1) {
        EXPECT_EQ(r.result, tleDataRace)
            << "seed " << seed << ": " << r.message;
        EXPECT_TRUE(contains(r.message, "at the store")) << r.message;
        EXPECT_TRUE(contains(r.message, "at the load")) << r.message;
      } else {
        EXPECT_EQ(r.result, tleSuccess) << "seed " << seed << ": " << r.message;
      }
    }
}

TEST(SignalRace, AWordLeftSetByAnEarlierLaunchGivesTheWaitNothing) {
  // The first launch (target 2) is clean and leaves rank 0's word at 2;
  // the second, with no reset between, passes its wait on the old value:
  // the reads race on every seed, not only where the adds came late.
  for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
    Ranks ranks(3);
    ASSERT_EQ(ranks.status, tleSuccess) << tleGetLastErrorDetail();
    SymBuffer buf(ranks, 64);
    LaunchResult first = twoProducers(ranks, buf, 2, seed);
    ASSERT_EQ(first.result, tleSuccess) << first.message;
    LaunchResult second = twoProducers(ranks, buf, 2, seed);
    EXPECT_EQ(second.result, tleDataRace)
        << "seed " << seed << ": " << second.message;
  }
}

/// Thread 0 of the block reads word 0, thread 1 resets it, with a block
/// sync between them when `synced`; each names its line as a compiled
/// kernel's call does (tleEmuSite).
LaunchResult readAndReset(const Ranks &ranks, bool synced, uint64_t seed) {
  LaunchOptions o = shape({1, 1, 1}, {2, 1, 1});
  o.seed = seed;
  return launch(ranks.comms.data(), 1, o, [synced](int, void *dc) {
    uint32_t t = linearThreadId();
    if (t == 0) {
      tleEmuSite("the read");
      (void)readSignal(dc, 0, kOrderAcquire);
      tleEmuSite(nullptr);
    }
    if (synced)
      syncThreads();
    if (t == 1) {
      tleEmuSite("the reset");
      resetSignal(dc, 0);
      tleEmuSite(nullptr);
    }
  });
}

TEST(SignalRace, AReadAndAResetThatNothingOrdersRaceNamingBoth) {
  for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
    Ranks ranks(1);
    ASSERT_EQ(ranks.status, tleSuccess) << tleGetLastErrorDetail();
    LaunchResult r = readAndReset(ranks, /*synced=*/false, seed);
    ASSERT_EQ(r.result, tleDataRace) << "seed " << seed << ": " << r.message;
    EXPECT_EQ(r.message.rfind("data race on signal word 0 of rank 0:", 0), 0u)
        << r.message;
    EXPECT_TRUE(contains(r.message, "write by rank 0 block 0 thread 1, 8 "
                                    "bytes at offset 0, at the reset"))
        << r.message;
    EXPECT_TRUE(contains(r.message, "read by rank 0 block 0 thread 0, 8 bytes "
                                    "at offset 0, at the read"))
        << r.message;
    EXPECT_EQ(readAndReset(ranks, /*synced=*/true, seed).result, tleSuccess);
  }
}

/// A world of two simulated nodes of two ranks (world ranks 0, 1 on node
/// 0; 2, 3 on node 1).
struct TwoNodes {
  TwoNodes() {
    tleConfig_t config = TLE_CONFIG_INITIALIZER;
    config.nSignals = 4;
    config.ranksPerNode = 2;
    status = tleCommInitAll(comms, 4, nullptr, &config);
    for (int n = 0; n < 2 && status == tleSuccess; ++n)
      status = tleMemAllocAll(&comms[2 * n], 2, 64, &mems[2 * n]);
    for (int i = 0; i < 4 && status == tleSuccess; ++i)
      status = tleMemGetHandle(mems[i], &handles[i]);
  }
  ~TwoNodes() {
    for (tleMem_t m : mems)
      if (m)
        tleMemFree(m);
    for (tleComm_t c : comms)
      if (c)
        tleCommDestroy(c);
  }
  tleResult_t status;
  tleComm_t comms[4] = {};
  tleMem_t mems[4] = {};
  void *handles[4] = {};
};

TEST(SignalRace, AWaitAcrossNodesAcquiresUpToItsTarget) {
  // Ranks 2 and 3 (node 1) each write their own copy and add 1 to rank 0's
  // word 0 over the network; rank 0 (node 0) waits for >= target, then
  // signals both back; each reads the other's copy after its wait. The
  // only chain from one's store to the other's load runs through rank 0's
  // wait, which must have acquired both adds: a target of 1 leaves the
  // second add in modification order out, whichever it is.
  for (uint64_t target : {1, 2})
    for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
      TwoNodes w;
      ASSERT_EQ(w.status, tleSuccess) << tleGetLastErrorDetail();
      LaunchOptions o = shape({1, 1, 1}, {1, 1, 1});
      o.seed = seed;
      LaunchResult r = launch(w.comms, 4, o, [&](int rank, void *dc) {
        const void *mem = w.handles[rank];
        if (rank == 0) {
          flagcxDevWaitSignal(dc, 0, target, 64, 0, kCoopThread, kOrderAcquire);
          for (int q : {2, 3})
            flagcxDevSignalInc(dc, kTeamWorld, q, 1, 0, kCoopThread,
                               kScopeSystem);
        } else if (rank >= 2) {
          write(static_cast<uint32_t *>(flagcxGetLocalPointerS(mem, 0)),
                uint32_t(rank), "the store");
          flagcxDevSignalInc(dc, kTeamWorld, 0, 0, 0, kCoopThread,
                             kScopeSystem);
          flagcxDevWaitSignal(dc, 1, 1, 64, 0, kCoopThread, kOrderAcquire);
          (void)read(static_cast<uint32_t *>(
                         flagcxGetIntraPointerS(mem, 0, rank == 2 ? 1 : 0)),
                     "the load");
        }
      });
      EXPECT_EQ(r.result, target == 1 ? tleDataRace : tleSuccess)
          << "target " << target << ", seed " << seed << ": " << r.message;
    }
}

} // namespace
