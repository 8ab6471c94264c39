//===- RecordingPlatform.h - A platform layer that logs what it is asked -===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The device library's platform contract (tle/impl/Platform.h) implemented
// for OrderTableTest.cpp: one simulated thread at a time, plain memory, and
// a log of every group sync, fence and ordered flag access the barrier
// issues, spelled like the PTX it would be on a GPU ("red.release.sys
// inbox", "bar.block", ...). The emulator cannot show a missing fence or a
// wrong memory order (it runs every fiber on one OS thread, so it is
// sequentially consistent); this log can, in a unit test, for every order
// and group. Included through TLE_TEST_PLATFORM, so that the test's
// translation unit compiles the library's own source against it.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_UNITTESTS_RECORDINGPLATFORM_H
#define TLE_UNITTESTS_RECORDINGPLATFORM_H

#include <stdexcept>
#include <string>
#include <vector>

#define TLE_DEV_INLINE inline
#define TLE_DEV_COLD [[gnu::cold, gnu::noinline]] static
#define TLE_DEV_GLOBAL_CONST static const

namespace tle::rec {

/// The simulated caller and what it did.
struct State {
  uint32_t thread = 0, blockThreads = 1, block = 0, gridBlocks = 1;
  uint32_t scratch = 0; ///< the block's scratch word
  uint64_t clock = 0;
  std::vector<std::string> log;
  /// Named address ranges, to say which word an access touched.
  struct Range {
    const void *begin, *end;
    const char *name;
  };
  std::vector<Range> ranges;
  /// Looks at the fault word still to read 0 before the word itself is
  /// read: a fault that is set while the wait already polls.
  uint32_t hiddenFaultLooks = 0;
};
inline State &state() {
  static State s;
  return s;
}

inline const char *nameOf(const void *p) {
  for (const State::Range &r : state().ranges)
    if (p >= r.begin && p < r.end)
      return r.name;
  return "other";
}
inline void record(const char *op, const void *p = nullptr) {
  std::string e = op;
  if (p)
    e += std::string(" ") + nameOf(p);
  state().log.push_back(e);
}

/// abortLaunch: the test fails with the reason the library gave.
struct Aborted : std::runtime_error {
  Aborted() : std::runtime_error("the library aborted the launch") {}
};

} // namespace tle::rec

