//===- StressTest.cpp - Adversarial data visibility through the barrier ---===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Every round, each rank writes a round-stamped payload into every peer's
// copy of a symmetric buffer, arrives with release, waits with acquire, and
// then checks that what its peers wrote for it is exactly the current round.
// The payload is double-buffered by round parity, so a correct barrier
// leaves no room for a peer to overwrite it early: a stale stamp means the
// wait let the rank through before a peer's data, a newer stamp means a peer
// ran two rounds ahead. Each group member writes its own words and reads a
// different member's, so the group syncs around the barrier are exercised
// too. Schedules come from fresh seeds on every run (a failure prints its
// seed); the total exceeds 100,000 rounds. The payload goes through
// tle::emu::read/write when the race checker follows the launch (the first
// seed of each configuration): it must find nothing in the correct
// protocol. The stamps see the barrier's logic, not its memory orders: the
// emulator runs every fiber on one OS thread, so its memory is sequentially
// consistent and a stale read never happens, whatever the barrier's memory
// order (docs/emulator.md, "What the emulator can and cannot observe"). The
// race checker sees them: it orders accesses only by the edges the
// barrier's memory orders create, so the RaceCheck tests, the same stress
// with every order, must find a race in each control that does not release
// or acquire and none in the ordered runs. The last tests break the
// protocol on purpose to show that both the stamps and the race checker
// catch it.
//
//===----------------------------------------------------------------------===//

#include "EmuTestUtil.h"

#include <random>

using namespace tle;
using namespace tle::emu;
using namespace tle::emutest;

