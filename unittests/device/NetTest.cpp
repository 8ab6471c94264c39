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
//     clock's 128), for the barrier, the signal and the rail waits;
//   - one-sided transfers over GIN: a put past this node is one GIN put
//     of the buffers' windows, by the group's rank 0 between two group
//     syncs, with the signal as GIN's remote action on the signal's own id
//     and the counter as its local action; the fake's engine delivers it
//     later (the data, then the signal, then the counter), and a flush
//     delivers everything; a near put with a local counter goes through
//     GIN too; put-values carry their value; counter reads, waits and
//     resets are GIN's; a get past this node, a remote counter, a local
//     signal past this node and a buffer without a window are located
//     NotServed reports, before anything moves.
//
//===----------------------------------------------------------------------===//

#define TLE_TEST_PLATFORM "RecordingPlatform.h"
#define TLE_REC_POLLS_PER_CLOCK_READ 128
#define TLE_WITH_NCCL_GIN 1

#include "tle/barrier.h"
#include "tle/impl/OneSided.h"
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
  switch (call.kind) {
  case Call::SignalAdd:
  case Call::ReadSignal:
  case Call::ResetSignal:
    os << (call.kind == Call::SignalAdd    ? "gin.signal"
           : call.kind == Call::ReadSignal ? "gin.read"
                                           : "gin.reset")
       << " rank " << call.worldRank << " word " << call.signal;
    break;
  case Call::Put:
  case Call::PutValue:
  case Call::Deliver:
    os << (call.kind == Call::Put        ? "gin.put"
           : call.kind == Call::PutValue ? "gin.putValue"
                                         : "gin.deliver")
       << " rank " << call.worldRank;
    if (call.hasSignal)
      os << " signal " << call.signal << " +" << call.value;
    if (call.hasCounter)
      os << " counter " << call.counter;
    break;
  case Call::Flush:
    os << "gin.flush";
    break;
  case Call::ReadCounter:
  case Call::ResetCounter:
    os << (call.kind == Call::ReadCounter ? "gin.readCounter"
                                          : "gin.resetCounter")
       << " " << call.counter;
    break;
  }
  rec::state().log.push_back(os.str());
}

namespace {

constexpr uint32_t kSlots = 4;
constexpr uint32_t kStride = 8;
constexpr uint32_t kSignals = 4;
constexpr uint32_t kCounters = 2;
/// Bytes of each symmetric buffer of the transfer tests.
constexpr uint32_t kBytes = 64;
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
  uint64_t signals[kSignals + kCounters]; ///< the counters follow
  uint64_t shadows[kSignals];
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
  uint64_t ginCounters[kNodes * kPerNode][kCounters];
  uint64_t *ginCountersOf[kNodes * kPerNode];
  ncclDevComm gin;
  /// Two symmetric buffers (dst, src): every world rank's copy, their
  /// windows, and this rank's handles of them.
  char copies[2][kNodes * kPerNode][kBytes];
  char *copyOf[2][kNodes * kPerNode];
  ncclWindow_vidmem windows[2];
  SymMem mem[2];

