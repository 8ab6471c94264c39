//===- BarrierTest.cpp - Barrier semantics of the ABI on the emulator -----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Runs the real ABI functions (flagcxIntraBarrier*S, flagcxDevBarrier*,
// tleIntraGridBarrier*S) of libtle's host build on 2-8 emulated ranks, for
// every group kind, memory order and call form, and checks the barrier
// property itself: nobody leaves round k before every member of the group
// on every rank entered it, and nobody enters round k+2 before everyone
// left round k. Also: many slots at once, epochs across launches, epoch
// wrap-around, rank/size/pointer queries, and the memory bound of a large
// launch. Seeds are the default (TLE_EMU_SEED or the clock), so every run
// tries new schedules; failures print the seed.
//
//===----------------------------------------------------------------------===//

#include "EmuTestUtil.h"

#include "tle/session.h"

#include <sys/resource.h>

#include <functional>
#include <string>
#include <thread>

using namespace tle;
using namespace tle::emu;
using namespace tle::emutest;

namespace {

/// The TLE grid group in these tests (the ABI has separate entry points).
constexpr int kGrid = 5;

enum class Form { Sync, Split, Unified };

struct Case {
  int ranks;
  int kind; ///< a CoopKind or kGrid
  Form form;
};

std::string kindName(int kind) {
  static const char *names[] = {"thread",   "warp",  "block",
                                "tilespan", "lanes", "grid"};
  return names[kind];
}

void PrintTo(const Case &c, std::ostream *os) {
  *os << c.ranks << " ranks, " << kindName(c.kind) << ", form "
      << static_cast<int>(c.form);
}

std::string caseName(const testing::TestParamInfo<Case> &info) {
  static const char *forms[] = {"sync", "split", "unified"};
  return "n" + std::to_string(info.param.ranks) + "_" +
         kindName(info.param.kind) + "_" +
         forms[static_cast<int>(info.param.form)];
}

constexpr uint32_t kBlocks = 2, kThreads = 64;

/// The group of the calling thread: its index on this rank (its slot) and
/// the number of threads in it.
void groupOf(int kind, uint32_t &group, uint32_t &size) {
  uint32_t b = linearBlockId(), t = linearThreadId();
  switch (kind) {
  case kCoopThread:
    group = b * kThreads + t, size = 1;
    return;
  case kCoopBlock:
    group = b, size = kThreads;
    return;
  case kGrid:
    group = 0, size = kBlocks * kThreads;
    return;
  default: // warp, tile span and lanes run as a full warp
    group = b * (kThreads / 32) + t / 32, size = 32;
    return;
  }
}

void fullBarrier(const void *dc, int kind, uint32_t slot, int order) {
  if (kind == kGrid)
    tleIntraGridBarrierSyncS(dc, slot, false, order);
  else
    flagcxIntraBarrierSyncS(dc, kind, slot, false, order);
}

/// One barrier round in the given form; `between` runs between the halves.
void barrierRound(const void *dc, int kind, uint32_t slot, int order, Form form,
                  uint32_t round, const std::function<void()> &between) {
  if (form == Form::Sync) {
    fullBarrier(dc, kind, slot, order);
    return;
  }
  if (kind == kGrid) {
    tleIntraGridBarrierArriveS(dc, slot, false, order);
    between();
    tleIntraGridBarrierWaitS(dc, slot, false, order);
    return;
  }
  if (form == Form::Split) {
    flagcxIntraBarrierArriveS(dc, kind, slot, false, order);
    between();
    flagcxIntraBarrierWaitS(dc, kind, slot, false, order);
    return;
  }
  // The unified form alternates its fused and split calls.
  if (round % 2 == 0) {
    flagcxDevBarrierSync(dc, kTeamIntra, slot, 0, kind, order, kScopeSystem);
    return;
  }
  flagcxDevBarrierArrive(dc, kTeamIntra, slot, 0, kind, order, kScopeDevice);
  between();
  flagcxDevBarrierWait(dc, kTeamIntra, slot, 0, kind, order, kScopeDevice);
}

class BarrierSemantics : public testing::TestWithParam<Case> {};

TEST_P(BarrierSemantics, NobodyPassesEarlyNorRunsAhead) {
  const Case c = GetParam();
  constexpr uint32_t kRoundsPerOrder = 3;
  constexpr uint32_t kNestedSlotBase = 256;
  Ranks ranks(c.ranks, 512);
  ASSERT_EQ(ranks.status, tleSuccess) << tleGetLastErrorDetail();
  // arrivals[rank][group]: members of the group on that rank that entered
  // a round, summed over rounds.
  std::vector<std::vector<uint32_t>> arrivals(
      c.ranks, std::vector<uint32_t>(kBlocks * kThreads, 0));
  uint64_t early = 0, ahead = 0, betweenRuns = 0;

  LaunchOptions o = shape({kBlocks, 1, 1}, {kThreads, 1, 1});
  o.cooperative = c.kind == kGrid;
  LaunchResult r =
      launch(ranks.comms.data(), c.ranks, o, [&](int rank, void *dc) {
        uint32_t group, size;
        groupOf(c.kind, group, size);
        uint32_t round = 0;
        for (int order = kOrderRelaxed; order <= kOrderSeqCst; ++order) {
          for (uint32_t k = 0; k < kRoundsPerOrder; ++k, ++round) {
            ++arrivals[rank][group];
            barrierRound(dc, c.kind, group, order, c.form, round, [&] {
              // Work between the halves: a block sync and, where the group
              // allows it, a whole barrier on another slot.
              ++betweenRuns;
              syncThreads();
              if (c.kind != kGrid)
                fullBarrier(dc, c.kind, kNestedSlotBase + group, order);
            });
            for (int q = 0; q < c.ranks; ++q) {
              uint32_t a = arrivals[q][group];
              early += a < (round + 1) * size;
              ahead += a > (round + 2) * size;
            }
          }
        }
      });
  ASSERT_EQ(r.result, tleSuccess) << r.message;
  EXPECT_EQ(early, 0u) << "seed " << r.seed;
  EXPECT_EQ(ahead, 0u) << "seed " << r.seed;
  uint32_t rounds = 5 * kRoundsPerOrder;
  if (c.form != Form::Sync)
    EXPECT_GT(betweenRuns, 0u);
  // Every slot advanced its epoch once per round, and only its own.
  uint32_t groups = c.kind == kCoopThread  ? kBlocks * kThreads
                    : c.kind == kCoopBlock ? kBlocks
                    : c.kind == kGrid      ? 1
                                           : kBlocks * kThreads / 32;
  for (int q = 0; q < c.ranks; ++q) {
    for (uint32_t g = 0; g < groups; ++g)
      EXPECT_EQ(ranks.dev(q)->epochs[g], rounds)
          << "rank " << q << " slot " << g;
    EXPECT_EQ(ranks.dev(q)->epochs[groups], 0u);
  }
}

std::vector<Case> allCases() {
  std::vector<Case> cases;
  for (int n : {2, 3, 8})
    for (int kind = 0; kind <= kGrid; ++kind)
      for (Form form : {Form::Sync, Form::Split, Form::Unified})
        if (!(kind == kGrid && form == Form::Unified))
          cases.push_back({n, kind, form});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Emu, BarrierSemantics, testing::ValuesIn(allCases()),
                         caseName);

TEST(EmuBarrier, RankSizeAndPointers) {
  Ranks ranks(4);
  ASSERT_EQ(ranks.status, tleSuccess) << tleGetLastErrorDetail();
  SymBuffer buf(ranks, 4 * sizeof(uint32_t));
  ASSERT_EQ(buf.status, tleSuccess) << tleGetLastErrorDetail();
  uint64_t bad = 0;
  LaunchResult r =
      launch(ranks.comms.data(), 4, shape({1, 1, 1}, {1, 1, 1}),
             [&](int rank, void *dc) {
               bad += flagcxDevCommGetIntraRank(dc) != rank;
               bad += flagcxDevCommGetIntraSize(dc) != 4;
               const void *mem = buf.handle(rank);
               // Everyone writes its rank into slot `rank` of every peer's
               // copy.
               for (int p = 0; p < 4; ++p) {
                 auto *w = static_cast<uint32_t *>(
                     flagcxGetIntraPointerS(mem, rank * sizeof(uint32_t), p));
                 *w = 100 + rank;
               }
               flagcxIntraBarrierSyncS(dc, kCoopThread, 0, false, kOrderAcqRel);
               auto *mine =
                   static_cast<uint32_t *>(flagcxGetLocalPointerS(mem, 0));
               for (int q = 0; q < 4; ++q)
                 bad += mine[q] != uint32_t(100 + q);
               bad += flagcxGetIntraPointerS(mem, 0, rank) != mine;
             });
  ASSERT_EQ(r.result, tleSuccess) << r.message;
  EXPECT_EQ(bad, 0u) << "seed " << r.seed;
}

TEST(EmuBarrier, OneOsThreadPerRank) {
  // Each rank launched from its own OS thread, as with one thread per
  // device: every scheduler sees one rank, and waits poll across threads.
  constexpr int kRanks = 3;
  constexpr uint32_t kRounds = 30;
  Ranks ranks(kRanks);
  ASSERT_EQ(ranks.status, tleSuccess) << tleGetLastErrorDetail();
  SymBuffer buf(ranks, 2 * kRanks * sizeof(uint32_t));
  ASSERT_EQ(buf.status, tleSuccess) << tleGetLastErrorDetail();
  LaunchResult results[kRanks];
  uint64_t bad[kRanks] = {};
  std::vector<std::thread> threads;
  for (int i = 0; i < kRanks; ++i)
    threads.emplace_back([&, i] {
      results[i] = launch(
          &ranks.comms[i], 1, shape({1, 1, 1}, {8, 1, 1}),
          [&](int rank, void *dc) {
            const void *mem = buf.handle(rank);
            for (uint32_t k = 0; k < kRounds; ++k) {
              uint32_t word = (k % 2) * kRanks + rank;
              if (linearThreadId() == 0)
                for (int p = 0; p < kRanks; ++p)
                  __atomic_store_n(
                      static_cast<uint32_t *>(flagcxGetIntraPointerS(
                          mem, word * sizeof(uint32_t), p)),
                      k + 1, __ATOMIC_RELAXED);
              flagcxIntraBarrierSyncS(dc, kCoopBlock, 0, false, kOrderAcqRel);
              auto *mine =
                  static_cast<uint32_t *>(flagcxGetLocalPointerS(mem, 0));
              for (int q = 0; q < kRanks; ++q)
                bad[rank] += __atomic_load_n(&mine[(k % 2) * kRanks + q],
                                             __ATOMIC_RELAXED) != k + 1;
            }
          });
    });
  for (std::thread &t : threads)
    t.join();
  for (int i = 0; i < kRanks; ++i) {
    EXPECT_EQ(results[i].result, tleSuccess) << results[i].message;
    EXPECT_EQ(bad[i], 0u);
  }
}

TEST(EmuBarrier, ManySlotsInParallel) {
  // 32 blocks per rank, each on its own slot, 8 resident at a time: the
  // blocks of one slot meet across ranks while the others come and go.
  constexpr int kRanks = 4;
  constexpr uint32_t kBlocksHere = 32, kRounds = 10;
  Ranks ranks(kRanks, kBlocksHere);
  ASSERT_EQ(ranks.status, tleSuccess) << tleGetLastErrorDetail();
  std::vector<std::vector<uint32_t>> arrivals(
      kRanks, std::vector<uint32_t>(kBlocksHere, 0));
  uint64_t bad = 0;
  LaunchOptions o = shape({kBlocksHere, 1, 1}, {32, 1, 1});
  o.maxResidentBlocks = 8;
  LaunchResult r =
      launch(ranks.comms.data(), kRanks, o, [&](int rank, void *dc) {
        uint32_t b = linearBlockId();
        for (uint32_t k = 0; k < kRounds; ++k) {
          if (linearThreadId() == 0)
            ++arrivals[rank][b];
          flagcxIntraBarrierSyncS(dc, kCoopBlock, b, false, kOrderAcqRel);
          for (int q = 0; q < kRanks; ++q)
            bad += arrivals[q][b] < k + 1 || arrivals[q][b] > k + 2;
        }
      });
  ASSERT_EQ(r.result, tleSuccess) << r.message;
  EXPECT_EQ(bad, 0u) << "seed " << r.seed;
  for (int q = 0; q < kRanks; ++q)
    for (uint32_t b = 0; b < kBlocksHere; ++b)
      EXPECT_EQ(ranks.dev(q)->epochs[b], kRounds);
}

/// `rounds` block-group syncs on `slot`, checking the barrier property;
/// returns the number of violations.
uint64_t syncRounds(Ranks &ranks, uint32_t slot, uint32_t rounds,
                    LaunchResult &r,
                    std::optional<uint64_t> seed = std::nullopt) {
  int n = ranks.size();
  std::vector<uint32_t> arrivals(n, 0);
  uint64_t bad = 0;
  emu::LaunchOptions o = shape({1, 1, 1}, {40, 1, 1});
  o.seed = seed;
  r = launch(ranks.comms.data(), n, o, [&](int rank, void *dc) {
    for (uint32_t k = 0; k < rounds; ++k) {
      // The last rank's thread 0 lags (a spin hint parks it until the
      // scheduler resumes it at random), so that a wait that passes
      // before every peer arrived is seen, whatever the schedule.
      if (linearThreadId() == 0 && rank == n - 1)
        for (int y = 0; y < 4; ++y)
          tleEmuSpinHint(&arrivals[rank], arrivals[rank]);
      if (linearThreadId() == 0)
        ++arrivals[rank];
      // Alternate the call forms so that both advance the epoch.
      if (k % 2) {
        flagcxIntraBarrierArriveS(dc, kCoopBlock, slot, false, kOrderRelease);
        flagcxIntraBarrierWaitS(dc, kCoopBlock, slot, false, kOrderAcquire);
      } else {
        flagcxIntraBarrierSyncS(dc, kCoopBlock, slot, false, kOrderAcqRel);
      }
      for (int q = 0; q < n; ++q)
        bad += arrivals[q] < k + 1 || arrivals[q] > k + 2;
    }
  });
  return bad;
}

TEST(EmuBarrier, EpochsCarryAcrossLaunches) {
  Ranks ranks(3);
  ASSERT_EQ(ranks.status, tleSuccess) << tleGetLastErrorDetail();
  LaunchResult r;
  EXPECT_EQ(syncRounds(ranks, 5, 3, r), 0u) << "seed " << r.seed;
  ASSERT_EQ(r.result, tleSuccess) << r.message;
  for (int q = 0; q < 3; ++q)
    EXPECT_EQ(ranks.dev(q)->epochs[5], 3u);
  // The second launch starts from epoch 3: its first wait needs epoch 4 of
  // every peer, which only this launch's arrivals provide.
  EXPECT_EQ(syncRounds(ranks, 5, 4, r), 0u) << "seed " << r.seed;
  ASSERT_EQ(r.result, tleSuccess) << r.message;
  for (int q = 0; q < 3; ++q)
    EXPECT_EQ(ranks.dev(q)->epochs[5], 7u);
}

TEST(EmuBarrier, EpochsWrapAround) {
  constexpr uint32_t kSlot = 9, kStart = 0xFFFFFFF0u, kRounds = 40;
  // A comparison that breaks at the wrap lets a wait pass early in the
  // rounds around it only, and whether a rank then runs ahead of a peer
  // far enough to see it depends on the schedule: 64 fixed schedules per
  // rank count, of which mutant 26 (the unsigned comparison) shows in 8
  // (the scheduler of 2026-12-02, which wakes a waiter at the store to its
  // flag), in 0.6 s.
  for (int n : {2, 5}) {
    for (uint64_t seed = 1; seed <= 64; ++seed) {
      Ranks ranks(n);
      ASSERT_EQ(ranks.status, tleSuccess) << tleGetLastErrorDetail();
      for (int q = 0; q < n; ++q) {
        DevComm *dc = ranks.dev(q);
        dc->epochs[kSlot] = kStart;
        for (int p = 0; p < n; ++p)
          inboxOf(*dc, q)[kSlot * dc->inboxStride + p] = kStart;
      }
      LaunchResult r;
      EXPECT_EQ(syncRounds(ranks, kSlot, kRounds, r, seed), 0u)
          << "ranks " << n << " seed " << r.seed;
      ASSERT_EQ(r.result, tleSuccess) << r.message;
      for (int q = 0; q < n; ++q)
        EXPECT_EQ(ranks.dev(q)->epochs[kSlot], kStart + kRounds);
    }
  }
}

TEST(EmuBarrier, LargeLaunchStaysWithinMemoryBound) {
  // 8 ranks x 64 blocks x 256 threads with a block-group barrier per block:
  // 131072 threads, at most 16 blocks resident per rank.
  Ranks ranks(8, 64);
  ASSERT_EQ(ranks.status, tleSuccess) << tleGetLastErrorDetail();
  uint64_t bad = 0;
  std::vector<std::vector<uint32_t>> arrivals(8, std::vector<uint32_t>(64, 0));
  LaunchResult r =
      launch(ranks.comms.data(), 8, shape({64, 1, 1}, {256, 1, 1}),
             [&](int rank, void *dc) {
               uint32_t b = linearBlockId();
               if (linearThreadId() == 0)
                 ++arrivals[rank][b];
               flagcxIntraBarrierSyncS(dc, kCoopBlock, b, false, kOrderAcqRel);
               for (int q = 0; q < 8; ++q)
                 bad += arrivals[q][b] != 1;
             });
  ASSERT_EQ(r.result, tleSuccess) << r.message;
  EXPECT_EQ(bad, 0u) << "seed " << r.seed;
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  long peakMiB = usage.ru_maxrss / 1024;
  RecordProperty("peak_rss_mib", std::to_string(peakMiB));
  EXPECT_LT(peakMiB, 384) << "peak RSS " << peakMiB << " MiB";
}

} // namespace

