//===- TeamTest.cpp - INTER and WORLD teams on simulated nodes ------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Runs the device library's INTER and WORLD barriers and team signals on
// communicators of simulated nodes (tleConfig_t::ranksPerNode) over the
// emulator's network: the barrier property (no rank passes round k before
// every member of its team arrived at round k) for thread, warp and block
// groups, fused and split, over rounds and launches, on 2x4 and 4x8
// worlds and several seeds; WORLD and INTRA on the same slot index at
// once; one node (INTER completes at once, WORLD is INTRA); signals over
// all three teams (a cross-node ping-pong, a WORLD ring); deadlock reports
// that name the missing ranks by node; a timeout across nodes; the race
// checker's edges through the network (acq_rel WORLD orders, relaxed does
// not); the network's latency in emulator time; and bad configurations.
//
//===----------------------------------------------------------------------===//

#include "EmuTestUtil.h"
#include "tle/barrier.h"
#include "tle/session.h"
#include "tle/signal.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>

using namespace tle;
using namespace tle::emu;
using namespace tle::emutest;

namespace {

/// A world of `nodes` simulated nodes of `perNode` ranks (tleCommInitAll
/// with ranksPerNode).
class Nodes {
public:
  Nodes(int nodes, int perNode, int64_t timeoutMs = -1, uint32_t nBarriers = 64,
        uint32_t nSignals = 16, tleOnError_t onError = TLE_ON_ERROR_DEFAULT)
      : nodes(nodes), perNode(perNode) {
    tleConfig_t config = TLE_CONFIG_INITIALIZER;
    config.onError = onError;
    config.nBarriers = nBarriers;
    config.nSignals = nSignals;
    config.timeoutMs = timeoutMs;
    config.ranksPerNode = static_cast<uint32_t>(perNode);
    comms.resize(nodes * perNode);
    status = tleCommInitAll(comms.data(), nodes * perNode, nullptr, &config);
    if (status != tleSuccess)
      comms.clear();
  }
  ~Nodes() {
    for (tleComm_t c : comms)
      tleCommDestroy(c);
  }
  Nodes(const Nodes &) = delete;
  Nodes &operator=(const Nodes &) = delete;

  int world() const { return nodes * perNode; }

  int nodes, perNode;
  tleResult_t status;
  std::vector<tleComm_t> comms;
};

/// A symmetric buffer on every node of a world (one tleMemAllocAll per
/// node: a buffer spans the ranks of a node).
class NodeBuffer {
public:
  NodeBuffer(const Nodes &w, size_t bytes) : mems(w.world(), nullptr) {
    status = tleSuccess;
    for (int n = 0; n < w.nodes && status == tleSuccess; ++n)
      status = tleMemAllocAll(&w.comms[n * w.perNode], w.perNode, bytes,
                              &mems[n * w.perNode]);
    for (tleMem_t m : mems) {
      void *h = nullptr;
      if (m)
        tleMemGetHandle(m, &h);
      handles.push_back(h);
    }
  }
  ~NodeBuffer() {
    for (tleMem_t m : mems)
      if (m)
        tleMemFree(m);
  }
  NodeBuffer(const NodeBuffer &) = delete;
  NodeBuffer &operator=(const NodeBuffer &) = delete;

