//===- Race.h - Happens-before race checks of symmetric memory --*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The emulator's race checker: vector clocks over every thread of a launch,
// the edges of the memory model (block and warp syncs, release/acquire
// atomics and fences, as the device library and the kernel perform them),
// and a shadow of every symmetric buffer that remembers, per byte, the
// accesses not yet known to happen before all later ones. Two accesses to
// the same byte, at least one a write and not both atomic, that no chain of
// edges orders are a data race, however the emulator happened to interleave
// them (FastTrack's algorithm, with TSan's treatment of fences and release
// sequences). docs/emulator.md, "Race check", is the user's description.
//
// Clocks are dense arrays over the launch's threads, shared between the
// threads a group sync made equal and copied on write, so a block that
// only syncs holds one clock. This header is internal to the emulator.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_HOST_EMU_RACE_H
#define TLE_HOST_EMU_RACE_H

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace tle::emu::detail {

/// Where one emulated thread lives, for reports.
struct ThreadName {
  int32_t rank = 0;
  uint32_t block = 0, thread = 0;
};

/// One rank's copy of a symmetric buffer.
struct RaceRegion {
  const void *base = nullptr;
  uint64_t bytes = 0;
  std::string buffer; ///< its name in reports ("in", "buffer 0")
  int32_t rank = 0;   ///< whose copy
};

/// A vector clock: entry i is the last step of thread i known to happen
/// before. Immutable once shared.
using Clock = std::vector<uint32_t>;

/// A clock as a shared array plus one entry that overrides it, so that a
/// thread's clock and its snapshots need no copy until a join.
struct Snap {
  static constexpr uint32_t kNone = ~0u;
  std::shared_ptr<const Clock> base; ///< null: all zero
  uint32_t tid = kNone;              ///< the overriding entry, if any
  uint32_t own = 0;

  uint32_t at(uint32_t i) const {
    uint32_t v = base && i < base->size() ? (*base)[i] : 0;
    return i == tid && own > v ? own : v;
  }
  bool empty() const { return !base && tid == kNone; }
};

class RaceChecker {
public:
  /// `threads`: the most threads the launch can start (all ranks).
  RaceChecker(uint64_t threads, std::vector<RaceRegion> regions);
  ~RaceChecker();
  RaceChecker(const RaceChecker &) = delete;
  RaceChecker &operator=(const RaceChecker &) = delete;

  /// The most threads a launch may have for the checker to follow it: its
  /// clocks have an entry per thread.
  static constexpr uint64_t kMaxThreads = 65536;

  /// A new thread (no edge into it: a block starts unordered with every
  /// other). Returns its id.
  uint32_t addThread(const ThreadName &name);

  /// A block or warp sync of `tids`: afterwards each has seen all of them.
  void syncGroup(const std::vector<uint32_t> &tids);

  /// Thread `tid` accessed `bytes` at `addr` (kind an AccessKind, order a
  /// MemoryOrder for atomics; `where` its source location or null). Orders
  /// it and checks it; returns the report of a race it completes.
  std::optional<std::string> access(uint32_t tid, const void *addr,
                                    uint64_t bytes, int kind, int order,
                                    const char *where);

  /// A release by thread `tid` that lands later (the emulator's network):
  /// its clock, to pass to deliver.
  Snap sendRelease(uint32_t tid) { return releaseSnap(tid); }
  /// A message sent with `s` lands on the atomic word at `addr` as a
  /// read-modify-write: a load that reads it synchronizes with `s`.
  void deliver(const void *addr, const Snap &s);

  /// Thread `tid` acquires `s` (the emulator's network: a transfer lands
  /// after its send; a flush sees what the network did).
  void acquireFrom(uint32_t tid, const Snap &s);
  /// Thread `tid`'s clock now, and whether `s` happens before it.
  Snap now(uint32_t tid) const;
  bool happensBefore(const Snap &s, uint32_t tid) const;

  const ThreadName &name(uint32_t tid) const { return names[tid]; }

  /// Reports name ranks "rank W (node n, local l)" when the launch's
  /// communicators have nodes of `n` ranks (0: one node, "rank W").
  void setRanksPerNode(int32_t n) { ranksPerNode = n; }
  std::string rankName(int32_t rank) const;

  /// "buffer 'flag' (rank 1's copy) byte 4" for an address in a symmetric
  /// buffer, else "".
  std::string describe(const void *addr) const;

private:
  struct ThreadClock;
  struct Access;
  struct Shadow;

  void acquire(ThreadClock &t, const Snap &s);
  Snap releaseSnap(uint32_t tid);
  Snap join(const Snap &a, const Snap &b) const;
  bool snapLeq(const Snap &a, const Snap &b) const;
  bool leq(const Snap &a, const ThreadClock &t) const;
  void fence(uint32_t tid, int order);
  void loadHalf(uint32_t tid, uintptr_t key, int order);
  void storeHalf(uint32_t tid, uintptr_t key, bool update, int order);
  const Shadow *find(const void *addr, uint64_t &offset) const;
  std::optional<std::string> check(uint32_t tid, const void *addr,
                                   uint64_t bytes, bool write, bool atomic,
                                   const char *where);
  std::string report(const Shadow &region, const Access &before,
                     const Access &now) const;

  uint64_t size;
  std::vector<ThreadName> names;
  std::vector<ThreadClock> clocks;
  /// The clock a load that reads each atomic word synchronizes with.
  std::unordered_map<uintptr_t, Snap> syncs;
  std::vector<std::unique_ptr<Shadow>> shadows; ///< by base address
  int32_t ranksPerNode = 0;
};

} // namespace tle::emu::detail

#endif // TLE_HOST_EMU_RACE_H
