//===- NetTest.cpp - The network path and the wait cadences, on the CPU ---===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The device library as the GPU header build with TLE_WITH_NCCL_GIN
// compiles it, run on the CPU: its source against the recording platform
// (RecordingPlatform.h) with the GPU's clock cadence (a clock read every
// 128 failed polls, PlatformCuda.h), and NCCL's device API replaced by a
// fake (fake-nccl/nccl_device.h) that records every GIN call with the
// world rank and the signal word it names. The emulator cannot see either:
// it has its own network (kNetEmu) and polls the fault word at every poll.
//
//   - every signal add, of every team, on a GIN communicator is one GIN
//     signal to the peer's world rank, on the signal's own word (the
//     signal words are net words 0..nSignals-1), with the system-scope
//     release NetNccl.h asks for;
//   - the INTER barrier and WORLD's inter half add to and poll their own
//     net words (after the signal words: INTER's, then WORLD's), and the
//     poll acquires when the order says (INTER: its acquire half; WORLD:
//     every order but relaxed, as WORLD's intra half, which forwards what
//     it acquired to the other nodes);
//   - the fault word's cadence: a wait that cannot complete, on a
//     communicator whose fault word is set, gives up after the 32 failed
//     polls docs/device-library.md documents for GPUs (a quarter of the
//     clock's 128), for the barrier, the signal and the rail waits.
//
//===----------------------------------------------------------------------===//

#define TLE_TEST_PLATFORM "RecordingPlatform.h"
#define TLE_REC_POLLS_PER_CLOCK_READ 128
#define TLE_WITH_NCCL_GIN 1

#include "tle/barrier.h"
#include "tle/impl/Team.h"
#include "tle/signal.h"

#include <gtest/gtest.h>

#include <cstring>
#include <sstream>
#include <vector>

using namespace tle;
using Log = std::vector<std::string>;
using fake_nccl::Call;

namespace {

/// What the fake saw, in order.
std::vector<Call> &calls() {
  static std::vector<Call> c;
  return c;
}

} // namespace

void fake_nccl::onCall(const Call &call) {
  calls().push_back(call);
  std::ostringstream os;
  os << (call.kind == Call::SignalAdd    ? "gin.signal"
         : call.kind == Call::ReadSignal ? "gin.read"
                                         : "gin.reset")
     << " rank " << call.worldRank << " word " << call.signal;
  rec::state().log.push_back(os.str());
}

namespace {

constexpr uint32_t kSlots = 4;
constexpr uint32_t kStride = 8;
constexpr uint32_t kSignals = 4;
/// Net words per rank: the signal words, INTER's slots, WORLD's slots.
constexpr uint32_t kNetWords = kSignals + 2 * kSlots;
constexpr uint32_t kNodes = 2, kPerNode = 2;
constexpr uint32_t kEpoch = 7;
/// docs/device-library.md, "Fault word": on GPUs a wait's first look after
/// 512 failed polls, then one every 32.
constexpr uint32_t kDocumentedPollsBeforeAbortCheck = 512;
constexpr uint32_t kDocumentedPollsPerAbortCheck = 32;

struct RankMem {
  uint32_t epochs[kEpochSets * kSlots];
  uint32_t gridCount[kSlots];
  uint32_t inbox[kInboxSets * kSlots * kStride];
  uint64_t signals[kSignals];
  ErrorRecord error;
  DevComm comm;
};

/// A world of 2 nodes of 2 ranks on NCCL GIN, seen by world rank 3 (node
/// 1, local rank 1), whose calls run: the two ranks of its node in memory,
/// and every world rank's net words in the fake.
struct World {
  RankMem local[kPerNode];
  uint64_t net[kNodes * kPerNode][kNetWords];
  uint64_t *netOf[kNodes * kPerNode];
  ncclDevComm gin;