  tleResult_t status;
  std::vector<tleMem_t> mems;
  std::vector<void *> handles;
};

constexpr uint32_t kThreads = 64;

std::string teamName(int team) {
  return team == kTeamIntra ? "intra" : team == kTeamInter ? "inter" : "world";
}
std::string groupName(int group) {
  return group == kCoopThread ? "thread"
         : group == kCoopWarp ? "warp"
                              : "block";
}

/// The calling thread's group (its slot) and the group's size.
void groupOf(int group, uint32_t &slot, uint32_t &size) {
  uint32_t t = linearThreadId();
  if (group == kCoopThread)
    slot = t, size = 1;
  else if (group == kCoopWarp)
    slot = t / 32, size = 32;
  else
    slot = 0, size = kThreads;
}

/// Whether world rank `q` is in team `team` of world rank `me`.
bool inTeam(int team, int me, int q, int perNode) {
  if (team == kTeamInter)
    return q % perNode == me % perNode;
  if (team == kTeamIntra)
    return q / perNode == me / perNode;
  return true;
}

struct Case {
  int nodes, perNode, team, group;
  bool split;
};

void PrintTo(const Case &c, std::ostream *os) {
  *os << c.nodes << "x" << c.perNode << " " << teamName(c.team) << " "
      << groupName(c.group) << (c.split ? " split" : " sync");
}

std::string caseName(const testing::TestParamInfo<Case> &info) {
  const Case &c = info.param;
  return std::to_string(c.nodes) + "x" + std::to_string(c.perNode) + "_" +
         teamName(c.team) + "_" + groupName(c.group) +
         (c.split ? "_split" : "_sync");
}

class TeamBarrier : public testing::TestWithParam<Case> {};

TEST_P(TeamBarrier, NobodyPassesBeforeTheWholeTeamArrived) {
  const Case c = GetParam();
  Nodes w(c.nodes, c.perNode);
  ASSERT_EQ(w.status, tleSuccess) << tleGetLastErrorDetail();
  constexpr uint32_t kRounds = 4, kLaunches = 4;
  // arrivals[rank][slot]: members of the group that entered a round.
  std::vector<std::vector<uint32_t>> arrivals(
      w.world(), std::vector<uint32_t>(kThreads, 0));
  uint64_t early = 0;
  uint32_t threads = c.nodes * c.perNode > 8 ? 32 : kThreads;
  for (uint32_t launchIndex = 0; launchIndex < kLaunches; ++launchIndex) {
    LaunchOptions o = shape({1, 1, 1}, {threads, 1, 1});
    o.seed = 1 + launchIndex + 10 * static_cast<uint64_t>(c.group);
    // The 32-rank worlds are big for the race checker's clocks.
    o.raceCheck = w.world() <= 8;
    LaunchResult r =
        launch(w.comms.data(), w.world(), o, [&](int rank, void *dc) {
          uint32_t slot, size;
          groupOf(c.group, slot, size);
          if (c.group == kCoopBlock)
            size = threads;
          for (uint32_t k = 0; k < kRounds; ++k) {
            uint32_t round = launchIndex * kRounds + k + 1;
            ++arrivals[rank][slot];
            if (c.split) {
              flagcxDevBarrierArrive(dc, c.team, slot, 0, c.group, kOrderAcqRel,
                                     kScopeSystem);
              flagcxDevBarrierWait(dc, c.team, slot, 0, c.group, kOrderAcqRel,
                                   kScopeSystem);
            } else {
              flagcxDevBarrierSync(dc, c.team, slot, 0, c.group, kOrderAcqRel,
                                   kScopeSystem);
            }
            for (int q = 0; q < w.world(); ++q)
              if (inTeam(c.team, rank, q, c.perNode) &&
                  arrivals[q][slot] < round * size)
                ++early;
          }
        });
    ASSERT_EQ(r.result, tleSuccess) << r.message;
  }
  EXPECT_EQ(early, 0u);
}

std::vector<Case> teamCases() {
  std::vector<Case> out;
  for (auto [nodes, perNode] : {std::pair{2, 4}, std::pair{4, 8}})
    for (int team : {kTeamInter, kTeamWorld})
      for (int group : {kCoopThread, kCoopWarp, kCoopBlock})
        for (bool split : {false, true})
          // The 4x8 world runs the block group only (it is the slowest).
          if (nodes == 2 || group == kCoopBlock)
            out.push_back({nodes, perNode, team, group, split});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Emu, TeamBarrier, testing::ValuesIn(teamCases()),
                         caseName);

TEST(Teams, TheRailCountsAcrossTheEpochWrap) {
  // A slot's 32-bit epoch wraps after 2^32 rounds while its 64-bit net
  // word keeps counting. Start every rank two rounds before the wrap (its
  // INTER and WORLD epochs, and the words as 2^32 - 2 rounds left them)
  // and check the barrier property across it: a wait that compared the
  // whole word with (nNodes - 1) * epoch would pass at once after the wrap.
  Nodes w(3, 2);
  ASSERT_EQ(w.status, tleSuccess) << tleGetLastErrorDetail();
  constexpr uint32_t kSlot = 0, kBefore = 0xFFFFFFFEu, kRounds = 6;
  const uint32_t nBarriers = 64;
  for (int p = 0; p < w.world(); ++p) {
    void *dcp = nullptr;
    ASSERT_EQ(tleCommGetDevComm(w.comms[p], &dcp), tleSuccess);
    auto *dc = static_cast<DevComm *>(dcp);
    ASSERT_EQ(dc->nBarriers, nBarriers);
    dc->epochs[2 * nBarriers + kSlot] = kBefore; // INTER's
    dc->epochs[3 * nBarriers + kSlot] = kBefore; // WORLD's inter half
    auto *net = static_cast<const EmuNet *>(dc->net);
    uint64_t count = uint64_t(w.nodes - 1) * kBefore;
    net->barrier[p][kSlot] = count;             // INTER's word
    net->barrier[p][nBarriers + kSlot] = count; // WORLD's inter word
  }
  for (int team : {kTeamInter, kTeamWorld}) {
    std::vector<uint32_t> arrivals(w.world(), 0);
    uint64_t early = 0;
    for (uint64_t seed : {1, 2, 3}) {
      LaunchOptions o = shape({1, 1, 1}, {1, 1, 1});
      o.seed = seed;
      LaunchResult r =
          launch(w.comms.data(), w.world(), o, [&](int rank, void *dc) {
            for (uint32_t k = 0; k < kRounds; ++k) {
              uint32_t round = arrivals[rank] + 1;
              ++arrivals[rank];
              flagcxDevBarrierSync(dc, team, kSlot, 0, kCoopThread,
                                   kOrderAcqRel, kScopeSystem);
              for (int q = 0; q < w.world(); ++q)
                if (inTeam(team, rank, q, w.perNode) && arrivals[q] < round)
                  ++early;
            }
          });
      ASSERT_EQ(r.result, tleSuccess) << teamName(team) << ": " << r.message;
    }
    EXPECT_EQ(early, 0u) << teamName(team);
  }
}

TEST(Teams, WorldAndIntraShareNoStateOnOneSlotIndex) {
  // Block 0 runs WORLD's slot 3, block 1 INTRA's slot 3, at once.
  Nodes w(2, 4);
  ASSERT_EQ(w.status, tleSuccess) << tleGetLastErrorDetail();
  std::vector<std::vector<uint32_t>> arrivals(w.world(),
                                              std::vector<uint32_t>(2, 0));
  uint64_t early = 0;
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    for (auto &a : arrivals)
      a.assign(2, 0);
    LaunchOptions o = shape({2, 1, 1}, {32, 1, 1});
    o.seed = seed;
    LaunchResult r =
        launch(w.comms.data(), w.world(), o, [&](int rank, void *dc) {
          uint32_t b = linearBlockId();
          int team = b == 0 ? kTeamWorld : kTeamIntra;
          for (uint32_t k = 1; k <= 5; ++k) {
            if (linearThreadId() == 0)
              ++arrivals[rank][b];
            flagcxDevBarrierSync(dc, team, 3, 0, kCoopBlock, kOrderAcqRel,
                                 kScopeSystem);
            for (int q = 0; q < w.world(); ++q)
              if (inTeam(team, rank, q, w.perNode) && arrivals[q][b] < k)
                ++early;
          }
        });
    ASSERT_EQ(r.result, tleSuccess) << "seed " << seed << ": " << r.message;
  }
  EXPECT_EQ(early, 0u);
}

