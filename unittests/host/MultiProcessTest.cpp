//===- MultiProcessTest.cpp - One process per rank --------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Forked children join one communicator through tleCommInitRank, exchange
// data through memory files passed over the bootstrap, and exercise the
// bootstrap's failure modes: a wrong secret, a rank that never joins, a
// rank that dies. Every test ends by checking that no /dev/shm/tle-<pid>-*
// name of its processes exists. Children run through ChildProcess.h.
//
//===----------------------------------------------------------------------===//

#include "ChildProcess.h"
#include "tle/detail/DevComm.h"
#include "tle/tle.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

using namespace tle::test;

class MultiProcessTest : public ProcessFixture {};

tleConfig_t config(int64_t bootstrapMs, uint32_t nBarriers = 16) {
  return bootstrapConfig(bootstrapMs, nBarriers);
}

/// A full life of one rank: join, write into every peer's buffer and inbox,
/// meet (a second collective allocation), check what the peers wrote, and
/// check that this process has no name in /dev/shm.
tleResult_t fullRank(int n, const tleUniqueId &id, int rank,
                     std::string &detail) {
  tleConfig_t cfg = config(5000);
  tleComm_t comm;
  if (tleResult_t r = tleCommInitRank(&comm, n, &id, rank, 0, &cfg))
    return r;
  tleMem_t mem, meet;
  if (tleResult_t r = tleMemAlloc(comm, 4096, &mem))
    return r;
  void *h, *dc, *local;
  tleMemGetHandle(mem, &h);
  tleMemGetLocalPtr(mem, &local);
  tleCommGetDevComm(comm, &dc);
  auto *sym = static_cast<tle::SymMem *>(h);
  auto *devComm = static_cast<tle::DevComm *>(dc);
  if (sym->ptrs[rank] != local || devComm->rank != rank || devComm->size != n) {
    detail = "handle or DevComm fields are wrong";
    return tleInternalError;
  }
  for (int p = 0; p < n; ++p) {
    static_cast<uint32_t *>(sym->ptrs[p])[rank] = 1000 * p + rank;
    inboxOf(*devComm, p)[15 * devComm->inboxStride + rank] = rank + 1;
  }
  // The allocation's exchange doubles as a barrier: every rank's stores
  // above happen before any rank returns from it.
  if (tleResult_t r = tleMemAlloc(comm, 8, &meet))
    return r;
  for (int q = 0; q < n; ++q) {
    uint32_t got = static_cast<uint32_t *>(local)[q];
    uint32_t flag = inboxOf(*devComm, rank)[15 * devComm->inboxStride + q];
    if (got != uint32_t(1000 * rank + q) || flag != uint32_t(q + 1)) {
      detail = "rank " + std::to_string(rank) + " read " + std::to_string(got) +
               "/" + std::to_string(flag) + " from rank " + std::to_string(q);
      return tleInternalError;
    }
  }
  if (!segmentsOf(getpid()).empty()) {
    detail = "a /dev/shm name exists after the collective returned";
    return tleInternalError;
  }
  tleMemFree(meet);
  tleMemFree(mem);
  return tleCommDestroy(comm);
}

class SharedMemoryTest : public MultiProcessTest,
                         public testing::WithParamInterface<int> {};