/// tle::BarrierSession (tle/session.h): the same barrier property as the
/// stateless calls for every group kind and 2..5 ranks, the epoch written
/// back so that stateless calls and later launches continue from it, and
/// its checks (a slot out of range fails like the stateless call).
TEST(EmuBarrier, SessionKeepsTheBarrierPropertyAndTheEpoch) {
  constexpr uint32_t kRounds = 12;
  for (int n : {2, 3, 5}) {
    for (CoopKind coop : {kCoopThread, kCoopWarp, kCoopBlock}) {
      Ranks ranks(n);
      ASSERT_EQ(ranks.status, tleSuccess) << tleGetLastErrorDetail();
      // One group per block: a thread group is thread 0 alone.
      Dim3 block{coop == kCoopThread ? 1u : 40u, 1, 1};
      if (coop == kCoopWarp)
        block.x = 32;
      std::vector<uint32_t> arrivals(n, 0);
      uint64_t bad = 0;
      LaunchResult r =
          launch(ranks.comms.data(), n, shape({1, 1, 1}, block),
                 [&](int rank, void *dc) {
                   BarrierSession s(dc, coop, 7);
                   for (uint32_t k = 0; k < kRounds; ++k) {
                     if (linearThreadId() == 0)
                       ++arrivals[rank];
                     if (k % 2) {
                       s.arrive(kOrderRelease);
                       s.wait(kOrderAcquire);
                     } else {
                       s.sync(kOrderAcqRel);
                     }
                     for (int q = 0; q < n; ++q)
                       bad += arrivals[q] < k + 1 || arrivals[q] > k + 2;
                   }
                   // A stateless call continues from the session's epoch.
                   flagcxIntraBarrierSyncS(dc, coop, 7, false, kOrderAcqRel);
                 });
      ASSERT_EQ(r.result, tleSuccess) << r.message;
      EXPECT_EQ(bad, 0u) << "n " << n << " coop " << coop << " seed " << r.seed;
      for (int q = 0; q < n; ++q)
        EXPECT_EQ(ranks.dev(q)->epochs[7], kRounds + 1);
    }
  }
}

