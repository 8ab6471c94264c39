//===- RaceTest.cpp - The emulator's race checker and slot checks ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The happens-before edges one by one: block syncs, the barrier for every
// memory order (fused and split, every group kind, the grid barrier), the
// kernel's own atomics and fences (release sequences included), and what
// is not an edge; what a report says; when the checker cannot follow a
// launch and says why; and the barrier-slot checks (two groups in one slot
// at once or unordered, an arrive twice, group kinds that disagree). Every
// case runs several seeds: the verdict must not depend on the schedule.
// Signals: a signal is a release, and a wait or read_signal with an
// acquire order that observes its value acquires it; a reset starts the
// word's history again (SignalRaceTest.cpp: what a wait acquires of it). Also
// the device trace ring on emulated ranks (tleCommTraceStart).
//
//===----------------------------------------------------------------------===//

#include "EmuTestUtil.h"

#include "tle/signal.h"
#include "tle/trace.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

using namespace tle;
using namespace tle::emu;
using namespace tle::emutest;

namespace {

constexpr int kSeeds = 4;

/// Zeroes every rank's copy of `buf`.
void clear(const SymBuffer &buf, size_t bytes) {
  for (tleMem_t m : buf.mems) {
    void *p = nullptr;
    tleMemGetLocalPtr(m, &p);
    std::memset(p, 0, bytes);
  }
}

/// Runs `body` on `ranks` with the race checker on, for seeds 1..kSeeds,
/// and returns the result codes (all must agree). The buffers in `fresh`
/// (64 bytes each) are zeroed before each seed, so that no launch sees a
/// flag an earlier one set.
tleResult_t runSeeds(const Ranks &ranks, LaunchOptions o,
                     const std::function<void(int, void *)> &body,
                     std::string *message = nullptr,
                     std::vector<const SymBuffer *> fresh = {}) {
  tleResult_t first = tleSuccess;
  for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
    for (const SymBuffer *buf : fresh)
      clear(*buf, 64);
    o.seed = seed;
    LaunchResult r = launch(ranks.comms.data(), ranks.size(), o, body);
    if (seed == 1) {
      first = r.result;
      if (message)
        *message = r.message;
    }
    EXPECT_EQ(r.result, first) << "seed " << seed << ": " << r.message;
  }
  return first;
}

/// Rank 0 writes word `t` of rank 1's buffer, `between` runs on every
/// thread, rank 1 reads its word `t`: the classic exchange.
std::function<void(int, void *)> exchange(const SymBuffer &buf,
                                          std::function<void(void *)> between) {
  return [&buf, between](int rank, void *dc) {
    uint32_t t = linearThreadId();
    const void *mem = buf.handle(rank);
    if (rank == 0)
      write(static_cast<uint32_t *>(
                flagcxGetIntraPointerS(mem, t * sizeof(uint32_t), 1)),
            t + 1, "the store");
    between(dc);
    if (rank == 1)
      (void)read(static_cast<uint32_t *>(
                     flagcxGetLocalPointerS(mem, t * sizeof(uint32_t))),
                 "the load");
  };
}

/// Whether a barrier with these orders makes the store visible to the load:
/// the arrive must release and the wait acquire (abi.def's order table).
bool orders(int arrive, int wait) {
  bool releases = arrive == kOrderRelease || arrive >= kOrderAcqRel;
  bool acquires = wait == kOrderAcquire || wait >= kOrderAcqRel;
  return releases && acquires;
}

class RaceOrders : public testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(RaceOrders, TheBarrierOrdersExactlyAsItsMemoryOrderSays) {
  auto [coop, order] = GetParam();
  Ranks ranks(2);
  ASSERT_EQ(ranks.status, tleSuccess) << tleGetLastErrorDetail();
  SymBuffer buf(ranks, 64 * sizeof(uint32_t));
  ASSERT_EQ(buf.status, tleSuccess);
  uint32_t threads = coop == kCoopThread ? 1 : coop == kCoopWarp ? 32 : 48;
  std::string message;
  tleResult_t r =
      runSeeds(ranks, shape({1, 1, 1}, {threads, 1, 1}),
               exchange(buf,
                        [c = coop, o = order](void *dc) {
                          flagcxIntraBarrierSyncS(dc, c, 0, false, o);
                        }),
               &message);
  if (orders(order, order)) {
    EXPECT_EQ(r, tleSuccess) << message;
  } else {
    EXPECT_EQ(r, tleDataRace) << message;
    EXPECT_TRUE(contains(message, "write by rank 0")) << message;
    EXPECT_TRUE(contains(message, "read by rank 1")) << message;
  }
}

std::string
orderCaseName(const testing::TestParamInfo<std::tuple<int, int>> &info) {
  static const char *coops[] = {"thread", "warp", "block"};
  static const char *orderNames[] = {"relaxed", "acquire", "release", "acq_rel",
                                     "seq_cst"};
  return std::string(coops[std::get<0>(info.param)]) + "_" +
         orderNames[std::get<1>(info.param)];
}