TEST(Teams, OneNodeInterCompletesAtOnceAndWorldIsIntra) {
  Ranks ranks(4);
  ASSERT_EQ(ranks.status, tleSuccess) << tleGetLastErrorDetail();
  std::vector<uint32_t> arrivals(4, 0);
  uint64_t early = 0;
  int32_t interSize = 0, worldSize = 0, worldRank = -1;
  LaunchResult r =
      launch(ranks.comms.data(), 4, shape({1, 1, 1}, {32, 1, 1}),
             [&](int rank, void *dc) {
               // Only rank 0 runs INTER rounds: its rail is itself.
               if (rank == 0)
                 for (int k = 0; k < 3; ++k)
                   flagcxDevBarrierSync(dc, kTeamInter, 1, 0, kCoopWarp,
                                        kOrderAcqRel, kScopeSystem);
               for (uint32_t k = 1; k <= 3; ++k) {
                 if (linearThreadId() == 0)
                   ++arrivals[rank];
                 flagcxDevBarrierSync(dc, kTeamWorld, 1, 0, kCoopWarp,
                                      kOrderAcqRel, kScopeSystem);
                 for (int q = 0; q < 4; ++q)
                   if (arrivals[q] < k)
                     ++early;
               }
               if (rank == 2 && linearThreadId() == 0) {
                 interSize = tleDevCommGetTeamSize(dc, kTeamInter);
                 worldSize = flagcxDevCommGetSize(dc);
                 worldRank = flagcxDevCommGetRank(dc);
               }
             });
  ASSERT_EQ(r.result, tleSuccess) << r.message;
  EXPECT_EQ(early, 0u);
  EXPECT_EQ(interSize, 1);
  EXPECT_EQ(worldSize, 4);
  EXPECT_EQ(worldRank, 2);
}

TEST(Teams, QueriesAndCommRanksAreTheWorlds) {
  Nodes w(3, 2);
  ASSERT_EQ(w.status, tleSuccess) << tleGetLastErrorDetail();
  for (int q = 0; q < 6; ++q) {
    int rank = -1, size = -1, node = -1, perNode = -1;
    ASSERT_EQ(tleCommRank(w.comms[q], &rank), tleSuccess);
    ASSERT_EQ(tleCommSize(w.comms[q], &size), tleSuccess);
    ASSERT_EQ(tleCommNode(w.comms[q], &node, &perNode), tleSuccess);
    EXPECT_EQ(rank, q);
    EXPECT_EQ(size, 6);
    EXPECT_EQ(node, q / 2);
    EXPECT_EQ(perNode, 2);
  }
  std::vector<int32_t> seen(6 * 6, -1);
  LaunchResult r = launch(w.comms.data(), 6, shape({1, 1, 1}, {1, 1, 1}),
                          [&](int rank, void *dc) {
                            int32_t *s = &seen[rank * 6];
                            s[0] = tleDevCommGetTeamRank(dc, kTeamIntra);
                            s[1] = tleDevCommGetTeamSize(dc, kTeamIntra);
                            s[2] = tleDevCommGetTeamRank(dc, kTeamInter);
                            s[3] = tleDevCommGetTeamSize(dc, kTeamInter);
                            s[4] = flagcxDevCommGetRank(dc);
                            s[5] = flagcxDevCommGetSize(dc);
                          });
  ASSERT_EQ(r.result, tleSuccess) << r.message;
  for (int q = 0; q < 6; ++q) {
    EXPECT_EQ(seen[q * 6 + 0], q % 2);
    EXPECT_EQ(seen[q * 6 + 1], 2);
    EXPECT_EQ(seen[q * 6 + 2], q / 2);
    EXPECT_EQ(seen[q * 6 + 3], 3);
    EXPECT_EQ(seen[q * 6 + 4], q);
    EXPECT_EQ(seen[q * 6 + 5], 6);
  }
}

TEST(Teams, SignalsOverEveryTeam) {
  // 2 nodes x 3 ranks. Round k: INTER ping-pong between the rail peers of
  // each local rank (node 0 pings, node 1 pongs), then a WORLD ring (every
  // rank adds to the next world rank's word 1), then an INTRA add to the
  // next local rank's word 2; each waits for its words to reach k.
  Nodes w(2, 3);
  ASSERT_EQ(w.status, tleSuccess) << tleGetLastErrorDetail();
  constexpr uint64_t kRounds = 5;
  std::vector<uint64_t> got(w.world() * 3, 0);
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    for (tleComm_t comm : w.comms) {
      void *dcp = nullptr;
      ASSERT_EQ(tleCommGetDevComm(comm, &dcp), tleSuccess);
      std::memset(static_cast<DevComm *>(dcp)->signals, 0, 3 * 8);
    }
    LaunchOptions o = shape({1, 1, 1}, {32, 1, 1});
    o.seed = seed;
    LaunchResult r =
        launch(w.comms.data(), w.world(), o, [&](int rank, void *dc) {
          int node = rank / 3, local = rank % 3;
          for (uint64_t k = 1; k <= kRounds; ++k) {
            if (node == 0) {
              flagcxDevSignalInc(dc, kTeamInter, 1, 0, 0, kCoopWarp,
                                 kScopeSystem);
              flagcxDevWaitSignal(dc, 0, k, 64, 0, kCoopWarp, kOrderAcquire);
            } else {
              flagcxDevWaitSignal(dc, 0, k, 64, 0, kCoopWarp, kOrderAcquire);
              flagcxDevSignalInc(dc, kTeamInter, 0, 0, 0, kCoopWarp,
                                 kScopeSystem);
            }
            tleTritonTeamSignal(reinterpret_cast<int64_t>(dc), kTeamWorld,
                                (rank + 1) % 6, 1, 1, kCoopWarp);
            flagcxDevWaitSignal(dc, 1, k, 64, 0, kCoopWarp, kOrderAcquire);
            flagcxDevSignalAdd(dc, kTeamIntra, (local + 1) % 3, 2, 1, 0,
                               kCoopThread, kScopeSystem);
            if (linearThreadId() == 0)
              flagcxDevWaitSignal(dc, 2, 32 * k, 64, 0, kCoopThread,
                                  kOrderAcquire);
            flagcxDevBarrierSync(dc, kTeamWorld, 0, 0, kCoopWarp, kOrderAcqRel,
                                 kScopeSystem);
          }
          if (linearThreadId() == 0)
            for (uint32_t s = 0; s < 3; ++s)
              got[rank * 3 + s] =
                  flagcxDevReadSignal(dc, s, 64, 0, kOrderAcquire);
        });
    ASSERT_EQ(r.result, tleSuccess) << "seed " << seed << ": " << r.message;
    for (int q = 0; q < w.world(); ++q) {
      EXPECT_EQ(got[q * 3 + 0], kRounds) << "rank " << q;
      EXPECT_EQ(got[q * 3 + 1], kRounds) << "rank " << q;
      EXPECT_EQ(got[q * 3 + 2], 32 * kRounds) << "rank " << q;
    }
  }
}

