//===- PlatformHost.h - The platform layer in the CPU emulator --*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The platform layer (see Platform.h) for the host build that runs inside
// the CPU emulator. Thread ids, group syncs, time, yielding, aborting and
// block scratch come from the emulator through EmuHooks.h; memory ordering
// comes from the compiler's __atomic builtins, each also told to the
// emulator's race checker (tleEmuAccess). Scopes collapse: on one host
// "system" and "gpu" are the same coherence domain, so a sys-scope acquire
// and a gpu-scope acquire are both a C++ acquire.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_IMPL_PLATFORMHOST_H
#define TLE_IMPL_PLATFORMHOST_H

#define TLE_DEV_INLINE inline
#define TLE_DEV_COLD [[gnu::cold, gnu::noinline]] static
#define TLE_DEV_GLOBAL_CONST static const

/// The C++ memory order of a platform operation: `o`, or relaxed for all of
/// them in mutant 3 (docs/testing.md), where the fences order nothing either.
#define TLE_HOST_ORDER(o) (TLE_MUTANT(3) ? __ATOMIC_RELAXED : (o))

#include <stdio.h>

namespace tle::impl {

inline uint32_t threadRank() { return tleEmuThreadRank(); }
inline uint32_t blockThreads() { return tleEmuBlockThreads(); }
inline uint32_t blockRank() {
  return tleEmuBlockId(0) +
         tleEmuGridDim(0) *
             (tleEmuBlockId(1) + tleEmuGridDim(1) * tleEmuBlockId(2));
}
inline uint32_t gridBlocks() {
  return tleEmuGridDim(0) * tleEmuGridDim(1) * tleEmuGridDim(2);
}
inline void syncWarp() { tleEmuSyncWarp(); }
inline void syncBlock() { tleEmuSyncBlock(); }
inline void syncBlockTwice() { tleEmuSyncBlockTwice(); }
/// FlagCX's LANES and TILE_SPAN syncs (EntryOneSided.h): the emulator syncs
/// whole warps and blocks only, so a mask of the whole warp and a span of
/// the whole block (or of one warp) run, and a strict subset ends the
/// launch (docs/emulator.md).
inline void syncLanes(uint32_t mask) {
  uint32_t base = threadRank() & ~31u, n = blockThreads() - base;
  uint32_t all = n >= 32 ? ~0u : (1u << n) - 1u;
  if ((mask & all) != all)
    tleEmuAbortLaunch();
  tleEmuSyncWarp();
}
inline void syncTiles(uint32_t t0, uint32_t nTiles, uint32_t) {
  if (t0 == 0 && nTiles * 32 >= blockThreads())
    tleEmuSyncBlock();
  else if (nTiles == 1)
    tleEmuSyncWarp();
  else
    tleEmuAbortLaunch();
}

/// Block scratch ids (tleEmuBlockScratch) of the reductions below; 0 is
/// blockScratch()'s.
constexpr uint32_t kBlockMaxScratch = 1, kWarpMaxScratch = 2;

/// The group's largest `v`, through a scratch word between three syncs
/// (fibers switch only in the hooks, so plain accesses are race-free): the
/// first orders the previous reduction's reads before the reset, the second
/// the reset before the contributions, the third those before the reads.
inline uint32_t reduceMax(uint32_t *acc, uint32_t v, bool leader,
                          void (*sync)()) {
  sync();
  if (leader)
    *acc = 0;
  sync();
  if (v > *acc)
    *acc = v;
  sync();
  return *acc;
}
inline uint32_t syncBlockMax(uint32_t v) {
  return reduceMax(tleEmuBlockScratch(kBlockMaxScratch, 1), v,
                   threadRank() == 0, tleEmuSyncBlock);
}
inline uint32_t syncWarpMax(uint32_t v) {
  uint32_t *words =
      tleEmuBlockScratch(kWarpMaxScratch, (blockThreads() + 31) / 32);
  return reduceMax(words + threadRank() / 32, v, threadRank() % 32 == 0,
                   tleEmuSyncWarp);
}

/// Counts one device-memory operation for tle::emu::deviceOpCounts (the
/// emulator measures what a barrier costs; GPUs count nothing). Inside
/// libtle, while a launch runs on this OS thread, into that launch's table
/// (emu::detail::opTally, added to the process's counts when the launch
/// ends): a call of the hook and a locked add per communicator load were a
/// tenth of a 4-rank barrier launch. Elsewhere (C++ kernels compiled
/// against the headers, CPU ranks off the emulator), the hook.
inline void count(DeviceOp kind) {
#ifdef TLE_HOST_IN_LIBTLE
  if (uint64_t *tally = emu::detail::opTally) {
    ++tally[static_cast<int>(kind)];
    return;
  }
#endif
  tleEmuCountOp(static_cast<int32_t>(kind));
}

inline uint32_t loadConst(const uint32_t *p) {
  count(DeviceOp::CommLoad);
  return *p;
}
inline int32_t loadConst(const int32_t *p) {
  count(DeviceOp::CommLoad);
  return *p;
}
inline uint64_t loadConst(const uint64_t *p) {
  count(DeviceOp::CommLoad);
  return *p;
}
inline void loadConstPair(const void *p, uint32_t &lo, uint32_t &hi) {
  count(DeviceOp::CommLoad);
  lo = static_cast<const uint32_t *>(p)[0];
  hi = static_cast<const uint32_t *>(p)[1];
}
template <typename T> inline T *loadConst(T *const *p) {
  count(DeviceOp::CommLoad);
  return *p;
}

/// Tells the emulator's race checker about one of the library's atomics or
/// fences, so that the barrier orders the kernel's memory accesses exactly
/// as its memory order says (docs/emulator.md, "Race check"). The words are
/// the library's own, never a symmetric buffer, so only the order counts;
/// mutant 3 relaxes it as TLE_HOST_ORDER relaxes the atomic.
inline void noteAtomic(const void *p, AccessKind kind, MemoryOrder order) {
  tleEmuAccess(p, sizeof(uint32_t), kind, TLE_MUTANT(3) ? kOrderRelaxed : order,
               nullptr);
}

inline uint32_t loadAcquireSys(const uint32_t *p) {
  count(DeviceOp::Poll);
  uint32_t v = __atomic_load_n(p, TLE_HOST_ORDER(__ATOMIC_ACQUIRE));
  noteAtomic(p, kAccessAtomicLoad, kOrderAcquire);
  return v;
}
inline uint32_t loadRelaxedSys(const uint32_t *p) {
  count(DeviceOp::Poll);
  uint32_t v = __atomic_load_n(p, __ATOMIC_RELAXED);
  noteAtomic(p, kAccessAtomicLoad, kOrderRelaxed);
  return v;
}
inline void storeReleaseSys(uint32_t *p, uint32_t v) {
  count(DeviceOp::Signal);
  __atomic_store_n(p, v, TLE_HOST_ORDER(__ATOMIC_RELEASE));
  noteAtomic(p, kAccessAtomicStore, kOrderRelease);
}
inline void storeRelaxedSys(uint32_t *p, uint32_t v) {
  count(DeviceOp::Signal);
  __atomic_store_n(p, v, __ATOMIC_RELAXED);
  noteAtomic(p, kAccessAtomicStore, kOrderRelaxed);
}
inline void addReleaseSys(uint32_t *p, uint32_t v) {
  count(DeviceOp::Signal);
  __atomic_fetch_add(p, v, TLE_HOST_ORDER(__ATOMIC_RELEASE));
  noteAtomic(p, kAccessAtomicUpdate, kOrderRelease);
}
inline void addRelaxedSys(uint32_t *p, uint32_t v) {
  count(DeviceOp::Signal);
  __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
  noteAtomic(p, kAccessAtomicUpdate, kOrderRelaxed);
}
/// The same for a signal word (SignalOps.h): 64 bits, and no mutant, as
/// the signal's own atomics have none.
inline void noteSignalWord(const uint64_t *p, AccessKind kind,
                           MemoryOrder order) {
  tleEmuAccess(p, sizeof(uint64_t), kind, order, nullptr);
}
/// What a signal word's value says to the race checker (tleEmuSignal): a
/// wait's target, a read's value, a reset. Its adds report themselves
/// (addReleaseSys below).
inline void noteSignal(const uint64_t *word, SignalEvent event, uint64_t value,
                       uint64_t operand, int order) {
  tleEmuSignal(word, event, value, operand, order);
}

inline uint64_t loadAcquireSys(const uint64_t *p) {
  count(DeviceOp::Poll);
  uint64_t v = __atomic_load_n(p, __ATOMIC_ACQUIRE);
  noteSignalWord(p, kAccessAtomicLoad, kOrderAcquire);
  return v;
}
inline uint64_t loadRelaxedSys(const uint64_t *p) {
  count(DeviceOp::Poll);
  uint64_t v = __atomic_load_n(p, __ATOMIC_RELAXED);
  noteSignalWord(p, kAccessAtomicLoad, kOrderRelaxed);
  return v;
}
inline void storeRelaxedSys(uint64_t *p, uint64_t v) {
  count(DeviceOp::Signal);
  __atomic_store_n(p, v, __ATOMIC_RELAXED);
  noteSignalWord(p, kAccessAtomicStore, kOrderRelaxed);
}
/// Every 64-bit release add is on a signal word or a counter (signalAdd,
/// a put's actions): the checker keeps its value in the word's history
/// instead of joining it into a release sequence, so that a wait acquires
/// only the adds up to its target.
inline void addReleaseSys(uint64_t *p, uint64_t v) {
  count(DeviceOp::Signal);
  uint64_t before = __atomic_fetch_add(p, v, __ATOMIC_RELEASE);
  noteSignal(p, kSignalAdd, before, v, kOrderRelease);
}
/// A signal word's or a counter's reset: relaxed, and to the checker a
/// store that starts the word's history again and a plain write of it,
/// which a read by another thread with nothing between races with (mutant
/// 83 hides it from the checker).
inline void storeSignalSys(uint64_t *p, uint64_t v) {
  count(DeviceOp::Signal);
  __atomic_store_n(p, v, __ATOMIC_RELAXED);
  if (!TLE_MUTANT(83))
    noteSignal(p, kSignalStore, v, 0, kOrderRelaxed);
}
inline void fenceAcqRelSys() {
  count(DeviceOp::Fence);
  __atomic_thread_fence(TLE_HOST_ORDER(__ATOMIC_ACQ_REL));
  noteAtomic(nullptr, kAccessFence, kOrderAcqRel);
}
inline void fenceSeqCstSys() {
  count(DeviceOp::Fence);
  __atomic_thread_fence(TLE_HOST_ORDER(__ATOMIC_SEQ_CST));
  noteAtomic(nullptr, kAccessFence, kOrderSeqCst);
}
/// The share of thread `rank` of `size` of a cooperative copy of `bytes`
/// (OneSided.h): one contiguous slice per thread, so that the race checker
/// sees one load and one store per thread, not one per byte.
inline void copyBytes(void *dst, const void *src, uint64_t bytes, uint32_t rank,
                      uint32_t size) {
  uint64_t slice = (bytes + size - 1) / size;
  uint64_t lo = rank * slice, hi = lo + slice < bytes ? lo + slice : bytes;
  if (lo >= hi)
    return;
  const char *from = static_cast<const char *>(src) + lo;
  char *to = static_cast<char *>(dst) + lo;
  tleEmuAccess(from, hi - lo, kAccessLoad, kOrderRelaxed, nullptr);
  __builtin_memcpy(to, from, hi - lo);
  tleEmuAccess(to, hi - lo, kAccessStore, kOrderRelaxed, nullptr);
}
inline uint32_t loadRelaxedGpu(const uint32_t *p) {
  count(DeviceOp::EpochLoad);
  uint32_t v = __atomic_load_n(p, __ATOMIC_RELAXED);
  noteAtomic(p, kAccessAtomicLoad, kOrderRelaxed);
  return v;
}
inline void storeRelaxedGpu(uint32_t *p, uint32_t v) {
  count(DeviceOp::EpochStore);
  __atomic_store_n(p, v, __ATOMIC_RELAXED);
  noteAtomic(p, kAccessAtomicStore, kOrderRelaxed);
}
inline uint32_t fetchAddAcqRelGpu(uint32_t *p, uint32_t v) {
  count(DeviceOp::Rmw);
  uint32_t old = __atomic_fetch_add(p, v, TLE_HOST_ORDER(__ATOMIC_ACQ_REL));
  noteAtomic(p, kAccessAtomicUpdate, kOrderAcqRel);
  return old;
}
inline bool casRelaxedSys(uint32_t *p, uint32_t expected, uint32_t desired) {
  count(DeviceOp::Rmw);
  bool won = __atomic_compare_exchange_n(p, &expected, desired, /*weak=*/false,
                                         __ATOMIC_RELAXED, __ATOMIC_RELAXED);
  noteAtomic(p, won ? kAccessAtomicUpdate : kAccessAtomicLoad, kOrderRelaxed);
  return won;
}

/// The fault word (ErrorRecord::abort): not a device-memory operation of
/// the barrier's, so not counted.
inline uint32_t loadFaultWord(const uint32_t *p) {
  return __atomic_load_n(p, __ATOMIC_RELAXED);
}
inline void storeFaultWord(uint32_t *p, uint32_t v) {
  __atomic_store_n(p, v, __ATOMIC_RELAXED);
}

/// A flag read for a report's missing peers (missingPeers), on every failed
/// poll here, where the scheduler needs the wait's description: not a
/// synchronization, so the race checker is not told (a fence after it
/// would otherwise acquire every peer's flag the report looked at, and the
/// checker's cost per failed poll would grow with the ranks), and not
/// counted.
inline uint32_t peekFlagSys(const uint32_t *p) {
  return __atomic_load_n(p, __ATOMIC_RELAXED);
}

inline uint64_t nowNs() { return tleEmuNowNs(); }
/// Every failed poll already yields to the emulator's scheduler, which
/// costs far more than reading its clock or the fault word.
constexpr uint32_t kPollsPerClockRead = 1;

constexpr bool kPlatformYields = true;
inline void spinWait(const WaitInfo &info) { tleEmuSpinWait(&info); }
inline void pollHint(const void *addr, uint64_t value) {
  tleEmuSpinHint(addr, value);
}

[[noreturn]] inline void abortLaunch() { tleEmuAbortLaunch(); }

inline uint32_t *blockScratch() { return tleEmuBlockScratch(0, 1); }

inline uint64_t fetchAddRelaxed(uint64_t *p, uint64_t v) {
  return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}

inline void emuBarrierEvent(const void *comm, int kind, int coop, uint32_t slot,
                            int order, int phase) {
  tleEmuBarrierEvent(comm, kind, coop, slot, order, phase);
}

/// The site id of a typed API call (docs/design.md, "Call sites"): its
/// "file:line", registered in the process's table (tleSiteRegisterText,
/// libtle). A thread remembers its last call, so a loop of barriers at one
/// line formats and hashes it once.
extern "C" uint32_t tleSiteRegisterText(const char *text);
inline uint32_t siteOf(CallSite site) {
  if (!site.file)
    return 0;
  thread_local const char *lastFile = nullptr;
  thread_local uint32_t lastLine = 0, lastId = 0;
  if (site.file != lastFile || site.line != lastLine) {
    char text[512];
    snprintf(text, sizeof text, "%s:%u", site.file, site.line);
    lastId = tleSiteRegisterText(text);
    lastFile = site.file;
    lastLine = site.line;
  }
  return lastId;
}

inline void enterCall(const char *name, CallSite site) {
  tleEmuEnterCall(name, site.file, site.line);
}
inline void leaveCall() { tleEmuLeaveCall(); }

} // namespace tle::impl

#endif // TLE_IMPL_PLATFORMHOST_H