INSTANTIATE_TEST_SUITE_P(
    Emu, RaceOrders,
    testing::Combine(testing::Values(kCoopThread, kCoopWarp, kCoopBlock),
                     testing::Values(kOrderRelaxed, kOrderAcquire,
                                     kOrderRelease, kOrderAcqRel,
                                     kOrderSeqCst)),
    orderCaseName);

/// The split halves with the orders a user mixes up.
class RaceSplitOrders : public testing::TestWithParam<std::pair<int, int>> {};

TEST_P(RaceSplitOrders, ArriveReleasesAndWaitAcquires) {
  auto [arriveOrder, waitOrder] = GetParam();
  Ranks ranks(3);
  ASSERT_EQ(ranks.status, tleSuccess);
  SymBuffer buf(ranks, 64 * sizeof(uint32_t));
  std::string message;
  tleResult_t r = runSeeds(
      ranks, shape({1, 1, 1}, {40, 1, 1}),
      exchange(buf,
               [a = arriveOrder, w = waitOrder](void *dc) {
                 flagcxIntraBarrierArriveS(dc, kCoopBlock, 1, false, a);
                 flagcxIntraBarrierWaitS(dc, kCoopBlock, 1, false, w);
               }),
      &message);
  EXPECT_EQ(r, orders(arriveOrder, waitOrder) ? tleSuccess : tleDataRace)
      << message;
}

INSTANTIATE_TEST_SUITE_P(
    Emu, RaceSplitOrders,
    testing::Values(std::pair{kOrderRelease, kOrderAcquire},
                    std::pair{kOrderRelease, kOrderRelaxed},
                    std::pair{kOrderRelaxed, kOrderAcquire},
                    std::pair{kOrderAcqRel, kOrderAcquire},
                    std::pair{kOrderSeqCst, kOrderSeqCst},
                    std::pair{kOrderAcquire, kOrderRelease}));

TEST(EmuRace, NoBarrierIsARaceAndTheReportNamesBoth) {
  Ranks ranks(2);
  ASSERT_EQ(ranks.status, tleSuccess);
  SymBuffer buf(ranks, 64);
  LaunchOptions o = shape({1, 1, 1}, {4, 1, 1});
  o.bufferNames = {{buf.mems[1], "recv"}};
  std::string message;
  EXPECT_EQ(runSeeds(ranks, o, exchange(buf, [](void *) {}), &message),
            tleDataRace);
  EXPECT_EQ(message.rfind("data race on symmetric buffer 'recv' (rank 1's "
                          "copy) at byte offset ",
                          0),
            0u)
      << message;
  EXPECT_TRUE(contains(message, "write by rank 0 block 0 thread ")) << message;
  EXPECT_TRUE(contains(message, ", 4 bytes at offset ")) << message;
  EXPECT_TRUE(contains(message, "at the store")) << message;
  EXPECT_TRUE(contains(message, "read by rank 1 block 0 thread ")) << message;
  EXPECT_TRUE(contains(message, "at the load")) << message;
  EXPECT_TRUE(contains(message, "replay with TLE_EMU_SEED=1")) << message;
}

TEST(EmuRace, BlockSyncOrdersTheBlock) {
  Ranks ranks(1);
  SymBuffer buf(ranks, 64);
  auto body = [&](bool sync) {
    return [&buf, sync](int rank, void *) {
      auto *p =
          static_cast<uint32_t *>(flagcxGetLocalPointerS(buf.handle(rank), 0));
      if (linearThreadId() == 0)
        write(p, 7u);
      if (sync)
        syncThreads();
      if (linearThreadId() == 5)
        (void)read(p);
    };
  };
  EXPECT_EQ(runSeeds(ranks, shape({1, 1, 1}, {8, 1, 1}), body(true)),
            tleSuccess);
  EXPECT_EQ(runSeeds(ranks, shape({1, 1, 1}, {8, 1, 1}), body(false)),
            tleDataRace);
}

/// tleEmuSyncBlockTwice orders as two block syncs: thread 5 takes both in
/// one step while thread 0 writes before the first and thread 1 between
/// them; thread 5 reads both after. Thread 1's write between the syncs
/// races with thread 5's read only when the pair is one sync.
TEST(EmuRace, TwoSyncsInOneStepOrderAsTwoSyncs) {
  Ranks ranks(1);
  SymBuffer buf(ranks, 64);
  auto body = [&](bool twice) {
    return [&buf, twice](int rank, void *) {
      auto *p =
          static_cast<uint32_t *>(flagcxGetLocalPointerS(buf.handle(rank), 0));
      uint32_t t = linearThreadId();
      if (t == 0)
        write(p, 7u);
      if (t == 5) {
        if (twice)
          tleEmuSyncBlockTwice();
        else
          syncThreads();
        (void)read(p);
        (void)read(p + 1);
        return;
      }
      syncThreads();
      if (t == 1)
        write(p + 1, 8u);
      syncThreads();
    };
  };
  EXPECT_EQ(runSeeds(ranks, shape({1, 1, 1}, {8, 1, 1}), body(true)),
            tleSuccess);
  EXPECT_EQ(runSeeds(ranks, shape({1, 1, 1}, {8, 1, 1}), body(false)),
            tleDataRace);
}