TEST_P(SharedMemoryTest, RanksShareBuffersAndInboxes) {
  const int n = GetParam();
  tleUniqueId id;
  ASSERT_EQ(tleGetUniqueId(&id), tleSuccess);
  std::vector<Child> children;
  for (int r = 0; r < n; ++r)
    children.push_back(
        start([&, r](std::string &d) { return fullRank(n, id, r, d); }));
  for (int r = 0; r < n; ++r) {
    Outcome o = collect(children[r]);
    ASSERT_TRUE(o.finished) << "rank " << r << " hung";
    EXPECT_EQ(o.result, tleSuccess) << "rank " << r << ": " << o.detail;
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks, SharedMemoryTest, testing::Values(1, 2, 4));

TEST_F(MultiProcessTest, WrongSecretIsRefused) {
  tleUniqueId id;
  ASSERT_EQ(tleGetUniqueId(&id), tleSuccess);
  tleUniqueId forged = id;
  forged.internal[8] ^= 0x5a; // the secret follows the magic and version
  tleConfig_t cfg = config(600);
  Child root = start([&](std::string &) { return joinOnly(2, id, 0, cfg); });
  Child intruder =
      start([&](std::string &) { return joinOnly(2, forged, 1, cfg); });
  Outcome o1 = collect(intruder);
  ASSERT_TRUE(o1.finished);
  EXPECT_EQ(o1.result, tlePeerFailure);
  EXPECT_NE(o1.detail.find("rank 0 refused rank 1: rank 1 presented a wrong "
                           "secret"),
            std::string::npos)
      << o1.detail;
  Outcome o0 = collect(root);
  ASSERT_TRUE(o0.finished);
  EXPECT_EQ(o0.result, tleTimeout);
  EXPECT_NE(o0.detail.find("rank(s) 1 did not join; refused a peer: rank 1 "
                           "presented a wrong secret"),
            std::string::npos)
      << o0.detail;
}

TEST_F(MultiProcessTest, RankThatNeverJoins) {
  tleUniqueId id;
  ASSERT_EQ(tleGetUniqueId(&id), tleSuccess);
  tleConfig_t cfg = config(500);
  Child r0 = start([&](std::string &) { return joinOnly(3, id, 0, cfg); });
  Child r1 = start([&](std::string &) { return joinOnly(3, id, 1, cfg); });
  Outcome o0 = collect(r0), o1 = collect(r1);
  ASSERT_TRUE(o0.finished && o1.finished);
  EXPECT_EQ(o0.result, tleTimeout);
  EXPECT_NE(o0.detail.find("bootstrap timed out after 500 ms: rank(s) 2 did "
                           "not join"),
            std::string::npos)
      << o0.detail;
  EXPECT_EQ(o1.result, tlePeerFailure);
  EXPECT_NE(o1.detail.find("rank 0 reported: bootstrap timed out"),
            std::string::npos)
      << o1.detail;
  EXPECT_LT(o0.seconds, 3.0);
  EXPECT_LT(o1.seconds, 3.0);
}

TEST_F(MultiProcessTest, RootThatNeverJoins) {
  tleUniqueId id;
  ASSERT_EQ(tleGetUniqueId(&id), tleSuccess);
  tleConfig_t cfg = config(300);
  Child r1 = start([&](std::string &) { return joinOnly(2, id, 1, cfg); });
  Outcome o1 = collect(r1);
  ASSERT_TRUE(o1.finished);
  EXPECT_EQ(o1.result, tleTimeout);
  EXPECT_NE(o1.detail.find("rank 0 is not listening"), std::string::npos)
      << o1.detail;
}

TEST_F(MultiProcessTest, MismatchedBarrierCountIsRefused) {
  tleUniqueId id;
  ASSERT_EQ(tleGetUniqueId(&id), tleSuccess);
  tleConfig_t a = config(5000, 64), b = config(5000, 32);
  Child r0 = start([&](std::string &) { return joinOnly(2, id, 0, a); });
  Child r1 = start([&](std::string &) { return joinOnly(2, id, 1, b); });
  for (Child *c : {&r0, &r1}) {
    Outcome o = collect(*c);
    ASSERT_TRUE(o.finished);
    EXPECT_EQ(o.result, tleInvalidArgument);
    EXPECT_NE(o.detail.find("barrier inboxes: rank 1 asked for 8192 bytes, "
                            "rank 0 for 16384"),
              std::string::npos)
        << o.detail;
  }
}

/// Joins, then either dies at once (`dies`) or tries a collective
/// allocation and reports how it failed.
tleResult_t joinThenAlloc(int n, const tleUniqueId &id, int rank, bool dies,
                          std::string &detail) {
  tleConfig_t cfg = config(5000);
  tleComm_t comm;
  if (tleResult_t r = tleCommInitRank(&comm, n, &id, rank, 0, &cfg))
    return r;
  if (dies)
    _exit(0); // no destroy, no report: the socket closes with the process
  tleMem_t mem;
  tleResult_t r = tleMemAlloc(comm, 4096, &mem);
  detail = tleGetLastErrorDetail();
  if (r == tleSuccess)
    tleMemFree(mem);
  // Destroy must not hang on the dead peer.
  if (tleCommDestroy(comm) != tleSuccess)
    return tleInternalError;
  return r;
}

class PeerDiesTest : public MultiProcessTest,
                     public testing::WithParamInterface<int> {};

TEST_P(PeerDiesTest, OthersNextCollectiveFails) {
  const int n = 3, victim = GetParam();
  tleUniqueId id;
  ASSERT_EQ(tleGetUniqueId(&id), tleSuccess);
  std::vector<Child> children;
  for (int r = 0; r < n; ++r)
    children.push_back(start([&, r](std::string &d) {
      return joinThenAlloc(n, id, r, r == victim, d);
    }));
  std::string dead = "rank " + std::to_string(victim) + " disconnected";
  for (int r = 0; r < n; ++r) {
    if (r == victim) {
      collect(children[r]);
      continue;
    }
    Outcome o = collect(children[r]);
    ASSERT_TRUE(o.finished) << "rank " << r << " hung";
    EXPECT_EQ(o.result, tlePeerFailure) << o.detail;
    EXPECT_NE(o.detail.find(dead), std::string::npos) << o.detail;
    EXPECT_LT(o.seconds, 4.0); // not the 5 s bootstrap deadline
  }
}

INSTANTIATE_TEST_SUITE_P(Victim, PeerDiesTest, testing::Values(0, 2));

/// One rank of 2 nodes x 2 ranks: writes 10 * (world rank + 1) into its own
/// signal word 1 as a kernel would, meets the others (an allocation), and
/// reads the word back through tleCommGetSignals.
tleResult_t signalRank(const tleUniqueId &id, int world, std::string &detail) {
  tleConfig_t cfg = config(5000);
  cfg.ranksPerNode = 2;
  tleComm_t comm;
  if (tleResult_t r = tleCommInitRank(&comm, 4, &id, world, 0, &cfg))
    return r;
  void *dc;
  tleCommGetDevComm(comm, &dc);
  uint64_t mine = 10 * (world + 1);
  static_cast<tle::DevComm *>(dc)->signals[1] = mine;
  tleMem_t meet;
  if (tleResult_t r = tleMemAlloc(comm, 8, &meet))
    return r;
  uint64_t got[2] = {};
  if (tleResult_t r = tleCommGetSignals(comm, 0, 2, got))
    return r;
  if (got[1] != mine) {
    detail = "world rank " + std::to_string(world) + " read " +
             std::to_string(got[1]) + " where it wrote " + std::to_string(mine);
    return tleInternalError;
  }
  tleMemFree(meet);
  return tleCommDestroy(comm);
}

// Reproducer (issue 32, item 4): on simulated nodes the signal view is
// indexed by world rank, and tleCommGetSignals read the words of the rank
// with this rank's number in the node (world rank 2 read rank 0's 10).
TEST_F(MultiProcessTest, GetSignalsReadsOwnWordsOnNodes) {
  tleUniqueId id;
  ASSERT_EQ(tleGetUniqueId(&id), tleSuccess);
  std::vector<Child> children;
  for (int w = 0; w < 4; ++w)
    children.push_back(
        start([&, w](std::string &d) { return signalRank(id, w, d); }));
  for (int w = 0; w < 4; ++w) {
    Outcome o = collect(children[w]);
    ASSERT_TRUE(o.finished) << "rank " << w << " hung";
    EXPECT_EQ(o.result, tleSuccess) << "rank " << w << ": " << o.detail;
  }
}

// Reproducer (issue 32, item 14): TLE_WATCHDOG was read after joining, so
// rank 1 alone with a bad value failed after every rank had allocated, and
// rank 0 went on as if it had joined. Rank 1 now fails before connecting:
// rank 0 sees it never join.
TEST_F(MultiProcessTest, BadWatchdogSettingFailsBeforeJoining) {
  tleUniqueId id;
  ASSERT_EQ(tleGetUniqueId(&id), tleSuccess);
  tleConfig_t cfg = config(1500);
  Child r0 = start([&](std::string &) { return joinOnly(2, id, 0, cfg); });
  Child r1 = start([&](std::string &) {
    setenv("TLE_WATCHDOG", "yes", 1);
    return joinOnly(2, id, 1, cfg);
  });
  Outcome o1 = collect(r1);
  ASSERT_TRUE(o1.finished);
  EXPECT_EQ(o1.result, tleInvalidArgument) << o1.detail;
  EXPECT_NE(o1.detail.find("TLE_WATCHDOG must be 0 or 1, not 'yes'"),
            std::string::npos)
      << o1.detail;
  Outcome o0 = collect(r0);
  ASSERT_TRUE(o0.finished);
  EXPECT_EQ(o0.result, tleTimeout) << o0.detail;
  EXPECT_NE(o0.detail.find("rank(s) 1 did not join"), std::string::npos)
      << o0.detail;
}

/// One rank of 2 nodes x 2 ranks whose world rank 3 dies after joining:
/// the survivors wait for the watchdog's record and check it names them by
/// world rank.
tleResult_t watchedRank(const tleUniqueId &id, int world, std::string &detail) {
  tleConfig_t cfg = config(5000);
  cfg.ranksPerNode = 2;
  tleComm_t comm;
  if (tleResult_t r = tleCommInitRank(&comm, 4, &id, world, 0, &cfg))
    return r;
  if (world == 3)
    _exit(0); // no destroy: the connection closes without a goodbye
  tleErrorInfo info = {};
  tleResult_t got = tleSuccess;
  for (int i = 0; i < 300 && got == tleSuccess; ++i) {
    got = tleCommGetError(comm, &info);
    usleep(10000);
  }
  tleCommDestroy(comm);
  if (got != tlePeerFailure) {
    detail = "no peer failure recorded";
    return tleInternalError;
  }
  std::string want = "rank " + std::to_string(world) + ": peer process of " +
                     "rank(s) rank 3 (node 1, local 1) died";
  if (info.rank != world ||
      std::string(info.message).find(want) == std::string::npos) {
    detail =
        "record of rank " + std::to_string(info.rank) + ": " + info.message;
    return tleInternalError;
  }
  return tleSuccess;
}

// The watchdog's record named the rank in the node where docs/runtime.md
// promises the world rank (world rank 2 reported itself as rank 0).
TEST_F(MultiProcessTest, WatchdogRecordNamesWorldRanksOnNodes) {
  tleUniqueId id;
  ASSERT_EQ(tleGetUniqueId(&id), tleSuccess);
  std::vector<Child> children;
  for (int w = 0; w < 4; ++w)
    children.push_back(
        start([&, w](std::string &d) { return watchedRank(id, w, d); }));
  for (int w = 0; w < 3; ++w) {
    Outcome o = collect(children[w]);
    ASSERT_TRUE(o.finished) << "rank " << w << " hung";
    EXPECT_EQ(o.result, tleSuccess) << "rank " << w << ": " << o.detail;
  }
  collect(children[3]);
}

} // namespace
