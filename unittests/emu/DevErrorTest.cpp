//===- DevErrorTest.cpp - Every device failure, from call to message ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Drives each failure the device library reports through a real call of an
// ABI entry point on the emulator, and checks the whole path: the record it
// writes, the status of the launch, and the one-line message the host makes
// of it. The expected sentences are written out by hand (docs/abi.md and
// docs/device-library.md), not derived from the code under test.
//
//===----------------------------------------------------------------------===//

#include "EmuTestUtil.h"

#include <functional>
#include <string>

using namespace tle;
using namespace tle::emu;
using namespace tle::emutest;

namespace {

/// Runs `body` on rank 1 of a 2-rank communicator (rank 0 does nothing) in
/// one block of 32 threads; returns the launch's result.
LaunchResult failOnRank1(const Ranks &ranks,
                         const std::function<void(void *dc)> &body) {
  return launch(ranks.comms.data(), 2, shape({1, 1, 1}, {32, 1, 1}),
                [&](int rank, void *dc) {
                  if (rank == 1)
                    body(dc);
                });
}

struct Case {
  const char *name;
  std::function<void(void *dc, const void *mem)> call;
  tleResult_t result;
  /// The message after "rank 1 block 0 thread T: ".
  const char *message;
};

TEST(DevError, EveryFailureIsWordedFromCallToMessage) {
  const Case cases[] = {
      {"slot out of range",
       [](void *dc, const void *) {
         flagcxIntraBarrierSyncS(dc, kCoopBlock, 8, false, kOrderAcqRel);
       },
       tleIndexOutOfRange,
       "tle.device_intra_barrier (flagcxIntraBarrierSyncS): barrier slot 8 "
       "out of range (nBarriers 8): create the communicator with nBarriers "
       "(n_barriers) > 8, or pass an index < 8"},
      {"coop kind",
       [](void *dc, const void *) {
         flagcxIntraBarrierArriveS(dc, 7, 0, false, kOrderRelease);
       },
       tleInvalidArgument,
       "tle.device_intra_barrier (flagcxIntraBarrierArriveS): unknown "
       "cooperative group kind 7 (valid: 0..4)"},
      {"grid is not a FlagCX coop kind",
       [](void *dc, const void *) {
         flagcxIntraBarrierSyncS(dc, 5, 0, false, kOrderAcqRel);
       },
       tleInvalidArgument,
       "tle.device_intra_barrier (flagcxIntraBarrierSyncS): unknown "
       "cooperative group kind 5 (valid: 0..4)"},
      {"order",
       [](void *dc, const void *) {
         flagcxIntraBarrierWaitS(dc, kCoopBlock, 0, false, 9);
       },
       tleInvalidArgument,
       "tle.device_intra_barrier (flagcxIntraBarrierWaitS): unknown memory "
       "order 9 (valid: 0..4)"},
      {"team",
       [](void *dc, const void *) {
         flagcxDevBarrierSync(dc, 3, 0, 0, kCoopBlock, kOrderAcqRel,
                              kScopeSystem);
       },
       tleInvalidArgument,
       "tle.device_intra_barrier (flagcxDevBarrierSync): team kind 3 is not "
       "a team (valid: 0 intra, 1 inter, 2 world)"},
      {"scope",
       [](void *dc, const void *) {
         flagcxDevBarrierArrive(dc, kTeamIntra, 0, 0, kCoopBlock, kOrderAcqRel,
                                4);
       },
       tleInvalidArgument,
       "tle.device_intra_barrier (flagcxDevBarrierArrive): unknown memory "
       "scope 4 (valid: 0..3)"},
      {"barrier kind",
       [](void *dc, const void *) {
         tleTritonBarrier(reinterpret_cast<int64_t>(dc), 3, kCoopBlock, 0,
                          kOrderAcqRel);
       },
       tleInvalidArgument,
       "tle.distributed_barrier (tleTritonBarrier): unknown barrier kind 3 "
       "(valid: 0..2)"},
      {"triton group",
       [](void *dc, const void *) {
         tleTritonBarrier(reinterpret_cast<int64_t>(dc), 2, 6, 0, kOrderAcqRel);
       },
       tleInvalidArgument,
       "tle.distributed_barrier (tleTritonBarrier): unknown cooperative group "
       "kind 6 (valid: 0..5)"},
      {"peer",
       [](void *, const void *mem) { flagcxGetIntraPointerS(mem, 0, 3); },
       tleInvalidArgument,
       "tle.intra_pointer (flagcxGetIntraPointerS): peer 3 is out of range "
       "(the communicator has 2 ranks)"},
      {"negative peer",
       [](void *, const void *mem) {
         tleTritonIntraPointer(reinterpret_cast<int64_t>(mem), 0, -1);
       },
       tleInvalidArgument,
       "tle.intra_pointer (tleTritonIntraPointer): peer -1 is out of range "
       "(the communicator has 2 ranks)"},
      {"flagtree peer",
       [](void *, const void *mem) {
         tle_remote_pointer(reinterpret_cast<int64_t>(mem), 4, 2);
       },
       tleInvalidArgument,
       "tle.remote (tle_remote_pointer): peer 2 is out of range (the "
       "communicator has 2 ranks)"},
      {"flagtree barrier kind",
       [](void *dc, const void *) {
         tle_distributed_barrier(reinterpret_cast<int64_t>(dc), 7, kCoopBlock,
                                 0, kOrderAcqRel);
       },
       tleInvalidArgument,
       "tle.distributed_barrier (tle_distributed_barrier): unknown barrier "
       "kind 7 (valid: 0..2)"},
      {"flagtree signal peer",
       [](void *dc, const void *) {
         tle_signal(reinterpret_cast<int64_t>(dc), 2, 0, 1, kCoopBlock);
       },
       tleInvalidArgument,
       "tle.signal (tle_signal): peer 2 is out of range (the communicator "
       "has 2 ranks)"},
      {"flagtree signal wait index",
       [](void *dc, const void *) {
         tle_signal_wait(reinterpret_cast<int64_t>(dc), 64, 1, kCoopBlock,
                         kOrderAcquire);
       },
       tleIndexOutOfRange,
       "tle.signal_wait (tle_signal_wait): signal 64 out of range (nSignals "
       "64)"},
      {"offset",
       [](void *, const void *mem) { flagcxGetLocalPointerS(mem, 44); },
       tleInvalidArgument,
       "tle.local_pointer (flagcxGetLocalPointerS): offset 44 is past the end "
       "of a 32-byte buffer"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.name);
    Ranks ranks(2, 8);
    ASSERT_EQ(ranks.status, tleSuccess) << tleGetLastErrorDetail();
    SymBuffer buf(ranks, 32);
    ASSERT_EQ(buf.status, tleSuccess) << tleGetLastErrorDetail();
    const void *mem = buf.handle(1);
    LaunchResult r = failOnRank1(ranks, [&](void *dc) { c.call(dc, mem); });
    EXPECT_EQ(r.result, c.result) << r.message;
    EXPECT_EQ(r.error.rank, 1);
    std::string want = std::string("rank 1 block 0 thread ") +
                       std::to_string(r.error.thread) + ": " + c.message;
    EXPECT_EQ(std::string(r.error.message), want);
    EXPECT_NE(r.message.find(want), std::string::npos) << r.message;
  }
}

TEST(DevError, ASlotPastNBarriersNamesTheGridsNeed) {
  // One slot per block, as a barrier without an index takes the program
  // id: a grid of 80 blocks on 64 slots needs n_barriers=80, which the
  // device tells the host in the record (its grid size).
  Ranks ranks(1, 64);
  ASSERT_EQ(ranks.status, tleSuccess) << tleGetLastErrorDetail();
  LaunchResult r = launch(
      ranks.comms.data(), 1, shape({80, 1, 1}, {1, 1, 1}), [&](int, void *dc) {
        flagcxIntraBarrierSyncS(dc, kCoopThread, linearBlockId(), false,
                                kOrderAcqRel);
      });
  ASSERT_EQ(r.result, tleIndexOutOfRange) << r.message;
  std::string slot = std::to_string(r.error.slot);
  EXPECT_GE(r.error.slot, 64u);
  EXPECT_EQ(std::string(r.error.message),
            "rank 0 block " + slot +
                " thread 0: tle.device_intra_barrier "
                "(flagcxIntraBarrierSyncS): barrier slot " +
                slot +
                " out of range (nBarriers 64): the default slot is the "
                "program id; this grid has 80 programs: pass n_barriers=80 "
                "(or more) to the communicator, or an index < 64");
}

TEST(DevError, CorruptCommunicatorIsWorded) {
  Ranks ranks(2, 8);
  ASSERT_EQ(ranks.status, tleSuccess) << tleGetLastErrorDetail();
  ranks.dev(1)->size = 129; // one past kMaxRanks
  LaunchResult r = failOnRank1(ranks, [](void *dc) {
    flagcxIntraBarrierSyncS(dc, kCoopThread, 0, false, kOrderAcqRel);
  });
  ranks.dev(1)->size = 2;
  EXPECT_EQ(r.result, tleInvalidComm) << r.message;
  EXPECT_NE(std::string(r.error.message)
                .find("tle.device_intra_barrier (flagcxIntraBarrierSyncS): "
                      "invalid communicator (size field 129;"),
            std::string::npos)
      << r.error.message;
}

TEST(DevError, DeadlockIsWorded) {
  Ranks ranks(2, 8);
  ASSERT_EQ(ranks.status, tleSuccess) << tleGetLastErrorDetail();
  // Rank 1's block waits for rank 0, which never arrives (one group on the
  // slot: 32 thread groups there would be a slot misuse, reported first).
  LaunchResult r = failOnRank1(ranks, [](void *dc) {
    flagcxIntraBarrierSyncS(dc, kCoopBlock, 2, false, kOrderAcqRel);
  });
  EXPECT_EQ(r.result, tleDeadlock) << r.message;
  EXPECT_NE(r.message.find("wait on slot 2 for epoch 1; missing peers: 0"),
            std::string::npos)
      << r.message;
}

TEST(DevError, LongMessageIsCutBetweenWords) {
  // Rank 0 of 128 alone at a barrier: its timeout names 127 missing peers,
  // more than the record's 256 bytes hold.
  Ranks ranks(128, 8, /*timeoutMs=*/20);
  ASSERT_EQ(ranks.status, tleSuccess) << tleGetLastErrorDetail();
  LaunchResult r = launch(
      ranks.comms.data(), 1, shape({1, 1, 1}, {1, 1, 1}), [](int, void *dc) {
        flagcxIntraBarrierSyncS(dc, kCoopThread, 0, false, kOrderAcqRel);
      });
  EXPECT_EQ(r.result, tleTimeout) << r.message;
  std::string m = r.error.message;
  EXPECT_LT(m.size(), sizeof r.error.message);
  // The list is cut between two numbers, not inside one, and says so.
  size_t list = m.find("missing peers: ");
  ASSERT_NE(list, std::string::npos) << m;
  ASSERT_GE(m.size(), 3u);
  ASSERT_EQ(m.substr(m.size() - 3), "...") << m;
  std::string peers = m.substr(list + 15, m.size() - 3 - list - 15);
  std::string whole;
  for (int q = 1; whole.size() < peers.size(); ++q)
    whole += (q > 1 ? "," : "") + std::to_string(q);
  EXPECT_EQ(peers, whole) << m;
}

} // namespace