TEST(EmuRace, TheGridBarrierOrdersWhateverItsOrder) {
  // Inside a rank the grid barrier needs acq_rel to work at all, so every
  // order orders memory (docs/device-library.md).
  Ranks ranks(2);
  SymBuffer buf(ranks, 256);
  LaunchOptions o = shape({2, 1, 1}, {16, 1, 1});
  o.cooperative = true;
  auto body = [&](int rank, void *dc) {
    uint32_t i = linearBlockId() * 16 + linearThreadId();
    const void *mem = buf.handle(rank);
    write(static_cast<uint32_t *>(flagcxGetIntraPointerS(mem, i * 4, 1 - rank)),
          i);
    tleIntraGridBarrierSyncS(dc, 0, false, kOrderRelaxed);
    (void)read(static_cast<uint32_t *>(flagcxGetLocalPointerS(mem, i * 4)));
  };
  EXPECT_EQ(runSeeds(ranks, o, body), tleSuccess);
}

TEST(EmuRace, KernelAtomicsOrderAsTheirOrdersSay) {
  // A hand-written flag in symmetric memory: rank 0 thread 0 writes data
  // then sets the flag; rank 1 thread 0 polls it, then reads the data.
  Ranks ranks(2);
  SymBuffer data(ranks, 64), flag(ranks, 64);
  enum Variant { ReleaseAcquire, RelaxedAcquire, Fences, RelaxedOnly };
  auto body = [&](Variant v) {
    return [&, v](int rank, void *) {
      if (linearThreadId() != 0)
        return;
      if (rank == 0) {
        write(static_cast<uint32_t *>(
                  flagcxGetIntraPointerS(data.handle(0), 0, 1)),
              42u);
        auto *f = static_cast<uint32_t *>(
            flagcxGetIntraPointerS(flag.handle(0), 0, 1));
        if (v == Fences) {
          __atomic_thread_fence(__ATOMIC_RELEASE);
          tleEmuAccess(nullptr, 0, kAccessFence, kOrderRelease, nullptr);
        }
        int order = v == ReleaseAcquire ? kOrderRelease : kOrderRelaxed;
        __atomic_store_n(f, 1u, __ATOMIC_RELAXED);
        tleEmuAccess(f, 4, kAccessAtomicStore, order, nullptr);
        return;
      }
      auto *f =
          static_cast<uint32_t *>(flagcxGetLocalPointerS(flag.handle(1), 0));
      int order = v == ReleaseAcquire || v == RelaxedAcquire ? kOrderAcquire
                                                             : kOrderRelaxed;
      for (;;) {
        uint32_t seen = __atomic_load_n(f, __ATOMIC_ACQUIRE);
        tleEmuAccess(f, 4, kAccessAtomicLoad, order, nullptr);
        if (seen)
          break;
        tleEmuSpinHint(f, seen);
      }
      if (v == Fences)
        tleEmuAccess(nullptr, 0, kAccessFence, kOrderAcquire, nullptr);
      (void)read(
          static_cast<uint32_t *>(flagcxGetLocalPointerS(data.handle(1), 0)));
    };
  };
  LaunchOptions o = shape({1, 1, 1}, {2, 1, 1});
  std::vector<const SymBuffer *> fresh = {&data, &flag};
  EXPECT_EQ(runSeeds(ranks, o, body(ReleaseAcquire), nullptr, fresh),
            tleSuccess);
  EXPECT_EQ(runSeeds(ranks, o, body(Fences), nullptr, fresh), tleSuccess);
  EXPECT_EQ(runSeeds(ranks, o, body(RelaxedAcquire), nullptr, fresh),
            tleDataRace);
  EXPECT_EQ(runSeeds(ranks, o, body(RelaxedOnly), nullptr, fresh), tleDataRace);
}

TEST(EmuRace, ReadModifyWritesContinueTheReleaseSequence) {
  // Thread 0 publishes data with a release store of 1; thread 1 adds 1
  // with a relaxed read-modify-write; thread 2 acquires the 2 and reads the
  // data: it synchronizes with thread 0 through the release sequence. A
  // relaxed plain store of the 2 instead would end the sequence.
  Ranks ranks(1);
  SymBuffer buf(ranks, 64);
  auto body = [&](bool breakIt) {
    return [&, breakIt](int rank, void *) {
      auto *base =
          static_cast<uint32_t *>(flagcxGetLocalPointerS(buf.handle(rank), 0));
      uint32_t *data = base, *word = base + 4;
      uint32_t t = linearThreadId();
      auto poll = [&](uint32_t want, int order) {
        for (;;) {
          uint32_t v = __atomic_load_n(word, __ATOMIC_ACQUIRE);
          tleEmuAccess(word, 4, kAccessAtomicLoad, order, nullptr);
          if (v >= want)
            return;
          tleEmuSpinHint(word, v);
        }
      };
      if (t == 0) {
        write(data, 5u);
        __atomic_store_n(word, 1u, __ATOMIC_RELEASE);
        tleEmuAccess(word, 4, kAccessAtomicStore, kOrderRelease, nullptr);
      } else if (t == 1) {
        poll(1, kOrderRelaxed);
        __atomic_fetch_add(word, 1u, __ATOMIC_RELAXED);
        tleEmuAccess(word, 4,
                     breakIt ? kAccessAtomicStore : kAccessAtomicUpdate,
                     kOrderRelaxed, nullptr);
      } else {
        // Relaxed polls (an acquire one that read 1 would synchronize with
        // thread 0 directly), then one acquire load of the 2.
        poll(2, kOrderRelaxed);
        (void)__atomic_load_n(word, __ATOMIC_ACQUIRE);
        tleEmuAccess(word, 4, kAccessAtomicLoad, kOrderAcquire, nullptr);
        (void)read(data);
      }
    };
  };
  LaunchOptions o = shape({1, 1, 1}, {3, 1, 1});
  EXPECT_EQ(runSeeds(ranks, o, body(false), nullptr, {&buf}), tleSuccess);
  EXPECT_EQ(runSeeds(ranks, o, body(true), nullptr, {&buf}), tleDataRace);
}