TEST(Teams, ABarrierSessionTakesATeam) {
  // tle::BarrierSession over WORLD and INTER on 2 nodes x 4 ranks: nobody
  // leaves a WORLD sync before all 8 ranks entered its round, nor an INTER
  // arrive + wait before its rail peer (a session that ignored its team
  // would be an INTRA barrier, which lets the other node's ranks lag).
  Nodes w(2, 4);
  ASSERT_EQ(w.status, tleSuccess) << tleGetLastErrorDetail();
  constexpr uint32_t kRounds = 4;
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    std::vector<uint32_t> entered(w.world(), 0);
    uint64_t early = 0;
    LaunchOptions o = shape({1, 1, 1}, {32, 1, 1});
    o.seed = seed;
    LaunchResult r =
        launch(w.comms.data(), w.world(), o, [&](int rank, void *dc) {
          int node = rank / 4, local = rank % 4;
          tle::BarrierSession world(dc, kTeamWorld, kCoopWarp, 0);
          tle::BarrierSession rail(dc, kTeamInter, kCoopWarp, 1);
          for (uint32_t k = 1; k <= kRounds; ++k) {
            if (linearThreadId() == 0)
              ++entered[rank];
            world.sync(kOrderAcqRel);
            for (int q = 0; q < w.world(); ++q)
              if (entered[q] < 2 * k - 1)
                ++early;
            if (linearThreadId() == 0)
              ++entered[rank];
            rail.arrive(kOrderAcqRel);
            EXPECT_EQ(rail.tryWait(kOrderAcqRel), 0);
            if (entered[(1 - node) * 4 + local] < 2 * k)
              ++early;
          }
        });
    ASSERT_EQ(r.result, tleSuccess) << "seed " << seed << ": " << r.message;
    EXPECT_EQ(early, 0u) << "seed " << seed;
  }
}

TEST(Teams, TheTypedApiTakesATeam) {
  // 2 nodes x 4 ranks through tle/barrier.h and tle/signal.h with an
  // explicit team: rounds of a WORLD barrier (nobody passes before all 8
  // ranks entered the round) and an INTER one (nobody before its rail
  // peer), then a WORLD ring and an INTER exchange of signals.
  Nodes w(2, 4);
  ASSERT_EQ(w.status, tleSuccess) << tleGetLastErrorDetail();
  constexpr uint32_t kRounds = 4;
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    std::vector<uint32_t> entered(w.world(), 0);
    uint64_t early = 0;
    std::vector<uint64_t> got(w.world() * 2, 0);
    for (tleComm_t comm : w.comms) {
      void *dcp = nullptr;
      ASSERT_EQ(tleCommGetDevComm(comm, &dcp), tleSuccess);
      std::memset(static_cast<DevComm *>(dcp)->signals, 0, 2 * 8);
    }
    LaunchOptions o = shape({1, 1, 1}, {32, 1, 1});
    o.seed = seed;
    LaunchResult r =
        launch(w.comms.data(), w.world(), o, [&](int rank, void *dc) {
          int node = rank / 4, local = rank % 4;
          for (uint32_t k = 1; k <= kRounds; ++k) {
            if (linearThreadId() == 0)
              ++entered[rank];
            tle::barrierSync(dc, kTeamWorld, kCoopWarp, 0, kOrderAcqRel);
            for (int q = 0; q < w.world(); ++q)
              if (entered[q] < 2 * k - 1)
                ++early;
            if (linearThreadId() == 0)
              ++entered[rank];
            tle::barrierArrive(dc, kTeamInter, kCoopWarp, 1, kOrderAcqRel);
            tle::barrierWait(dc, kTeamInter, kCoopWarp, 1, kOrderAcqRel);
            if (entered[(1 - node) * 4 + local] < 2 * k)
              ++early;
          }
          tle::signalInc(dc, kTeamWorld, (rank + 1) % 8, 0, kCoopWarp);
          tle::signalWait(dc, 0, 1, kCoopWarp, kOrderAcquire);
          tle::signalAdd(dc, kTeamInter, 1 - node, 1, 5, kCoopWarp);
          tle::signalWait(dc, 1, 5, kCoopWarp, kOrderAcquire);
          if (linearThreadId() == 0)
            for (uint32_t s = 0; s < 2; ++s)
              got[rank * 2 + s] = tle::readSignal(dc, s);
        });
    ASSERT_EQ(r.result, tleSuccess) << "seed " << seed << ": " << r.message;
    EXPECT_EQ(early, 0u) << "seed " << seed;
    for (int q = 0; q < w.world(); ++q) {
      EXPECT_EQ(got[q * 2 + 0], 1u) << "rank " << q;
      EXPECT_EQ(got[q * 2 + 1], 5u) << "rank " << q;
    }
  }
}

