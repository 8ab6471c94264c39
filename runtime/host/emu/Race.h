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
// Clocks have an entry per block plus the threads that stepped beyond
// their block's (Clock), shared between the threads a group sync made equal
// and copied on write, so a block that only syncs holds one clock. This
// header is internal to the emulator.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_HOST_EMU_RACE_H
#define TLE_HOST_EMU_RACE_H

#include "emu/AddressMap.h"
#include "emu/Check.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace tle::emu::detail {

/// Where one emulated thread lives, for reports.
struct ThreadName {
  int32_t rank = 0;
  uint32_t block = 0, thread = 0;
};

/// One rank's copy of a symmetric buffer, or one rank's signal words.
struct RaceRegion {
  const void *base = nullptr;
  uint64_t bytes = 0;
  std::string buffer; ///< its name in reports ("in", "buffer 0")
  int32_t rank = 0;   ///< whose copy
  /// The rank's signal words (DevComm::signals): reports name the word.
  bool signalWords = false;
};

/// A reference count that a copy of its owner starts afresh.
struct RefCount {
  uint32_t n = 0;
  RefCount() = default;
  RefCount(const RefCount &) {}
  RefCount &operator=(const RefCount &) { return *this; }
};

/// A counted reference to a T with a `refs` member (a Clock). The count is
/// not atomic: a checker and all its clocks live on the one thread that
/// runs its launch. std::shared_ptr's count is a locked read-modify-write,
/// a full barrier, on every copy of a snapshot, and the checker copies
/// snapshots on every atomic access it follows.
template <typename T> class Ref {
public:
  Ref() = default;
  Ref(std::nullptr_t) {}
  explicit Ref(T *p) : p(p) { retain(); }
  Ref(const Ref &o) : p(o.p) { retain(); }
  Ref(Ref &&o) noexcept : p(std::exchange(o.p, nullptr)) {}
  template <typename U,
            typename = std::enable_if_t<std::is_convertible_v<U *, T *>>>
  Ref(const Ref<U> &o) : p(o.get()) {
    retain();
  }
  template <typename U,
            typename = std::enable_if_t<std::is_convertible_v<U *, T *>>>
  Ref(Ref<U> &&o) noexcept : p(o.release()) {}
  ~Ref() { drop(); }
  Ref &operator=(Ref o) noexcept {
    std::swap(p, o.p);
    return *this;
  }

  T *get() const { return p; }
  T &operator*() const { return *p; }
  T *operator->() const { return p; }
  explicit operator bool() const { return p != nullptr; }
  friend bool operator==(const Ref &a, const Ref &b) { return a.p == b.p; }
  /// Gives up the reference without dropping it.
  T *release() { return std::exchange(p, nullptr); }

private:
  void retain() {
    if (p)
      ++p->refs.n;
  }
  void drop() {
    if (p && --p->refs.n == 0)
      delete p;
  }
  T *p = nullptr;
};

/// A vector clock over the launch's threads (entry i: the last step of
/// thread i known to happen before), in two parts: `uni[b]`, a step every
/// thread of block b is known to have reached, and `exc`, sorted by
/// thread, the threads known beyond their block's value. A group sync makes
/// its members' steps equal, so a block that syncs is one entry, and only
/// the threads that released since their block's last sync (a barrier's
/// workers) are exceptions: joins and comparisons cost O(blocks + those
/// threads), not O(threads). Immutable once shared.
struct Clock {
  mutable RefCount refs; ///< Ref's
  /// The last join that took this clock (RaceChecker::nextMark), so that a
  /// join takes each clock once. Not part of the clock's value.
  mutable uint64_t mark = 0;
  uint32_t perBlock = 1; ///< threads per block (thread i is in i / perBlock)
  /// ceil(2^64 / perBlock), for blockOf (0 when perBlock is 1).
  uint64_t magic = 0;
  std::vector<uint32_t> uni;
  std::vector<std::pair<uint32_t, uint32_t>> exc; ///< (thread, step)

  uint32_t at(uint32_t i) const;
  /// i / perBlock by a multiply: the checker divides for every exception it
  /// looks at, and a hardware division cost more than the rest of the look
  /// (Lemire's direct computation, exact for 32-bit i).
  uint32_t blockOf(uint32_t i) const {
    return perBlock == 1
               ? i
               : static_cast<uint32_t>(
                     (static_cast<unsigned __int128>(magic) * i) >> 64);
  }
  void setPerBlock(uint32_t n) {
    perBlock = n;
    magic = n == 1 ? 0 : ~uint64_t(0) / n + 1;
  }
};

inline Ref<Clock> makeClock() { return Ref<Clock>(new Clock()); }