/// The compiled sessions (tleIntraBarrierSession*, what
/// tle-form-barrier-sessions lowers to): the barrier property in a loop
/// whose epoch the caller carries, with stateless calls on the same slot
/// before and after it, over three identical launches (a graph replay is
/// one on a GPU). The slot's epoch word, read once at the open and stored
/// by each wait (as tle::BarrierSession's), continues across all of them:
/// each launch adds kRounds + 2 epochs. Without the carried epoch's advance
/// (mutant 60) the session's waits pass at once; without the waits' stores
/// (mutant 23) the stateless call after it does.
TEST(EmuBarrier, CompiledSessionContinuesAcrossStatelessCallsAndLaunches) {
  constexpr uint32_t kRounds = 9, kLaunches = 3, kSlot = 5;
  for (int n : {2, 3, 8}) {
    for (CoopKind coop : {kCoopThread, kCoopWarp, kCoopBlock}) {
      Ranks ranks(n);
      ASSERT_EQ(ranks.status, tleSuccess) << tleGetLastErrorDetail();
      Dim3 block{coop == kCoopThread ? 1u
                 : coop == kCoopWarp ? 32u
                                     : 40u,
                 1, 1};
      std::vector<uint32_t> arrivals(n, 0);
      uint64_t bad = 0;
      for (uint32_t l = 0; l < kLaunches; ++l) {
        LaunchResult r = launch(
            ranks.comms.data(), n, shape({1, 1, 1}, block),
            [&](int rank, void *dc) {
              // Entered round `k` (counted from the launch's first
              // barrier): every rank entered it, none is past round k + 1.
              auto enter = [&]() {
                if (linearThreadId() == 0)
                  ++arrivals[rank];
              };
              auto check = [&](uint32_t k) {
                uint32_t base = l * (kRounds + 2);
                for (int q = 0; q < n; ++q)
                  bad +=
                      arrivals[q] < base + k + 1 || arrivals[q] > base + k + 2;
              };
              enter();
              flagcxIntraBarrierSyncS(dc, coop, kSlot, false, kOrderAcqRel);
              check(0);
              uint32_t e = tleIntraBarrierSessionOpen(dc, coop, kSlot);
              for (uint32_t k = 1; k <= kRounds; ++k) {
                enter();
                if (k % 3 == 1) {
                  e = tleIntraBarrierSessionArrive(dc, coop, kSlot,
                                                   kOrderRelease, e);
                  e = tleIntraBarrierSessionWait(dc, coop, kSlot, kOrderAcquire,
                                                 e);
                } else {
                  e = tleIntraBarrierSessionSync(dc, coop, kSlot, kOrderAcqRel,
                                                 e);
                }
                check(k);
              }
              tleIntraBarrierSessionClose(dc, coop, kSlot, e);
              enter();
              flagcxIntraBarrierSyncS(dc, coop, kSlot, false, kOrderAcqRel);
              check(kRounds + 1);
            });
        ASSERT_EQ(r.result, tleSuccess) << r.message;
        EXPECT_EQ(bad, 0u) << "n " << n << " coop " << coop << " launch " << l
                           << " seed " << r.seed;
        for (int q = 0; q < n; ++q)
          EXPECT_EQ(ranks.dev(q)->epochs[kSlot], (l + 1) * (kRounds + 2));
      }
    }
  }
}