namespace {

enum class Protocol {
  Correct,        ///< write; arrive(release); wait(acquire); read
  ReadBeforeWait, ///< broken: write; arrive; read; wait
};

struct StressConfig {
  int ranks;
  int kind;         ///< kCoopThread, kCoopWarp or kCoopBlock
  uint32_t blocks;  ///< each block (or thread/warp group) has its own slot
  uint32_t threads; ///< per block
  uint32_t rounds;  ///< per launch
};

struct StressResult {
  uint64_t rounds = 0;     ///< barrier rounds completed, summed over slots
  uint64_t violations = 0; ///< payload words with the wrong stamp
  LaunchResult launch;
};

/// The memory orders of one round's arrive and wait.
struct Orders {
  int arrive = kOrderRelease;
  int wait = kOrderAcquire;
};

/// The payload's stores and loads: through the race checker's
/// read()/write() when it checks the launch, plain otherwise.
template <typename T> void put(T *p, T v, bool checked) {
  if (checked)
    return write(p, v);
  *p = v;
}
template <typename T> T get(const T *p, bool checked) {
  if (checked)
    return read(p);
  return *p;
}

/// Words a group member owns in one payload copy.
constexpr uint32_t kWordsPerThread = 2;

/// A word no other (round, writer, word) shares: rounds < 65535, writers
/// (ranks) < 256 and words < 256 (checked in runStress).
uint32_t stamp(uint32_t round, int writer, uint32_t word) {
  return ((round + 1) << 16) | (static_cast<uint32_t>(writer) << 8) | word;
}

StressResult runStress(const StressConfig &c, Protocol protocol, uint64_t seed,
                       Orders orders = {}, bool raceCheck = false) {
  StressResult out;
  Ranks ranks(c.ranks, 256);
  EXPECT_EQ(ranks.status, tleSuccess) << tleGetLastErrorDetail();
  if (ranks.status != tleSuccess)
    return out;
  uint32_t groupSize = c.kind == kCoopThread ? 1
                       : c.kind == kCoopWarp ? std::min(32u, c.threads)
                                             : c.threads;
  EXPECT_TRUE(c.rounds < 65535 && c.ranks < 256 &&
              groupSize * kWordsPerThread <= 256)
      << "stamps would collide";
  uint32_t groupsPerBlock = c.threads / groupSize;
  uint32_t groups = c.blocks * groupsPerBlock;
  // Layout of one rank's copy: [parity][group][writer rank][member][word].
  size_t groupWords = size_t(c.ranks) * groupSize * kWordsPerThread;
  size_t parityWords = groups * groupWords;
  SymBuffer buf(ranks, 2 * parityWords * sizeof(uint32_t));
  EXPECT_EQ(buf.status, tleSuccess) << tleGetLastErrorDetail();
  if (buf.status != tleSuccess)
    return out;

  LaunchOptions o = shape({c.blocks, 1, 1}, {c.threads, 1, 1});
  o.seed = seed;
  o.raceCheck = raceCheck;
  out.launch = launch(ranks.comms.data(), c.ranks, o, [&](int rank, void *dc) {
    uint32_t t = linearThreadId();
    uint32_t group = linearBlockId() * groupsPerBlock + t / groupSize;
    uint32_t member = t % groupSize;
    // The member whose words this thread checks: another one if any.
    uint32_t checked = (member + 1) % groupSize;
    const void *mem = buf.handle(rank);
    for (uint32_t round = 0; round < c.rounds; ++round) {
      size_t base = (round % 2) * parityWords + group * groupWords;
      for (int p = 0; p < c.ranks; ++p) {
        auto *dst = static_cast<uint32_t *>(flagcxGetIntraPointerS(
            mem,
            (base + (size_t(rank) * groupSize + member) * kWordsPerThread) *
                sizeof(uint32_t),
            p));
        for (uint32_t w = 0; w < kWordsPerThread; ++w)
          put(dst + w, stamp(round, rank, member * kWordsPerThread + w),
              raceCheck);
      }
      flagcxIntraBarrierArriveS(dc, c.kind, group, false, orders.arrive);
      auto check = [&] {
        auto *mine = static_cast<uint32_t *>(flagcxGetLocalPointerS(mem, 0));
        for (int q = 0; q < c.ranks; ++q)
          for (uint32_t w = 0; w < kWordsPerThread; ++w) {
            uint32_t word = checked * kWordsPerThread + w;
            out.violations +=
                get(mine + base +
                        (size_t(q) * groupSize + checked) * kWordsPerThread + w,
                    raceCheck) != stamp(round, q, word);
          }
      };
      if (protocol == Protocol::ReadBeforeWait)
        check();
      flagcxIntraBarrierWaitS(dc, c.kind, group, false, orders.wait);
      if (protocol == Protocol::Correct)
        check();
      // A round counts once per slot: when rank 0's first member is done.
      out.rounds += rank == 0 && member == 0;
    }
  });
  if (out.launch.result == tleSuccess)
    EXPECT_EQ(out.rounds, uint64_t(groups) * c.rounds);
  return out;
}

/// Fresh seeds per run unless TLE_EMU_SEED pins them.
uint64_t freshSeed(std::mt19937_64 &gen) {
  if (const char *env = std::getenv("TLE_EMU_SEED"); env && *env)
    return std::strtoull(env, nullptr, 0);
  return gen();
}

void PrintTo(const StressConfig &c, std::ostream *os) {
  *os << c.ranks << " ranks, coop " << c.kind << ", " << c.blocks << "x"
      << c.threads << " threads, " << c.rounds << " rounds";
}

std::string stressName(const testing::TestParamInfo<StressConfig> &info) {
  static const char *kinds[] = {"thread", "warp", "block"};
  const StressConfig &c = info.param;
  return "n" + std::to_string(c.ranks) + "_" + kinds[c.kind] + "_" +
         std::to_string(c.blocks) + "x" + std::to_string(c.threads);
}

class VisibilityStress : public testing::TestWithParam<StressConfig> {};

TEST_P(VisibilityStress, PeersSeeTheCurrentRoundOnly) {
  const StressConfig c = GetParam();
  std::mt19937_64 gen{std::random_device{}()};
  uint64_t rounds = 0;
  for (int i = 0; i < 8; ++i) {
    uint64_t seed = freshSeed(gen);
    // The race checker follows the first seed of each configuration (it
    // makes a launch several times slower; its verdict does not depend on
    // the seed, which RaceTest and test/Emulator show).
    StressResult r =
        runStress(c, Protocol::Correct, seed, {}, /*raceCheck=*/i == 0);
    ASSERT_EQ(r.launch.result, tleSuccess) << r.launch.message;
    EXPECT_EQ(r.violations, 0u) << "replay with TLE_EMU_SEED=" << r.launch.seed;
    rounds += r.rounds;
  }
  RecordProperty("rounds", std::to_string(rounds));
  std::printf("%llu barrier rounds, 0 violations\n",
              static_cast<unsigned long long>(rounds));
}

// Rounds per launch (slots x rounds); each configuration runs 8 seeds:
//   2 ranks, thread groups, 8x4 threads x 400 rounds = 12800
//   4 ranks, thread groups, 4x4 threads x 200        =  3200
//   8 ranks, thread groups, 2x2 threads x 300        =  1200
//   3 ranks, warp groups, 4 blocks x 2 warps x 150   =  1200
//   2 ranks, block groups, 16 blocks x 150           =  2400
//   5 ranks, block groups, 8 blocks x 100            =   800
//   8 ranks, block groups, 4 blocks x 60             =   240
//   4 ranks, 20-lane warps, 2 blocks x 200           =   400
//   2 ranks, thread groups, 32x8 threads x 60        = 15360
//  16 ranks, thread groups, 2x2 threads x 40         =   160
//  32 ranks, block groups, 2 blocks x 10             =    20
//  72 ranks, thread groups, 1x2 threads x 8          =    16
//  72 ranks, block groups, 1 block x 4               =     4
// Total 37,800 x 8 = 302,400 rounds.
INSTANTIATE_TEST_SUITE_P(
    Emu, VisibilityStress,
    testing::Values(StressConfig{2, kCoopThread, 8, 4, 400},
                    StressConfig{4, kCoopThread, 4, 4, 200},
                    StressConfig{8, kCoopThread, 2, 2, 300},
                    StressConfig{3, kCoopWarp, 4, 64, 150},
                    StressConfig{2, kCoopBlock, 16, 16, 150},
                    StressConfig{5, kCoopBlock, 8, 32, 100},
                    StressConfig{8, kCoopBlock, 4, 24, 60},
                    StressConfig{4, kCoopWarp, 2, 20, 200},
                    StressConfig{2, kCoopThread, 32, 8, 60},
                    // Past one NVLink board: 16 and 32 ranks, and an NVL72
                    // domain (more than a warp of peers per worker lane).
                    StressConfig{16, kCoopThread, 2, 2, 40},
                    StressConfig{32, kCoopBlock, 2, 32, 10},
                    StressConfig{72, kCoopThread, 1, 2, 8},
                    StressConfig{72, kCoopBlock, 1, 32, 4}),
    stressName);

TEST(EmuStress, CheckerCatchesReadingBeforeTheWait) {
  // Reading the peers' payload between arrive and wait is a race the
  // schedule exposes: some seeds let a rank read before a peer wrote.
  uint64_t violations = 0;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    StressResult r =
        runStress({4, kCoopBlock, 2, 8, 20}, Protocol::ReadBeforeWait, seed, {},
                  /*raceCheck=*/false);
    ASSERT_EQ(r.launch.result, tleSuccess) << r.launch.message;
    violations += r.violations;
  }
  EXPECT_GT(violations, 0u);
  std::printf("%llu violations caught\n",
              static_cast<unsigned long long>(violations));
}

