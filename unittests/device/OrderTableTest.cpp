//===- OrderTableTest.cpp - Every memory-order decision, against the spec -===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The device library's memory-order decisions checked against a table
// written by hand from docs/abi.md and docs/device-library.md ("arrive,
// wait, sync", "Why it is correct"), never from the library's own tables:
//
//   - releases() / acquires() for all five orders;
//   - per order, what a worker issues to signal one peer or several
//     (seq_cst's extra fence.sc, the release reduction vs one fence and
//     relaxed reductions) and to poll one peer or several (acquire polls vs
//     relaxed polls and one fence after);
//   - the grid barrier: at least acq_rel whatever the order (acquire polls,
//     a fence before the publication; fence.sc for seq_cst);
//   - where the group syncs and the epoch advance sit around them, for the
//     thread, warp, block, tile-span and lanes groups, the grid barrier and
//     the session, on 1, 2, 3 and 8 ranks and group sizes from 1 to 64.
//
// The library's source is compiled here against RecordingPlatform.h, which
// logs every sync, fence and ordered access; each simulated thread of a
// group runs the call alone on fresh memory in which every peer has already
// arrived, and its log must equal the sequence the table gives for its role.
// The emulator cannot see any of this (it is sequentially consistent); the
// PTX checks (ptx-kernels.check) see the same decisions in the GPU build.
//
//===----------------------------------------------------------------------===//

#define TLE_TEST_PLATFORM "RecordingPlatform.h"

#include "tle/barrier.h"
#include "tle/session.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <sstream>

using namespace tle;
using Log = std::vector<std::string>;