TEST(Teams, BadPeersAreNamedPerTeam) {
  Nodes w(2, 2);
  ASSERT_EQ(w.status, tleSuccess) << tleGetLastErrorDetail();
  LaunchResult r = launch(w.comms.data(), 4, shape({1, 1, 1}, {1, 1, 1}),
                          [&](int rank, void *dc) {
                            if (rank == 3)
                              flagcxDevSignalInc(dc, kTeamInter, 2, 0, 0,
                                                 kCoopThread, kScopeSystem);
                          });
  ASSERT_EQ(r.result, tleInvalidArgument) << r.message;
  // The bound is the team's: 2 nodes (it used to say "the communicator has
  // 2 ranks", the size of the node, whatever the team).
  EXPECT_TRUE(contains(r.message, "peer 2 is out of range (team INTER has 2 "
                                  "members, one per node)"))
      << r.message;
  r = launch(w.comms.data(), 4, shape({1, 1, 1}, {1, 1, 1}),
             [&](int rank, void *dc) {
               if (rank == 0)
                 flagcxDevSignalInc(dc, kTeamWorld, 4, 0, 0, kCoopThread,
                                    kScopeSystem);
             });
  ASSERT_EQ(r.result, tleInvalidArgument) << r.message;
  EXPECT_TRUE(
      contains(r.message, "peer 4 is out of range (team WORLD has 4 ranks)"))
      << r.message;
  r = launch(w.comms.data(), 4, shape({1, 1, 1}, {1, 1, 1}),
             [&](int rank, void *dc) {
               if (rank == 1)
                 flagcxDevBarrierSync(dc, kTeamWorld, 0, 0, 5, kOrderAcqRel,
                                      kScopeSystem);
             });
  ASSERT_EQ(r.result, tleInvalidArgument) << r.message;
  EXPECT_TRUE(contains(r.message, "group kind")) << r.message;
}

// Reproducer (issue 32, item 9): the device trace named events by the rank
// in the node, so 2 x 2 ranks came out as two processes. Each world rank
// is its own process, named by its world rank and its node (issue 33,
// item 16).
TEST(Teams, DeviceTracesNameWorldRanks) {
  Nodes w(2, 2);
  ASSERT_EQ(w.status, tleSuccess) << tleGetLastErrorDetail();
  for (tleComm_t c : w.comms)
    ASSERT_EQ(tleCommTraceStart(c, 0), tleSuccess) << tleGetLastErrorDetail();
  LaunchResult r = launch(
      w.comms.data(), 4, shape({1, 1, 1}, {32, 1, 1}), [](int, void *dc) {
        flagcxIntraBarrierSyncS(dc, kCoopBlock, 0, false, kOrderAcqRel);
      });
  ASSERT_EQ(r.result, tleSuccess) << r.message;
  std::string path = testing::TempDir() + "tle-node-trace.json";
  ASSERT_EQ(tleTraceWrite(w.comms.data(), 4, path.c_str()), tleSuccess)
      << tleGetLastErrorDetail();
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::string json = text.str();
  // Each process is named with its node, as reports name ranks.
  for (int rank = 0; rank < 4; ++rank)
    EXPECT_TRUE(contains(
        json, "{\"name\":\"process_name\",\"ph\":\"M\","
              "\"pid\":" +
                  std::to_string(rank) + ",\"args\":{\"name\":\"rank " +
                  std::to_string(rank) + " (node " + std::to_string(rank / 2) +
                  ", local " + std::to_string(rank % 2) + ")\"}}"))
        << rank << ": " << json;
  for (tleComm_t c : w.comms)
    tleCommTraceStop(c);
  std::remove(path.c_str());
}

TEST(Teams, SlotChecksKnowTheTeams) {
  Nodes w(2, 2);
  ASSERT_EQ(w.status, tleSuccess) << tleGetLastErrorDetail();
  // Each node's INTRA slot 3 (and each rail's INTER slot 3) is a barrier
  // of its own: the nodes may use it with different groups.
  LaunchResult r = launch(w.comms.data(), 4, shape({1, 1, 1}, {32, 1, 1}),
                          [&](int rank, void *dc) {
                            int group = rank < 2 ? kCoopWarp : kCoopBlock;
                            flagcxDevBarrierSync(dc, kTeamIntra, 3, 0, group,
                                                 kOrderAcqRel, kScopeSystem);
                            group = rank % 2 ? kCoopWarp : kCoopBlock;
                            flagcxDevBarrierSync(dc, kTeamInter, 3, 0, group,
                                                 kOrderAcqRel, kScopeSystem);
                          });
  EXPECT_EQ(r.result, tleSuccess) << r.message;
  // WORLD's slot 3 is one barrier: different groups are a misuse, named
  // by the team's slot.
  r = launch(w.comms.data(), 4, shape({1, 1, 1}, {32, 1, 1}),
             [&](int rank, void *dc) {
               flagcxDevBarrierSync(dc, kTeamWorld, 3, 0,
                                    rank == 0 ? kCoopWarp : kCoopBlock,
                                    kOrderAcqRel, kScopeSystem);
             });
  ASSERT_EQ(r.result, tleBarrierMisuse) << r.message;
  EXPECT_TRUE(contains(r.message, "ranks use slot 3 of team world with "
                                  "different groups"))
      << r.message;
}

TEST(Teams, AMissingInterArriveIsADeadlockNamingTheRank) {
  Nodes w(2, 4);
  ASSERT_EQ(w.status, tleSuccess) << tleGetLastErrorDetail();
  LaunchResult r = launch(
      w.comms.data(), 8, shape({1, 1, 1}, {32, 1, 1}), [&](int rank, void *dc) {
        flagcxDevBarrierSync(dc, kTeamInter, 2, 0, kCoopWarp, kOrderAcqRel,
                             kScopeSystem);
        // World rank 6 (node 1, local 2) skips the second round.
        if (rank == 6)
          return;
        flagcxDevBarrierSync(dc, kTeamInter, 2, 0, kCoopWarp, kOrderAcqRel,
                             kScopeSystem);
      });
  ASSERT_EQ(r.result, tleDeadlock) << r.message;
  EXPECT_TRUE(contains(r.message,
                       "\n  rank 2 (node 0, local 2) block 0 waits in "
                       "inter barrier wait"))
      << r.message;
  EXPECT_TRUE(contains(r.message, "on slot 2 of team inter for epoch 2"))
      << r.message;
  EXPECT_TRUE(contains(r.message, "missing: rank 6 (node 1, local 2)"))
      << r.message;
  // The other rails completed: nobody else waits.
  EXPECT_FALSE(contains(r.message, "rank 1 (node 0")) << r.message;
}