TEST(EmuRace, AtomicsDoNotRaceWithAtomicsButWithPlainAccesses) {
  Ranks ranks(2);
  SymBuffer buf(ranks, 64);
  auto body = [&](bool plainRead) {
    return [&, plainRead](int rank, void *) {
      auto *p = static_cast<uint32_t *>(
          flagcxGetIntraPointerS(buf.handle(rank), 0, 0));
      if (rank == 0) {
        __atomic_fetch_add(p, 1u, __ATOMIC_RELAXED);
        tleEmuAccess(p, 4, kAccessAtomicUpdate, kOrderRelaxed, nullptr);
      } else if (plainRead) {
        (void)read(p);
      } else {
        (void)__atomic_load_n(p, __ATOMIC_RELAXED);
        tleEmuAccess(p, 4, kAccessAtomicLoad, kOrderRelaxed, nullptr);
      }
    };
  };
  LaunchOptions o = shape({1, 1, 1}, {1, 1, 1});
  EXPECT_EQ(runSeeds(ranks, o, body(false)), tleSuccess);
  std::string message;
  EXPECT_EQ(runSeeds(ranks, o, body(true), &message), tleDataRace);
  EXPECT_TRUE(contains(message, "atomic write by rank 0")) << message;
}

TEST(EmuRace, DisjointBytesOfOneWordDoNotRace) {
  Ranks ranks(2);
  SymBuffer buf(ranks, 64);
  LaunchOptions o = shape({1, 1, 1}, {1, 1, 1});
  EXPECT_EQ(runSeeds(ranks, o,
                     [&](int rank, void *) {
                       auto *p = static_cast<uint8_t *>(
                           flagcxGetIntraPointerS(buf.handle(rank), 0, 0));
                       write(p + rank, uint8_t(rank));
                     }),
            tleSuccess);
}

TEST(EmuRace, PrivateMemoryIsNotChecked) {
  // Only symmetric buffers are watched: a race on host memory is not
  // reported (the emulator cannot know what is private).
  Ranks ranks(2);
  static uint32_t hostWord;
  EXPECT_EQ(runSeeds(ranks, shape({1, 1, 1}, {4, 1, 1}),
                     [](int, void *) { write(&hostWord, 1u); }),
            tleSuccess);
}

TEST(EmuRace, SkippedLaunchesSayWhy) {
  Ranks ranks(2);
  LaunchOptions o = shape({1, 1, 1}, {1, 1, 1});
  LaunchResult r = launch(nullptr, 2, o, [](int, void *) {});
  EXPECT_EQ(r.result, tleSuccess);
  EXPECT_EQ(r.raceCheckSkipped, "the launch has no communicators");
  o = shape({64, 1, 1}, {1024, 1, 1});
  LaunchResult big = launch(ranks.comms.data(), 2, o, [](int, void *) {});
  EXPECT_EQ(big.result, tleSuccess) << big.message;
  EXPECT_TRUE(contains(big.raceCheckSkipped, "the launch has 131072 threads"))
      << big.raceCheckSkipped;
  o = shape({1, 1, 1}, {1, 1, 1});
  o.raceCheck = false;
  EXPECT_EQ(
      launch(ranks.comms.data(), 2, o, [](int, void *) {}).raceCheckSkipped,
      "");
}

TEST(EmuRace, TheCLaunchTakesTheSwitch) {
  Ranks ranks(2);
  SymBuffer buf(ranks, 64);
  static const SymBuffer *shared;
  shared = &buf;
  void *dcs[2];
  tleCommGetDevComm(ranks.comms[0], &dcs[0]);
  tleCommGetDevComm(ranks.comms[1], &dcs[1]);
  tleEmuLaunchConfig config = TLE_EMU_LAUNCH_CONFIG_INITIALIZER;
  config.raceCheck = 1;
  config.seed = 3;
  void *args0[] = {&dcs[0]}, *args1[] = {&dcs[1]};
  void **argsPerRank[] = {args0, args1};
  tleErrorInfo info;
  tleResult_t r = tleEmuLaunchWithConfig(
      ranks.comms.data(), 2, &config,
      [](void **args) {
        void *dc = *static_cast<void **>(args[0]);
        int rank = flagcxDevCommGetIntraRank(dc);
        // Both ranks write rank 0's word: a race.
        auto *p = static_cast<uint32_t *>(
            flagcxGetIntraPointerS(shared->handle(rank), 0, 0));
        write(p, uint32_t(rank));
      },
      argsPerRank, &info);
  EXPECT_EQ(r, tleDataRace) << tleGetLastErrorDetail();
  config.raceCheck = 0;
  EXPECT_EQ(tleEmuLaunchWithConfig(
                ranks.comms.data(), 2, &config,
                [](void **args) {
                  void *dc = *static_cast<void **>(args[0]);
                  int rank = flagcxDevCommGetIntraRank(dc);
                  auto *p = static_cast<uint32_t *>(
                      flagcxGetIntraPointerS(shared->handle(rank), 0, 0));
                  write(p, uint32_t(rank));
                },
                argsPerRank, &info),
            tleSuccess);
}

