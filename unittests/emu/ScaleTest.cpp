//===- ScaleTest.cpp - The barrier from 2 to 72 ranks, measured -----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Runs block-group barriers on 2..72 emulated ranks (an NVL72 domain) and
// counts what one barrier costs each rank in device-memory operations
// (tle::emu::deviceOpCounts), and how much memory a communicator takes. The
// table it prints is the one docs/device-library.md quotes ("Past 8
// ranks"); the assertions pin the flat protocol's shape: each rank signals
// every peer exactly once per barrier, polls each at least once, and
// touches its own epoch once each way, whatever the number of ranks.
//
//===----------------------------------------------------------------------===//

#include "EmuTestUtil.h"

#include <cstdio>
#include <stdexcept>
#include <string>

using namespace tle;
using namespace tle::emu;
using namespace tle::emutest;

namespace {

constexpr uint32_t kRounds = 8;
constexpr uint32_t kSlots = 64;

TEST(EmuScale, OperationsPerBarrierAndMemoryPerCommunicator) {
  // Per barrier and rank, counted per thread (a GPU issues a warp's 32
  // identical loads or fences as one instruction); polls include the failed
  // ones of this schedule.
  std::printf("ranks | signals | polls | fences | epoch ld/st | comm loads | "
              "bytes per rank (inbox + DevComm + epochs)\n");
  for (int n : {2, 4, 8, 16, 32, 72}) {
    Ranks ranks(n, kSlots);
    ASSERT_EQ(ranks.status, tleSuccess) << tleGetLastErrorDetail();
    resetDeviceOpCounts();
    LaunchResult r = launch(ranks.comms.data(), n, shape({1, 1, 1}, {32, 1, 1}),
                            [&](int, void *dc) {
                              for (uint32_t k = 0; k < kRounds; ++k)
                                flagcxIntraBarrierSyncS(dc, kCoopBlock, 0,
                                                        false, kOrderAcqRel);
                            });
    ASSERT_EQ(r.result, tleSuccess) << r.message;
    DeviceOpCounts c = deviceOpCounts();
    double per = double(kRounds) * n; // barriers x ranks
    for (int q = 0; q < n; ++q)
      EXPECT_EQ(ranks.dev(q)->epochs[0], kRounds);
    // Flat fan-out: one signal per peer, at least one poll per peer.
    EXPECT_EQ(c[DeviceOp::Signal], uint64_t(kRounds) * n * (n - 1)) << n;
    EXPECT_GE(c[DeviceOp::Poll], uint64_t(kRounds) * n * (n - 1)) << n;
    EXPECT_EQ(c[DeviceOp::EpochStore], uint64_t(kRounds) * n) << n;
    const DevComm *dc = ranks.dev(0);
    EXPECT_EQ(dc->inboxStride, (uint32_t(n) + 31) / 32 * 32);
    size_t bytes = size_t(kSlots) * dc->inboxStride * 4 + sizeof(DevComm) +
                   2 * size_t(kSlots) * 4;
    std::printf("%5d | %7.1f | %5.1f | %6.1f | %5.1f/%4.1f | %10.1f | %zu\n",
                n, c[DeviceOp::Signal] / per, c[DeviceOp::Poll] / per,
                c[DeviceOp::Fence] / per, c[DeviceOp::EpochLoad] / per,
                c[DeviceOp::EpochStore] / per, c[DeviceOp::CommLoad] / per,
                bytes);
  }
}

// The host build counts into a table of the running launch, which joins
// the process's counts when the launch ends: a launch that fails keeps
// what it did, and the next launch's counts add to them.
TEST(EmuScale, CountsOfAFailedLaunchAreKept) {
  constexpr int n = 4;
  Ranks ranks(n, kSlots);
  ASSERT_EQ(ranks.status, tleSuccess) << tleGetLastErrorDetail();
  resetDeviceOpCounts();
  LaunchResult r =
      launch(ranks.comms.data(), n, shape({1, 1, 1}, {32, 1, 1}),
             [&](int rank, void *dc) {
               flagcxIntraBarrierSyncS(dc, kCoopBlock, 0, false, kOrderAcqRel);
               // Every rank has signalled once by now.
               if (rank == 0 && tleEmuThreadId(0) == 0)
                 throw std::runtime_error("after the barrier");
             });
  ASSERT_NE(r.result, tleSuccess);
  EXPECT_NE(r.message.find("after the barrier"), std::string::npos)
      << r.message;
  DeviceOpCounts c = deviceOpCounts();
  EXPECT_EQ(c[DeviceOp::Signal], uint64_t(n) * (n - 1));
  EXPECT_GE(c[DeviceOp::CommLoad], uint64_t(n) * 32);
  LaunchResult again = launch(
      ranks.comms.data(), n, shape({1, 1, 1}, {32, 1, 1}), [&](int, void *dc) {
        flagcxIntraBarrierSyncS(dc, kCoopBlock, 0, false, kOrderAcqRel);
      });
  ASSERT_EQ(again.result, tleSuccess) << again.message;
  EXPECT_EQ(deviceOpCounts()[DeviceOp::Signal], 2 * uint64_t(n) * (n - 1));
}

} // namespace