TEST(Teams, AMissingWorldArriveNamesTheRankOnEveryNode) {
  Nodes w(2, 2);
  ASSERT_EQ(w.status, tleSuccess) << tleGetLastErrorDetail();
  LaunchResult r = launch(
      w.comms.data(), 4, shape({1, 1, 1}, {32, 1, 1}), [&](int rank, void *dc) {
        if (rank != 3)
          flagcxDevBarrierSync(dc, kTeamWorld, 0, 0, kCoopWarp, kOrderAcqRel,
                               kScopeSystem);
      });
  ASSERT_EQ(r.result, tleDeadlock) << r.message;
  // Node 1's other rank waits for it in the intra half; node 0's ranks
  // for node 1's in the inter half.
  EXPECT_TRUE(contains(r.message, "\n  rank 2 (node 1, local 0) block 0 "
                                  "waits in world barrier wait (intra half) "
                                  "on slot 0 of team world for epoch 1"))
      << r.message;
  EXPECT_TRUE(contains(r.message, "missing peers: rank 3 (node 1, local 1)"))
      << r.message;
  EXPECT_TRUE(contains(r.message, "\n  rank 1 (node 0, local 1) block 0 "
                                  "waits in world barrier wait (inter half)"))
      << r.message;
  EXPECT_TRUE(contains(r.message, "missing: rank 3 (node 1, local 1)"))
      << r.message;
  // The result names the first waiter's missing ranks as world ranks:
  // rank 0's rail peer, rank 2, still in its intra half.
  EXPECT_EQ(r.error.rank, 0);
  EXPECT_EQ(r.error.missingMask, 1u << 2) << r.message;
  tleErrorInfo info{};
  EXPECT_EQ(tleCommGetError(w.comms[0], &info), tleDeadlock);
  EXPECT_EQ(info.rank, 0);
  EXPECT_EQ(info.missingMask, 1u << 2);
  EXPECT_TRUE(contains(info.message, "rank 0 (node 0, local 0) block 0"))
      << info.message;
}

TEST(Teams, AMissingCrossNodeSignalIsADeadlock) {
  Nodes w(2, 2);
  ASSERT_EQ(w.status, tleSuccess) << tleGetLastErrorDetail();
  LaunchResult r = launch(
      w.comms.data(), 4, shape({1, 1, 1}, {1, 1, 1}), [&](int rank, void *dc) {
        // Rank 3 signals rank 0's word 4 once; rank 0 wants two.
        if (rank == 3)
          flagcxDevSignalInc(dc, kTeamWorld, 0, 4, 0, kCoopThread,
                             kScopeSystem);
        if (rank == 0)
          flagcxDevWaitSignal(dc, 4, 2, 64, 0, kCoopThread, kOrderAcquire);
      });
  ASSERT_EQ(r.result, tleDeadlock) << r.message;
  EXPECT_TRUE(contains(r.message, "\n  rank 0 (node 0, local 0) block 0 "
                                  "waits in signal wait"))
      << r.message;
  EXPECT_TRUE(contains(r.message, "for a value >= 2 (it holds 1)"))
      << r.message;
}

TEST(Teams, AWaitAcrossNodesTimesOut) {
  // Only node 0 runs here: its INTER wait for node 1 has no local progress
  // to wait for and is no deadlock, so the device deadline ends it.
  Nodes w(2, 2, 200);
  ASSERT_EQ(w.status, tleSuccess) << tleGetLastErrorDetail();
  auto start = std::chrono::steady_clock::now();
  LaunchResult r = launch(
      w.comms.data(), 2, shape({1, 1, 1}, {32, 1, 1}), [&](int, void *dc) {
        flagcxDevBarrierSync(dc, kTeamInter, 5, 0, kCoopWarp, kOrderAcqRel,
                             kScopeSystem);
      });
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  ASSERT_EQ(r.result, tleTimeout) << r.message;
  EXPECT_GE(seconds, 0.2);
  EXPECT_EQ(r.error.slot, 5u);
  EXPECT_EQ(r.error.epoch, 1u);
  // The record names world ranks: the waiter and its rail peer.
  EXPECT_TRUE(r.error.rank == 0 || r.error.rank == 1) << r.error.rank;
  EXPECT_EQ(r.error.missingMask, 1u << (r.error.rank + 2));
  std::string local = std::to_string(r.error.rank);
  EXPECT_TRUE(contains(r.message, "rank " + local + " (node 0, local " + local +
                                      ") block 0 thread 0"))
      << r.message;
  EXPECT_TRUE(contains(r.message, "timed out after"));
  EXPECT_TRUE(contains(r.message, "missing peers: rank " +
                                      std::to_string(r.error.rank + 2) +
                                      " (node 1, local " + local + ")"))
      << r.message;
}

