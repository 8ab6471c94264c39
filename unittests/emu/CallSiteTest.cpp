//===- CallSiteTest.cpp - Reports of C++ kernels name the user's line -----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// C++ lambda kernels on the emulator: a typed API call (tle/barrier.h,
// tle/signal.h, tle/session.h) takes its caller's file and line through its
// defaulted tle::CallSite, so a deadlock or a device error names this file
// and the line of the call, as a compiled kernel's report names the op's
// location; and the threads of one group waiting in one call are one line
// of the deadlock report, not one per worker lane and internal sync, for
// typed calls and for the C ABI called directly from C++ alike.
//
//===----------------------------------------------------------------------===//

#include "EmuTestUtil.h"

#include "tle/barrier.h"
#include "tle/session.h"
#include "tle/signal.h"

#include <string>

using namespace tle;
using namespace tle::emu;
using namespace tle::emutest;

namespace {

/// The report's lines that begin with `prefix` (after the indentation).
int linesStartingWith(const std::string &report, const std::string &prefix) {
  int n = 0;
  for (size_t at = report.find("\n  " + prefix); at != std::string::npos;
       at = report.find("\n  " + prefix, at + 1))
    ++n;
  return n;
}

/// The report's first line that begins with `prefix`, or "".
std::string lineOf(const std::string &report, const std::string &prefix) {
  size_t at = report.find("\n  " + prefix);
  if (at == std::string::npos)
    return "";
  at += 3;
  return report.substr(at, report.find('\n', at) - at);
}

/// "CallSiteTest.cpp:<line>", as the emulator names a call of this file.
std::string here(uint32_t line) {
  return "CallSiteTest.cpp:" + std::to_string(line);
}

TEST(CallSite, TypedBarrierDeadlockNamesTheCallersLineOnce) {
  Ranks ranks(2);
  ASSERT_EQ(ranks.status, tleSuccess) << tleGetLastErrorDetail();
  uint32_t line = 0;
  LaunchResult r = launch(ranks.comms.data(), 2, shape({1, 1, 1}, {64, 1, 1}),
                          [&](int rank, void *dc) {
                            barrierSync(dc, kCoopBlock, 0, kOrderAcqRel);
                            // Rank 1 skips the second barrier: rank 0's block
                            // waits in it.
                            if (rank == 1)
                              return;
                            line = __LINE__ + 1;
                            barrierSync(dc, kCoopBlock, 0, kOrderAcqRel);
                          });
  ASSERT_EQ(r.result, tleDeadlock) << r.message;
  // The whole block is one line, at this file's line of the call.
  EXPECT_TRUE(
      contains(r.message, "\n  rank 0 block 0 waits in barrier wait at "))
      << r.message;
  EXPECT_TRUE(contains(r.message, here(line) + " on slot 0 for epoch 2; "
                                               "missing peers: 1\n"))
      << r.message;
  EXPECT_EQ(linesStartingWith(r.message, "rank 0 "), 1) << r.message;
  // The library's lanes and syncs are its business.
  EXPECT_FALSE(contains(r.message, "block sync")) << r.message;
  EXPECT_FALSE(contains(r.message, "block 0 thread")) << r.message;
}

TEST(CallSite, TypedSignalWaitAndSessionNameTheirLines) {
  Ranks ranks(2);
  ASSERT_EQ(ranks.status, tleSuccess) << tleGetLastErrorDetail();
  uint32_t waitLine = 0, syncLine = 0;
  LaunchResult r = launch(ranks.comms.data(), 2, shape({2, 1, 1}, {32, 1, 1}),
                          [&](int rank, void *dc) {
                            if (blockIdx().x == 0) {
                              // Nobody signals word 3: a warp of each rank
                              // waits for it.
                              waitLine = __LINE__ + 1;
                              signalWait(dc, 3, 1, kCoopWarp);
                              return;
                            }
                            BarrierSession session(dc, kCoopWarp, 5);
                            session.sync(kOrderAcqRel);
                            if (rank == 0)
                              return;
                            syncLine = __LINE__ + 1;
                            session.sync(kOrderAcqRel);
                          });
  ASSERT_EQ(r.result, tleDeadlock) << r.message;
  std::string wait =
      lineOf(r.message, "rank 1 block 0 waits in signal wait at ");
  EXPECT_TRUE(contains(wait, here(waitLine) + " on signal 3")) << r.message;
  std::string sync =
      lineOf(r.message, "rank 1 block 1 waits in barrier wait at ");
  EXPECT_TRUE(contains(sync, here(syncLine) + " on slot 5")) << r.message;
  EXPECT_EQ(linesStartingWith(r.message, "rank 1 block 0 "), 1) << r.message;
  EXPECT_EQ(linesStartingWith(r.message, "rank 1 block 1 "), 1) << r.message;
  EXPECT_FALSE(contains(r.message, "warp sync")) << r.message;
}

TEST(CallSite, CAbiCallsFromCxxAreOneLinePerGroup) {
  // The FlagCX ABI has no call site to take, but each of its calls is
  // still one line per group.
  Ranks ranks(2);
  ASSERT_EQ(ranks.status, tleSuccess) << tleGetLastErrorDetail();
  LaunchResult r =
      launch(ranks.comms.data(), 2, shape({1, 1, 1}, {64, 1, 1}),
             [&](int rank, void *dc) {
               if (rank == 1)
                 flagcxDevBarrierSync(dc, kTeamIntra, 7, 0, kCoopBlock,
                                      kOrderAcqRel, kScopeSystem);
             });
  ASSERT_EQ(r.result, tleDeadlock) << r.message;
  EXPECT_TRUE(contains(r.message, "\n  rank 1 block 0 waits in barrier wait on "
                                  "slot 7 for epoch 1; missing peers: 0\n"))
      << r.message;
  EXPECT_EQ(linesStartingWith(r.message, "rank 1 "), 1) << r.message;
  EXPECT_FALSE(contains(r.message, "block sync")) << r.message;
}

TEST(CallSite, ThreadsOutsideAnyCallKeepTheirOwnLine) {
  // Warp 0 waits in a barrier rank 1 never joins; warp 1 waits at a block
  // sync of the kernel's own, outside any call: two lines, and the
  // kernel's sync names no line of the library's.
  Ranks ranks(2);
  ASSERT_EQ(ranks.status, tleSuccess) << tleGetLastErrorDetail();
  uint32_t line = 0;
  LaunchResult r = launch(ranks.comms.data(), 2, shape({1, 1, 1}, {64, 1, 1}),
                          [&](int rank, void *dc) {
                            if (rank == 1)
                              return;
                            if (threadIdx().x < 32) {
                              line = __LINE__ + 1;
                              barrierSync(dc, kCoopWarp, 0, kOrderAcqRel);
                            }
                            tleEmuSyncBlock();
                          });
  ASSERT_EQ(r.result, tleDeadlock) << r.message;
  EXPECT_TRUE(contains(r.message, "\n  rank 0 block 0 threads 0-31 wait in "
                                  "barrier wait at "))
      << r.message;
  EXPECT_TRUE(contains(r.message, here(line) + " on slot 0")) << r.message;
  EXPECT_TRUE(contains(r.message, "\n  rank 0 block 0 threads 32-63 wait in "
                                  "block sync (32 of 64 live threads "
                                  "arrived)\n"))
      << r.message;
  EXPECT_EQ(linesStartingWith(r.message, "rank 0 "), 2) << r.message;
}

TEST(CallSite, TracesNameTheLineOfATypedCall) {
  Ranks ranks(2);
  ASSERT_EQ(ranks.status, tleSuccess) << tleGetLastErrorDetail();
  LaunchOptions options = shape({1, 1, 1}, {32, 1, 1});
  options.trace = true;
  uint32_t line = 0;
  LaunchResult r = launch(ranks.comms.data(), 2, options, [&](int, void *dc) {
    line = __LINE__ + 1;
    barrierSync(dc, kCoopWarp, 2, kOrderAcqRel);
  });
  ASSERT_EQ(r.result, tleSuccess) << r.message;
  // Read after the launch: the emulator keeps the name, not the kernel.
  std::string json = lastTraceJson();
  EXPECT_TRUE(contains(json, here(line) + "\"")) << json;
  EXPECT_TRUE(contains(json, "\"loc\":\"")) << json;
}

TEST(CallSite, DeviceErrorOfATypedCallNamesTheLine) {
  Ranks ranks(1, /*nBarriers=*/4);
  ASSERT_EQ(ranks.status, tleSuccess) << tleGetLastErrorDetail();
  uint32_t line = 0;
  LaunchResult r = launch(ranks.comms.data(), 1, shape({1, 1, 1}, {1, 1, 1}),
                          [&](int, void *dc) {
                            line = __LINE__ + 1;
                            barrierSync(dc, kCoopThread, 9, kOrderAcqRel);
                          });
  ASSERT_EQ(r.result, tleIndexOutOfRange) << r.message;
  EXPECT_TRUE(contains(r.message, "\n  at ")) << r.message;
  EXPECT_TRUE(contains(r.message, here(line) + "\n")) << r.message;
}

TEST(CallSite, AWrapperPassesItsCallersSiteOn) {
  // A helper of the user's that takes a CallSite of its own names its
  // caller's line, not its own.
  auto helper = [](void *dc, CallSite site = CallSite::current()) {
    barrierSync(dc, kCoopThread, 9, kOrderAcqRel, site);
  };
  Ranks ranks(1, /*nBarriers=*/4);
  ASSERT_EQ(ranks.status, tleSuccess) << tleGetLastErrorDetail();
  uint32_t line = 0;
  LaunchResult r = launch(ranks.comms.data(), 1, shape({1, 1, 1}, {1, 1, 1}),
                          [&](int, void *dc) {
                            line = __LINE__ + 1;
                            helper(dc);
                          });
  ASSERT_EQ(r.result, tleIndexOutOfRange) << r.message;
  EXPECT_TRUE(contains(r.message, here(line) + "\n")) << r.message;
}

} // namespace