// The stress under the race checker. Every order that releases on arrive
// and acquires on wait must be race-free; the controls, which leave out one
// half or both, must show a race: they prove that the checker sees what the
// barrier's orders do (a mutant of the library that drops an order, see
// docs/testing.md, fails here as the controls do).
struct RaceCase {
  const char *name;
  Orders orders;
  bool ordered; ///< releases on arrive and acquires on wait
};

void PrintTo(const RaceCase &c, std::ostream *os) { *os << c.name; }

class RaceCheckStress
    : public testing::TestWithParam<std::tuple<RaceCase, StressConfig>> {};

TEST_P(RaceCheckStress, OnlyOrderedBarriersAreRaceFree) {
  const auto &[rc, c] = GetParam();
  std::mt19937_64 gen{std::random_device{}()};
  StressResult r = runStress(c, Protocol::Correct, freshSeed(gen), rc.orders,
                             /*raceCheck=*/true);
  ASSERT_EQ(r.launch.raceCheckSkipped, "");
  if (rc.ordered)
    EXPECT_EQ(r.launch.result, tleSuccess) << r.launch.message;
  else
    EXPECT_EQ(r.launch.result, tleDataRace)
        << "the race checker found nothing in a barrier that does not "
           "order memory; replay with TLE_EMU_SEED="
        << r.launch.seed;
}

std::string raceName(
    const testing::TestParamInfo<std::tuple<RaceCase, StressConfig>> &info) {
  testing::TestParamInfo<StressConfig> inner(std::get<1>(info.param),
                                             info.index);
  return std::string(std::get<0>(info.param).name) + "_" + stressName(inner);
}

// 3 ranks: a thread group's one thread signals and polls two peers (one
// fence and relaxed accesses), a block's workers one peer each.
INSTANTIATE_TEST_SUITE_P(
    Emu, RaceCheckStress,
    testing::Combine(
        testing::Values(
            RaceCase{"release_acquire", {kOrderRelease, kOrderAcquire}, true},
            RaceCase{"acq_rel", {kOrderAcqRel, kOrderAcqRel}, true},
            RaceCase{"seq_cst", {kOrderSeqCst, kOrderSeqCst}, true},
            RaceCase{"relaxed", {kOrderRelaxed, kOrderRelaxed}, false},
            RaceCase{"no_release", {kOrderAcquire, kOrderAcquire}, false},
            RaceCase{"no_acquire", {kOrderRelease, kOrderRelease}, false}),
        testing::Values(StressConfig{3, kCoopThread, 2, 2, 20},
                        StressConfig{3, kCoopBlock, 2, 8, 20})),
    raceName);

TEST(EmuStress, RaceCheckerCatchesReadingBeforeTheWaitOnEverySeed) {
  // The stamps catch the early read only on the seeds that expose it; the
  // race checker sees the missing edge whatever the schedule.
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    StressResult r =
        runStress({4, kCoopBlock, 2, 8, 20}, Protocol::ReadBeforeWait, seed, {},
                  /*raceCheck=*/true);
    EXPECT_EQ(r.launch.result, tleDataRace) << "seed " << seed;
    EXPECT_EQ(
        r.launch.message.rfind("data race on symmetric buffer 'buffer 0'", 0),
        0u)
        << r.launch.message;
  }
}

} // namespace