TEST(Teams, ARailWaitPastTheDeadlineUnderReturnReturnsTheTimeout) {
  // Under onError = return a rail wait that times out (INTER's, and WORLD's
  // inter half) must hand tleTimeout to every thread of the group, as the
  // intra barrier's wait does: a kernel that got 0 would carry on after a
  // barrier that never completed. Only node 0 runs, so node 1 never
  // arrives and the device deadline ends the wait.
  for (int team : {kTeamInter, kTeamWorld}) {
    Nodes w(2, 2, 200, 64, 16, TLE_ON_ERROR_RETURN);
    ASSERT_EQ(w.status, tleSuccess) << tleGetLastErrorDetail();
    std::vector<int> status(2 * kThreads, -1), later(2 * kThreads, -1);
    LaunchResult r =
        launch(w.comms.data(), 2, shape({1, 1, 1}, {kThreads, 1, 1}),
               [&](int rank, void *dc) {
                 uint32_t t = rank * kThreads + linearThreadId();
                 auto comm = reinterpret_cast<int64_t>(dc);
                 status[t] = tleTritonTeamBarrier(comm, team, kBarrierSync,
                                                  kCoopBlock, 5, kOrderAcqRel);
                 // The fault word is set: a later wait gives up at once.
                 later[t] = tleTritonTeamBarrier(comm, team, kBarrierSync,
                                                 kCoopBlock, 6, kOrderAcqRel);
               });
    ASSERT_EQ(r.result, tleTimeout) << teamName(team) << ": " << r.message;
    for (uint32_t t = 0; t < 2 * kThreads; ++t) {
      EXPECT_EQ(status[t], tleTimeout) << teamName(team) << " thread " << t;
      EXPECT_EQ(later[t], tleTimeout) << teamName(team) << " thread " << t;
    }
    EXPECT_EQ(r.error.slot, 5u) << teamName(team);
    EXPECT_TRUE(contains(r.message, "timed out after")) << r.message;
  }
}

/// Rank 1 writes its own buffer, a WORLD barrier of `order`, then rank 0
/// reads rank 1's copy (same node; every rank also crosses the network).
tleResult_t worldExchange(int order, std::string &message) {
  Nodes w(2, 2);
  EXPECT_EQ(w.status, tleSuccess) << tleGetLastErrorDetail();
  NodeBuffer buf(w, 64 * sizeof(uint32_t));
  EXPECT_EQ(buf.status, tleSuccess) << tleGetLastErrorDetail();
  LaunchOptions o = shape({1, 1, 1}, {32, 1, 1});
  o.seed = 7;
  LaunchResult r = launch(w.comms.data(), 4, o, [&](int rank, void *dc) {
    uint32_t t = linearThreadId();
    const void *mem = buf.handles[rank];
    if (rank == 1)
      write(static_cast<uint32_t *>(
                flagcxGetLocalPointerS(mem, t * sizeof(uint32_t))),
            t + 1, "the store");
    flagcxDevBarrierSync(dc, kTeamWorld, 0, 0, kCoopWarp, order, kScopeSystem);
    if (rank == 0)
      (void)read(static_cast<uint32_t *>(
                     flagcxGetIntraPointerS(mem, t * sizeof(uint32_t), 1)),
                 "the load");
  });
  message = r.message;
  return r.result;
}

TEST(Teams, TheWorldBarrierOrdersAsItsOrderSays) {
  // The arrive releases with the order's release half; the wait acquires
  // unless the order is relaxed (docs/design.md, "Teams").
  for (int order : {kOrderRelaxed, kOrderAcquire, kOrderRelease, kOrderAcqRel,
                    kOrderSeqCst}) {
    std::string message;
    bool orders = order == kOrderRelease || order >= kOrderAcqRel;
    EXPECT_EQ(worldExchange(order, message), orders ? tleSuccess : tleDataRace)
        << "order " << order << ": " << message;
  }
}

TEST(Teams, AnAcqRelWorldBarrierOrdersARelaxedOneDoesNot) {
  std::string message;
  EXPECT_EQ(worldExchange(kOrderAcqRel, message), tleSuccess) << message;
  EXPECT_EQ(worldExchange(kOrderRelaxed, message), tleDataRace) << message;
  EXPECT_TRUE(contains(message, "write by rank 1 (node 0, local 1)"))
      << message;
  EXPECT_TRUE(contains(message, "read by rank 0 (node 0, local 0)")) << message;
}

TEST(Teams, CrossNodeSignalsCarryHappensBefore) {
  // Rank 2 (node 1) writes its own buffer and signals rank 0 (node 0)
  // over the network; rank 0 waits, then signals rank 3 back on node 1,
  // which reads rank 2's copy after its wait: the only chain from the
  // store to the load crosses the network twice, and holds only when the
  // waits acquire.
  for (int order : {kOrderAcquire, kOrderRelaxed}) {
    Nodes w(2, 2);
    ASSERT_EQ(w.status, tleSuccess) << tleGetLastErrorDetail();
    NodeBuffer buf(w, 64);
    ASSERT_EQ(buf.status, tleSuccess);
    LaunchOptions o = shape({1, 1, 1}, {1, 1, 1});
    o.seed = 3;
    LaunchResult r = launch(w.comms.data(), 4, o, [&](int rank, void *dc) {
      const void *mem = buf.handles[rank];
      if (rank == 2) {
        write(static_cast<uint32_t *>(flagcxGetLocalPointerS(mem, 0)), 7u,
              "the store");
        flagcxDevSignalInc(dc, kTeamWorld, 0, 0, 0, kCoopThread, kScopeSystem);
      } else if (rank == 0) {
        flagcxDevWaitSignal(dc, 0, 1, 64, 0, kCoopThread, order);
        flagcxDevSignalInc(dc, kTeamWorld, 3, 1, 0, kCoopThread, kScopeSystem);
      } else if (rank == 3) {
        flagcxDevWaitSignal(dc, 1, 1, 64, 0, kCoopThread, order);
        (void)read(static_cast<uint32_t *>(flagcxGetIntraPointerS(mem, 0, 0)),
                   "the load");
      }
    });
    if (order == kOrderAcquire)
      EXPECT_EQ(r.result, tleSuccess) << r.message;
    else
      EXPECT_EQ(r.result, tleDataRace) << r.message;
  }
}

/// Signal word 0 of every rank of `w` back to 0 (a launch's waits start
/// from it).
void zeroSignal0(const Nodes &w) {
  for (tleComm_t comm : w.comms) {
    void *dcp = nullptr;
    ASSERT_EQ(tleCommGetDevComm(comm, &dcp), tleSuccess);
    static_cast<DevComm *>(dcp)->signals[0] = 0;
  }
}