namespace tle::impl {

inline uint32_t threadRank() { return rec::state().thread; }
inline uint32_t blockThreads() { return rec::state().blockThreads; }
inline uint32_t blockRank() { return rec::state().block; }
inline uint32_t gridBlocks() { return rec::state().gridBlocks; }
inline void syncWarp() { rec::record("bar.warp"); }
inline void syncBlock() { rec::record("bar.block"); }
inline void syncBlockTwice() {
  syncBlock();
  syncBlock();
}
/// One simulated caller: the group's largest value is its own.
inline uint32_t syncWarpMax(uint32_t v) {
  rec::record("bar.red.warp");
  return v;
}
inline uint32_t syncBlockMax(uint32_t v) {
  rec::record("bar.red.block");
  return v;
}

inline uint32_t loadConst(const uint32_t *p) { return *p; }
inline int32_t loadConst(const int32_t *p) { return *p; }
inline uint64_t loadConst(const uint64_t *p) { return *p; }
inline void loadConstPair(const void *p, uint32_t &lo, uint32_t &hi) {
  lo = static_cast<const uint32_t *>(p)[0];
  hi = static_cast<const uint32_t *>(p)[1];
}
template <typename T> inline T *loadConst(T *const *p) { return *p; }

inline uint32_t loadAcquireSys(const uint32_t *p) {
  rec::record("ld.acquire.sys", p);
  return *p;
}
inline uint32_t loadRelaxedSys(const uint32_t *p) {
  rec::record("ld.relaxed.sys", p);
  return *p;
}
inline void storeReleaseSys(uint32_t *p, uint32_t v) {
  rec::record("st.release.sys", p);
  *p = v;
}
inline void storeRelaxedSys(uint32_t *p, uint32_t v) {
  rec::record("st.relaxed.sys", p);
  *p = v;
}
inline void addReleaseSys(uint32_t *p, uint32_t v) {
  rec::record("red.release.sys", p);
  *p += v;
}
inline void addRelaxedSys(uint32_t *p, uint32_t v) {
  rec::record("red.relaxed.sys", p);
  *p += v;
}
/// The signal words (SignalOps.h).
inline uint64_t loadAcquireSys(const uint64_t *p) {
  rec::record("ld.acquire.sys.u64", p);
  return *p;
}
inline uint64_t loadRelaxedSys(const uint64_t *p) {
  rec::record("ld.relaxed.sys.u64", p);
  return *p;
}
inline void storeRelaxedSys(uint64_t *p, uint64_t v) {
  rec::record("st.relaxed.sys.u64", p);
  *p = v;
}
inline void addReleaseSys(uint64_t *p, uint64_t v) {
  rec::record("red.release.sys.u64", p);
  *p += v;
}
inline void storeSignalSys(uint64_t *p, uint64_t v) { storeRelaxedSys(p, v); }
inline void pollHint(const void *, uint64_t) {}
inline void fenceAcqRelSys() { rec::record("fence.acq_rel.sys"); }
inline void fenceSeqCstSys() { rec::record("fence.sc.sys"); }
inline uint32_t loadRelaxedGpu(const uint32_t *p) {
  rec::record("ld.relaxed.gpu", p);
  return *p;
}
inline void storeRelaxedGpu(uint32_t *p, uint32_t v) {
  rec::record("st.relaxed.gpu", p);
  *p = v;
}
inline uint32_t fetchAddAcqRelGpu(uint32_t *p, uint32_t v) {
  rec::record("atom.acq_rel.gpu", p);
  uint32_t old = *p;
  *p += v;
  return old;
}
inline bool casRelaxedSys(uint32_t *p, uint32_t expected, uint32_t desired) {
  rec::record("atom.relaxed.sys.cas", p);
  if (*p != expected)
    return false;
  *p = desired;
  return true;
}

/// Every read advances the clock, so that a poll that can never succeed
/// (the test presets every flag it waits for) ends in the library's own
/// timeout and an abort instead of a hang.
inline uint64_t nowNs() { return ++rec::state().clock; }
/// The fault word is not part of the orders under test: read, not logged.
inline uint32_t loadFaultWord(const uint32_t *p) {
  if (rec::state().hiddenFaultLooks) {
    --rec::state().hiddenFaultLooks;
    return 0;
  }
  return *p;
}
/// A report's look at the flags (missingPeers): the relaxed load it is on
/// GPUs, logged as one.
inline uint32_t peekFlagSys(const uint32_t *p) {
  rec::record("ld.relaxed.sys", p);
  return *p;
}
inline void storeFaultWord(uint32_t *p, uint32_t v) {
  rec::record("st.relaxed.sys", p);
  *p = v;
}
/// 1 as on the host unless the test asks for another cadence (NetTest.cpp
/// asks for the GPU's, to see the fault word's cadence there).
#ifndef TLE_REC_POLLS_PER_CLOCK_READ
#define TLE_REC_POLLS_PER_CLOCK_READ 1
#endif
constexpr uint32_t kPollsPerClockRead = TLE_REC_POLLS_PER_CLOCK_READ;
constexpr bool kPlatformYields = false;
inline void spinWait(const WaitInfo &) {}

[[noreturn]] inline void abortLaunch() { throw rec::Aborted(); }

inline uint32_t *blockScratch() { return &rec::state().scratch; }

/// The trace ring's index (Trace.h); the order table runs with no ring, so
/// a record of it there would be a trace that is not off.
inline uint64_t fetchAddRelaxed(uint64_t *p, uint64_t v) {
  rec::record("atom.relaxed.gpu.add.u64", p);
  uint64_t old = *p;
  *p += v;
  return old;
}
inline void emuBarrierEvent(const void *, int, int, uint32_t, int, int) {}
inline void noteSignal(const uint64_t *, int, uint64_t, uint64_t, int) {}
/// A near transfer's copy (OneSided.h): the caller's share, as the host
/// build's, recorded as one event.
inline void copyBytes(void *dst, const void *src, uint64_t bytes, uint32_t rank,
                      uint32_t size) {
  uint64_t slice = (bytes + size - 1) / size;
  uint64_t lo = rank * slice, hi = lo + slice < bytes ? lo + slice : bytes;
  rec::record("copy");
  if (lo < hi)
    __builtin_memcpy(static_cast<char *>(dst) + lo,
                     static_cast<const char *>(src) + lo, hi - lo);
}
inline uint32_t siteOf(CallSite) { return 0; }
inline void enterCall(const char *, CallSite) {}
inline void leaveCall() {}

} // namespace tle::impl

#endif // TLE_UNITTESTS_RECORDINGPLATFORM_H