/// An early exit: a loop whose exit depends on data (a wait, then the
/// exit test), as an scf.while's condition region, left after a different
/// number of rounds in each launch. The slot's word holds the epoch the
/// exit left with (its last wait stored it), and the stateless call after
/// the close, and the next launch's, continue from it.
TEST(EmuBarrier, CompiledSessionLeftEarlyLeavesItsEpoch) {
  constexpr uint32_t kSlot = 3;
  const int n = 2;
  Ranks ranks(n);
  ASSERT_EQ(ranks.status, tleSuccess) << tleGetLastErrorDetail();
  uint32_t expected = 0;
  for (uint32_t stop : {0u, 4u, 1u}) {
    LaunchResult r = launch(
        ranks.comms.data(), n, shape({1, 1, 1}, {64, 1, 1}),
        [&](int, void *dc) {
          uint32_t e = tleIntraBarrierSessionOpen(dc, kCoopBlock, kSlot);
          for (uint32_t k = 0;; ++k) {
            e = tleIntraBarrierSessionSync(dc, kCoopBlock, kSlot, kOrderAcqRel,
                                           e);
            if (k >= stop)
              break;
          }
          tleIntraBarrierSessionClose(dc, kCoopBlock, kSlot, e);
          flagcxIntraBarrierSyncS(dc, kCoopBlock, kSlot, false, kOrderAcqRel);
        });
    ASSERT_EQ(r.result, tleSuccess) << r.message;
    expected += stop + 2;
    for (int q = 0; q < n; ++q)
      EXPECT_EQ(ranks.dev(q)->epochs[kSlot], expected) << "stop " << stop;
  }
}