//===----------------------------------------------------------------------===//
// Signals
//===----------------------------------------------------------------------===//

/// Rank 0 writes word `t` of rank 1's buffer and signals rank 1's word 0
/// for group `coop`; rank 1 waits for it (`consume`) and reads its word
/// `t`, then resets word 0 for the next seed.
std::function<void(int, void *)>
signalExchange(const SymBuffer &buf, int coop,
               std::function<void(void *)> consume) {
  return [&buf, coop, consume](int rank, void *dc) {
    uint32_t t = linearThreadId();
    const void *mem = buf.handle(rank);
    if (rank == 0) {
      write(static_cast<uint32_t *>(
                flagcxGetIntraPointerS(mem, t * sizeof(uint32_t), 1)),
            t + 1, "the store");
      signalInc(dc, 1, 0, static_cast<CoopKind>(coop));
      return;
    }
    consume(dc);
    (void)read(static_cast<uint32_t *>(
                   flagcxGetLocalPointerS(mem, t * sizeof(uint32_t))),
               "the load");
    syncThreads();
    if (t == 0)
      resetSignal(dc, 0);
  };
}

class RaceSignalOrders : public testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(RaceSignalOrders, TheWaitAcquiresTheSignalAsItsOrderSays) {
  auto [coop, order] = GetParam();
  Ranks ranks(2);
  ASSERT_EQ(ranks.status, tleSuccess) << tleGetLastErrorDetail();
  SymBuffer buf(ranks, 64 * sizeof(uint32_t));
  uint32_t threads = coop == kCoopThread ? 1 : coop == kCoopWarp ? 32 : 48;
  std::string message;
  tleResult_t r =
      runSeeds(ranks, shape({1, 1, 1}, {threads, 1, 1}),
               signalExchange(buf, coop,
                              [c = coop, o = order](void *dc) {
                                signalWait(dc, 0, 1, static_cast<CoopKind>(c),
                                           static_cast<MemoryOrder>(o));
                              }),
               &message);
  if (order == kOrderRelaxed) {
    EXPECT_EQ(r, tleDataRace) << message;
    EXPECT_TRUE(contains(message, "write by rank 0")) << message;
    EXPECT_TRUE(contains(message, "read by rank 1")) << message;
  } else {
    EXPECT_EQ(r, tleSuccess) << message;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Emu, RaceSignalOrders,
    testing::Combine(testing::Values(kCoopThread, kCoopWarp, kCoopBlock),
                     testing::Values(kOrderRelaxed, kOrderAcquire, kOrderAcqRel,
                                     kOrderSeqCst)),
    orderCaseName);

TEST(EmuRaceSignals, AReadSignalPollAcquiresWhenItsOrderDoes) {
  // Each thread of rank 1 polls the word itself with read_signal. Fresh
  // ranks per order: a launch that failed left its word set.
  for (int order : {kOrderRelaxed, kOrderAcquire, kOrderSeqCst}) {
    Ranks ranks(2);
    SymBuffer buf(ranks, 64 * sizeof(uint32_t));
    std::string message;
    tleResult_t r = runSeeds(
        ranks, shape({1, 1, 1}, {8, 1, 1}),
        signalExchange(
            buf, kCoopBlock,
            [order](void *dc) {
              while (readSignal(dc, 0, static_cast<MemoryOrder>(order)) < 1) {
              }
            }),
        &message);
    EXPECT_EQ(r, order == kOrderRelaxed ? tleDataRace : tleSuccess)
        << "order " << order << ": " << message;
  }
}

TEST(EmuRaceSignals, TheReportNamesTheBufferAndBothAccesses) {
  Ranks ranks(2);
  SymBuffer buf(ranks, 64 * sizeof(uint32_t));
  LaunchOptions o = shape({1, 1, 1}, {4, 1, 1});
  o.bufferNames = {{buf.mems[1], "inbox"}};
  std::string message;
  EXPECT_EQ(runSeeds(ranks, o,
                     signalExchange(buf, kCoopBlock,
                                    [](void *dc) {
                                      signalWait(dc, 0, 1, kCoopBlock,
                                                 kOrderRelaxed);
                                    }),
                     &message),
            tleDataRace);
  EXPECT_EQ(message.rfind("data race on symmetric buffer 'inbox' (rank 1's "
                          "copy) at byte offset ",
                          0),
            0u)
      << message;
  EXPECT_TRUE(contains(message, "write by rank 0 block 0 thread ")) << message;
  EXPECT_TRUE(contains(message, "at the store")) << message;
  EXPECT_TRUE(contains(message, "read by rank 1 block 0 thread ")) << message;
  EXPECT_TRUE(contains(message, "at the load")) << message;
}

TEST(EmuRaceSignals, AResetEndsTheWordsReleaseSequence) {
  // Rank 0 writes rank 1's data and signals rank 1's word 0; rank 1 waits
  // for it with `firstOrder`, then hands a token to rank 2 and back over
  // signals (acquire waits, release signals) and reads the data. With an
  // acquire first wait the data is ordered directly. With a relaxed one it
  // is ordered only if rank 2's signal continues the release sequence of
  // rank 0's on the word (no reset in between: rank 1 then waits for 2). A
  // reset ends that sequence (C++'s release sequences are of
  // read-modify-writes only), so rank 2's signal carries only its own
  // clock and the read races. (Rank 1's second wait looks exactly like its
  // first, a wait for 1 on its word 0: the emulator must not take it for a
  // re-poll of the first and report a deadlock.) Fresh ranks per seed: a
  // launch that failed left words set.
  auto body = [](const SymBuffer &buf, int firstOrder, bool reset) {
    return [&buf, firstOrder, reset](int rank, void *dc) {
      auto *data = static_cast<uint32_t *>(
          flagcxGetIntraPointerS(buf.handle(rank), 0, 1));
      if (rank == 0) {
        write(data, 5u, "the store");
        signalInc(dc, 1, 0, kCoopThread);
      } else if (rank == 1) {
        signalWait(dc, 0, 1, kCoopThread, static_cast<MemoryOrder>(firstOrder));
        if (reset)
          resetSignal(dc, 0);
        signalInc(dc, 2, 0, kCoopThread);
        signalWait(dc, 0, reset ? 1 : 2, kCoopThread, kOrderAcquire);
        (void)read(data, "the load");
      } else {
        signalWait(dc, 0, 1, kCoopThread, kOrderAcquire);
        signalInc(dc, 1, 0, kCoopThread);
      }
    };
  };
  struct Case {
    int firstOrder;
    bool reset;
    tleResult_t expected;
  };
  for (Case c : {Case{kOrderAcquire, true, tleSuccess},
                 Case{kOrderRelaxed, false, tleSuccess},
                 Case{kOrderRelaxed, true, tleDataRace}}) {
    for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
      Ranks ranks(3);
      ASSERT_EQ(ranks.status, tleSuccess);
      SymBuffer buf(ranks, 64);
      LaunchOptions o = shape({1, 1, 1}, {1, 1, 1});
      o.seed = seed;
      LaunchResult r = launch(ranks.comms.data(), ranks.size(), o,
                              body(buf, c.firstOrder, c.reset));
      EXPECT_EQ(r.result, c.expected)
          << "first order " << c.firstOrder << ", reset " << c.reset
          << ", seed " << seed << ": " << r.message;
    }
  }
}

