//===- Slots.h - Checks that a barrier slot serves one group ----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A barrier slot's state belongs to the group using it (docs/design.md):
// two groups in one slot at once corrupt each other's epochs, and the
// barrier then passes too early or hangs, with no error of its own. The
// emulator hears every barrier event (tleEmuBarrierEvent: a group's rank 0
// when its arrive, wait or sync begins or ends) and fails the launch with
// a report when
//   - a group enters a slot that another group is in (between its arrive,
//     or the begin of its wait or sync, and the end of its wait), or that
//     another group left without an edge to this one (with the race
//     checker's clocks: a block sync, a barrier, ... );
//   - a group arrives twice on a slot without a wait between;
//   - two ranks use a slot, in the same round, with different group kinds.
// This header is internal to the emulator.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_HOST_EMU_SLOTS_H
#define TLE_HOST_EMU_SLOTS_H

#include "emu/Check.h"
#include "emu/Race.h"

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>

namespace tle::emu::detail {

class SlotChecker : public Check {
public:
  /// `race` (may be null) orders one group's use of a slot after another's.
  /// `launchComms`: the device communicators of the launch's ranks, which
  /// are ranks of one communicator (others are compared with no rank).
  SlotChecker(const RaceChecker *race, std::set<const void *> launchComms)
      : race(race), launchComms(std::move(launchComms)) {}

  /// Takes one event; returns the report of a misuse it reveals.
  std::optional<std::string> onEvent(const SlotEvent &e);

  tleResult_t result() const override { return tleBarrierMisuse; }
  unsigned events() const override { return kCheckBarrierEvents; }
  std::optional<std::string> onBarrierEvent(const SlotEvent &e) override {
    return onEvent(e);
  }

private:
  /// Who executes a barrier call together: the grid, a block, one warp of
  /// a block or one thread.
  struct Group {
    int coop = 0;
    uint32_t block = 0;
    uint32_t sub = 0; ///< warp index, or thread id, in the block
    bool operator==(const Group &o) const {
      return coop == o.coop && block == o.block && sub == o.sub;
    }
  };
  /// One rank's slot (a slot of one communicator).
  struct Slot {
    bool busy = false;   ///< a group is between its entry and its exit
    bool inCall = false; ///< inside a wait or sync (not only arrived)
    bool arrived = false;
    Group owner;
    int ownerKind = 0;
    const char *ownerSite = nullptr;
    bool hasLast = false; ///< a group left the slot before
    Group last;
    const char *lastSite = nullptr;
    Snap lastExit;
    uint32_t rounds = 0;
    /// The grid barrier: CTAs with an arrive outstanding, CTAs waiting.
    std::set<uint32_t> gridArrived;
    uint32_t gridWaiting = 0;
  };
  /// The first rank to reach a round of a slot, and how it used it.
  struct Round {
    int coop;
    int32_t rank;
    const char *site;
    uint32_t seen = 1; ///< the ranks that reached it
  };

  static Group groupOf(const SlotEvent &e);
  std::optional<std::string> enter(Slot &s, const SlotEvent &e, const Group &g);
  std::optional<std::string> checkRound(Slot &s, const SlotEvent &e);
  std::optional<std::string> onGrid(Slot &s, const SlotEvent &e);

  const RaceChecker *race;
  std::set<const void *> launchComms;
  std::map<std::pair<const void *, uint32_t>, Slot> slots;
  /// By (communicator set, team instance (teamOf), slot, round).
  std::map<std::tuple<const void *, int64_t, uint32_t, uint32_t>, Round> rounds;
};

} // namespace tle::emu::detail

#endif // TLE_HOST_EMU_SLOTS_H