namespace {

//===----------------------------------------------------------------------===//
// The specification, by hand
//===----------------------------------------------------------------------===//

/// One row per memory order. docs/abi.md: relaxed orders neither half,
/// acquire the wait, release the arrive, acq_rel and seq_cst both, seq_cst
/// with a fence.sc before the signal. docs/device-library.md: a worker
/// signalling one peer uses a release reduction (relaxed without release);
/// one signalling several issues one fence and relaxed reductions; a poller
/// of one peer polls with acquire (relaxed without acquire); one polling
/// several polls relaxed and issues one fence.acq_rel after.
struct OrderRow {
  int order;
  const char *name;
  bool releases, acquires;
  Log signalOne;   ///< before the one reduction ...
  const char *red; ///< ... which is this
  Log signalMany;  ///< before several relaxed reductions
  const char *pollOne;
  Log afterPollMany; ///< after several relaxed polls
  const char *gridFence;
};

const OrderRow kOrders[] = {
    {kOrderRelaxed,
     "relaxed",
     false,
     false,
     {},
     "red.relaxed.sys",
     {},
     "ld.relaxed.sys",
     {},
     "fence.acq_rel.sys"},
    {kOrderAcquire,
     "acquire",
     false,
     true,
     {},
     "red.relaxed.sys",
     {},
     "ld.acquire.sys",
     {"fence.acq_rel.sys"},
     "fence.acq_rel.sys"},
    {kOrderRelease,
     "release",
     true,
     false,
     {},
     "red.release.sys",
     {"fence.acq_rel.sys"},
     "ld.relaxed.sys",
     {},
     "fence.acq_rel.sys"},
    {kOrderAcqRel,
     "acq_rel",
     true,
     true,
     {},
     "red.release.sys",
     {"fence.acq_rel.sys"},
     "ld.acquire.sys",
     {"fence.acq_rel.sys"},
     "fence.acq_rel.sys"},
    {kOrderSeqCst,
     "seq_cst",
     true,
     true,
     {"fence.sc.sys"},
     "red.release.sys",
     {"fence.sc.sys"},
     "ld.acquire.sys",
     {"fence.acq_rel.sys"},
     "fence.sc.sys"},
};

/// The grid barrier polls as acq_rel does, whatever the order: the counter
/// reset and the epoch advance reach the rank's other CTAs only through it.
const OrderRow &gridPolls() { return kOrders[3]; }

TEST(OrderTable, ReleasesAndAcquires) {
  for (const OrderRow &r : kOrders) {
    EXPECT_EQ(impl::releases(r.order), r.releases) << r.name;
    EXPECT_EQ(impl::acquires(r.order), r.acquires) << r.name;
  }
}

TEST(OrderTable, EncodingsAreDocsAbiMd) {
  // The rows above are keyed by these values (docs/abi.md, "Encodings").
  EXPECT_EQ(int(kOrderRelaxed), 0);
  EXPECT_EQ(int(kOrderAcquire), 1);
  EXPECT_EQ(int(kOrderRelease), 2);
  EXPECT_EQ(int(kOrderAcqRel), 3);
  EXPECT_EQ(int(kOrderSeqCst), 4);
}

//===----------------------------------------------------------------------===//
// Expected sequences, composed from the rows and the protocol of
// docs/device-library.md ("arrive, wait, sync")
//===----------------------------------------------------------------------===//

void add(Log &l, const Log &more) {
  l.insert(l.end(), more.begin(), more.end());
}

/// The entries worker `w` of `workers` covers among `count`.
uint32_t entries(uint32_t w, uint32_t workers, uint32_t count) {
  uint32_t k = 0;
  for (uint32_t j = w; j < count; j += workers)
    ++k;
  return k;
}

/// `store`: a session's arrive, which knows the count it signals and
/// stores it (st.*) where the stateless arrive adds 1 (red.*), with the
/// same orders.
Log signal(const OrderRow &o, uint32_t w, uint32_t workers, uint32_t peers,
           bool store = false) {
  Log l;
  const std::string op = store ? "st." : "red.";
  uint32_t k = entries(w, workers, peers);
  if (k == 1) {
    add(l, o.signalOne);
    l.push_back(op + (std::string(o.red) + " inbox").substr(4));
  } else if (k > 1) {
    add(l, o.signalMany);
    for (uint32_t i = 0; i < k; ++i)
      l.push_back(op + "relaxed.sys inbox");
  }
  return l;
}

Log poll(const OrderRow &o, uint32_t w, uint32_t pollers, uint32_t count) {
  Log l;
  uint32_t k = entries(w, pollers, count);
  if (k == 1) {
    l.push_back(std::string(o.pollOne) + " inbox");
  } else if (k > 1) {
    for (uint32_t i = 0; i < k; ++i)
      l.push_back("ld.relaxed.sys inbox");
    add(l, o.afterPollMany);
  }
  return l;
}

/// A group as the library sees it: its kind after TILE_SPAN and LANES ran
/// as WARP, the caller's rank in it and its size.
struct Role {
  int kind;
  uint32_t rank, size;
};

Log groupSync(const Role &g) {
  if (g.kind == kCoopBlock)
    return {"bar.block"};
  if (g.kind == kCoopWarp)
    return {"bar.warp"};
  return {};
}

uint32_t workersOf(const Role &g, uint32_t n) {
  return std::min(n - 1, g.size);
}

/// arrive: the group syncs, then each worker signals its peers; the first
/// warp reconverges.
Log expectArrive(const OrderRow &o, const Role &g, uint32_t n) {
  Log l = groupSync(g);
  if (g.rank >= 32)
    return l;
  uint32_t w = workersOf(g, n);
  if (g.rank < w)
    add(l, signal(o, g.rank, w, n - 1));
  if (g.kind != kCoopThread)
    l.push_back("bar.warp");
  return l;
}

/// wait (and with `arrive` the fused sync): workers load the epoch; with
/// several workers a warp sync orders those loads before rank 0 advances
/// it, then they poll; with one, it polls first and then advances it; the
/// group syncs last.
Log expectWait(const OrderRow &o, const Role &g, uint32_t n, bool arrive) {
  Log l;
  if (arrive)
    add(l, groupSync(g));
  if (g.rank < 32) {
    uint32_t w = workersOf(g, n);
    if (arrive && g.rank < w)
      add(l, signal(o, g.rank, w, n - 1));
    if (g.rank < w || g.rank == 0)
      l.push_back("ld.relaxed.gpu epoch");
    if (w > 1) {
      l.push_back("bar.warp");
      if (g.rank == 0)
        l.push_back("st.relaxed.gpu epoch");
      if (g.rank < w)
        add(l, poll(o, g.rank, w, n - 1));
    } else if (g.rank == 0) {
      if (w == 1)
        add(l, poll(o, 0, 1, n - 1));
      l.push_back("st.relaxed.gpu epoch");
    }
  }
  add(l, groupSync(g));
  return l;
}

/// Grid arrive: the block syncs; its thread 0 reads the epoch and counts
/// the CTA with an acq_rel add; the last CTA resets the counter, advances
/// the epoch and publishes to every rank, itself included, after a fence.
Log expectGridArrive(const OrderRow &o, uint32_t thread, bool last,
                     uint32_t n) {
  Log l = {"bar.block"};
  if (thread != 0)
    return l;
  add(l, {"ld.relaxed.gpu epoch", "atom.acq_rel.gpu count"});
  if (!last)
    return l;
  add(l, {"st.relaxed.gpu count", "st.relaxed.gpu epoch", o.gridFence});
  for (uint32_t i = 0; i < n; ++i)
    l.push_back("st.relaxed.sys inbox");
  return l;
}

/// Grid wait: the first warp syncs, lanes 0..n-1 poll the n entries (as
/// acq_rel whatever the order), the block syncs.
Log expectGridWait(uint32_t thread, uint32_t blockThreads, uint32_t n) {
  Log l;
  if (thread < 32) {
    l.push_back("bar.warp");
    uint32_t pollers = std::min({n, 32u, blockThreads});
    if (thread < pollers)
      add(l, poll(gridPolls(), thread, pollers, n));
  }
  l.push_back("bar.block");
  return l;
}

/// Session: the epoch is loaded once when it opens and kept in a register;
/// arrive as the stateless one (reconverging only when the wait does not
/// follow at once); wait: rank 0 stores the next epoch, the workers poll,
/// the group syncs.
Log expectSessionOpen(const Role &g) {
  return g.rank < 32 ? Log{"ld.relaxed.gpu epoch"} : Log{};
}
Log expectSessionArrive(const OrderRow &o, const Role &g, uint32_t n,
                        bool reconverge) {
  Log l = groupSync(g);
  if (g.rank < 32) {
    uint32_t w = workersOf(g, n);
    if (g.rank < w)
      add(l, signal(o, g.rank, w, n - 1, /*store=*/true));
    if (reconverge && g.kind != kCoopThread)
      l.push_back("bar.warp");
  }
  return l;
}
Log expectSessionWait(const OrderRow &o, const Role &g, uint32_t n) {
  Log l;
  if (g.rank < 32) {
    uint32_t w = workersOf(g, n);
    if (g.rank == 0)
      l.push_back("st.relaxed.gpu epoch");
    if (g.rank < w)
      add(l, poll(o, g.rank, w, n - 1));
  }
  add(l, groupSync(g));
  return l;
}

/// WORLD's halves on one node (docs/design.md, "Teams"): the arrive is
/// INTRA's on WORLD's own inbox set. The wait's intra half is INTRA's wait
/// on that set, but it acquires for every order but relaxed (release
/// included): its inter half's add releases what it acquired, which is how
/// the node's writes reach the other nodes. The inter half, by group rank 0
/// after the first warp reconverges: on one node the rail is this rank
/// alone, so no add and no poll, only the inter epoch's advance.
Log onWorldSet(Log l) {
  for (std::string &e : l)
    for (const char *word : {" inbox", " epoch"})
      if (e.size() > std::strlen(word) &&
          e.compare(e.size() - std::strlen(word), std::string::npos, word) == 0)
        e.insert(e.size() - std::strlen(word) + 1, "world-");
  return l;
}
Log expectWorldWait(const OrderRow &o, const Role &g, uint32_t n, bool arrive) {
  // Signals as the order says, polls as acq_rel's unless relaxed.
  OrderRow intra = o;
  if (o.order != kOrderRelaxed) {
    intra.pollOne = kOrders[3].pollOne;
    intra.afterPollMany = kOrders[3].afterPollMany;
  }
  Log l = onWorldSet(expectWait(intra, g, n, arrive));
  Log final = groupSync(g);
  l.resize(l.size() - final.size());
  if (g.rank < 32) {
    if (g.kind != kCoopThread)
      l.push_back("bar.warp");
    if (g.rank == 0)
      add(l, {"ld.relaxed.gpu world-inter-epoch",
              "st.relaxed.gpu world-inter-epoch"});
  }
  add(l, final);
  return l;
}

//===----------------------------------------------------------------------===//
// Running the library as one thread of rank 0
//===----------------------------------------------------------------------===//

constexpr uint32_t kSlots = 4;
constexpr uint32_t kSlot = 2;
constexpr uint32_t kStride = 8;
/// The slot's epoch before the call.
constexpr uint32_t kEpoch = 7;

struct RankMem {
  uint32_t epochs[kEpochSets * kSlots];
  uint32_t gridCount[kSlots];
  uint32_t inbox[kInboxSets * kSlots * kStride];
  ErrorRecord error;
  DevComm comm;
};

/// The most ranks a case uses.
constexpr uint32_t kNodeRanks = 8;

/// n ranks' barrier memory in which every peer has arrived at kEpoch + 1
/// on kSlot (and, for the grid barrier, so has rank 0 itself), as seen by
/// rank 0, whose calls are recorded. One node: WORLD's slot kSlot is its
/// intra half (the second inbox set, in the same state) and an inter half
/// that completes at once.
struct Node {
  RankMem rank[kNodeRanks];