//===----------------------------------------------------------------------===//
// Barrier-slot misuse
//===----------------------------------------------------------------------===//

TEST(EmuSlots, TwoBlocksInOneSlotAtOnce) {
  Ranks ranks(2);
  std::string message;
  EXPECT_EQ(runSeeds(
                ranks, shape({2, 1, 1}, {8, 1, 1}),
                [](int, void *dc) {
                  flagcxIntraBarrierSyncS(dc, kCoopBlock, 0, false,
                                          kOrderAcqRel);
                },
                &message),
            tleBarrierMisuse);
  EXPECT_EQ(message.rfind("barrier misuse: two groups use slot 0 of rank ", 0),
            0u)
      << message;
  EXPECT_TRUE(contains(message, "(group block) entered it with sync"))
      << message;
}

TEST(EmuSlots, SignalsAreNotSlots) {
  // Both blocks of each rank signal the other rank's word 0 and wait on
  // their own for both signals, at once: a word serves any number of
  // groups, and a signal's trace events stay out of the slot checks. Each
  // block then uses its own barrier slot (its block id, the same index as
  // the word), which is right; the same launch with slot 0 for both blocks
  // is still misuse, reported as without signals. Fresh ranks per seed:
  // the words are not reset (no launch-wide sync could order the reset).
  auto body = [](bool shareSlot) {
    return [shareSlot](int rank, void *dc) {
      signalInc(dc, 1 - rank, 0, kCoopBlock);
      signalWait(dc, 0, 2, kCoopBlock);
      uint32_t slot = shareSlot ? 0 : linearBlockId();
      flagcxIntraBarrierSyncS(dc, kCoopBlock, slot, false, kOrderAcqRel);
    };
  };
  for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
    for (bool shareSlot : {false, true}) {
      Ranks ranks(2);
      ASSERT_EQ(ranks.status, tleSuccess);
      LaunchOptions o = shape({2, 1, 1}, {8, 1, 1});
      o.seed = seed;
      LaunchResult r =
          launch(ranks.comms.data(), ranks.size(), o, body(shareSlot));
      if (!shareSlot) {
        EXPECT_EQ(r.result, tleSuccess) << "seed " << seed << ": " << r.message;
        continue;
      }
      EXPECT_EQ(r.result, tleBarrierMisuse)
          << "seed " << seed << ": " << r.message;
      EXPECT_EQ(
          r.message.rfind("barrier misuse: two groups use slot 0 of rank ", 0),
          0u)
          << r.message;
    }
  }
}

