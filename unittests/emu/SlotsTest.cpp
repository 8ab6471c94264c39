//===- SlotsTest.cpp - The emulator's slot checker, verdict by verdict ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Unit tests of SlotChecker (runtime/host/emu/Slots.h), the emulator's check
// that a barrier slot serves one group at a time: sequences of barrier
// events as the device library reports them (an arrive is one instant
// event; a wait or sync a begin and an end), fed to the checker directly,
// each with the verdict docs/emulator.md gives. The kernel-level tests
// (RaceTest.cpp, EmuSlots.*) show that the events reach the checker; these
// show what it decides on each, including the sequences no correct kernel
// produces and no kernel test could isolate. Built with Slots.cpp and
// Race.cpp only, so it needs no fibers and runs in milliseconds.
//
//===----------------------------------------------------------------------===//

#include "emu/Slots.h"

#include "tle/abi.h"
#include "tle/detail/DevComm.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

using namespace tle;
using namespace tle::emu::detail;

namespace {

/// One step of a group: arrive, or the begin or the end of a wait or sync.
struct Step {
  int kind;
  int phase;
};
constexpr Step kArrive{kBarrierArrive, kTraceInstant};
constexpr Step kWaitBegin{kBarrierWait, kTraceBegin};
constexpr Step kWaitEnd{kBarrierWait, kTraceEnd};
constexpr Step kSyncBegin{kBarrierSync, kTraceBegin};
constexpr Step kSyncEnd{kBarrierSync, kTraceEnd};

class Checker {
public:
  Checker() : slots(nullptr, {&comms[0], &comms[1]}) {
    for (int32_t r = 0; r < 2; ++r) {
      comms[r].rank = r;
      comms[r].size = 2;
      comms[r].nBarriers = 8;
      comms[r].nNodes = 1;
    }
  }
  /// Block `block` of rank `rank` (of one communicator: the checker
  /// compares the rounds of its ranks), group `coop`, on slot 3: the
  /// checker's verdict.
  std::optional<std::string> step(const Step &s, uint32_t block = 0,
                                  int32_t rank = 0, int coop = kCoopBlock) {
    SlotEvent e;
    e.comm = &comms[rank];
    e.rank = rank;
    e.block = block;
    e.kind = s.kind;
    e.coop = coop;
    e.slot = 3;
    e.phase = s.phase;
    e.site = "kernel.cu:7";
    return slots.onEvent(e);
  }
  /// Runs `steps`; the first misuse reported, and at which step.
  std::optional<std::string> run(const std::vector<Step> &steps,
                                 size_t *at = nullptr) {
    for (size_t i = 0; i < steps.size(); ++i)
      if (auto misuse = step(steps[i])) {
        if (at)
          *at = i;
        return misuse;
      }
    return std::nullopt;
  }

private:
  DevComm comms[2]{}; ///< two ranks of one communicator
  SlotChecker slots;
};

bool contains(const std::string &s, const std::string &part) {
  return s.find(part) != std::string::npos;
}

TEST(SlotChecker, CorrectSequencesPass) {
  for (const std::vector<Step> &steps : std::vector<std::vector<Step>>{
           {kSyncBegin, kSyncEnd, kSyncBegin, kSyncEnd},
           {kArrive, kWaitBegin, kWaitEnd, kArrive, kWaitBegin, kWaitEnd},
           {kArrive, kWaitBegin, kWaitEnd, kSyncBegin, kSyncEnd},
           {kSyncBegin, kSyncEnd, kArrive, kWaitBegin, kWaitEnd},
           // A wait with no arrive of its own in this launch (one launch
           // arrives, the next waits).
           {kWaitBegin, kWaitEnd, kArrive, kWaitBegin, kWaitEnd},
       }) {
    Checker c;
    std::optional<std::string> misuse = c.run(steps);
    EXPECT_FALSE(misuse) << *misuse;
  }
}

TEST(SlotChecker, ArriveTwiceWithoutAWaitIsMisuse) {
  Checker c;
  size_t at = 0;
  std::optional<std::string> misuse = c.run({kArrive, kArrive}, &at);
  ASSERT_TRUE(misuse);
  EXPECT_EQ(at, 1u);
  EXPECT_TRUE(contains(*misuse, "arrives twice on slot 3 without a wait"))
      << *misuse;
}

TEST(SlotChecker, ArriveThenSyncIsMisuse) {
  // A sync arrives again: the group's first arrive has not been waited
  // for, and the sync's wait would count the two arrives as one round.
  Checker c;
  size_t at = 0;
  std::optional<std::string> misuse = c.run({kArrive, kSyncBegin}, &at);
  ASSERT_TRUE(misuse);
  EXPECT_EQ(at, 1u);
  EXPECT_TRUE(contains(*misuse, "block 0 (group block) of rank 0 arrives "
                                "twice on slot 3 without a wait"))
      << *misuse;
  EXPECT_TRUE(contains(*misuse, "first arrive at kernel.cu:7\n  then sync"))
      << *misuse;
}

TEST(SlotChecker, ArriveThenWaitThenSyncPasses) {
  // The wait completes the arrive's round: the sync that follows starts a
  // new one.
  Checker c;
  std::optional<std::string> misuse =
      c.run({kArrive, kWaitBegin, kWaitEnd, kSyncBegin, kSyncEnd});
  EXPECT_FALSE(misuse) << *misuse;
}

TEST(SlotChecker, AnotherGroupInTheSlotIsMisuse) {
  for (const Step &first : {kArrive, kSyncBegin, kWaitBegin})
    for (const Step &second : {kArrive, kSyncBegin, kWaitBegin}) {
      Checker c;
      ASSERT_FALSE(c.step(first, /*block=*/0));
      std::optional<std::string> misuse = c.step(second, /*block=*/1);
      ASSERT_TRUE(misuse) << first.kind << " then " << second.kind;
      EXPECT_TRUE(contains(*misuse, "two groups use slot 3 of rank 0 at once"))
          << *misuse;
    }
}

TEST(SlotChecker, RanksThatUseARoundWithDifferentGroupsAreMisuse) {
  // Round 1 of slot 3: rank 0 with the block group, rank 1 with a warp.
  Checker c;
  ASSERT_FALSE(c.step(kSyncBegin, 0, 0, kCoopBlock));
  ASSERT_FALSE(c.step(kSyncEnd, 0, 0, kCoopBlock));
  std::optional<std::string> misuse = c.step(kSyncBegin, 0, 1, kCoopWarp);
  ASSERT_TRUE(misuse);
  EXPECT_TRUE(contains(*misuse, "ranks use slot 3 with different groups "
                                "(round 1 of the slot in this launch)"))
      << *misuse;
  // The same group on both ranks is no misuse.
  Checker same;
  for (int32_t rank : {0, 1}) {
    ASSERT_FALSE(same.step(kSyncBegin, 0, rank, kCoopWarp));
    ASSERT_FALSE(same.step(kSyncEnd, 0, rank, kCoopWarp));
  }
}

} // namespace