/// Triton's session barrier runs on the slot passed beside the session
/// (the front end carries it as a loop invariant): a loop on slot 3 leaves
/// slot 3's word at its rounds and its neighbours' untouched.
TEST(EmuBarrier, TritonSessionRunsOnTheSlotPassedBesideIt) {
  constexpr int32_t kSlot = 3;
  constexpr uint32_t kRounds = 5;
  const int n = 2;
  Ranks ranks(n);
  ASSERT_EQ(ranks.status, tleSuccess) << tleGetLastErrorDetail();
  std::vector<int32_t> closed(n, -1);
  LaunchResult r =
      launch(ranks.comms.data(), n, shape({1, 1, 1}, {32, 1, 1}),
             [&](int rank, void *dc) {
               auto h = reinterpret_cast<int64_t>(dc);
               int64_t s = tleTritonSessionOpen(h, kCoopBlock, kSlot);
               for (uint32_t k = 0; k < kRounds; ++k)
                 s = tleTritonSession(h, kBarrierSync, kCoopBlock, kOrderAcqRel,
                                      s, kSlot);
               int32_t status = tleTritonSessionClose(h, kCoopBlock, s);
               if (linearThreadId() == 0)
                 closed[rank] = status;
             });
  ASSERT_EQ(r.result, tleSuccess) << r.message;
  for (int q = 0; q < n; ++q) {
    EXPECT_EQ(closed[q], 0);
    EXPECT_EQ(ranks.dev(q)->epochs[kSlot], kRounds) << "rank " << q;
    EXPECT_EQ(ranks.dev(q)->epochs[kSlot - 1], 0u) << "rank " << q;
    EXPECT_EQ(ranks.dev(q)->epochs[kSlot + 1], 0u) << "rank " << q;
  }
}