TEST(EmuSlots, TwoWarpsOfABlockInOneSlot) {
  Ranks ranks(2);
  std::string message;
  EXPECT_EQ(runSeeds(
                ranks, shape({1, 1, 1}, {64, 1, 1}),
                [](int, void *dc) {
                  flagcxIntraBarrierSyncS(dc, kCoopWarp, 3, false,
                                          kOrderAcqRel);
                },
                &message),
            tleBarrierMisuse);
  EXPECT_TRUE(contains(message, "of block 0 (group warp)")) << message;
}

TEST(EmuSlots, SequentialUseAfterABlockSyncIsFine) {
  // Warp 0 then warp 1 of one block use slot 0, a block sync between.
  Ranks ranks(2);
  EXPECT_EQ(runSeeds(ranks, shape({1, 1, 1}, {64, 1, 1}),
                     [](int, void *dc) {
                       uint32_t warp = linearThreadId() / 32;
                       if (warp == 0)
                         flagcxIntraBarrierSyncS(dc, kCoopWarp, 0, false,
                                                 kOrderAcqRel);
                       syncThreads();
                       if (warp == 1)
                         flagcxIntraBarrierSyncS(dc, kCoopWarp, 0, false,
                                                 kOrderAcqRel);
                     }),
            tleSuccess);
}

TEST(EmuSlots, UnorderedReuseByBlocksThatNeverOverlapHere) {
  // One resident block per rank: block 1 starts when block 0 has finished,
  // so the two never share the slot in the emulator; on a GPU they may run
  // at once. Only the race checker's clocks see that nothing orders them.
  Ranks ranks(2);
  LaunchOptions o = shape({2, 1, 1}, {4, 1, 1});
  o.maxResidentBlocks = 1;
  auto body = [](int, void *dc) {
    flagcxIntraBarrierSyncS(dc, kCoopBlock, 0, false, kOrderAcqRel);
  };
  std::string message;
  EXPECT_EQ(runSeeds(ranks, o, body, &message), tleBarrierMisuse);
  EXPECT_TRUE(contains(message, "and nothing orders them")) << message;
  o.raceCheck = false;
  EXPECT_EQ(runSeeds(ranks, o, body), tleSuccess);
}

TEST(EmuSlots, ArriveTwiceWithoutAWait) {
  Ranks ranks(2);
  std::string message;
  EXPECT_EQ(
      runSeeds(
          ranks, shape({1, 1, 1}, {4, 1, 1}),
          [](int, void *dc) {
            flagcxIntraBarrierArriveS(dc, kCoopBlock, 0, false, kOrderRelease);
            flagcxIntraBarrierArriveS(dc, kCoopBlock, 0, false, kOrderRelease);
            flagcxIntraBarrierWaitS(dc, kCoopBlock, 0, false, kOrderAcquire);
            flagcxIntraBarrierWaitS(dc, kCoopBlock, 0, false, kOrderAcquire);
          },
          &message),
      tleBarrierMisuse);
  EXPECT_TRUE(contains(message, "arrives twice on slot 0 without a wait"))
      << message;
}

TEST(EmuSlots, ArriveThenSyncWithoutAWait) {
  // A sync arrives too: after an arrive it is a second arrive on the slot
  // before the first was waited for (SlotsTest.cpp checks the verdict
  // alone).
  Ranks ranks(2);
  std::string message;
  EXPECT_EQ(
      runSeeds(
          ranks, shape({1, 1, 1}, {4, 1, 1}),
          [](int, void *dc) {
            flagcxIntraBarrierArriveS(dc, kCoopBlock, 0, false, kOrderRelease);
            flagcxIntraBarrierSyncS(dc, kCoopBlock, 0, false, kOrderAcqRel);
            flagcxIntraBarrierWaitS(dc, kCoopBlock, 0, false, kOrderAcquire);
          },
          &message),
      tleBarrierMisuse);
  EXPECT_TRUE(contains(message, "arrives twice on slot 0 without a wait"))
      << message;
}

TEST(EmuSlots, RanksThatDisagreeOnTheGroup) {
  Ranks ranks(2);
  std::string message;
  EXPECT_EQ(runSeeds(
                ranks, shape({1, 1, 1}, {32, 1, 1}),
                [](int rank, void *dc) {
                  flagcxIntraBarrierSyncS(dc,
                                          rank == 0 ? kCoopBlock : kCoopWarp, 0,
                                          false, kOrderAcqRel);
                },
                &message),
            tleBarrierMisuse);
  EXPECT_TRUE(contains(message, "ranks use slot 0 with different groups"))
      << message;
}

