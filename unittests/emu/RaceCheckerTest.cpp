//===- RaceCheckerTest.cpp - The race checker's verdicts, without kernels -===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The race checker (runtime/host/emu/Race.{h,cpp}) driven directly, one
// access at a time, with no scheduler and no device library in between:
// what it must call a race and what it must not, for hand-written histories
// whose answer follows from the C++ memory model alone. The kernel-level
// tests (RaceTest.cpp) show that the barriers produce the right edges; these
// show that the checker judges the edges it is given correctly, so that a
// mistake in its own clock arithmetic (a release that does not advance the
// releasing thread's clock, a join that loses an entry) fails here even
// where every kernel happens to be race-free. The mutation job runs this
// binary against the checker's own mutants (docs/testing.md, `checker`).
//
//===----------------------------------------------------------------------===//

#include "emu/Race.h"

#include "tle/abi.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

using namespace tle;
using tle::emu::detail::RaceChecker;
using tle::emu::detail::RaceRegion;
using tle::emu::detail::ThreadName;

namespace {

/// A checker over one 256-byte buffer and `threads` threads, the first
/// `perBlock` of them block 0, the next block 1, and so on.
struct Fixture {
  alignas(8) uint8_t buffer[256] = {};
  uint32_t flag = 0, flag2 = 0;
  RaceChecker checker;
  std::vector<uint32_t> tids;