/// The session entry points check what the stateless calls check: the
/// slot at the open, and no grid group.
TEST(EmuBarrier, CompiledSessionRejectsBadSlotsAndGroups) {
  Ranks ranks(2, 8);
  ASSERT_EQ(ranks.status, tleSuccess) << tleGetLastErrorDetail();
  LaunchResult r = launch(ranks.comms.data(), 2, shape({1, 1, 1}, {32, 1, 1}),
                          [&](int, void *dc) {
                            (void)tleIntraBarrierSessionOpen(dc, kCoopBlock, 8);
                          });
  EXPECT_EQ(r.result, tleIndexOutOfRange) << r.message;
  EXPECT_NE(r.message.find("slot 8 out of range (nBarriers 8)"),
            std::string::npos)
      << r.message;
  r = launch(ranks.comms.data(), 2, shape({1, 1, 1}, {32, 1, 1}),
             [&](int, void *dc) {
               (void)tleIntraBarrierSessionSync(dc, kGrid, 0, kOrderAcqRel, 0);
             });
  EXPECT_EQ(r.result, tleInvalidArgument) << r.message;
}

TEST(EmuBarrier, SessionRejectsASlotOutOfRange) {
  Ranks ranks(2, 8);
  ASSERT_EQ(ranks.status, tleSuccess) << tleGetLastErrorDetail();
  LaunchResult r = launch(ranks.comms.data(), 2, shape({1, 1, 1}, {32, 1, 1}),
                          [&](int, void *dc) {
                            BarrierSession s(dc, kCoopBlock, 8);
                            s.sync(kOrderAcqRel);
                          });
  EXPECT_EQ(r.result, tleIndexOutOfRange) << r.message;
  EXPECT_NE(r.message.find("slot 8 out of range (nBarriers 8)"),
            std::string::npos)
      << r.message;
}