/// A clock as a shared array plus one entry that overrides it, so that a
/// thread's clock and its snapshots need no copy until a join.
struct Snap {
  static constexpr uint32_t kNone = ~0u;
  Ref<const Clock> base; ///< null: all zero
  uint32_t tid = kNone;  ///< the overriding entry, if any
  uint32_t own = 0;

  uint32_t at(uint32_t i) const {
    uint32_t v = base ? base->at(i) : 0;
    return i == tid && own > v ? own : v;
  }
  bool empty() const { return !base && tid == kNone; }
};

/// The race check itself (a Check: it hears every access) and the clocks
/// that other checks and the scheduler's edges share.
class RaceChecker : public Check {
public:
  /// `threads`: the most threads the launch can start (all ranks), added
  /// block by block, `perBlock` threads each (a block's threads are one
  /// entry of a clock while their steps agree; 1 keeps every thread apart).
  RaceChecker(uint64_t threads, std::vector<RaceRegion> regions,
              uint32_t perBlock = 1);
  ~RaceChecker() override;
  RaceChecker(const RaceChecker &) = delete;
  RaceChecker &operator=(const RaceChecker &) = delete;

  /// The most threads a launch may have for the checker to follow it: its
  /// clocks have an entry per thread.
  static constexpr uint64_t kMaxThreads = 65536;

  /// A new thread (no edge into it: a block starts unordered with every
  /// other). Returns its id: the next one, so that the threads of a block,
  /// added together, share one entry of a clock.
  uint32_t addThread(const ThreadName &name);
  /// A thread of no block (a rank's network): an id from the top of the
  /// range, so that it does not shift the blocks' threads off their clock
  /// entries.
  uint32_t addLoneThread(const ThreadName &name);

  /// A block or warp sync of `tids`: afterwards each has seen all of them.
  void syncGroup(const std::vector<uint32_t> &tids);

  /// Thread `tid` accessed `bytes` at `addr` (kind an AccessKind, order a
  /// MemoryOrder for atomics; `where` its source location or null). Orders
  /// it and checks it; returns the report of a race it completes.
  std::optional<std::string> access(uint32_t tid, const void *addr,
                                    uint64_t bytes, int kind, int order,
                                    const char *where);

  tleResult_t result() const override { return tleDataRace; }
  unsigned events() const override { return kCheckAccesses; }
  std::optional<std::string> onAccess(const AccessEvent &e) override {
    return access(e.thread, e.addr, e.bytes, e.kind, e.order, e.where);
  }

  /// A release by thread `tid` that lands later (the emulator's network):
  /// its clock, to pass to deliver.
  Snap sendRelease(uint32_t tid) { return releaseSnap(tid); }
  /// A message sent with `s` lands on the atomic word at `addr` as a
  /// read-modify-write: a load that reads it synchronizes with `s`.
  void deliver(const void *addr, const Snap &s);

