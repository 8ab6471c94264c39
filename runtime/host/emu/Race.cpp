//===- Race.cpp - Happens-before race checking of symmetric memory --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The edges, in the words of the C++ memory model the emulator runs on (the
// device library's PTX orders map onto it one to one, PlatformHost.h):
//   - a block or warp sync joins the clocks of the threads it releases;
//   - a release store or read-modify-write publishes the thread's clock on
//     its word (a relaxed one publishes the clock of the thread's last
//     release fence, and a read-modify-write adds to what the word held,
//     which is C++'s release sequence);
//   - an acquire load or read-modify-write joins the word's clock; a relaxed
//     one remembers it for the thread's next acquire fence.
// A thread advances its own entry after every release, so that what it does
// next is not covered by what it published.
//
// Shadow: every 8-byte granule of a symmetric buffer keeps the accesses not
// yet superseded, each with its byte mask, thread, clock and source
// location. An access is checked against each of them; one that another
// access happens after, and that the later one covers for every future
// conflict, is dropped (the table in prune()).
//
//===----------------------------------------------------------------------===//

#include "emu/Race.h"

#include "tle/abi.h"
#include "tle/impl/Mutation.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

namespace tle::emu::detail {

namespace {
constexpr uint64_t kGranule = 8;
constexpr uint64_t kPageBytes = 4096;
constexpr uint64_t kGranulesPerPage = kPageBytes / kGranule;
/// Acquired clocks a thread remembers, so that a poll that reads the same
/// word again costs no comparison of whole clocks.
constexpr size_t kAcquireCache = 4;
/// Relaxed reads a thread keeps apart before it folds them into one clock.
constexpr size_t kMaxPending = 16;
/// Acquired clocks a thread keeps apart before it joins them.
constexpr size_t kMaxDeferred = 16;

bool acquires(int order) {
  return order == kOrderAcquire || order == kOrderAcqRel ||
         order == kOrderSeqCst;
}
bool releases(int order) {
  return order == kOrderRelease || order == kOrderAcqRel ||
         order == kOrderSeqCst;
}
bool sameSnap(const Snap &a, const Snap &b) {
  return a.base == b.base && a.tid == b.tid && a.own == b.own;
}
} // namespace

uint32_t Clock::at(uint32_t i) const {
  uint32_t v = uni[blockOf(i)];
  auto it = std::lower_bound(exc.begin(), exc.end(), i,
                             [](const std::pair<uint32_t, uint32_t> &e,
                                uint32_t k) { return e.first < k; });
  return it != exc.end() && it->first == i && it->second > v ? it->second : v;
}

namespace {
/// out[k] = max(out[k], in[k]) for k < n: the blocks' entries of a join (a
/// barrier over N ranks joins N clocks of N entries in every sync). x86-64's
/// baseline has no unsigned 32-bit vector maximum (SSE4.1's pmaxud), so the
/// loop ran scalar; an AVX2 clone, chosen when the process starts, does 8
/// entries an instruction.
#if defined(__x86_64__) && defined(__ELF__)
__attribute__((target_clones("avx2", "default")))
#endif
void maxInto(uint32_t *__restrict out, const uint32_t *__restrict in,
             size_t n) {
  for (size_t k = 0; k < n; ++k)
    out[k] = std::max(out[k], in[k]);
}

/// Raises thread i's entry of `c` to at least `v`.
void raise(Clock &c, uint32_t i, uint32_t v) {
  if (v <= c.uni[c.blockOf(i)])
    return;
  auto it = std::lower_bound(c.exc.begin(), c.exc.end(), i,
                             [](const std::pair<uint32_t, uint32_t> &e,
                                uint32_t k) { return e.first < k; });
  if (it != c.exc.end() && it->first == i)
    it->second = std::max(it->second, v);
  else
    c.exc.insert(it, {i, v});
}

/// Whether `b` (null: zero) knows every thread of block `k` but `skip` at
/// least as far as `value`, which is above b's entry for the block: each of
/// them must be one of b's exceptions.
bool blockKnown(const Clock *b, uint32_t k, uint32_t perBlock, uint32_t value,
                uint32_t skip) {
  uint32_t lo = k * perBlock, hi = lo + perBlock;
  uint32_t need = perBlock - (skip >= lo && skip < hi);
  if (need == 0)
    return true;
  if (!b || b->exc.size() < need)
    return false;
  auto it = std::lower_bound(b->exc.begin(), b->exc.end(), lo,
                             [](const std::pair<uint32_t, uint32_t> &e,
                                uint32_t i) { return e.first < i; });
  uint32_t have = 0;
  for (; it != b->exc.end() && it->first < hi; ++it)
    have += it->first != skip && it->second >= value;
  return have == need;
}

/// Whether every entry of `a` but `skip` is at most `b`'s (null: zero), in
/// one pass over the entries of each (both exception lists are sorted).
bool clockLeq(const Clock &a, const Clock *b, uint32_t skip) {
  if (&a == b)
    return true;
  for (size_t k = 0; k < a.uni.size(); ++k)
    if (a.uni[k] > (b ? b->uni[k] : 0) &&
        !blockKnown(b, static_cast<uint32_t>(k), a.perBlock, a.uni[k], skip))
      return false;
  size_t j = 0;
  for (const auto &[i, v] : a.exc) {
    if (i == skip)
      continue;
    if (!b) {
      if (v > 0)
        return false;
      continue;
    }
    while (j < b->exc.size() && b->exc[j].first < i)
      ++j;
    uint32_t known = b->uni[b->blockOf(i)];
    if (j < b->exc.size() && b->exc[j].first == i)
      known = std::max(known, b->exc[j].second);
    if (v > known)
      return false;
  }
  return true;
}
using Entry = std::pair<uint32_t, uint32_t>;

/// Joins `b` (null: zero) into `acc`, in place; `more` are extra entries
/// sorted by thread (a group's own steps). `tmp` is scratch.
void joinInto(Clock &acc, const Clock *b, const std::vector<Entry> &more,
              std::vector<Entry> &tmp) {
  if (b)
    maxInto(acc.uni.data(), b->uni.data(), acc.uni.size());
  const std::vector<Entry> &other = b ? b->exc : more;
  tmp.clear();
  tmp.reserve(acc.exc.size() + other.size());
  size_t i = 0, j = 0;
  const std::vector<Entry> &a = acc.exc;
  while (i < a.size() || j < other.size()) {
    Entry e;
    if (j == other.size() || (i < a.size() && a[i].first < other[j].first)) {
      e = a[i++];
    } else if (i == a.size() || other[j].first < a[i].first) {
      e = other[j++];
    } else {
      e = {a[i].first, std::max(a[i].second, other[j].second)};
      ++i;
      ++j;
    }
    if (e.second > acc.uni[acc.blockOf(e.first)])
      tmp.push_back(e);
  }
  acc.exc.swap(tmp);
}
} // namespace

struct RaceChecker::ThreadClock {
  // What a sync reads and writes of each member first, in one cache line
  // (a sync of a block touches 32 of these).
  Ref<const Clock> base;
  uint32_t tid = 0;
  /// This thread's own entry; always above base's entry for it.
  uint32_t own = 1;
  /// Its own entry when it last made a checked access (check()).
  uint32_t stamped = 0;
  /// Clocks acquired but not yet joined into `base` (materialize): a
  /// barrier's threads each acquire a peer's clock and then sync, and the
  /// sync joins all of them at once, instead of each acquire copying a
  /// clock of O(ranks) entries.
  std::vector<Snap> deferred;
  /// The clock at its last release fence (what a relaxed store publishes):
  /// `releaseFence` joined with `releaseFenceMore` and the first
  /// `fenceShare` entries of `deferred` (fenceSnap). The share is moved
  /// into `releaseFenceMore` only when `deferred` is cleared (dropDeferred):
  /// a barrier's fence is followed by more acquires or a sync, rarely by a
  /// relaxed store, and copying the list at every fence cost more than the
  /// rest of the fence.
  Snap releaseFence;
  std::vector<Snap> releaseFenceMore;
  uint32_t fenceShare = 0;
  /// What its relaxed loads read since its last acquire fence, folded into
  /// the clock by the next one (kept apart until then: most relaxed loads,
  /// such as a poll's, meet no acquire fence, and a join copies a clock).
  std::vector<Snap> pendingAcquire;
  /// The word and release sequence each of them was read from: a later
  /// read of the same sequence replaces it (its clock covers the earlier).
  std::vector<std::pair<uintptr_t, uint64_t>> pendingFrom;
  /// Clocks already in `base`, so that a poll reading the same word again
  /// costs no comparison of whole clocks (see kAcquireCache).
  Snap acquired[kAcquireCache];
  size_t nextAcquired = 0;

