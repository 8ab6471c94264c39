//===- Check.h - Communicator checks and the error record -------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// How the device library validates what a call is given and reports what it
// rejects. Every call loads what it needs of the communicator and checks it
// in one combined test before it touches any barrier word; a failure claims
// the launch's error record (tle/detail/DevComm.h), fills it, and ends the
// launch (a trap on GPUs). docs/device-library.md, "Errors and deadlines",
// is the long form.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_IMPL_CHECK_H
#define TLE_IMPL_CHECK_H

#include "tle/impl/Platform.h"
#include "tle/rules.h"

#include <stddef.h>

#define TLE_UNLIKELY(x) __builtin_expect(!!(x), 0)

namespace tle::impl {

constexpr uint32_t kWarpSize = 32;

/// The entry point a failure report names, and the call site its caller
/// passed (a site id, 0 when unknown: docs/design.md, "Call sites"). Every
/// layer of the library takes it by value down to the cold failure paths,
/// which alone read `site`: on the success path it is an immediate that
/// nothing uses, so it costs no instruction (the session-loop-sites
/// exact-PTX test).
struct FnAt {
  abi::Fn fn;
  uint32_t site;
  TLE_DEV_INLINE FnAt(abi::Fn f, uint32_t s = 0) : fn(f), site(s) {}
  TLE_DEV_INLINE operator abi::Fn() const { return fn; }
};

/// What a report says besides where it happened.
struct Failure {
  uint32_t code;
  FnAt fn;
  uint32_t slot = 0;
  uint32_t epoch = 0;
  PeerMask missing = {};
  uint32_t aux = 0;
  uint64_t elapsedNs = 0;
  uint32_t argument = 0;
  uint64_t value = 0;
  uint64_t limit = 0;
  uint64_t seen = 0;
  uint64_t wanted = 0;
  uint32_t context = 0; ///< a signal's or counter's network context
};

/// The first failure of a launch: claim the record (CAS 0 -> 1), fill it,
/// publish it (release store of state 2). False when the record was taken.
TLE_DEV_INLINE bool claimRecord(ErrorRecord *rec, int32_t rank,
                                uint32_t nBarriers, const Failure &f) {
  if (!rec || !casRelaxedSys(&rec->state, 0, 1))
    return false;
  rec->code = f.code;
  rec->rank = rank;
  rec->slot = f.slot;
  rec->epoch = f.epoch;
  rec->missing = f.missing;
  rec->block = static_cast<int32_t>(blockRank());
  rec->thread = static_cast<int32_t>(threadRank());
  rec->nBarriers = nBarriers;
  rec->aux = f.aux;
  rec->elapsedNs = f.elapsedNs;
  rec->context = f.context;
  rec->function = static_cast<uint32_t>(f.fn.fn);
  rec->site = f.fn.site;
  rec->argument = f.argument;
  rec->value = f.value;
  rec->limit = f.limit;
  rec->seen = f.seen;
  rec->wanted = f.wanted;
  storeReleaseSys(&rec->state, 2);
  return true;
}

/// A wait that gives up because the watchdog saw a peer die: the
/// watchdog's record says who died, not where this rank waited, so the
/// first such wait that knows its call site adds it (a compare-and-swap
/// from 0: a record that names a site keeps it).
TLE_DEV_INLINE void addWaitSite(ErrorRecord *rec, FnAt fn) {
  if (rec && fn.site != 0)
    casRelaxedSys(&rec->site, 0, fn.site);
}

/// Claims the record, pushes it out of the GPU, ends the launch. Later
/// failures find the record taken and only abort, but not before the
/// record is complete: often every lane of a warp fails at once, and a
/// losing lane's trap would end the launch while the winner writes.
constexpr uint32_t kRecordWaitPolls = 1u << 20;

[[noreturn]] TLE_DEV_COLD void failWithRecord(ErrorRecord *rec, int32_t rank,
                                              uint32_t nBarriers,
                                              const Failure &f) {
  if (claimRecord(rec, rank, nBarriers, f)) {
    // A trap tears the context down; make the record reach host memory
    // first (the __threadfence_system() of CUDA C++).
    if (!TLE_MUTANT(9))
      fenceSeqCstSys();
  } else if (rec) {
    for (uint32_t i = 0;
         i < kRecordWaitPolls && loadAcquireSys(&rec->state) != 2; ++i) {
    }
  }
  abortLaunch();
}

/// The pointer is not a communicator (null, foreign or of another layout
/// version): nothing in it can be trusted, not even its error record. The
/// launch fails with no record; the host reports it as a bad communicator.
[[noreturn]] TLE_DEV_COLD void failNoRecord() { abortLaunch(); }

[[noreturn]] TLE_DEV_COLD void failComm(const DevComm *dc, const Failure &f) {
  failWithRecord(loadConst(&dc->error), loadConst(&dc->rank),
                 loadConst(&dc->nBarriers), f);
}

/// The fields of a checked communicator that every call needs.
struct Comm {
  const DevComm *dc;
  uint32_t rank;
  uint32_t size;
  uint32_t nBarriers;
  uint32_t stride;         ///< inboxStride
  uint32_t *epochs;        ///< this rank's epochs[]
  uint32_t entry;          ///< the calling lane's entry (see entryRank)
  uint32_t *outEntry;      ///< routes[entry].out
  const uint32_t *inEntry; ///< routes[entry].in
  TraceRing *trace;        ///< DevComm::trace (Trace.h), usually null
};

static_assert(offsetof(DevComm, version) == 4 &&
                  offsetof(DevComm, size) == 12 &&
                  offsetof(DevComm, rank) == 8 &&
                  offsetof(DevComm, nBarriers) == 16 &&
                  offsetof(DevComm, inboxStride) == 20 && alignof(DevComm) >= 8,
              "loadComm loads DevComm's leading fields in pairs");

/// The index into DevComm::routes or SymMem::ptrs for entry or rank j: j
/// itself for every j < kMaxRanks, and inside the table for any j, which is
/// what a load the compiler speculates needs (see DevComm::routes).
TLE_DEV_INLINE uint32_t routeIndex(uint32_t j) { return j & (kMaxRanks - 1); }

/// Read by loadComm in place of a null communicator, so that no branch
/// comes before its loads (a compiler hoists unconditional loads out of a
/// loop of barriers, and not loads behind a null test); its magic is 0, so
/// the check fails and failCheck reports the null pointer.
TLE_DEV_GLOBAL_CONST DevComm kNullDevComm = {};

/// Classifies and reports what loadComm's one combined check rejected.
[[noreturn]] TLE_DEV_COLD void failCheck(const DevComm *dc, uint32_t index,
                                         bool checkIndex, FnAt fn) {
  if (!dc || loadConst(&dc->magic) != kDevCommMagic ||
      loadConst(&dc->version) != kDevCommVersion)
    failNoRecord();
  uint32_t size = static_cast<uint32_t>(loadConst(&dc->size));
  uint32_t rank = static_cast<uint32_t>(loadConst(&dc->rank));
  Failure f{kDevErrBadComm, fn};
  f.aux = size;
  if (size - 1 >= kMaxRanks || rank >= size)
    failComm(dc, f);
  if (checkIndex && index >= loadConst(&dc->nBarriers)) {
    f.code = kDevErrIndexOutOfRange;
    f.slot = index;
    f.aux = 0;
    // A barrier without an index uses the program id: the grid's size is
    // the n_barriers its report tells the user to pass.
    f.limit = gridBlocks();
    failComm(dc, f);
  }
  // A misaligned epoch or flag pointer.
  failComm(dc, f);
}

/// Loads and checks what a call needs from the communicator, including the
/// calling lane's flag pointers for `entry`. Every load is issued before the
/// one combined check, so together they cost one load latency: an acquire
/// poll invalidates L1, so each level of dependent loads is an L2 round trip
/// in front of the signal (measured on H200: the arrive's pointer loaded
/// after the check made arrive alone take about 1 µs). The loads of a
/// communicator that then fails the check read only its own struct.
TLE_DEV_INLINE Comm loadComm(const void *comm, uint32_t index, bool checkIndex,
                             uint32_t entry, FnAt fn) {
  const DevComm *dc = static_cast<const DevComm *>(comm);
  const DevComm *src = dc ? dc : &kNullDevComm;
  uint32_t magic, version;
  Comm c;
  c.dc = dc;
  // Lane j's own route is loaded at once, before `size` is known (see
  // DevComm::routes); group ranks past the first warp never signal, and
  // load some lane's route.
  c.entry = entry % kRouteLanes;
  loadConstPair(&src->magic, magic, version);
  loadConstPair(&src->rank, c.rank, c.size);
  loadConstPair(&src->nBarriers, c.nBarriers, c.stride);
  c.epochs = loadConst(&src->epochs);
  c.outEntry = loadConst(&src->routes[routeIndex(c.entry)].out);
  c.inEntry = loadConst(&src->routes[routeIndex(c.entry)].in);
  // Loaded with the rest, so that it costs no latency of its own and a
  // loop of barriers hoists it too; only group rank 0 tests it (Trace.h).
  c.trace = loadConst(&src->trace);
  // The pointers' alignment is checked too (a misaligned flag or epoch
  // pointer means a corrupt communicator), which also makes the branch
  // depend on their loads: otherwise compilers sink the loads past it and
  // they cost a second round trip.
  uintptr_t misaligned = (reinterpret_cast<uintptr_t>(c.epochs) |
                          reinterpret_cast<uintptr_t>(c.outEntry) |
                          reinterpret_cast<uintptr_t>(c.inEntry)) &
                         (sizeof(uint32_t) - 1);
  bool bad = (magic != kDevCommMagic) | (version != kDevCommVersion) |
             (c.size - 1 >= kMaxRanks) | (c.rank >= c.size) |
             (checkIndex & (index >= c.nBarriers)) | (misaligned != 0);
  if (TLE_UNLIKELY(bad))
    failCheck(dc, index, checkIndex, fn);
  return c;
}

/// A checked communicator, for calls that touch no slot.
TLE_DEV_INLINE Comm checkComm(const void *comm, FnAt fn) {
  return loadComm(comm, 0, false, 0, fn);
}

/// checkComm, and the slot must exist: an index out of range is reported
/// before any inbox or epoch word is touched. `entry`: the flags the
/// calling lane will use first (its rank in the group).
TLE_DEV_INLINE Comm checkSlot(const void *comm, uint32_t index, uint32_t entry,
                              FnAt fn) {
  return loadComm(comm, index, true, entry, fn);
}

/// Reports an argument out of its range (`value`; `limit` the bound it
/// broke, 0 if none) on a call that names slot `index`.
[[noreturn]] TLE_DEV_COLD void failArgument(const void *comm, uint32_t index,
                                            FnAt fn, BadArgument arg,
                                            int64_t value, uint64_t limit = 0) {
  Failure f{kDevErrBadArgument, fn};
  f.slot = index;
  f.argument = arg;
  f.value = static_cast<uint64_t>(value);
  f.limit = limit;
  failComm(checkComm(comm, fn).dc, f);
}

TLE_DEV_INLINE void checkOrder(const void *comm, uint32_t index, int order,
                               FnAt fn) {
  if (TLE_UNLIKELY(static_cast<uint32_t>(order) > kOrderSeqCst))
    failArgument(comm, index, fn, kArgOrder, order, kOrderSeqCst);
}

/// The memory-order table of docs/abi.md: which halves of a barrier order
/// memory. relaxed: neither; acquire: the wait; release: the arrive;
/// acq_rel and seq_cst: both (seq_cst adds a fence.sc before the signal).
/// The halves are rules.def's, as the compares tle/rules.h derives from it.
TLE_DEV_INLINE bool releases(int order) {
  return TLE_MUTANT(2) ? order == kOrderRelease
                       : order >= rules::kFirstReleasing;
}
TLE_DEV_INLINE bool acquires(int order) {
  return order == rules::kAcquireOnly ||
         (!TLE_MUTANT(1) && order >= rules::kFirstBoth);
}
/// Wrap-safe epoch comparison: `value` is at or past `target`.
TLE_DEV_INLINE bool reached(uint32_t value, uint32_t target) {
  if (TLE_MUTANT(26))
    return value >= target;
  return static_cast<int32_t>(value - target) >= (TLE_MUTANT(25) ? -1 : 0);
}
TLE_DEV_INLINE uint32_t minU(uint32_t a, uint32_t b) { return a < b ? a : b; }

} // namespace tle::impl

#endif // TLE_IMPL_CHECK_H