  /// Signal words (docs/emulator.md, "What a signal wait acquires"): each
  /// keeps the value of its last store and the adds since, in modification
  /// order, so that a wait acquires the adds it needed and no later one.
  /// Thread `tid` added `added` to `word`, which held `before`, with the
  /// release half of `order`.
  ///
  /// Each is also an access of the word, checked as the shadowed memory's
  /// are when the word lies in a region (an add an atomic read-modify-write,
  /// a wait's final read and a read atomic reads, a store a plain write: a
  /// reset unordered with another thread's read is a race); `where` is its
  /// source location. They return the report of a race they complete.
  std::optional<std::string> signalAdd(uint32_t tid, const void *word,
                                       uint64_t before, uint64_t added,
                                       int order, const char *where = nullptr);
  /// The network's add of `added` to signal word (or counter) `word`,
  /// which held `before`, sent with `s` (sendRelease): the same history as
  /// signalAdd's, with the sender's clock. Not checked as an access: the
  /// network's write is an atomic one, and no thread of the launch makes it.
  void deliverAdd(const void *word, uint64_t before, uint64_t added,
                  const Snap &s);
  /// Thread `tid`'s wait for `word` >= `target` ended: it acquires (with
  /// the acquire half of `order`) the adds since the last store up to the
  /// first whose value reaches `target`.
  std::optional<std::string> signalWait(uint32_t tid, const void *word,
                                        uint64_t target, int order,
                                        const char *where = nullptr);
  /// Thread `tid` read `value` from `word` (read_signal): every add up to
  /// that value.
  std::optional<std::string> signalRead(uint32_t tid, const void *word,
                                        uint64_t value, int order,
                                        const char *where = nullptr);
  /// Thread `tid` set `word` to `value` (reset_signal): its history
  /// starts again.
  std::optional<std::string> signalStore(uint32_t tid, const void *word,
                                         uint64_t value,
                                         const char *where = nullptr);

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
  /// Joins what `t` acquired since into its clock (logically const: the
  /// clock it stands for does not change).
  void materialize(const ThreadClock &t) const;
  /// The join of `self` (a base and its owner's entry) and the snapshots
  /// `more` acquired since, or null when they add nothing to self's base.
  Ref<Clock> joinAcquired(const Snap &self,
                          const std::vector<Snap> &more) const;
  /// The join of `bases` and the entries `extras`, with block `block`'s
  /// entry (~0u: none) at least `blockStep`.
  Ref<Clock> gather(const std::vector<const Clock *> &bases,
                    const std::vector<std::pair<uint32_t, uint32_t>> &extras,
                    uint32_t block, uint32_t blockStep) const;
  Snap releaseSnap(uint32_t tid);
  /// What a relaxed store of `t` publishes: its clock at its last release
  /// fence.
  Snap fenceSnap(ThreadClock &t);
  /// fenceSnap when the fence had acquired something: the join.
  Snap joinFence(ThreadClock &t);
  /// Empties `t`'s deferred list, keeping what its last release fence
  /// shares of it (ThreadClock::fenceShare).
  static void dropDeferred(ThreadClock &t);
  Snap join(const Snap &a, const Snap &b) const;
  Ref<Clock> joinClocks(const Clock *a, const Clock *b) const;
  bool snapLeq(const Snap &a, const Snap &b) const;
  bool leq(const Snap &a, const ThreadClock &t) const;
  void fence(uint32_t tid, int order);
  struct WordSync;
  void loadHalf(uint32_t tid, const WordSync &word, uintptr_t key, int order);
  /// Acquires `s` now (`order` acquires) or at the next acquire fence.
  void take(uint32_t tid, const Snap &s, uintptr_t key, uint64_t sequence,
            int order);
  /// Appends an add (its value after, and what it released) to `word`'s
  /// history.
  void appendAdd(const void *word, uint64_t before, uint64_t added, Snap s);
  /// What reading `word` at `upTo` (or the first add reaching it) acquires.
  Snap signalPrefix(uintptr_t key, uint64_t upTo) const;
  void storeHalf(uint32_t tid, WordSync &word, bool update, int order);
  const Shadow *find(const void *addr, uint64_t &offset) const;
  std::optional<std::string> check(uint32_t tid, const void *addr,
                                   uint64_t bytes, bool write, bool atomic,
                                   const char *where, bool reset = false);
  /// check() of an access at `offset` into `region`.
  std::optional<std::string> checkIn(const Shadow &region, uint64_t offset,
                                     uint32_t tid, uint64_t bytes, bool write,
                                     bool atomic, const char *where,
                                     bool reset);
  std::string report(const Shadow &region, const Access &before,
                     const Access &now) const;

  uint32_t perBlock;
  uint32_t blocks;
  std::vector<ThreadName> names;
  std::vector<ThreadClock> clocks;
  /// Threads added by addThread and by addLoneThread.
  uint32_t added = 0, lone = 0;
  /// What a load that reads an atomic word synchronizes with: the clock of
  /// the word's release sequence, and which sequence it is (a store starts
  /// a new one, a read-modify-write continues it, and its clock only grows).
  struct WordSync {
    Snap snap;
    uint64_t sequence = 0;
    /// The region the word lies in (null: none), once looked up.
    const Shadow *shadow = nullptr;
    bool shadowKnown = false;
  };
  AddressMap<WordSync> syncs;
  /// A signal word's history since its last store: the stored value, and
  /// each add's value after it with the adder's release clock.
  struct SignalHistory {
    uint64_t floor = 0;
    std::vector<std::pair<uint64_t, Snap>> adds;
    uint64_t sequence = 0;
    /// The join of the first `joined` adds' clocks (signalPrefix's).
    mutable Snap prefix;
    mutable size_t joined = 0;
  };
  AddressMap<SignalHistory> signals;
  uint64_t nextSequence = 0;
  /// Marks of joins' clocks (Clock::mark); mutable: joins are logically
  /// const.
  mutable uint64_t nextMark = 0;
  /// Scratch of the joins; syncGroup's, per thread (0 where untouched).
  std::vector<std::pair<uint32_t, uint32_t>> scratch;
  mutable std::vector<const Clock *> groupBases;
  mutable std::vector<std::pair<uint32_t, uint32_t>> groupExtras;
  mutable std::vector<uint32_t> groupSteps, groupTouched;
  /// gather's scratch: which threads it noted (a bit each) and how many
  /// per block; zero between calls.
  mutable std::vector<uint64_t> groupBits;
  mutable std::vector<uint32_t> blockCounts;
  std::vector<std::unique_ptr<Shadow>> shadows; ///< by base address
  int32_t ranksPerNode = 0;
};

} // namespace tle::emu::detail

#endif // TLE_HOST_EMU_RACE_H