  Snap snap() const { return Snap{base, tid, own}; }
  /// What a release of it publishes: snap(), or only its base when it made
  /// no checked access at its current step and the base covers the steps
  /// before. A barrier's worker releases right after its group's sync, so
  /// its release is then the block's clock, shared by all its threads: a
  /// peer that acquires from several workers, or from workers of many
  /// ranks, joins a few clocks with no per-thread exceptions, instead of one
  /// exception per worker of every rank in every later clock (O(ranks^2)
  /// work per sync at 72 ranks).
  Snap published() const {
    if (stamped != own && own - 1 <= (base ? base->at(tid) : 0))
      return Snap{base, Snap::kNone, 0};
    return snap();
  }
  uint32_t at(uint32_t i) const {
    if (i == tid)
      return own;
    return base ? base->at(i) : 0;
  }
};

struct RaceChecker::Access {
  uint32_t tid;
  uint32_t clock;
  const char *where;
  uint64_t offset; ///< of the whole access, in the buffer
  uint32_t bytes;
  uint8_t mask; ///< the bytes of this granule it touched
  bool write;
  bool atomic;
  /// A signal reset: a plain write, but one that every thread of a group
  /// may make (the stores are the same), so two of them do not race.
  bool reset = false;
};

struct RaceChecker::Shadow {
  RaceRegion region;
  std::vector<std::unique_ptr<std::vector<Access>[]>> pages;
};

RaceChecker::RaceChecker(uint64_t threads, std::vector<RaceRegion> regions,
                         uint32_t perBlock)
    : perBlock(std::max<uint32_t>(perBlock, 1)),
      blocks(static_cast<uint32_t>((threads + this->perBlock - 1) /
                                   this->perBlock)) {
  std::sort(
      regions.begin(), regions.end(),
      [](const RaceRegion &a, const RaceRegion &b) { return a.base < b.base; });
  for (RaceRegion &r : regions) {
    auto s = std::make_unique<Shadow>();
    s->pages.resize((r.bytes + kPageBytes - 1) / kPageBytes);
    s->region = std::move(r);
    shadows.push_back(std::move(s));
  }
  names.resize(threads);
  clocks.resize(threads);
  groupSteps.assign(threads, 0);
  groupBits.assign((threads + 63) / 64, 0);
  blockCounts.assign(blocks, 0);
}

RaceChecker::~RaceChecker() = default;

uint32_t RaceChecker::addThread(const ThreadName &name) {
  if (added + lone >= clocks.size())
    throw std::length_error("race checker: more threads than announced");
  uint32_t tid = added++;
  names[tid] = name;
  clocks[tid].tid = tid;
  return tid;
}

uint32_t RaceChecker::addLoneThread(const ThreadName &name) {
  if (added + lone >= clocks.size())
    throw std::length_error("race checker: more threads than announced");
  uint32_t tid = static_cast<uint32_t>(clocks.size()) - ++lone;
  names[tid] = name;
  clocks[tid].tid = tid;
  return tid;
}

Snap RaceChecker::now(uint32_t tid) const {
  materialize(clocks[tid]);
  return clocks[tid].snap();
}

void RaceChecker::acquireFrom(uint32_t tid, const Snap &s) {
  acquire(clocks[tid], s);
}

bool RaceChecker::happensBefore(const Snap &s, uint32_t tid) const {
  return leq(s, clocks[tid]);
}

bool RaceChecker::leq(const Snap &a, const ThreadClock &t) const {
  materialize(t);
  return snapLeq(a, t.snap());
}

bool RaceChecker::snapLeq(const Snap &a, const Snap &b) const {
  if (a.empty())
    return true;
  // Two snapshots of one thread: its own entry only grows, and strictly at
  // each release and sync, so the one with the lower entry was taken first
  // and its clock is covered by the later one (FastTrack's epoch check: a
  // word that one thread keeps releasing costs no look at whole clocks).
  if (a.tid != Snap::kNone && a.tid == b.tid && a.own < b.own)
    return true;
  // Entries a.tid and b.tid are the only ones that can differ from the
  // clocks; with the same clock (or none) only they need a look.
  if (a.base && a.base != b.base) {
    if (!clockLeq(*a.base, b.base.get(), b.tid))
      return false;
    if (b.tid != Snap::kNone && a.at(b.tid) > b.at(b.tid))
      return false;
  }
  return a.tid == Snap::kNone || a.at(a.tid) <= b.at(a.tid);
}

Ref<Clock> RaceChecker::joinClocks(const Clock *a, const Clock *b) const {
  auto c = makeClock();
  c->setPerBlock(perBlock);
  if (!a) {
    c->uni.assign(blocks, 0);
    if (b)
      *c = *b;
    return c;
  }
  *c = *a;
  if (b) {
    std::vector<std::pair<uint32_t, uint32_t>> tmp;
    joinInto(*c, b, {}, tmp);
  }
  return c;
}

Snap RaceChecker::join(const Snap &a, const Snap &b) const {
  if (snapLeq(a, b))
    return b;
  if (snapLeq(b, a))
    return a;
  Ref<Clock> c = joinClocks(a.base.get(), b.base.get());
  for (const Snap *s : {&a, &b})
    if (s->tid != Snap::kNone)
      raise(*c, s->tid, s->own);
  return Snap{std::move(c), Snap::kNone, 0};
}

// Inlined: it runs for every acquiring poll and for each clock an acquire
// fence takes (one per peer the fence follows).
[[gnu::always_inline]] inline void RaceChecker::acquire(ThreadClock &t,
                                                        const Snap &s) {
  if (s.empty())
    return;
  for (const Snap &seen : t.acquired)
    if (sameSnap(seen, s))
      return;
  t.acquired[t.nextAcquired++ % kAcquireCache] = s;
  // Its own earlier snapshot adds nothing (snapLeq's epoch check).
  if (s.tid == t.tid && (!s.base || s.base == t.base))
    return;
  t.deferred.push_back(s);
  if (t.deferred.size() == kMaxDeferred)
    materialize(t);
}

Ref<Clock> RaceChecker::joinAcquired(const Snap &self,
                                     const std::vector<Snap> &more) const {
  std::vector<const Clock *> &bases = groupBases;
  std::vector<Entry> &extras = groupExtras;
  bases.clear();
  extras.clear();
  uint64_t mark = ++nextMark;
  if (self.base) {
    self.base->mark = mark;
    bases.push_back(self.base.get());
  }
  for (const Snap &s : more) {
    if (s.base && s.base->mark != mark) {
      s.base->mark = mark;
      bases.push_back(s.base.get());
    }
    if (s.tid != Snap::kNone && s.tid != self.tid)
      extras.push_back({s.tid, s.own});
  }
  if (bases.size() == (self.base ? 1u : 0u) && extras.empty())
    return nullptr;
  return gather(bases, extras, ~0u, 0);
}

void RaceChecker::materialize(const ThreadClock &t) const {
  if (t.deferred.empty())
    return;
  ThreadClock &m = const_cast<ThreadClock &>(t);
  if (Ref<Clock> joined = joinAcquired(t.snap(), m.deferred))
    m.base = std::move(joined);
  dropDeferred(m);
}

Ref<Clock> RaceChecker::gather(const std::vector<const Clock *> &bases,
                               const std::vector<Entry> &extras, uint32_t block,
                               uint32_t blockStep) const {
  // The blocks' entries first, then the exceptions above them gathered per
  // thread, so that the cost is the sum of the clocks' sizes, not that
  // times the number of clocks.
  auto j = makeClock();
  j->setPerBlock(perBlock);
  j->uni.assign(blocks, 0);
  for (const Clock *b : bases)
    maxInto(j->uni.data(), b->uni.data(), blocks);
  if (block != ~0u)
    j->uni[block] = std::max(j->uni[block], blockStep);
  // Exceptions are gathered per block: the blocks touched, and in each the
  // threads (a bit per thread), so that the result comes out sorted with
  // no sort of the threads. A barrier over N ranks joins N clocks whose
  // exceptions together name every worker thread of every rank (N x 32 at
  // 32 threads per block), nearly all of which fold into their block's
  // entry: sorting them cost the checker O(N^2 log N) per
  // sync, most of a 72-rank launch.
  std::vector<uint32_t> &touched = groupTouched;
  touched.clear();
  auto note = [&](uint32_t i, uint32_t v) {
    uint32_t k = j->blockOf(i);
    if (v <= j->uni[k])
      return;
    if (groupSteps[i] == 0) {
      groupBits[i / 64] |= uint64_t(1) << (i % 64);
      if (blockCounts[k]++ == 0)
        touched.push_back(k);
    }
    groupSteps[i] = std::max(groupSteps[i], v);
  };
  for (const Clock *b : bases)
    for (const auto &[i, v] : b->exc)
      note(i, v);
  for (const auto &[i, v] : extras)
    note(i, v);
  std::sort(touched.begin(), touched.end());
  uint32_t threads = static_cast<uint32_t>(groupSteps.size());
  // Calls `f(i)` for the touched threads of block k, ascending.
  auto eachTouched = [&](uint32_t k, auto &&f) {
    uint32_t lo = k * perBlock, hi = std::min(lo + perBlock, threads);
    for (uint32_t w = lo / 64; w * 64 < hi; ++w) {
      uint64_t bits = groupBits[w];
      if (w * 64 < lo)
        bits &= ~uint64_t(0) << (lo - w * 64);
      if (hi - w * 64 < 64)
        bits &= (uint64_t(1) << (hi - w * 64)) - 1;
      while (bits) {
        f(w * 64 + static_cast<uint32_t>(__builtin_ctzll(bits)));
        bits &= bits - 1;
      }
    }
  };
  for (uint32_t k : touched) {
    // Every thread of the block is known beyond its entry: the entry rises
    // to the least of them (it then knows the block's past).
    if (blockCounts[k] == perBlock) {
      uint32_t low = ~0u;
      eachTouched(k, [&](uint32_t i) { low = std::min(low, groupSteps[i]); });
      j->uni[k] = std::max(j->uni[k], low);
    }
    eachTouched(k, [&](uint32_t i) {
      if (groupSteps[i] > j->uni[k])
        j->exc.push_back({i, groupSteps[i]});
      groupSteps[i] = 0;
      groupBits[i / 64] &= ~(uint64_t(1) << (i % 64));
    });
    blockCounts[k] = 0;
  }
  return j;
}

Snap RaceChecker::releaseSnap(uint32_t tid) {
  ThreadClock &t = clocks[tid];
  materialize(t);
  Snap s = t.published();
  // What the thread does next is not covered by what it published (mutant
  // 65 forgets this: a race after a release goes unseen).
  if (!TLE_MUTANT(65))
    ++t.own;
  return s;
}

void RaceChecker::syncGroup(const std::vector<uint32_t> &tids) {
  if (tids.empty())
    return;
  // Every member continues from one step above all of theirs (top + 1),
  // so no member has a step in (its own, top]: knowing each member up to
  // top is knowing exactly its past, and their entries agree (a block
  // that syncs whole is one entry, with no exceptions).
  uint32_t top = 0;
  for (uint32_t tid : tids)
    top = std::max(top, clocks[tid].own);
  // The members' clocks and what they acquired since (usually a different
  // peer's each: as many clocks as peers), joined in one pass.
  std::vector<const Clock *> &bases = groupBases;
  std::vector<Entry> &extras = groupExtras;
  bases.clear();
  extras.clear();
  // Each clock once, told by a mark instead of a search of the list: a
  // barrier over N ranks brings N clocks, and the search cost O(N^2).
  uint64_t mark = ++nextMark;
  auto addBase = [&](const Clock *b) {
    if (b && b->mark != mark) {
      b->mark = mark;
      bases.push_back(b);
    }
  };
  // The deferred snapshots stay in their lists until the gather is done
  // (they own the clocks it reads).
  for (uint32_t tid : tids) {
    ThreadClock &t = clocks[tid];
    addBase(t.base.get());
    for (const Snap &s : t.deferred) {
      addBase(s.base.get());
      if (s.tid != Snap::kNone)
        extras.push_back({s.tid, s.own});
    }
  }
  bool wholeBlock = tids.size() == perBlock && tids[0] % perBlock == 0 &&
                    tids.back() == tids[0] + perBlock - 1;
  // A whole block (ids ascending, as a sync releases them): its entry is
  // top, and none of its threads is an exception any more; else each
  // member is known up to top.
  if (!wholeBlock)
    for (uint32_t tid : tids)
      extras.push_back({tid, top});
  Ref<const Clock> shared =
      gather(bases, extras, wholeBlock ? tids[0] / perBlock : ~0u, top);
  for (uint32_t tid : tids) {
    ThreadClock &t = clocks[tid];
    dropDeferred(t);
    t.base = shared;
    t.own = top + 1;
  }
}

void RaceChecker::fence(uint32_t tid, int order) {
  ThreadClock &t = clocks[tid];
  if (acquires(order)) {
    for (const Snap &s : t.pendingAcquire)
      acquire(t, s);
    t.pendingAcquire.clear();
    t.pendingFrom.clear();
  }
  if (releases(order)) {
    // The clock at the fence is its base and what it acquired since, kept
    // apart until a relaxed store publishes it (fenceSnap): a barrier's
    // acq_rel fence after its polls is followed by a sync, not a store,
    // and joining there cost a clock join per thread and barrier.
    t.releaseFence = t.published();
    t.releaseFenceMore.clear();
    t.fenceShare = static_cast<uint32_t>(t.deferred.size());
    if (!TLE_MUTANT(65))
      ++t.own;
  }
}

[[gnu::always_inline]] inline void RaceChecker::dropDeferred(ThreadClock &t) {
  // The share becomes releaseFenceMore (empty since the fence) by a swap,
  // so that neither list gives up its storage.
  if (t.fenceShare) {
    t.releaseFenceMore.swap(t.deferred);
    t.releaseFenceMore.resize(t.fenceShare);
    t.fenceShare = 0;
  }
  t.deferred.clear();
}

[[gnu::always_inline]] inline Snap RaceChecker::fenceSnap(ThreadClock &t) {
  // Most relaxed stores follow a fence that acquired nothing before them.
  if (!t.fenceShare && t.releaseFenceMore.empty())
    return t.releaseFence;
  return joinFence(t);
}

Snap RaceChecker::joinFence(ThreadClock &t) {
  if (t.fenceShare) {
    t.releaseFenceMore.insert(t.releaseFenceMore.end(), t.deferred.begin(),
                              t.deferred.begin() + t.fenceShare);
    t.fenceShare = 0;
  }
  std::vector<Snap> more = std::move(t.releaseFenceMore);
  t.releaseFenceMore.clear();
  if (Ref<Clock> joined = joinAcquired(t.releaseFence, more))
    t.releaseFence.base = std::move(joined);
  return t.releaseFence;
}

// Inlined into access(), its one caller, as storeHalf: the two calls were
// about 4% of the checker's instructions in a 72-rank barrier loop.
[[gnu::always_inline]] inline void RaceChecker::loadHalf(uint32_t tid,
                                                         const WordSync &word,
                                                         uintptr_t key,
                                                         int order) {
  if (word.snap.empty())
    return;
  ThreadClock &t = clocks[tid];
  if (acquires(order)) {
    acquire(t, word.snap);
    return;
  }
  // A word read again (an epoch word polled relaxed, the read half of a
  // barrier's release add, never followed by an acquire fence) in the same
  // release sequence has a clock that covers what was read before.
  for (size_t k = 0; k < t.pendingAcquire.size(); ++k)
    if (t.pendingFrom[k] == std::make_pair(key, word.sequence)) {
      t.pendingAcquire[k] = word.snap;
      return;
    }
  if (t.pendingAcquire.size() == kMaxPending) {
    Snap all;
    for (const Snap &s : t.pendingAcquire)
      all = join(all, s);
    t.pendingAcquire.assign(1, std::move(all));
    // The fold stands for no single sequence.
    t.pendingFrom.assign(1, {0, ~0ull});
  }
  t.pendingAcquire.push_back(word.snap);
  t.pendingFrom.push_back({key, word.sequence});
}

void RaceChecker::take(uint32_t tid, const Snap &s, uintptr_t key,
                       uint64_t sequence, int order) {
  ThreadClock &t = clocks[tid];
  if (acquires(order)) {
    acquire(t, s);
    return;
  }
  if (s.empty())
    return;
  if (t.pendingAcquire.size() == kMaxPending) {
    Snap all;
    for (const Snap &p : t.pendingAcquire)
      all = join(all, p);
    t.pendingAcquire.assign(1, std::move(all));
    t.pendingFrom.assign(1, {0, ~0ull});
  }
  t.pendingAcquire.push_back(s);
  t.pendingFrom.push_back({key, sequence});
}

std::optional<std::string>
RaceChecker::signalAdd(uint32_t tid, const void *word, uint64_t before,
                       uint64_t added, int order, const char *where) {
  if (auto race = check(tid, word, sizeof(uint64_t), /*write=*/true,
                        /*atomic=*/true, where))
    return race;
  ThreadClock &t = clocks[tid];
  appendAdd(word, before, added,
            releases(order) ? releaseSnap(tid) : fenceSnap(t));
  return std::nullopt;
}

void RaceChecker::deliverAdd(const void *word, uint64_t before, uint64_t added,
                             const Snap &s) {
  // Mutant 84 drops the sender's clock: a wait across nodes acquires
  // nothing from the add it waited for.
  appendAdd(word, before, added, TLE_MUTANT(84) ? Snap{} : s);
}

void RaceChecker::appendAdd(const void *word, uint64_t before, uint64_t added,
                            Snap s) {
  SignalHistory &h = signals[word];
  uint64_t last = h.adds.empty() ? h.floor : h.adds.back().first;
  // A word first seen, or changed behind the checker's back: its history
  // starts at what it held (what an earlier launch left there).
  if (h.sequence == 0 || before != last) {
    h.floor = before;
    h.adds.clear();
    h.prefix = Snap{};
    h.joined = 0;
    h.sequence = ++nextSequence;
  }
  h.adds.push_back({before + added, std::move(s)});
}

Snap RaceChecker::signalPrefix(uintptr_t key, uint64_t upTo) const {
  const SignalHistory *found =
      signals.find(reinterpret_cast<const void *>(key));
  if (!found || upTo <= found->floor)
    return Snap{};
  const SignalHistory &h = *found;
  // The first add whose value reaches the target is the last one needed
  // (mutant 80 acquires every add that landed, as the word's clock did).
  // The values only grow between stores, so it is found by bisection.
  size_t need = h.adds.size();
  if (!TLE_MUTANT(80)) {
    auto first = std::partition_point(
        h.adds.begin(), h.adds.end(),
        [upTo](const std::pair<uint64_t, Snap> &a) { return a.first < upTo; });
    if (first != h.adds.end())
      need = static_cast<size_t>(first - h.adds.begin()) + 1;
  }
  // Waits of a pipeline ask for ever larger targets: the join of the
  // prefix is kept and extended, so that a launch's waits on one word cost
  // one join per add in all, not per add per wait.
  if (need < h.joined) {
    Snap all;
    for (size_t k = 0; k < need; ++k)
      all = join(all, h.adds[k].second);
    return all;
  }
  for (; h.joined < need; ++h.joined)
    h.prefix = join(h.prefix, h.adds[h.joined].second);
  return h.prefix;
}

std::optional<std::string> RaceChecker::signalWait(uint32_t tid,
                                                   const void *word,
                                                   uint64_t target, int order,
                                                   const char *where) {
  auto key = reinterpret_cast<uintptr_t>(word);
  const SignalHistory *h = signals.find(word);
  take(tid, signalPrefix(key, target), key, h ? h->sequence : 0, order);
  // The final read, checked after its acquire as access() checks a load.
  return check(tid, word, sizeof(uint64_t), /*write=*/false, /*atomic=*/true,
               where);
}

std::optional<std::string> RaceChecker::signalRead(uint32_t tid,
                                                   const void *word,
                                                   uint64_t value, int order,
                                                   const char *where) {
  // What it read is reached by the add that wrote it: the same prefix.
  return signalWait(tid, word, value, order, where);
}

std::optional<std::string> RaceChecker::signalStore(uint32_t tid,
                                                    const void *word,
                                                    uint64_t value,
                                                    const char *where) {
  // A plain write of the word (mutant 81 skips it: a reset unordered with
  // another thread's read goes unseen).
  if (!TLE_MUTANT(81))
    if (auto race = check(tid, word, sizeof(uint64_t), /*write=*/true,
                          /*atomic=*/false, where, /*reset=*/true))
      return race;
  SignalHistory &h = signals[word];
  h.floor = value;
  h.adds.clear();
  h.prefix = Snap{};
  h.joined = 0;
  h.sequence = ++nextSequence;
  return std::nullopt;
}

[[gnu::always_inline]] inline void
RaceChecker::storeHalf(uint32_t tid, WordSync &word, bool update, int order) {
  ThreadClock &t = clocks[tid];
  Snap mine = releases(order) ? releaseSnap(tid) : fenceSnap(t);
  // An empty clock stands for a word that publishes nothing.
  bool held = !word.snap.empty();
  if (update && held) {
    // A read-modify-write continues the release sequence of the store it
    // read: a load that reads it synchronizes with both.
    word.snap = join(word.snap, mine);
    return;
  }
  if (mine.empty()) {
    word.snap = Snap{};
    return;
  }
  // A store starts a new release sequence, but one whose clock covers the
  // last one when both are this thread's snapshots (its clock only grows):
  // an epoch word its group's rank 0 stores every round. A relaxed read of
  // it then replaces the last one's in pendingAcquire instead of adding one.
  if (held && word.snap.tid == mine.tid && mine.tid != Snap::kNone &&
      mine.own >= word.snap.own) {
    word.snap = std::move(mine);
    return;
  }
  word.snap = std::move(mine);
  word.sequence = ++nextSequence;
}

void RaceChecker::deliver(const void *addr, const Snap &s) {
  WordSync *word = syncs.find(addr);
  if (word && !word->snap.empty()) {
    word->snap = join(word->snap, s);
  } else if (!s.empty()) {
    WordSync &w = syncs[addr];
    w.snap = s;
    w.sequence = ++nextSequence;
  }
}

std::optional<std::string> RaceChecker::access(uint32_t tid, const void *addr,
                                               uint64_t bytes, int kind,
                                               int order, const char *where) {
  auto key = reinterpret_cast<uintptr_t>(addr);
  switch (kind) {
  case kAccessLoad:
    return check(tid, addr, bytes, /*write=*/false, /*atomic=*/false, where);
  case kAccessStore:
    return check(tid, addr, bytes, /*write=*/true, /*atomic=*/false, where);
  case kAccessFence:
    fence(tid, order);
    return std::nullopt;
  case kAccessAtomicLoad:
  case kAccessAtomicStore:
  case kAccessAtomicUpdate:
    break;
  default:
    return std::nullopt;
  }
  // One lookup of the word for both halves and the check (the reference
  // lasts: nothing in between adds a word), and the word's shadow, if any,
  // remembered there: the regions never change, and a barrier's flags lie
  // in none, which a search of the regions found anew for every poll.
  WordSync &word = syncs[addr];
  if (!word.shadowKnown) {
    uint64_t offset = 0;
    word.shadow = find(addr, offset);
    word.shadowKnown = true;
  }
  // The acquire half orders what the access itself is checked against; the
  // release half must cover the access, so it comes after the check.
  if (kind != kAccessAtomicStore)
    loadHalf(tid, word, key,
             kind == kAccessAtomicUpdate && !acquires(order)
                 ? static_cast<int>(kOrderRelaxed)
                 : order);
  // No named result: returning one moved it on every access, race or not.
  if (word.shadow)
    if (std::optional<std::string> race = checkIn(
            *word.shadow,
            key - reinterpret_cast<uintptr_t>(word.shadow->region.base), tid,
            bytes, kind != kAccessAtomicLoad, true, where, /*reset=*/false))
      return race;
  if (kind != kAccessAtomicLoad)
    storeHalf(tid, word, kind == kAccessAtomicUpdate, order);
  return std::nullopt;
}

const RaceChecker::Shadow *RaceChecker::find(const void *addr,
                                             uint64_t &offset) const {
  auto a = reinterpret_cast<uintptr_t>(addr);
  auto it =
      std::upper_bound(shadows.begin(), shadows.end(), a,
                       [](uintptr_t v, const std::unique_ptr<Shadow> &s) {
                         return v < reinterpret_cast<uintptr_t>(s->region.base);
                       });
  if (it == shadows.begin())
    return nullptr;
  const Shadow &s = **(it - 1);
  offset = a - reinterpret_cast<uintptr_t>(s.region.base);
  return offset < s.region.bytes ? &s : nullptr;
}

std::string RaceChecker::rankName(int32_t rank) const {
  std::string out = "rank " + std::to_string(rank);
  if (ranksPerNode > 0)
    out += " (node " + std::to_string(rank / ranksPerNode) + ", local " +
           std::to_string(rank % ranksPerNode) + ")";
  return out;
}

std::string RaceChecker::describe(const void *addr) const {
  uint64_t offset = 0;
  const Shadow *s = find(addr, offset);
  if (!s)
    return "";
  if (s->region.signalWords)
    return "signal word " + std::to_string(offset / sizeof(uint64_t)) +
           " (rank " + std::to_string(s->region.rank) + "'s)";
  return "buffer '" + s->region.buffer + "' (rank " +
         std::to_string(s->region.rank) + "'s copy) byte " +
         std::to_string(offset);
}

namespace {
/// Whether a later access `now`, ordered after `before` and covering its
/// bytes, makes `before` redundant: every future access that would race
/// with `before` then races with `now` too.
bool supersedes(bool nowWrite, bool nowAtomic, bool beforeWrite,
                bool beforeAtomic) {
  if (!nowAtomic)
    return nowWrite || !beforeWrite;
  return beforeAtomic && (nowWrite || !beforeWrite);
}
} // namespace

std::optional<std::string> RaceChecker::check(uint32_t tid, const void *addr,
                                              uint64_t bytes, bool write,
                                              bool atomic, const char *where,
                                              bool reset) {
  uint64_t offset = 0;
  const Shadow *found = find(addr, offset);
  if (!found)
    return std::nullopt;
  return checkIn(*found, offset, tid, bytes, write, atomic, where, reset);
}

std::optional<std::string> RaceChecker::checkIn(const Shadow &region,
                                                uint64_t offset, uint32_t tid,
                                                uint64_t bytes, bool write,
                                                bool atomic, const char *where,
                                                bool reset) {
  if (bytes == 0)
    return std::nullopt;
  // The shadow's pages are the checker's, not the region's: const only in
  // the regions' list.
  Shadow &s = const_cast<Shadow &>(region);
  uint64_t end = std::min(s.region.bytes, offset + bytes);
  ThreadClock &t = clocks[tid];
  materialize(t);
  t.stamped = t.own;
  Access now{tid, t.own, where,  offset, static_cast<uint32_t>(bytes),
             0,   write, atomic, reset};
  for (uint64_t g = offset / kGranule; g * kGranule < end; ++g) {
    uint64_t lo = std::max(offset, g * kGranule);
    uint64_t hi = std::min(end, (g + 1) * kGranule);
    now.mask =
        static_cast<uint8_t>(((1u << (hi - lo)) - 1) << (lo - g * kGranule));
    auto &page = s.pages[g / kGranulesPerPage];
    if (!page)
      page = std::make_unique<std::vector<Access>[]>(kGranulesPerPage);
    std::vector<Access> &history = page[g % kGranulesPerPage];
    size_t kept = 0;
    for (size_t k = 0; k < history.size(); ++k) {
      const Access &before = history[k];
      bool overlaps = (before.mask & now.mask) != 0;
      bool ordered = before.tid == tid || before.clock <= t.at(before.tid);
      if (overlaps && !ordered && (before.write || write) &&
          !(before.atomic && atomic) && !(before.reset && reset))
        return report(s, before, now);
      bool covered = (before.mask & ~now.mask) == 0;
      if (!(overlaps && ordered && covered &&
            supersedes(write, atomic, before.write, before.atomic)))
        history[kept++] = before;
    }
    history.resize(kept);
    history.push_back(now);
  }
  return std::nullopt;
}

std::string RaceChecker::report(const Shadow &s, const Access &before,
                                const Access &now) const {
  auto describe = [&](const Access &a) {
    const ThreadName &n = names[a.tid];
    char head[200];
    std::snprintf(head, sizeof head,
                  "%s%s by %s block %u thread %u, %u bytes at offset "
                  "%llu, ",
                  a.atomic ? "atomic " : "", a.write ? "write" : "read",
                  rankName(n.rank).c_str(), n.block, n.thread, a.bytes,
                  static_cast<unsigned long long>(a.offset));
    return std::string(head) +
           (a.where ? "at " + std::string(a.where) : "(no source location)");
  };
  uint64_t first = std::max(before.offset, now.offset);
  std::string out = s.region.signalWords
                        ? "data race on signal word " +
                              std::to_string(first / sizeof(uint64_t)) +
                              " of " + rankName(s.region.rank) + ":"
                        : "data race on symmetric buffer '" + s.region.buffer +
                              "' (" + rankName(s.region.rank) +
                              "'s copy) at byte offset " +
                              std::to_string(first) + ":";
  out += "\n  " + describe(before);
  out += "\n  " + describe(now);
  out += "\n  nothing orders them: the first must be released (a barrier "
         "arrive or sync with order release, acq_rel or seq_cst, or a release "
         "store) and acquired on the second one's side (the barrier's wait "
         "with acquire, acq_rel or seq_cst, or an acquire load of what was "
         "stored), or a block sync must lie between them in one block";
  return out;
}

std::shared_ptr<Check> makeRaceCheck(const CheckContext &context) {
  return context.race;
}

} // namespace tle::emu::detail
