//===- PlatformHost.h - The platform layer in the CPU emulator ---*- C++
//-*-===//
//
// The platform layer (see Platform.h) for the host build that runs inside
// the CPU emulator. Thread ids, group syncs, time, yielding, aborting and
// block scratch come from the emulator through EmuHooks.h; memory ordering
// comes from the compiler's __atomic builtins. Scopes collapse: on one host
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

namespace tle::impl {

inline uint32_t threadRank() {
  return tleEmuThreadId(0) +
         tleEmuBlockDim(0) *
             (tleEmuThreadId(1) + tleEmuBlockDim(1) * tleEmuThreadId(2));
}
inline uint32_t blockThreads() {
  return tleEmuBlockDim(0) * tleEmuBlockDim(1) * tleEmuBlockDim(2);
}
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
/// emulator measures what a barrier costs; GPUs count nothing).
inline void count(DeviceOp kind) {
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

inline uint32_t loadAcquireSys(const uint32_t *p) {
  count(DeviceOp::Poll);
  return __atomic_load_n(p, TLE_HOST_ORDER(__ATOMIC_ACQUIRE));
}
inline uint32_t loadRelaxedSys(const uint32_t *p) {
  count(DeviceOp::Poll);
  return __atomic_load_n(p, __ATOMIC_RELAXED);
}
inline void storeReleaseSys(uint32_t *p, uint32_t v) {
  count(DeviceOp::Signal);
  __atomic_store_n(p, v, TLE_HOST_ORDER(__ATOMIC_RELEASE));
}
inline void storeRelaxedSys(uint32_t *p, uint32_t v) {
  count(DeviceOp::Signal);
  __atomic_store_n(p, v, __ATOMIC_RELAXED);
}
inline void addReleaseSys(uint32_t *p, uint32_t v) {
  count(DeviceOp::Signal);
  __atomic_fetch_add(p, v, TLE_HOST_ORDER(__ATOMIC_RELEASE));
}
inline void addRelaxedSys(uint32_t *p, uint32_t v) {
  count(DeviceOp::Signal);
  __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}
inline uint64_t loadAcquireSys(const uint64_t *p) {
  count(DeviceOp::Poll);
  return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}
inline uint64_t loadRelaxedSys(const uint64_t *p) {
  count(DeviceOp::Poll);
  return __atomic_load_n(p, __ATOMIC_RELAXED);
}
inline void storeRelaxedSys(uint64_t *p, uint64_t v) {
  count(DeviceOp::Signal);
  __atomic_store_n(p, v, __ATOMIC_RELAXED);
}
inline void addReleaseSys(uint64_t *p, uint64_t v) {
  count(DeviceOp::Signal);
  __atomic_fetch_add(p, v, __ATOMIC_RELEASE);
}
inline void fenceAcqRelSys() {
  count(DeviceOp::Fence);
  __atomic_thread_fence(TLE_HOST_ORDER(__ATOMIC_ACQ_REL));
}
inline void fenceSeqCstSys() {
  count(DeviceOp::Fence);
  __atomic_thread_fence(TLE_HOST_ORDER(__ATOMIC_SEQ_CST));
}
inline uint32_t loadRelaxedGpu(const uint32_t *p) {
  count(DeviceOp::EpochLoad);
  return __atomic_load_n(p, __ATOMIC_RELAXED);
}
inline void storeRelaxedGpu(uint32_t *p, uint32_t v) {
  count(DeviceOp::EpochStore);
  __atomic_store_n(p, v, __ATOMIC_RELAXED);
}
inline uint32_t fetchAddAcqRelGpu(uint32_t *p, uint32_t v) {
  count(DeviceOp::Rmw);
  return __atomic_fetch_add(p, v, TLE_HOST_ORDER(__ATOMIC_ACQ_REL));
}
inline bool casRelaxedSys(uint32_t *p, uint32_t expected, uint32_t desired) {
  count(DeviceOp::Rmw);
  return __atomic_compare_exchange_n(p, &expected, desired, /*weak=*/false,
                                     __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

/// The fault word (ErrorRecord::abort): not a device-memory operation of
/// the barrier's, so not counted.
inline uint32_t loadFaultWord(const uint32_t *p) {
  return __atomic_load_n(p, __ATOMIC_RELAXED);
}
inline void storeFaultWord(uint32_t *p, uint32_t v) {
  __atomic_store_n(p, v, __ATOMIC_RELAXED);
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

inline void traceEvent(const char *name, uint32_t slot, bool begin) {
  tleEmuTraceEvent(name, slot, begin ? 1 : 0);
}

} // namespace tle::impl

#endif // TLE_IMPL_PLATFORMHOST_H