  World() {
    std::memset(static_cast<void *>(local), 0, sizeof(local));
    std::memset(net, 0, sizeof(net));
    std::memset(ginCounters, 0, sizeof(ginCounters));
    std::memset(copies, 0, sizeof(copies));
    for (uint32_t q = 0; q < kNodes * kPerNode; ++q) {
      netOf[q] = net[q];
      ginCountersOf[q] = ginCounters[q];
    }
    gin = {3, static_cast<int>(kNodes * kPerNode), kNetWords, netOf};
    gin.nCounters = kCounters;
    gin.counters = ginCountersOf;
    for (int b = 0; b < 2; ++b) {
      for (uint32_t q = 0; q < kNodes * kPerNode; ++q)
        copyOf[b][q] = copies[b][q];
      windows[b] = {copyOf[b], kBytes};
      SymMem &m = mem[b];
      std::memset(static_cast<void *>(&m), 0, sizeof(m));
      m.magic = kSymMemMagic;
      m.rank = 1;
      m.size = kPerNode;
      m.bytes = kBytes;
      m.error = &local[1].error;
      // This node's ranks are world ranks 2 and 3.
      for (uint32_t r = 0; r < kPerNode; ++r)
        m.ptrs[r] = copies[b][kPerNode + r];
      m.netWindow = &windows[b];
    }
    fake_nccl::queue().clear();
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
      c.nCounters = kCounters;
      c.nContexts = 1;
      c.counters = m.signals + kSignals;
      c.shadows = m.shadows;
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
  const void *dst() const { return &mem[0]; }
  const void *src() const { return &mem[1]; }
  /// World rank `q`'s copy of the dst (0) or src (1) buffer.
  char *copy(int b, uint32_t q) { return copies[b][q]; }

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

using impl::ActionArg;
using impl::ctrInc;
using impl::sigAdd;
using impl::sigInc;
using tle::abi::Fn;

/// Fills world rank `q`'s copy of buffer `b` with bytes seed, seed + 1, ...
void fill(World &w, int b, uint32_t q, uint32_t offset, uint32_t bytes,
          int seed) {
  for (uint32_t i = 0; i < bytes; ++i)
    w.copy(b, q)[offset + i] = static_cast<char>(seed + i);
}
/// Whether world rank `q`'s copy of dst holds src's bytes from this rank.
bool landed(World &w, uint32_t q, uint32_t dstOffset, uint32_t srcOffset,
            uint32_t bytes) {
  return std::memcmp(w.copy(0, q) + dstOffset, w.copy(1, 3) + srcOffset,
                     bytes) == 0;
}
bool allZero(const char *p, uint32_t bytes) {
  for (uint32_t i = 0; i < bytes; ++i)
    if (p[i])
      return false;
  return true;
}

TEST(Net, APutPastThisNodeIsOneGinPutDeliveredBeforeItsSignalAndCounter) {
  struct Actions {
    const char *name;
    ActionArg remote, local;
    bool signal;
    uint32_t sig;
    uint64_t value;
    bool counter;
    uint32_t ctr;
  } actions[] = {
      {"none", {}, {}, false, 0, 0, false, 0},
      {"RSigInc", sigInc(2), {}, true, 2, 1, false, 0},
      {"RSigAdd", sigAdd(1, 7), {}, true, 1, 7, false, 0},
      {"LCtrInc", {}, ctrInc(1), false, 0, 0, true, 1},
      {"RSigAdd_LCtrInc", sigAdd(3, 9), ctrInc(0), true, 3, 9, true, 0},
  };
  // (team, peer) -> world rank; this rank is world rank 3.
  struct Peer {
    int team, peer, world;
  } peers[] = {{kTeamInter, 0, 1}, {kTeamWorld, 1, 1}, {kTeamWorld, 0, 0}};
  for (const Actions &a : actions)
    for (const Peer &p : peers) {
      World w;
      std::string what = std::string(a.name) + " to " + teamName(p.team) +
                         " peer " + std::to_string(p.peer);
      fill(w, 1, 3, 16, 24, 1);
      impl::put(w.comm(), w.dst(), 8, w.src(), 16, 24, p.team, p.peer, 0,
                kCoopThread, kScopeSystem, kOrderRelaxed, a.remote, a.local,
                Fn::flagcxDevPut);
      ASSERT_EQ(calls().size(), 1u) << what << show(rec::state().log);
      const Call &c = calls()[0];
      EXPECT_EQ(c.kind, Call::Put) << what;
      EXPECT_EQ(c.worldRank, p.world) << what;
      EXPECT_EQ(c.dstWin, &w.windows[0]) << what;
      EXPECT_EQ(c.srcWin, &w.windows[1]) << what;
      EXPECT_EQ(c.dstOffset, 8u) << what;
      EXPECT_EQ(c.srcOffset, 16u) << what;
      EXPECT_EQ(c.bytes, 24u) << what;
      EXPECT_EQ(c.hasSignal, a.signal) << what;
      EXPECT_EQ(c.hasCounter, a.counter) << what;
      if (a.signal) {
        EXPECT_EQ(c.signal, a.sig) << what;
        EXPECT_EQ(c.value, a.value) << what;
      }
      if (a.counter)
        EXPECT_EQ(c.counter, a.ctr) << what;
      // The engine reads the source outside the GPU: a system-scope
      // release, which GIN fences for (ptx-gin.check).
      EXPECT_EQ(c.requiredRelease, cuda::thread_scope_system) << what;
      EXPECT_EQ(c.givenRelease, cuda::thread_scope_device) << what;
      // Handed over, not done: nothing landed, nothing signalled.
      EXPECT_TRUE(allZero(w.copy(0, p.world), kBytes)) << what;
      EXPECT_EQ(w.net[p.world][a.sig], 0u) << what;
      EXPECT_EQ(w.ginCounters[3][a.ctr], 0u) << what;
      impl::flush(w.comm(), 0, kCoopThread, kOrderAcqRel, Fn::flagcxDevFlush);
      // The flush is GIN's, and what it waited for was delivered: the data,
      // then the signal, then the counter (the fake's engine applies them
      // in that order, so the log's deliver entry precedes the flush).
      ASSERT_EQ(calls().size(), 3u) << what << show(rec::state().log);
      EXPECT_EQ(calls()[1].kind, Call::Deliver) << what;
      EXPECT_EQ(calls()[2].kind, Call::Flush) << what;
      EXPECT_EQ(calls()[2].order, cuda::memory_order_acquire) << what;
      EXPECT_TRUE(landed(w, p.world, 8, 16, 24)) << what;
      EXPECT_TRUE(allZero(w.copy(0, p.world), 8)) << what;
      EXPECT_TRUE(allZero(w.copy(0, p.world) + 32, kBytes - 32)) << what;
      EXPECT_EQ(w.net[p.world][a.sig], a.signal ? a.value : 0u) << what;
      EXPECT_EQ(w.ginCounters[3][a.ctr], a.counter ? 1u : 0u) << what;
      // TLE's own words never move on a GIN communicator's far put.
      for (const RankMem &m : w.local)
        for (uint64_t v : m.signals)
          EXPECT_EQ(v, 0u) << what;
    }
}

TEST(Net, AGroupsPutIsPostedByItsRankZeroBetweenTwoSyncs) {
  // A release fences first (the caller's writes before the put's source
  // reads); the sync before lets rank 0 post what every member wrote; the
  // sync after keeps members from reusing anything before the post.
  for (int order : {kOrderRelaxed, kOrderRelease})
    for (uint32_t thread : {0u, 5u}) {
      World w;
      rec::state().thread = thread;
      rec::state().blockThreads = 64;
      impl::put(w.comm(), w.dst(), 0, w.src(), 0, 8, kTeamInter, 0, 0,
                kCoopBlock, kScopeSystem, order, sigInc(2), ctrInc(1),
                Fn::flagcxDevPut_RSigInc_LCtrInc);
      Log want;
      if (order == kOrderRelease)
        want.push_back("fence.acq_rel.sys");
      want.push_back("bar.block");
      if (thread == 0)
        want.push_back("gin.put rank 1 signal 2 +1 counter 1");
      want.push_back("bar.block");
      EXPECT_EQ(rec::state().log, want) << "order " << order << " thread "
                                        << thread << show(rec::state().log);
    }
}

TEST(Net, ANearPutWithALocalCounterGoesThroughGinTheOthersCopy) {
  // The counter is GIN's, which only GIN's engine moves: a put to this
  // node's rank 0 (world rank 2) with a local counter is a GIN put.
  {
    World w;
    fill(w, 1, 3, 0, 16, 5);
    impl::put(w.comm(), w.dst(), 0, w.src(), 0, 16, kTeamIntra, 0, 0,
              kCoopThread, kScopeSystem, kOrderRelaxed, sigInc(1), ctrInc(0),
              Fn::flagcxDevPut_RSigInc_LCtrInc);
    ASSERT_EQ(calls().size(), 1u) << show(rec::state().log);
    EXPECT_EQ(calls()[0].kind, Call::Put);
    EXPECT_EQ(calls()[0].worldRank, 2);
    EXPECT_TRUE(calls()[0].hasCounter);
    EXPECT_TRUE(allZero(w.copy(0, 2), kBytes));
    impl::flush(w.comm(), 0, kCoopThread, kOrderAcqRel, Fn::flagcxDevFlush);
    EXPECT_TRUE(landed(w, 2, 0, 0, 16));
    EXPECT_EQ(w.net[2][1], 1u);
    EXPECT_EQ(w.ginCounters[3][0], 1u);
    EXPECT_EQ(w.me().signals[kSignals], 0u) << "TLE's counter word moved";
  }
  // Without a counter: the copy through the peer pointer, then the signal
  // through GIN (as every signal add of a GIN communicator).
  {
    World w;
    fill(w, 1, 3, 0, 16, 5);
    impl::put(w.comm(), w.dst(), 0, w.src(), 0, 16, kTeamIntra, 0, 0,
              kCoopThread, kScopeSystem, kOrderRelaxed, sigInc(1), ActionArg{},
              Fn::flagcxDevPut_RSigInc);
    EXPECT_TRUE(landed(w, 2, 0, 0, 16));
    ASSERT_EQ(calls().size(), 1u) << show(rec::state().log);
    EXPECT_EQ(calls()[0].kind, Call::SignalAdd);
    EXPECT_EQ(calls()[0].worldRank, 2);
    EXPECT_EQ(calls()[0].signal, 1u);
    Log want = {"copy", "gin.signal rank 2 word 1"};
    EXPECT_EQ(rec::state().log, want) << show(rec::state().log);
  }
}

TEST(Net, APutValuePastThisNodeCarriesItsValueThenItsSignal) {
  World w;
  uint64_t value = 0x1122334455667788u;
  impl::putValue(w.comm(), w.dst(), 16, value, kTeamInter, 0, 0, kCoopThread,
                 kScopeSystem, kOrderRelaxed, sigAdd(2, 3),
                 Fn::flagcxDevPutValue);
  ASSERT_EQ(calls().size(), 1u) << show(rec::state().log);
  const Call &c = calls()[0];
  EXPECT_EQ(c.kind, Call::PutValue);
  EXPECT_EQ(c.worldRank, 1);
  EXPECT_EQ(c.dstWin, &w.windows[0]);
  EXPECT_EQ(c.dstOffset, 16u);
  EXPECT_EQ(c.value, value);
  EXPECT_TRUE(c.hasSignal);
  EXPECT_EQ(c.signal, 2u);
  EXPECT_EQ(c.requiredRelease, cuda::thread_scope_system);
  EXPECT_EQ(w.net[1][2], 0u);
  impl::flush(w.comm(), 0, kCoopThread, kOrderAcqRel, Fn::flagcxDevFlush);
  uint64_t got;
  std::memcpy(&got, w.copy(0, 1) + 16, sizeof(got));
  EXPECT_EQ(got, value);
  EXPECT_EQ(w.net[1][2], 3u);
}

TEST(Net, WhatGinCannotCarryIsALocatedReportBeforeAnythingMoves) {
  struct Case {
    const char *name;
    uint32_t what;
    uint32_t world;
  };
  auto check = [](World &w, const Case &k, auto &&call) {
    EXPECT_THROW(call(), rec::Aborted) << k.name;
    const ErrorRecord &e = w.me().error;
    EXPECT_EQ(e.code, kDevErrNotServed) << k.name;
    EXPECT_EQ(e.aux, k.what) << k.name;
    EXPECT_EQ(e.value, k.world) << k.name;
    EXPECT_TRUE(calls().empty()) << k.name << show(rec::state().log);
    EXPECT_TRUE(fake_nccl::queue().empty()) << k.name;
    for (uint32_t q = 0; q < kNodes * kPerNode; ++q)
      EXPECT_TRUE(allZero(w.copy(0, q), kBytes)) << k.name;
  };
  {
    World w;
    check(w, {"a get past this node", kNotServedGet, 1}, [&] {
      impl::get(w.comm(), w.src(), 0, w.dst(), 0, 8, kTeamInter, 0, 0,
                kCoopThread, kScopeSystem, kOrderAcquire, Fn::flagcxDevGet);
    });
  }
  {
    World w;
    check(w, {"a remote counter on this node", kNotServedAction, 2}, [&] {
      impl::put(w.comm(), w.dst(), 0, w.src(), 0, 8, kTeamIntra, 0, 0,
                kCoopThread, kScopeSystem, kOrderRelaxed, ctrInc(0),
                ActionArg{}, Fn::flagcxDevPut);
    });
  }
  {
    World w;
    check(w, {"a local signal past this node", kNotServedAction, 1}, [&] {
      impl::put(w.comm(), w.dst(), 0, w.src(), 0, 8, kTeamInter, 0, 0,
                kCoopThread, kScopeSystem, kOrderRelaxed, ActionArg{},
                sigInc(0), Fn::flagcxDevPut);
    });
  }
  for (int b : {0, 1}) {
    World w;
    w.mem[b].netWindow = nullptr;
    check(w,
          {b ? "a source without a window" : "a destination without one",
           kNotServedNoWindow, 0},
          [&] {
            impl::put(w.comm(), w.dst(), 0, w.src(), 0, 8, kTeamWorld, 0, 0,
                      kCoopThread, kScopeSystem, kOrderRelaxed, sigInc(0),
                      ActionArg{}, Fn::flagcxDevPut);
          });
  }
}

TEST(Net, CounterReadsWaitsAndResetsAreGins) {
  {
    World w;
    w.ginCounters[3][1] = 5;
    w.me().signals[kSignals + 1] = 99; // TLE's word: not what is read
    for (int order : {kOrderRelaxed, kOrderAcquire}) {
      rec::state().log.clear();
      EXPECT_EQ(impl::readCounter(w.comm(), 1, order, Fn::flagcxDevReadCounter),
                5u);
      Log want = {"gin.readCounter 1"};
      if (order == kOrderAcquire)
        want.push_back("fence.acq_rel.sys");
      EXPECT_EQ(rec::state().log, want) << "order " << order;
    }
    ASSERT_FALSE(calls().empty());
    EXPECT_EQ(calls().back().signal, 56u) << "GIN's counters carry 56 bits";
    impl::resetCounter(static_cast<const DevComm *>(w.comm()), 1);
    EXPECT_EQ(calls().back().kind, Call::ResetCounter);
    EXPECT_EQ(w.ginCounters[3][1], 0u);
    EXPECT_EQ(w.me().signals[kSignals + 1], 99u);
  }
  {
    // A wait for a put's counter: its polls are GIN's reads, and the
    // acquire follows the read that saw the counter reach its target.
    World w;
    impl::put(w.comm(), w.dst(), 0, w.src(), 0, 8, kTeamInter, 0, 0,
              kCoopThread, kScopeSystem, kOrderRelaxed, ActionArg{}, ctrInc(1),
              Fn::flagcxDevPut_LCtrInc);
    rec::state().log.clear();
    impl::waitCounter(w.comm(), 1, 1, kCoopThread, kOrderAcquire,
                      Fn::flagcxDevWaitCounter);
    Log want = {"gin.deliver rank 1 counter 1", "gin.readCounter 1",
                "fence.acq_rel.sys"};
    Log got = rec::state().log;
    // GIN's calls and the fences, in order.
    got.erase(std::remove_if(got.begin(), got.end(),
                             [](const std::string &e) {
                               return e.rfind("gin.", 0) != 0 &&
                                      e.rfind("fence", 0) != 0;
                             }),
              got.end());
    EXPECT_EQ(got, want) << show(rec::state().log);
  }
  {
    // A counter that never arrives: the wait gives up at the fault word's
    // cadence, as a signal wait does.
    World w;
    w.me().error.abort = kDevErrAborted;
    EXPECT_NE(impl::waitCounter</*Status=*/true>(w.comm(), 0, 1, kCoopThread,
                                                 kOrderAcquire,
                                                 Fn::flagcxDevWaitCounter),
              0u);
    EXPECT_EQ(count(Call::ReadCounter), kDocumentedPollsBeforeAbortCheck);
  }
}

} // namespace