  World() {
    std::memset(static_cast<void *>(local), 0, sizeof(local));
    std::memset(net, 0, sizeof(net));
    for (uint32_t q = 0; q < kNodes * kPerNode; ++q)
      netOf[q] = net[q];
    gin = {3, static_cast<int>(kNodes * kPerNode), kNetWords, netOf};
    uint32_t *inboxes[kPerNode];
    for (uint32_t r = 0; r < kPerNode; ++r)
      inboxes[r] = local[r].inbox;
    for (uint32_t r = 0; r < kPerNode; ++r) {
      RankMem &m = local[r];
      DevComm &c = m.comm;
      c.magic = kDevCommMagic;
      c.version = kDevCommVersion;
      c.rank = static_cast<int32_t>(r);
      c.size = kPerNode;
      c.nBarriers = kSlots;
      c.inboxStride = kStride;
      c.timeoutNs = 1000;
      c.epochs = m.epochs;
      c.gridCount = m.gridCount;
      c.error = &m.error;
      c.nSignals = kSignals;
      c.nSignalWords = kSignals; // one network context
      c.nContexts = 1;
      c.signals = m.signals;
      for (uint32_t q = 0; q < kPerNode; ++q)
        c.signalPeers[q] = local[q].signals;
      c.node = 1;
      c.nNodes = kNodes;
      c.netKind = kNetNcclGin;
      c.nNetWords = kNetWords;
      c.net = &gin;
      fillRoutes(c, inboxes);
    }
    rec::State &s = rec::state();
    s.log.clear();
    s.ranges.clear();
    s.thread = 0;
    s.blockThreads = 1;
    s.clock = 0;
    RankMem &me = local[1];
    s.ranges.push_back(
        {me.inbox, me.inbox + kInboxSets * kSlots * kStride, "inbox"});
    s.ranges.push_back({me.epochs, me.epochs + kEpochSets * kSlots, "epoch"});
    calls().clear();
  }
  World(const World &) = delete;

  const void *comm() const { return &local[1].comm; }
  RankMem &me() { return local[1]; }