  explicit Node(uint32_t n, uint32_t gridCount = 0) {
    std::memset(static_cast<void *>(rank), 0, sizeof(rank));
    for (uint32_t r = 0; r < n; ++r) {
      RankMem &m = rank[r];
      for (uint32_t set = 0; set < kEpochSets; ++set)
        m.epochs[set * kSlots + kSlot] = kEpoch;
      m.gridCount[kSlot] = gridCount;
      for (uint32_t set = 0; set < kInboxSets; ++set)
        for (uint32_t q = 0; q < n; ++q)
          m.inbox[(set * kSlots + kSlot) * kStride + q] = kEpoch + 1;
      DevComm &c = m.comm;
      c.magic = kDevCommMagic;
      c.version = kDevCommVersion;
      c.rank = static_cast<int32_t>(r);
      c.size = static_cast<int32_t>(n);
      c.nBarriers = kSlots;
      c.inboxStride = kStride;
      // Finite, so that a poll that never succeeds aborts (see nowNs).
      c.timeoutNs = 1000;
      c.epochs = m.epochs;
      c.gridCount = m.gridCount;
      c.error = &m.error;
      c.nNodes = 1;
    }
    uint32_t *inboxes[kNodeRanks];
    for (uint32_t q = 0; q < n; ++q)
      inboxes[q] = rank[q].inbox;
    for (uint32_t r = 0; r < n; ++r)
      fillRoutes(rank[r].comm, inboxes);
    rec::State &s = rec::state();
    s.log.clear();
    s.ranges.clear();
    for (uint32_t r = 0; r < n; ++r) {
      RankMem &m = rank[r];
      s.ranges.push_back({m.inbox, m.inbox + kSlots * kStride, "inbox"});
      s.ranges.push_back({m.inbox + kSlots * kStride,
                          m.inbox + 2 * kSlots * kStride, "world-inbox"});
      s.ranges.push_back({m.epochs, m.epochs + kSlots, "epoch"});
      s.ranges.push_back(
          {m.epochs + kSlots, m.epochs + 2 * kSlots, "world-epoch"});
      s.ranges.push_back(
          {m.epochs + 2 * kSlots, m.epochs + 3 * kSlots, "inter-epoch"});
      s.ranges.push_back(
          {m.epochs + 3 * kSlots, m.epochs + 4 * kSlots, "world-inter-epoch"});
      s.ranges.push_back({m.gridCount, m.gridCount + kSlots, "count"});
      s.ranges.push_back({&m.error, &m.error + 1, "record"});
    }
  }
  const void *comm() const { return &rank[0].comm; }
};

/// Simulates thread `thread` of a block of `blockThreads` threads, block
/// `block` of `gridBlocks`.
void become(uint32_t thread, uint32_t blockThreads, uint32_t block = 0,
            uint32_t gridBlocks = 1, uint32_t scratch = 0) {
  rec::State &s = rec::state();
  s.thread = thread;
  s.blockThreads = blockThreads;
  s.block = block;
  s.gridBlocks = gridBlocks;
  s.scratch = scratch;
  s.clock = 0;
}

std::string show(const Log &l) {
  std::ostringstream os;
  for (const std::string &e : l)
    os << "\n    " << e;
  return l.empty() ? "\n    (nothing)" : os.str();
}

#define EXPECT_LOG(expected, what)                                             \
  do {                                                                         \
    const Log &got_ = rec::state().log;                                        \
    EXPECT_EQ(got_, expected) << what << "\n  expected:" << show(expected)     \
                              << "\n  got:" << show(got_);                     \
  } while (0)

/// A group on the library's side and the block it lives in.
struct GroupCase {
  int coop;         ///< as passed to the ABI
  int kind;         ///< as the library runs it
  uint32_t size;    ///< group size
  uint32_t threads; ///< block size
};

/// Thread groups; a 64-thread block of warps (so the second warp's threads
/// only sync); the tile-span and lanes kinds, which run as a warp; a short
/// last warp; blocks of 64 and of 4 (fewer threads than 8 ranks have
/// peers, so some workers signal and poll two peers).
const GroupCase kGroups[] = {
    {kCoopThread, kCoopThread, 1, 1},   {kCoopWarp, kCoopWarp, 32, 64},
    {kCoopTileSpan, kCoopWarp, 32, 32}, {kCoopLanes, kCoopWarp, 32, 32},
    {kCoopWarp, kCoopWarp, 20, 20},     {kCoopBlock, kCoopBlock, 64, 64},
    {kCoopBlock, kCoopBlock, 4, 4},
};
const uint32_t kRankCounts[] = {1, 2, 3, 8};

/// The ranks of a group worth simulating: the first few, the first one
/// outside the first warp, the last.
std::vector<uint32_t> rolesOf(const GroupCase &g) {
  std::vector<uint32_t> out;
  for (uint32_t t = 0; t < std::min(g.size, 9u); ++t)
    out.push_back(t);
  if (g.size > 32)
    out.push_back(32);
  if (g.size > 9)
    out.push_back(g.size - 1);
  return out;
}

std::string where(const char *half, const OrderRow &o, const GroupCase &g,
                  uint32_t n, uint32_t t) {
  std::ostringstream os;
  os << half << " order=" << o.name << " coop=" << g.coop << " group of "
     << g.size << " (block " << g.threads << ") ranks=" << n << " group rank "
     << t;
  return os.str();
}

TEST(OrderTable, GroupBarrier) {
  for (const OrderRow &o : kOrders)
    for (const GroupCase &g : kGroups)
      for (uint32_t n : kRankCounts)
        for (uint32_t t : rolesOf(g)) {
          Role role{g.kind, t, g.size};
          // A group that is not the block's first warp only differs in the
          // thread id; the first one is enough here.
          for (int kind : {kBarrierArrive, kBarrierWait, kBarrierSync}) {
            Node node(n);
            become(t, g.threads);
            impl::barrier(node.comm(), g.coop, kSlot, o.order, kind,
                          tle::abi::Fn::flagcxIntraBarrierSyncS);
            Log want = kind == kBarrierArrive
                           ? expectArrive(o, role, n)
                           : expectWait(o, role, n, kind == kBarrierSync);
            const char *half = kind == kBarrierArrive ? "arrive"
                               : kind == kBarrierWait ? "wait"
                                                      : "sync";
            EXPECT_LOG(want, where(half, o, g, n, t));
          }
        }
}

TEST(OrderTable, WorldBarrierOnOneNode) {
  for (const OrderRow &o : kOrders)
    for (const GroupCase &g : kGroups)
      for (uint32_t n : kRankCounts)
        for (uint32_t t : rolesOf(g)) {
          Role role{g.kind, t, g.size};
          for (int kind : {kBarrierArrive, kBarrierWait, kBarrierSync}) {
            Node node(n);
            become(t, g.threads);
            impl::teamBarrier(node.comm(), kTeamWorld, g.coop, kSlot, o.order,
                              kind, tle::abi::Fn::flagcxDevBarrierSync);
            Log want = kind == kBarrierArrive
                           ? onWorldSet(expectArrive(o, role, n))
                           : expectWorldWait(o, role, n, kind == kBarrierSync);
            const char *half = kind == kBarrierArrive ? "world arrive"
                               : kind == kBarrierWait ? "world wait"
                                                      : "world sync";
            EXPECT_LOG(want, where(half, o, g, n, t));
          }
        }
}

TEST(OrderTable, UnifiedFormIsTheSameBarrier) {
  // flagcxDevBarrier*: scope and context are accepted and ignored.
  for (const OrderRow &o : kOrders) {
    Node node(3);
    become(0, 64);
    impl::devBarrier(node.comm(), kTeamIntra, kSlot, kCoopBlock, o.order,
                     kScopeDevice, kBarrierSync,
                     tle::abi::Fn::flagcxDevBarrierSync);
    EXPECT_LOG(expectWait(o, {kCoopBlock, 0, 64}, 3, true), o.name);
  }
}

TEST(OrderTable, GridBarrier) {
  for (const OrderRow &o : kOrders)
    for (uint32_t n : kRankCounts)
      for (uint32_t threads : {1u, 2u, 64u})
        for (uint32_t t = 0; t < std::min(threads, 9u); ++t) {
          std::string at =
              where("grid", o, {kCoopGrid, kCoopGrid, 0, threads}, n, t);
          for (bool last : {false, true}) {
            // Two CTAs; the counter says whether this one is the last.
            Node node(n, last ? 1 : 0);
            become(t, threads, 0, 2);
            impl::gridBarrier(node.comm(), kSlot, o.order, kBarrierArrive,
                              tle::abi::Fn::tleIntraGridBarrierArriveS);
            EXPECT_LOG(expectGridArrive(o, t, last, n),
                       at << (last ? " arrive, last CTA" : " arrive"));
          }
          Node node(n);
          become(t, threads, 0, 2, kEpoch + 1);
          impl::gridBarrier(node.comm(), kSlot, o.order, kBarrierWait,
                            tle::abi::Fn::tleIntraGridBarrierWaitS);
          EXPECT_LOG(expectGridWait(t, threads, n), at << " wait");
        }
}

TEST(OrderTable, Session) {
  for (const OrderRow &o : kOrders)
    for (const GroupCase &g : kGroups) {
      if (g.coop != g.kind)
        continue; // sessions take thread, warp and block
      for (uint32_t n : kRankCounts)
        for (uint32_t t : rolesOf(g)) {
          Role role{g.kind, t, g.size};
          std::string at = where("session", o, g, n, t);
          MemoryOrder order = static_cast<MemoryOrder>(o.order);
          {
            Node node(n);
            become(t, g.threads);
            BarrierSession s(node.comm(), static_cast<CoopKind>(g.coop), kSlot);
            EXPECT_LOG(expectSessionOpen(role), at << " open");
            rec::state().log.clear();
            s.sync(order);
            Log want = expectSessionArrive(o, role, n, false);
            add(want, expectSessionWait(o, role, n));
            EXPECT_LOG(want, at << " sync");
          }
          {
            Node node(n);
            become(t, g.threads);
            BarrierSession s(node.comm(), static_cast<CoopKind>(g.coop), kSlot);
            rec::state().log.clear();
            s.arrive(order);
            EXPECT_LOG(expectSessionArrive(o, role, n, true), at << " arrive");
            rec::state().log.clear();
            s.wait(order);
            EXPECT_LOG(expectSessionWait(o, role, n), at << " wait");
          }
        }
    }
}

} // namespace