TEST(Teams, TheNetworkHonoursItsLatency) {
  Nodes w(2, 1);
  ASSERT_EQ(w.status, tleSuccess) << tleGetLastErrorDetail();
  // A million steps: every thread waits for the message long before, and
  // the network's clock skips to its delivery (no deadlock, no wait).
  for (uint64_t latency : {0ull, 10ull, 500ull, 1000000ull}) {
    uint64_t sent = 0, seen = 0;
    LaunchOptions o = shape({1, 1, 1}, {1, 1, 1});
    o.netLatencySteps = latency;
    zeroSignal0(w);
    LaunchResult r = launch(w.comms.data(), 2, o, [&](int rank, void *dc) {
      if (rank == 0) {
        sent = netNow();
        flagcxDevSignalInc(dc, kTeamInter, 1, 0, 0, kCoopThread, kScopeSystem);
      } else {
        flagcxDevWaitSignal(dc, 0, 1, 64, 0, kCoopThread, kOrderAcquire);
        seen = netNow();
      }
    });
    ASSERT_EQ(r.result, tleSuccess) << r.message;
    EXPECT_GE(seen, sent + latency) << "latency " << latency;
  }
}

// Nor later while other threads keep running: the sender goes on taking
// steps (a sync of its one-thread block is a step) for long after the
// message is due, so the waiter sees it about `latency` steps after the
// send, not when the sender stops (every step checks for messages due,
// whichever fiber draws the next thread).
TEST(Teams, TheNetworkDeliversOnTimeWhileOthersRun) {
  Nodes w(2, 1);
  ASSERT_EQ(w.status, tleSuccess) << tleGetLastErrorDetail();
  constexpr uint64_t kLatency = 200, kBusySteps = 20000;
  for (uint64_t seed : {1ull, 2ull, 3ull}) {
    uint64_t sent = 0, seen = 0;
    LaunchOptions o = shape({1, 1, 1}, {1, 1, 1});
    o.netLatencySteps = kLatency;
    o.seed = seed;
    zeroSignal0(w);
    LaunchResult r = launch(w.comms.data(), 2, o, [&](int rank, void *dc) {
      if (rank == 0) {
        sent = netNow();
        flagcxDevSignalInc(dc, kTeamInter, 1, 0, 0, kCoopThread, kScopeSystem);
        for (uint64_t i = 0; i < kBusySteps; ++i)
          syncThreads();
      } else {
        flagcxDevWaitSignal(dc, 0, 1, 64, 0, kCoopThread, kOrderAcquire);
        seen = netNow();
      }
    });
    ASSERT_EQ(r.result, tleSuccess) << r.message;
    EXPECT_GE(seen, sent + kLatency) << "seed " << seed;
    // The waiter is one of two runnable threads once the message lands: a
    // few dozen steps at most, against kBusySteps if delivery waited.
    EXPECT_LT(seen, sent + kLatency + kBusySteps / 4) << "seed " << seed;
  }
}

// Net adds still in flight when a launch's threads have all exited land
// (a network delivers what was sent): a signal sent last reaches its word,
// launch after launch, and an INTER arrive in one launch completes a wait
// in the next instead of looking like a deadlock.
TEST(Teams, MessagesInFlightAtALaunchsEndLand) {
  Nodes w(2, 2);
  ASSERT_EQ(w.status, tleSuccess) << tleGetLastErrorDetail();
  LaunchOptions o = shape({1, 1, 1}, {1, 1, 1});
  o.netLatencySteps = 1000;
  for (int k = 1; k <= 3; ++k) {
    LaunchResult r = launch(w.comms.data(), 4, o, [&](int rank, void *dc) {
      // Signal word 5 of the rail peer (INTER rank 1 - mine), then exit.
      flagcxDevSignalInc(dc, kTeamInter, 1 - rank / 2, 5, 0, kCoopThread,
                         kScopeSystem);
    });
    ASSERT_EQ(r.result, tleSuccess) << r.message;
    for (int rank = 0; rank < 4; ++rank) {
      uint64_t v = 0;
      ASSERT_EQ(tleCommGetSignals(w.comms[rank], 5, 1, &v), tleSuccess);
      EXPECT_EQ(v, uint64_t(k)) << "rank " << rank << " after launch " << k;
    }
  }
  LaunchResult arrive = launch(w.comms.data(), 4, o, [&](int, void *dc) {
    flagcxDevBarrierArrive(dc, kTeamInter, 1, 0, kCoopThread, kOrderRelease,
                           kScopeSystem);
  });
  ASSERT_EQ(arrive.result, tleSuccess) << arrive.message;
  LaunchResult wait = launch(w.comms.data(), 4, o, [&](int, void *dc) {
    flagcxDevBarrierWait(dc, kTeamInter, 1, 0, kCoopThread, kOrderAcquire,
                         kScopeSystem);
  });
  EXPECT_EQ(wait.result, tleSuccess) << wait.message;
}

TEST(Teams, BadNodeConfigsAreRefused) {
  tleConfig_t config = TLE_CONFIG_INITIALIZER;
  std::vector<tleComm_t> comms(6, nullptr);
  config.ranksPerNode = 4;
  EXPECT_EQ(tleCommInitAll(comms.data(), 6, nullptr, &config),
            tleInvalidArgument);
  EXPECT_TRUE(contains(tleGetLastErrorDetail(), "ranksPerNode 4"));
  config.ranksPerNode = 7;
  EXPECT_EQ(tleCommInitAll(comms.data(), 6, nullptr, &config),
            tleInvalidArgument);
  for (tleComm_t c : comms)
    EXPECT_EQ(c, nullptr);
  config.ranksPerNode = 3;
  config.backend = tleBackendCuda;
  EXPECT_EQ(tleCommInitAll(comms.data(), 6, nullptr, &config), tleNotSupported);
  EXPECT_TRUE(contains(tleGetLastErrorDetail(), "tleCommInitFromNccl"));
}

} // namespace