  /// Every peer of the node arrived at round kEpoch + 1 of `slot` (WORLD's
  /// intra half with `world`).
  void intraArrived(uint32_t slot, bool world) {
    uint32_t s = (world ? kSlots : 0) + slot;
    me().epochs[s] = kEpoch;
    me().inbox[s * kStride + 0] = kEpoch + 1;
  }
  /// Every rail peer (node 0) arrived at round kEpoch + 1 of net word
  /// `word`, whose epoch word is `epochSlot`.
  void railArrived(uint32_t word, uint32_t epochSlot) {
    me().epochs[epochSlot] = kEpoch;
    net[3][word] = (kNodes - 1) * (kEpoch + 1);
  }
};

std::string show(const Log &l) {
  std::ostringstream os;
  for (const std::string &e : l)
    os << "\n    " << e;
  return os.str();
}

const char *teamName(int team) {
  return team == kTeamIntra ? "intra" : team == kTeamInter ? "inter" : "world";
}

TEST(Net, EverySignalAddIsOneGinSignalToTheWorldRankOnItsWord) {
  // (team, peer in the team) -> the world rank the add must reach. This
  // rank is world rank 3 (node 1, local 1); INTER's member m is local
  // rank 1 of node m; peers on this node go through the net too (GIN's
  // signals live in NCCL's memory, where their owner reads them).
  struct Case {
    int team, peer;
    int world;
  } cases[] = {{kTeamIntra, 0, 2}, {kTeamIntra, 1, 3}, {kTeamInter, 0, 1},
               {kTeamInter, 1, 3}, {kTeamWorld, 0, 0}, {kTeamWorld, 1, 1},
               {kTeamWorld, 2, 2}, {kTeamWorld, 3, 3}};
  for (const Case &k : cases)
    for (uint32_t sig : {0u, 2u}) {
      World w;
      impl::teamSignalAdd(w.comm(), k.team, k.peer, sig, 5, kCoopThread,
                          tle::abi::Fn::flagcxDevSignalAdd);
      std::string what = std::string(teamName(k.team)) + " peer " +
                         std::to_string(k.peer) + " signal " +
                         std::to_string(sig);
      ASSERT_EQ(calls().size(), 1u) << what << show(rec::state().log);
      const Call &c = calls()[0];
      EXPECT_EQ(c.kind, Call::SignalAdd) << what;
      EXPECT_EQ(c.worldRank, k.world) << what;
      EXPECT_EQ(c.signal, sig) << what;
      EXPECT_EQ(c.value, 5u) << what;
      EXPECT_EQ(c.requiredRelease, cuda::thread_scope_system) << what;
      EXPECT_EQ(c.givenRelease, cuda::thread_scope_device) << what;
      // Nothing else moved: not the local words, no other net word.
      for (uint32_t q = 0; q < kNodes * kPerNode; ++q)
        for (uint32_t word = 0; word < kNetWords; ++word)
          EXPECT_EQ(w.net[q][word],
                    q == uint32_t(k.world) && word == sig ? 5u : 0u)
              << what << ": rank " << q << " word " << word;
      for (const RankMem &m : w.local)
        for (uint64_t v : m.signals)
          EXPECT_EQ(v, 0u) << what;
    }
}

TEST(Net, AGroupSyncsBeforeAndAfterItsSignalAdd) {
  // The group's writes are ordered before the add by the sync before it
  // (its rank 0 then releases them all); the sync after keeps the group
  // from running ahead of its signal. Thread 0 of a block of 64 adds,
  // thread 5 only syncs: for a peer on another node (INTER, WORLD) and on
  // this one (INTRA, which a GIN communicator also sends over the net).
  struct Case {
    int team, peer;
    const char *add;
  } cases[] = {{kTeamInter, 0, "gin.signal rank 1 word 2"},
               {kTeamWorld, 0, "gin.signal rank 0 word 2"},
               {kTeamIntra, 0, "gin.signal rank 2 word 2"}};
  for (const Case &k : cases)
    for (uint32_t thread : {0u, 5u}) {
      World w;
      rec::state().thread = thread;
      rec::state().blockThreads = 64;
      impl::teamSignalAdd(w.comm(), k.team, k.peer, 2, 1, kCoopBlock,
                          tle::abi::Fn::flagcxDevSignalAdd);
      Log want = {"bar.block"};
      if (thread == 0)
        want.push_back(k.add);
      want.push_back("bar.block");
      EXPECT_EQ(rec::state().log, want)
          << teamName(k.team) << " thread " << thread << show(rec::state().log);
    }
}

/// The entries of the log from the last "gin.read" on.
Log afterLastRead(const Log &l) {
  for (size_t i = l.size(); i-- > 0;)
    if (l[i].rfind("gin.read", 0) == 0)
      return Log(l.begin() + i, l.end());
  return {};
}

TEST(Net, InterBarrierAddsToAndPollsItsOwnWord) {
  constexpr uint32_t kSlot = 3, kWord = kSignals + kSlot;
  for (int order : {kOrderRelaxed, kOrderAcquire, kOrderRelease, kOrderAcqRel,
                    kOrderSeqCst}) {
    World w;
    w.railArrived(kWord, 2 * kSlots + kSlot);
    EXPECT_EQ(impl::teamBarrier</*Status=*/true>(
                  w.comm(), kTeamInter, kCoopThread, kSlot, order, kBarrierSync,
                  tle::abi::Fn::flagcxDevBarrierSync),
              0u);
    // The rail peer is world rank 1 (node 0, local 1).
    ASSERT_GE(calls().size(), 2u) << show(rec::state().log);
    EXPECT_EQ(calls()[0].kind, Call::SignalAdd);
    EXPECT_EQ(calls()[0].worldRank, 1);
    EXPECT_EQ(calls()[0].signal, kWord);
    EXPECT_EQ(calls()[0].value, 1u);
    for (size_t i = 1; i < calls().size(); ++i) {
      EXPECT_EQ(calls()[i].kind, Call::ReadSignal);
      EXPECT_EQ(calls()[i].signal, kWord);
    }
    // The arrive: seq_cst's fence.sc, then the add (GIN's release).
    const Log &log = rec::state().log;
    auto signal = std::find_if(log.begin(), log.end(), [](const auto &e) {
      return e.rfind("gin.signal", 0) == 0;
    });
    EXPECT_EQ(std::count(log.begin(), signal, "fence.sc.sys"),
              order == kOrderSeqCst ? 1 : 0)
        << "order " << order << show(log);
    Log want = {"gin.read rank 3 word 7"};
    if (order == kOrderAcquire || order >= kOrderAcqRel)
      want.push_back("fence.acq_rel.sys");
    want.push_back("st.relaxed.gpu epoch");
    EXPECT_EQ(afterLastRead(rec::state().log), want)
        << "order " << order << show(rec::state().log);
    EXPECT_EQ(w.me().epochs[2 * kSlots + kSlot], kEpoch + 1);
  }
}

TEST(Net, WorldBarrierAcquiresBothHalvesUnlessRelaxed) {
  // WORLD's wait: the intra half polls the node's peer (one peer, so an
  // acquire load unless relaxed), then its inter half adds to WORLD's own
  // net word of the rail peer and polls its own, with an acquire fence
  // after unless relaxed: release included, since the add that follows
  // the next round's intra half is what forwards this node's writes.
  constexpr uint32_t kSlot = 3, kWord = kSignals + kSlots + kSlot;
  for (int order : {kOrderRelaxed, kOrderAcquire, kOrderRelease, kOrderAcqRel,
                    kOrderSeqCst}) {
    World w;
    w.intraArrived(kSlot, /*world=*/true);
    w.railArrived(kWord, 3 * kSlots + kSlot);
    EXPECT_EQ(impl::teamBarrier</*Status=*/true>(
                  w.comm(), kTeamWorld, kCoopThread, kSlot, order, kBarrierWait,
                  tle::abi::Fn::flagcxDevBarrierWait),
              0u);
    const Log &log = rec::state().log;
    bool acquires = order != kOrderRelaxed;
    // The intra half's poll of WORLD's inbox slot.
    std::string poll =
        std::string(acquires ? "ld.acquire.sys" : "ld.relaxed.sys") + " inbox";
    EXPECT_NE(std::find(log.begin(), log.end(), poll), log.end())
        << "order " << order << show(log);
    ASSERT_GE(calls().size(), 2u) << show(log);
    EXPECT_EQ(calls()[0].kind, Call::SignalAdd);
    EXPECT_EQ(calls()[0].worldRank, 1);
    EXPECT_EQ(calls()[0].signal, kWord);
    Log want = {"gin.read rank 3 word 11"};
    if (acquires)
      want.push_back("fence.acq_rel.sys");
    want.push_back("st.relaxed.gpu epoch");
    EXPECT_EQ(afterLastRead(log), want) << "order " << order << show(log);
  }
}

/// The calls of kind `kind` the fake saw.
size_t count(Call::Kind kind) {
  size_t n = 0;
  for (const Call &c : calls())
    n += c.kind == kind;
  return n;
}

TEST(Net, AWaitLooksAtTheFaultWordAfter512FailedPollsThenEvery32) {
  // Nobody arrives and the fault word says aborted from the start, or is
  // seen only at the second look (set while the wait polls): each wait
  // polls until the look that sees it, then gives up.
  for (uint32_t hidden : {0u, 1u}) {
    size_t want = kDocumentedPollsBeforeAbortCheck +
                  hidden * kDocumentedPollsPerAbortCheck;
    {
      World w;
      w.me().error.abort = kDevErrAborted;
      rec::state().hiddenFaultLooks = hidden;
      EXPECT_NE(impl::barrier</*Status=*/true>(
                    w.comm(), kCoopThread, 1, kOrderAcquire, kBarrierWait,
                    tle::abi::Fn::flagcxIntraBarrierWaitS),
                0u);
      const Log &log = rec::state().log;
      EXPECT_EQ(std::count(log.begin(), log.end(), "ld.acquire.sys inbox"),
                static_cast<long>(want))
          << "the barrier's wait, hidden looks " << hidden;
    }
    {
      World w;
      w.me().error.abort = kDevErrAborted;
      rec::state().hiddenFaultLooks = hidden;
      EXPECT_NE(impl::signalWait</*Status=*/true>(
                    w.comm(), 1, 1, kCoopThread, kOrderAcquire,
                    tle::abi::Fn::flagcxDevWaitSignal),
                0u);
      EXPECT_EQ(count(Call::ReadSignal), want)
          << "the signal wait, hidden looks " << hidden;
    }
    {
      World w;
      w.me().error.abort = kDevErrAborted;
      rec::state().hiddenFaultLooks = hidden;
      EXPECT_NE(impl::teamBarrier</*Status=*/true>(
                    w.comm(), kTeamInter, kCoopThread, 2, kOrderAcquire,
                    kBarrierWait, tle::abi::Fn::flagcxDevBarrierWait),
                0u);
      EXPECT_EQ(count(Call::ReadSignal), want)
          << "the rail's wait, hidden looks " << hidden;
    }
  }
}

} // namespace
