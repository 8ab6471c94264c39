//===- JobErrorTest.cpp - The job's report merged from hand-made records --===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// mergeJobReport on records written by hand, one per way a job hangs: a
// skipped barrier, a signal never sent, a dead process, a rank that does
// not answer, a slot used out of step, ranks on different slots, another
// error first, several nodes. Each checks the culprit, the fates, the
// report's lines and its JSON (read back with nlohmann-json's parser).
//
//===----------------------------------------------------------------------===//

#include "diag/JobError.h"

#include "tle/abi.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstring>

using namespace tle;
using nlohmann::json;

namespace {

bool contains(const std::string &s, const std::string &part) {
  return s.find(part) != std::string::npos;
}

uint32_t fn(tle::abi::Fn f) { return static_cast<uint32_t>(f); }

RankView exited(int rank) {
  RankView v;
  v.rank = rank;
  v.answered = true;
  return v;
}

RankView silent(int rank) {
  RankView v;
  v.rank = rank;
  return v;
}

/// Rank `rank` timed out in a barrier on `slot` at `epoch` waiting for
/// `missing`.
RankView barrierTimeout(int rank, uint32_t slot, uint32_t epoch,
                        std::initializer_list<int> missing) {
  RankView v = exited(rank);
  v.hasRecord = true;
  ErrorRecord &e = v.record;
  e.state = 2;
  e.code = kDevErrTimeout;
  e.rank = rank;
  e.slot = slot;
  e.epoch = epoch;
  e.block = 1;
  e.thread = 0;
  e.nBarriers = 64;
  e.elapsedNs = 1000000000;
  e.function = fn(tle::abi::Fn::flagcxIntraBarrierSyncS);
  for (int q : missing)
    e.missing.words[q / 64] |= uint64_t(1) << (q % 64);
  return v;
}

TEST(JobError, SkippedBarrierNamesTheRankThatLeftTheKernel) {
  JobReport r = mergeJobReport(
      {barrierTimeout(0, 4, 2, {2}), barrierTimeout(1, 4, 2, {2}), exited(2)});
  ASSERT_TRUE(r.failed);
  EXPECT_EQ(r.result, tleTimeout);
  EXPECT_EQ(r.culprit, 2);
  EXPECT_TRUE(contains(r.why, "rank 2 never arrived at slot 4 epoch 2"))
      << r.why;
  EXPECT_TRUE(contains(r.why, "left the kernel")) << r.why;
  EXPECT_TRUE(contains(r.text,
                       "\n  rank 0 block 1 thread 0 waits in "
                       "tle.device_intra_barrier (flagcxIntraBarrierSyncS) "
                       "on slot 4 for epoch 2; "
                       "missing peers: 2 (timed out after 1000 ms)\n"))
      << r.text;
  EXPECT_TRUE(contains(r.text, "\n  rank 2 has no failed wait: it left the "
                               "kernel"))
      << r.text;
  EXPECT_TRUE(contains(r.text, "\n  likely culprit: rank 2 never arrived"))
      << r.text;
  json j = json::parse(r.json);
  EXPECT_EQ(j["failed"], true);
  EXPECT_EQ(j["culprit"], 2);
  EXPECT_EQ(j["result"], tleGetErrorString(tleTimeout));
  ASSERT_EQ(j["ranks"].size(), 3u);
  EXPECT_EQ(j["ranks"][0]["fate"], "waiting");
  EXPECT_EQ(j["ranks"][0]["wait"], "barrier");
  EXPECT_EQ(j["ranks"][0]["slot"], 4);
  EXPECT_EQ(j["ranks"][0]["epoch"], 2);
  EXPECT_EQ(j["ranks"][0]["missing"], json::array({2}));
  EXPECT_EQ(j["ranks"][0]["call"],
            "tle.device_intra_barrier (flagcxIntraBarrierSyncS)");
  EXPECT_EQ(j["ranks"][2]["fate"], "exited");
  EXPECT_FALSE(j["ranks"][2].contains("slot"));
  EXPECT_EQ(j["report"], r.text);
}

TEST(JobError, SignalNeverSentNamesTheWordAndTheOnlySender) {
  RankView w = exited(1);
  w.hasRecord = true;
  w.record.state = 2;
  w.record.code = kDevErrSignalTimeout;
  w.record.rank = 1;
  w.record.slot = 3;
  w.record.seen = 0;
  w.record.wanted = 1;
  w.record.elapsedNs = 500000000;
  w.record.function = fn(tle::abi::Fn::flagcxDevWaitSignal);
  JobReport r = mergeJobReport({exited(0), w});
  ASSERT_TRUE(r.failed);
  EXPECT_EQ(r.culprit, 0);
  EXPECT_TRUE(contains(r.why, "signal 3 of rank 1 never reached 1 (it holds "
                              "0): a signal never sent; ranks that left the "
                              "kernel: 0"))
      << r.why;
  EXPECT_TRUE(contains(r.text, "waits in tle.signal_wait (flagcxDevWaitSignal) "
                               "on signal 3 of rank 1 for a value >= 1 (it "
                               "holds 0) (timed out after 500 ms)"))
      << r.text;
  json j = json::parse(r.json);
  EXPECT_EQ(j["ranks"][1]["wait"], "signal");
  EXPECT_EQ(j["ranks"][1]["signal"], 3);
  EXPECT_EQ(j["ranks"][1]["wanted"], 1);
  EXPECT_FALSE(j["ranks"][1].contains("epoch"));
}

TEST(JobError, ADeadProcessIsTheCulprit) {
  // Rank 0's watchdog saw rank 2 die; rank 1 timed out waiting for it
  // first, and rank 2 never answered.
  RankView seen = exited(0);
  seen.hasRecord = true;
  seen.record.state = 2;
  seen.record.code = kDevErrPeerFailure;
  seen.record.rank = 0;
  seen.record.block = -1;
  seen.record.thread = -1;
  seen.record.function = fn(tle::abi::Fn::NumFunctions);
  seen.record.missing.words[0] = 1u << 2;
  JobReport r = mergeJobReport({seen, barrierTimeout(1, 0, 1, {2}), silent(2)});
  EXPECT_EQ(r.culprit, 2);
  EXPECT_EQ(r.result, tlePeerFailure);
  ASSERT_EQ(r.fates.size(), 3u);
  EXPECT_EQ(r.fates[2], RankFate::Dead);
  EXPECT_TRUE(contains(r.why, "rank 2 died")) << r.why;
  EXPECT_TRUE(contains(r.text, "rank 0 gave up its waits: the watchdog saw "
                               "rank(s) 2 die"))
      << r.text;
  EXPECT_TRUE(contains(r.text, "rank 2 is dead")) << r.text;
  // The bootstrap's view of a death, with no record saying it.
  RankView gone = silent(1);
  gone.dead = true;
  r = mergeJobReport({barrierTimeout(0, 0, 1, {1}), gone});
  EXPECT_EQ(r.culprit, 1);
  EXPECT_EQ(json::parse(r.json)["ranks"][1]["fate"], "dead");
}

TEST(JobError, ASilentPeerIsStuckElsewhere) {
  JobReport r = mergeJobReport({barrierTimeout(0, 7, 1, {1}), silent(1)});
  EXPECT_EQ(r.culprit, 1);
  EXPECT_TRUE(contains(r.why, "rank 1 never arrived at slot 7 epoch 1"))
      << r.why;
  EXPECT_TRUE(contains(r.why, "timeout 0")) << r.why;
  EXPECT_TRUE(contains(r.text, "rank 1 did not answer")) << r.text;
  // Nobody recorded anything, but a rank is silent: a hang without a
  // TLE timeout is still a failure of the job.
  r = mergeJobReport({exited(0), silent(1)});
  EXPECT_TRUE(r.failed);
  EXPECT_EQ(r.result, tleTimeout);
  EXPECT_EQ(r.culprit, 1);
}

TEST(JobError, ASlotUsedOutOfStepIsNamed) {
  JobReport r = mergeJobReport(
      {barrierTimeout(0, 5, 3, {1}), barrierTimeout(1, 5, 4, {0})});
  EXPECT_EQ(r.culprit, -1);
  EXPECT_TRUE(contains(r.why, "slot 5 is used out of step: rank 0 waits for "
                              "epoch 3, rank 1 for epoch 4: two groups share "
                              "the slot"))
      << r.why;
  EXPECT_TRUE(json::parse(r.json)["culprit"].is_null());
}

TEST(JobError, RanksOnDifferentSlotsAreNamed) {
  JobReport r = mergeJobReport(
      {barrierTimeout(0, 1, 1, {1}), barrierTimeout(1, 2, 1, {0})});
  EXPECT_TRUE(contains(r.why, "ranks 0 and 1 wait for each other on "
                              "different slots (1 and 2)"))
      << r.why;
}

TEST(JobError, AnotherErrorFirstIsTheCulprit) {
  RankView bad = exited(1);
  bad.hasRecord = true;
  bad.record.state = 2;
  bad.record.code = kDevErrIndexOutOfRange;
  bad.record.rank = 1;
  bad.record.slot = 64;
  bad.record.nBarriers = 64;
  bad.record.function = fn(tle::abi::Fn::flagcxIntraBarrierSyncS);
  JobReport r = mergeJobReport({barrierTimeout(0, 0, 1, {1}), bad});
  EXPECT_EQ(r.culprit, 1);
  EXPECT_EQ(r.result, tleTimeout); // rank 0's, the first failing rank
  EXPECT_TRUE(contains(r.why, "slot 64 out of range")) << r.why;
  EXPECT_EQ(r.fates[1], RankFate::Failed);
}

TEST(JobError, TheCallSiteOfEachWaitIsNamed) {
  // Rank 0's wait came from a call whose site tlec registered; rank 1's
  // from a site nobody registered; rank 2's from FlagCX's entry point
  // (site 0).
  const char *where = "kernel.mlir:12:7";
  uint32_t id = tleSiteRegisterText(where);
  ASSERT_NE(id, 0u);
  EXPECT_STREQ(tleSiteText(id), where);
  EXPECT_EQ(id, tle::abi::siteId(where, std::strlen(where)));
  RankView a = barrierTimeout(0, 4, 2, {2});
  a.record.site = id;
  RankView b = barrierTimeout(1, 4, 2, {2});
  b.record.site = 0x12345;
  RankView c = barrierTimeout(2, 4, 2, {3});
  JobReport r = mergeJobReport({a, b, c, exited(3)});
  // A typed C++ call on a GPU records its line alone.
  RankView typed = barrierTimeout(0, 4, 2, {1});
  typed.record.site = kSiteLineOnly | 57;
  JobReport t = mergeJobReport({typed, exited(1)});
  EXPECT_TRUE(contains(t.text, "(flagcxIntraBarrierSyncS) at line 57 (a typed "
                               "C++ call on a GPU: its file is not "
                               "recorded) on slot 4"))
      << t.text;
  EXPECT_TRUE(contains(r.text,
                       "\n  rank 0 block 1 thread 0 waits in "
                       "tle.device_intra_barrier (flagcxIntraBarrierSyncS) "
                       "at kernel.mlir:12:7 on slot 4 for epoch 2; "
                       "missing peers: 2 (timed out after 1000 ms)\n"))
      << r.text;
  EXPECT_TRUE(contains(r.text, "(flagcxIntraBarrierSyncS) at site 74565 on "
                               "slot 4"))
      << r.text;
  EXPECT_TRUE(contains(r.text, "\n  rank 2 block 1 thread 0 waits in "
                               "tle.device_intra_barrier "
                               "(flagcxIntraBarrierSyncS) on slot 4"))
      << r.text;
  json j = json::parse(r.json);
  EXPECT_EQ(j["ranks"][0]["site"], where);
  EXPECT_EQ(j["ranks"][1]["site"], "site 74565");
  EXPECT_TRUE(j["ranks"][2]["site"].is_null());
  EXPECT_FALSE(j["ranks"][3].contains("site"));
  // A site holds one text: the first stays.
  EXPECT_EQ(tleSiteRegister(id, where), tleSuccess);
  EXPECT_EQ(tleSiteRegister(id, "other.py:1"), tleInvalidArgument);
  EXPECT_EQ(tleSiteRegister(0, where), tleInvalidArgument);
  EXPECT_STREQ(tleSiteText(id), where);
  EXPECT_EQ(tleSiteText(0), nullptr);
  // An error other than a wait names its site too.
  RankView bad = exited(1);
  bad.hasRecord = true;
  bad.record.state = 2;
  bad.record.code = kDevErrIndexOutOfRange;
  bad.record.rank = 1;
  bad.record.slot = 64;
  bad.record.nBarriers = 64;
  bad.record.function = fn(tle::abi::Fn::flagcxIntraBarrierSyncS);
  bad.record.site = id;
  r = mergeJobReport({barrierTimeout(0, 0, 1, {1}), bad});
  EXPECT_TRUE(contains(r.text, "\n  rank 1 failed at kernel.mlir:12:7: "))
      << r.text;
}

TEST(JobError, NoFailureIsAQuietReport) {
  JobReport r = mergeJobReport({exited(0), exited(1)});
  EXPECT_FALSE(r.failed);
  EXPECT_EQ(r.result, tleSuccess);
  EXPECT_EQ(r.culprit, -1);
  json j = json::parse(r.json);
  EXPECT_EQ(j["failed"], false);
  EXPECT_EQ(j["ranks"][1]["fate"], "exited");
}

TEST(JobError, SeveralNodesReportWorldRanks) {
  // Two nodes of two ranks: world rank 3 (node 1, local 1) waits for its
  // node's local rank 0, world rank 2, which left the kernel.
  RankView w = barrierTimeout(3, 0, 1, {});
  w.record.rank = 1;
  w.record.missing.words[0] = 1u << 0;
  w.node = {1, 2};
  RankView other = exited(2);
  other.node = {1, 2};
  JobReport r = mergeJobReport({exited(0), exited(1), other, w});
  EXPECT_EQ(r.culprit, 2);
  EXPECT_EQ(json::parse(r.json)["ranks"][3]["missing"], json::array({2}));
}

} // namespace