  explicit Fixture(uint32_t threads, uint32_t perBlock = 1)
      : checker(threads, {RaceRegion{buffer, sizeof buffer, "buf", 0}}) {
    for (uint32_t i = 0; i < threads; ++i)
      tids.push_back(checker.addThread(ThreadName{0, i / perBlock, i}));
  }
  bool store(uint32_t t, uint64_t off, uint64_t bytes = 4) {
    return !checker.access(tids[t], buffer + off, bytes, kAccessStore, 0,
                           "store");
  }
  bool load(uint32_t t, uint64_t off, uint64_t bytes = 4) {
    return !checker.access(tids[t], buffer + off, bytes, kAccessLoad, 0,
                           "load");
  }
  void atomic(uint32_t t, const void *word, int kind, int order) {
    EXPECT_FALSE(checker.access(tids[t], word, 4, kind, order, nullptr));
  }
  void release(uint32_t t, const void *word) {
    atomic(t, word, kAccessAtomicStore, kOrderRelease);
  }
  void acquire(uint32_t t, const void *word) {
    atomic(t, word, kAccessAtomicLoad, kOrderAcquire);
  }
};

TEST(RaceChecker, UnorderedWriteAndReadRace) {
  Fixture f(2);
  EXPECT_TRUE(f.store(0, 0));
  EXPECT_FALSE(f.load(1, 0));
}

TEST(RaceChecker, ReleaseThenAcquireOrdersWhatCameBefore) {
  Fixture f(2);
  EXPECT_TRUE(f.store(0, 0));
  f.release(0, &f.flag);
  f.acquire(1, &f.flag);
  EXPECT_TRUE(f.load(1, 0));
  EXPECT_TRUE(f.store(1, 0));
}

// The release publishes the writer's clock as of the release: a write after
// it is not covered, and a reader that acquired only that release races
// with it. A release that did not advance the writer's own entry would
// publish the later write too and hide the race.
TEST(RaceChecker, AWriteAfterTheReleaseIsNotCoveredByIt) {
  Fixture f(2);
  EXPECT_TRUE(f.store(0, 0));
  f.release(0, &f.flag);
  EXPECT_TRUE(f.store(0, 8));
  f.acquire(1, &f.flag);
  EXPECT_TRUE(f.load(1, 0)) << "the write before the release is ordered";
  EXPECT_FALSE(f.load(1, 8)) << "the write after the release is not";
}

// The same through a release fence and a relaxed store, and through a
// read-modify-write: each release advances the clock.
TEST(RaceChecker, EveryKindOfReleaseAdvancesTheReleasersClock) {
  {
    Fixture f(2);
    f.atomic(0, nullptr, kAccessFence, kOrderRelease);
    f.atomic(0, &f.flag, kAccessAtomicStore, kOrderRelaxed);
    EXPECT_TRUE(f.store(0, 0));
    f.acquire(1, &f.flag);
    EXPECT_FALSE(f.load(1, 0)) << "a store after the release fence";
  }
  {
    Fixture f(2);
    f.atomic(0, &f.flag, kAccessAtomicUpdate, kOrderRelease);
    EXPECT_TRUE(f.store(0, 0));
    f.acquire(1, &f.flag);
    EXPECT_FALSE(f.load(1, 0)) << "a store after the release add";
  }
  {
    // The network's delayed release (tleEmuNetAdd).
    Fixture f(2);
    auto s = f.checker.sendRelease(f.tids[0]);
    EXPECT_TRUE(f.store(0, 0));
    f.checker.deliver(&f.flag, s);
    f.acquire(1, &f.flag);
    EXPECT_FALSE(f.load(1, 0)) << "a store after the net add was sent";
  }
}

// A relaxed store publishes the clock of the last release fence: what
// the thread had acquired by then, and nothing it acquired after, also
// when a sync in between folded both into its clock (the checker keeps
// the fence's acquisitions apart from the later ones until then).
TEST(RaceChecker, ARelaxedStorePublishesWhatTheFenceHadAcquired) {
  for (bool syncBetween : {false, true}) {
    SCOPED_TRACE(syncBetween ? "sync between" : "no sync");
    Fixture f(4);
    uint32_t word = 0;
    EXPECT_TRUE(f.store(0, 0));
    f.release(0, &f.flag);
    f.acquire(1, &f.flag);
    f.atomic(1, nullptr, kAccessFence, kOrderRelease);
    EXPECT_TRUE(f.store(2, 8));
    f.release(2, &f.flag2);
    f.acquire(1, &f.flag2);
    if (syncBetween)
      f.checker.syncGroup({f.tids[1]});
    f.atomic(1, &word, kAccessAtomicStore, kOrderRelaxed);
    f.acquire(3, &word);
    EXPECT_TRUE(f.load(3, 0)) << "acquired before the fence: published";
    EXPECT_FALSE(f.load(3, 8)) << "acquired after the fence: not published";
  }
}

TEST(RaceChecker, ARelaxedLoadAcquiresOnlyAtAnAcquireFence) {
  Fixture f(2);
  EXPECT_TRUE(f.store(0, 0));
  f.release(0, &f.flag);
  f.atomic(1, &f.flag, kAccessAtomicLoad, kOrderRelaxed);
  Fixture g(2);
  EXPECT_TRUE(g.store(0, 0));
  g.release(0, &g.flag);
  g.atomic(1, &g.flag, kAccessAtomicLoad, kOrderRelaxed);
  g.atomic(1, nullptr, kAccessFence, kOrderAcquire);
  EXPECT_FALSE(f.load(1, 0)) << "no fence: no edge";
  EXPECT_TRUE(g.load(1, 0)) << "the fence acquires what the load read";
}

TEST(RaceChecker, AGroupSyncJoinsItsMembersAndAdvancesThem) {
  Fixture f(3, 3);
  EXPECT_TRUE(f.store(0, 0));
  f.checker.syncGroup({f.tids[0], f.tids[1]});
  EXPECT_TRUE(f.load(1, 0)) << "a member after the sync";
  EXPECT_TRUE(f.store(0, 8));
  EXPECT_FALSE(f.load(1, 8)) << "a member's write after the sync";
  EXPECT_FALSE(f.load(2, 0)) << "a thread that did not take part";
}

// A whole block's sync makes its members one entry of every clock (the
// block's), with the threads that released since as exceptions: the
// verdicts are those of one entry per thread.
TEST(RaceChecker, WholeBlocksSyncAndReleaseThreadByThread) {
  Fixture f(8, 4); // blocks {0..3}, {4..7}
  EXPECT_TRUE(f.store(1, 0));
  f.checker.syncGroup({f.tids[0], f.tids[1], f.tids[2], f.tids[3]});
  EXPECT_TRUE(f.store(2, 8)) << "after the sync, in the block";
  f.release(2, &f.flag);
  EXPECT_TRUE(f.store(3, 16)) << "another member, not released";
  f.acquire(5, &f.flag);
  EXPECT_TRUE(f.load(5, 0)) << "before the sync";
  EXPECT_TRUE(f.load(5, 8)) << "the releaser's, before its release";
  EXPECT_FALSE(f.load(5, 16)) << "a member that did not release";
  f.checker.syncGroup({f.tids[4], f.tids[5], f.tids[6], f.tids[7]});
  EXPECT_TRUE(f.load(6, 8)) << "block 1's sync hands it on";
  f.checker.syncGroup({f.tids[0], f.tids[1], f.tids[2], f.tids[3]});
  EXPECT_FALSE(f.load(6, 16)) << "block 0's later sync is not block 1's";
}

// Knowledge travels transitively: 0 releases to 1, 1 releases to 2.
TEST(RaceChecker, EdgesCompose) {
  Fixture f(3);
  EXPECT_TRUE(f.store(0, 0));
  f.release(0, &f.flag);
  f.acquire(1, &f.flag);
  f.release(1, &f.flag2);
  EXPECT_TRUE(f.store(1, 8));
  f.acquire(2, &f.flag2);
  EXPECT_TRUE(f.load(2, 0));
  EXPECT_FALSE(f.load(2, 8)) << "1's write after its release";
}

// Two releases acquired by one thread: it knows both writers' pasts, and
// neither writer's future.
TEST(RaceChecker, AJoinKeepsEveryEntry) {
  Fixture f(3);
  EXPECT_TRUE(f.store(0, 0));
  f.release(0, &f.flag);
  EXPECT_TRUE(f.store(1, 8));
  f.release(1, &f.flag2);
  EXPECT_TRUE(f.store(0, 16));
  EXPECT_TRUE(f.store(1, 24));
  f.acquire(2, &f.flag);
  f.acquire(2, &f.flag2);
  EXPECT_TRUE(f.load(2, 0));
  EXPECT_TRUE(f.load(2, 8));
  EXPECT_FALSE(f.load(2, 16));
  EXPECT_FALSE(f.load(2, 24));
}

// Signal words (docs/emulator.md, "What a signal wait acquires"): two
// producers write their data at offsets 0 and 8 and each add 1 to one word;
// both adds land before the consumer looks, in either order. Waiting for
// >= 1 acquires the first add in the word's modification order only, so
// the other producer's data is a race whichever order the adds took;
// waiting for >= 2 acquires both.
struct SignalFixture : Fixture {
  uint64_t word = 0;
  SignalFixture() : Fixture(3) {}
  /// Producers `first` then the other add; the consumer (thread 2) waits
  /// for `target`. Returns whether each producer's data reads clean.
  std::pair<bool, bool> run(uint32_t first, uint64_t target,
                            uint64_t start = 0) {
    EXPECT_TRUE(store(0, 0, 8));
    EXPECT_TRUE(store(1, 8, 8));
    checker.signalAdd(tids[first], &word, start, 1, kOrderRelease);
    checker.signalAdd(tids[1 - first], &word, start + 1, 1, kOrderRelease);
    checker.signalWait(tids[2], &word, target, kOrderAcquire);
    return {load(2, 0, 8), load(2, 8, 8)};
  }
};

TEST(RaceChecker, SignalWaitForOneAcquiresTheFirstAddOnly) {
  for (uint32_t first : {0u, 1u}) {
    SignalFixture f;
    auto [p0, p1] = f.run(first, 1);
    EXPECT_EQ(p0, first == 0) << "first adder " << first;
    EXPECT_EQ(p1, first == 1) << "first adder " << first;
  }
}

TEST(RaceChecker, SignalWaitForTwoAcquiresBoth) {
  for (uint32_t first : {0u, 1u}) {
    SignalFixture f;
    auto [p0, p1] = f.run(first, 2);
    EXPECT_TRUE(p0) << "first adder " << first;
    EXPECT_TRUE(p1) << "first adder " << first;
  }
}

// A word left at 2 by an earlier launch and not reset: the wait for >= 1
// needs no add of this launch, so it acquires none (a race on both).
TEST(RaceChecker, SignalNotResetBetweenLaunchesAcquiresNothing) {
  SignalFixture f;
  auto [p0, p1] = f.run(0, 1, /*start=*/2);
  EXPECT_FALSE(p0);
  EXPECT_FALSE(p1);
  // Reset first: the same wait acquires the first add again.
  SignalFixture g;
  EXPECT_FALSE(g.checker.signalStore(g.tids[2], &g.word, 0));
  auto [q0, q1] = g.run(0, 1);
  EXPECT_TRUE(q0);
  EXPECT_FALSE(q1);
}

// read_signal acquires every add up to the value it read; a relaxed wait
// acquires only at the next acquire fence.
TEST(RaceChecker, SignalReadAndRelaxedWait) {
  SignalFixture f;
  EXPECT_TRUE(f.store(0, 0, 8));
  EXPECT_TRUE(f.store(1, 8, 8));
  f.checker.signalAdd(f.tids[0], &f.word, 0, 1, kOrderRelease);
  f.checker.signalAdd(f.tids[1], &f.word, 1, 1, kOrderRelease);
  f.checker.signalRead(f.tids[2], &f.word, 2, kOrderAcquire);
  EXPECT_TRUE(f.load(2, 0, 8));
  EXPECT_TRUE(f.load(2, 8, 8));

  SignalFixture g;
  EXPECT_TRUE(g.store(0, 0, 8));
  g.checker.signalAdd(g.tids[0], &g.word, 0, 1, kOrderRelease);
  g.checker.signalWait(g.tids[2], &g.word, 1, kOrderRelaxed);
  SignalFixture h;
  EXPECT_TRUE(h.store(0, 0, 8));
  h.checker.signalAdd(h.tids[0], &h.word, 0, 1, kOrderRelease);
  h.checker.signalWait(h.tids[2], &h.word, 1, kOrderRelaxed);
  h.atomic(2, &h.flag, kAccessFence, kOrderAcquire);
  EXPECT_FALSE(g.load(2, 0, 8));
  EXPECT_TRUE(h.load(2, 0, 8));
}

// The word itself is an access the checker orders: a reset (a plain write)
// by one thread and a read_signal by another of the same block, with no
// sync between them, are a race reported with both locations; a block sync
// between them orders them.
TEST(RaceChecker, SignalResetAndReadOfOneWordRaceUnlessSynced) {
  for (bool synced : {false, true}) {
    alignas(8) uint64_t word = 0;
    RaceChecker checker(2, {RaceRegion{&word, sizeof word, "signals", 0}}, 2);
    uint32_t a = checker.addThread(ThreadName{0, 0, 0});
    uint32_t b = checker.addThread(ThreadName{0, 0, 1});
    EXPECT_FALSE(checker.signalRead(a, &word, 0, kOrderAcquire, "read.mlir:3"));
    if (synced)
      checker.syncGroup({a, b});
    auto race = checker.signalStore(b, &word, 0, "reset.mlir:4");
    EXPECT_EQ(race.has_value(), !synced);
    if (race) {
      EXPECT_NE(race->find("read.mlir:3"), std::string::npos) << *race;
      EXPECT_NE(race->find("reset.mlir:4"), std::string::npos) << *race;
    }
  }
}

// Adds are atomic read-modify-writes: two unordered adds are no race, an
// add and an unordered reset are.
TEST(RaceChecker, SignalAddsAreAtomicAResetIsNot) {
  alignas(8) uint64_t word = 0;
  RaceChecker checker(3, {RaceRegion{&word, sizeof word, "signals", 0}});
  uint32_t a = checker.addThread(ThreadName{0, 0, 0});
  uint32_t b = checker.addThread(ThreadName{0, 1, 0});
  uint32_t c = checker.addThread(ThreadName{0, 2, 0});
  EXPECT_FALSE(checker.signalAdd(a, &word, 0, 1, kOrderRelease, "add.a"));
  EXPECT_FALSE(checker.signalAdd(b, &word, 1, 1, kOrderRelease, "add.b"));
  EXPECT_TRUE(checker.signalStore(c, &word, 0, "reset.c").has_value());
}

// Every thread of a group may reset the word (resetSignal's stores are
// the same): two resets do not race with each other, but each still races
// with a read that nothing orders with it.
TEST(RaceChecker, SignalResetsDoNotRaceWithEachOther) {
  alignas(8) uint64_t word = 0;
  RaceChecker checker(3, {RaceRegion{&word, sizeof word, "signals", 0}});
  uint32_t a = checker.addThread(ThreadName{0, 0, 0});
  uint32_t b = checker.addThread(ThreadName{0, 1, 0});
  uint32_t c = checker.addThread(ThreadName{0, 2, 0});
  EXPECT_FALSE(checker.signalStore(a, &word, 0, "reset.a"));
  EXPECT_FALSE(checker.signalStore(b, &word, 0, "reset.b"));
  EXPECT_TRUE(
      checker.signalRead(c, &word, 0, kOrderAcquire, "read.c").has_value());
}

// What a wait acquires does not depend on the waits before it: one for 3
// (all three adds), then one for 1 by another thread (the first add only),
// then one for 2 (the first two).
TEST(RaceChecker, SignalPrefixesOfEarlierWaitsDoNotLeak) {
  Fixture f(6);
  alignas(8) uint64_t word = 0;
  for (uint32_t p = 0; p < 3; ++p) {
    EXPECT_TRUE(f.store(p, p * 8, 8));
    f.checker.signalAdd(f.tids[p], &word, p, 1, kOrderRelease);
  }
  f.checker.signalWait(f.tids[3], &word, 3, kOrderAcquire);
  f.checker.signalWait(f.tids[4], &word, 1, kOrderAcquire);
  f.checker.signalWait(f.tids[5], &word, 2, kOrderAcquire);
  for (uint32_t p = 0; p < 3; ++p) {
    EXPECT_TRUE(f.load(3, p * 8, 8)) << "producer " << p;
    EXPECT_EQ(f.load(4, p * 8, 8), p < 1) << "producer " << p;
    EXPECT_EQ(f.load(5, p * 8, 8), p < 2) << "producer " << p;
  }
}

// The network's adds (deliverAdd, with the sender's release clock) join the
// word's history as a thread's do: waiting for >= 1 acquires the first in
// modification order only, >= 2 both, whichever sender came first.
TEST(RaceChecker, DeliveredSignalAddsCarryTheSendersClock) {
  for (uint64_t target : {1, 2})
    for (uint32_t first : {0u, 1u}) {
      SignalFixture f;
      EXPECT_TRUE(f.store(0, 0, 8));
      EXPECT_TRUE(f.store(1, 8, 8));
      auto s0 = f.checker.sendRelease(f.tids[first]);
      auto s1 = f.checker.sendRelease(f.tids[1 - first]);
      f.checker.deliverAdd(&f.word, 0, 1, s0);
      f.checker.deliverAdd(&f.word, 1, 1, s1);
      f.checker.signalWait(f.tids[2], &f.word, target, kOrderAcquire);
      bool p0 = f.load(2, 0, 8), p1 = f.load(2, 8, 8);
      EXPECT_EQ(p0, target == 2 || first == 0)
          << "target " << target << ", first " << first;
      EXPECT_EQ(p1, target == 2 || first == 1)
          << "target " << target << ", first " << first;
    }
}

} // namespace