TEST(EmuSlots, ArriveInOneLaunchWaitInTheNext) {
  // Epochs live in device memory: a wait may complete an arrive of an
  // earlier launch, which is no misuse.
  Ranks ranks(2);
  LaunchOptions o = shape({1, 1, 1}, {4, 1, 1});
  EXPECT_EQ(launch(ranks.comms.data(), 2, o,
                   [](int, void *dc) {
                     flagcxIntraBarrierArriveS(dc, kCoopBlock, 0, false,
                                               kOrderRelease);
                   })
                .result,
            tleSuccess);
  EXPECT_EQ(launch(ranks.comms.data(), 2, o,
                   [](int, void *dc) {
                     flagcxIntraBarrierWaitS(dc, kCoopBlock, 0, false,
                                             kOrderAcquire);
                   })
                .result,
            tleSuccess);
}

//===----------------------------------------------------------------------===//
// The device trace ring on emulated ranks
//===----------------------------------------------------------------------===//

TEST(EmuTraceRing, RecordsEveryRanksEventsAndWritesPerfettoJson) {
  Ranks ranks(2);
  for (tleComm_t c : ranks.comms)
    ASSERT_EQ(tleCommTraceStart(c, 0), tleSuccess) << tleGetLastErrorDetail();
  LaunchOptions o = shape({2, 1, 1}, {32, 1, 1});
  LaunchResult r = launch(ranks.comms.data(), 2, o, [](int, void *dc) {
    uint32_t b = linearBlockId();
    flagcxIntraBarrierArriveS(dc, kCoopBlock, b, false, kOrderRelease);
    flagcxIntraBarrierWaitS(dc, kCoopBlock, b, false, kOrderAcquire);
  });
  ASSERT_EQ(r.result, tleSuccess) << r.message;
  std::string path = testing::TempDir() + "tle-ring-trace.json";
  ASSERT_EQ(tleTraceWrite(ranks.comms.data(), 2, path.c_str()), tleSuccess)
      << tleGetLastErrorDetail();
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::string json = text.str();
  EXPECT_EQ(json.rfind("{\"otherData\":{\"clock\":\"host monotonic clock", 0),
            0u)
      << json;
  // Two ranks x two blocks x (an arrive, a wait's begin and end).
  size_t events = 0;
  for (size_t at = json.find("\"cat\":\"barrier\""); at != std::string::npos;
       at = json.find("\"cat\":\"barrier\"", at + 1))
    ++events;
  EXPECT_EQ(events, 12u) << json;
  EXPECT_TRUE(contains(json, "{\"name\":\"process_name\",\"ph\":\"M\","
                             "\"pid\":1,\"args\":{\"name\":\"rank 1\"}}"));
  EXPECT_TRUE(contains(json, "\"name\":\"arrive\",\"cat\":\"barrier\",\"ph\":"
                             "\"i\",\"s\":\"t\",\"pid\":1,\"tid\":1024,"))
      << json;
  EXPECT_TRUE(contains(json, "\"args\":{\"slot\":1,\"group\":\"block\","
                             "\"order\":\"acquire\",\"block\":1,"
                             "\"thread\":0}"))
      << json;
  // Written events are taken: a second write has none.
  ASSERT_EQ(tleTraceWrite(ranks.comms.data(), 2, path.c_str()), tleSuccess);
  std::ifstream again(path);
  std::stringstream text2;
  text2 << again.rdbuf();
  EXPECT_FALSE(contains(text2.str(), "\"cat\":\"barrier\"")) << text2.str();
  for (tleComm_t c : ranks.comms)
    EXPECT_EQ(tleCommTraceStop(c), tleSuccess);
  std::remove(path.c_str());
}

TEST(EmuTraceRing, KeepsTheLatestEventsAndRefusesBadCapacities) {
  Ranks ranks(2);
  EXPECT_EQ(tleCommTraceStart(ranks.comms[0], 3), tleInvalidArgument);
  EXPECT_EQ(tleCommTraceStart(ranks.comms[0], 1u << 25), tleInvalidArgument);
  for (tleComm_t c : ranks.comms)
    ASSERT_EQ(tleCommTraceStart(c, 4), tleSuccess);
  LaunchResult r = launch(
      ranks.comms.data(), 2, shape({1, 1, 1}, {1, 1, 1}), [](int, void *dc) {
        for (int i = 0; i < 10; ++i)
          flagcxIntraBarrierSyncS(dc, kCoopThread, 0, false, kOrderAcqRel);
      });
  ASSERT_EQ(r.result, tleSuccess) << r.message;
  uint64_t origin = 0, first = 0;
  std::string events;
  ASSERT_EQ(traceTakeEvents(ranks.comms.data(), 2, 7, origin, events, first),
            tleSuccess);
  size_t n = 0;
  for (size_t at = events.find("\"cat\":\"barrier\""); at != std::string::npos;
       at = events.find("\"cat\":\"barrier\"", at + 1))
    ++n;
  // 10 syncs x 2 events per rank, of which each ring kept its last 4.
  EXPECT_EQ(n, 8u) << events;
  EXPECT_TRUE(contains(events, "\"launch\":7")) << events;
  EXPECT_GT(first, 0u);
  EXPECT_EQ(origin, first);
}

} // namespace
