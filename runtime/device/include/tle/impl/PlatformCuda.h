//===- PlatformCuda.h - The platform layer on NVIDIA GPUs -------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The platform layer (see Platform.h) for nvcc and for clang in CUDA mode.
// Every ordered memory operation is inline PTX, and all of it lives in the
// Ptx helper below: nvcc has no scoped atomic builtins, and LLVM 22's NVPTX
// backend drops ordering and scope on `atomicrmw` (a release `atomicrmw add`
// becomes a relaxed `atom.add`), so neither compiler's atomics give one
// source the exact qualifiers. The flag pointers are generic addresses of
// global memory (own, peer-mapped or host-mapped); the `.global` forms are
// valid for them because generic and global addresses of global memory
// coincide on every NVIDIA GPU, which NCCL relies on as well.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_IMPL_PLATFORMCUDA_H
#define TLE_IMPL_PLATFORMCUDA_H

#define TLE_DEV_INLINE __device__ __forceinline__
#define TLE_DEV_COLD static __device__ __noinline__
/// A read-only object in global memory, one per translation unit. Not
/// `const`: clang would place it in the constant state space, which the
/// library's ld.global.nc may not read.
#define TLE_DEV_GLOBAL_CONST static __device__

namespace tle::impl {

/// The only place inline PTX is written. Needs sm_70+ (PTX 6.0 memory
/// model); TLE targets sm_90.
struct Ptx {
  static TLE_DEV_INLINE uint32_t ldAcquireSys(const uint32_t *p) {
    uint32_t v;
    asm volatile("ld.acquire.sys.global.u32 %0, [%1];"
                 : "=r"(v)
                 : "l"(p)
                 : "memory");
    return v;
  }
  static TLE_DEV_INLINE uint32_t ldRelaxedSys(const uint32_t *p) {
    uint32_t v;
    asm volatile("ld.relaxed.sys.global.u32 %0, [%1];"
                 : "=r"(v)
                 : "l"(p)
                 : "memory");
    return v;
  }
  static TLE_DEV_INLINE void stReleaseSys(uint32_t *p, uint32_t v) {
    asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v)
                 : "memory");
  }
  static TLE_DEV_INLINE void stRelaxedSys(uint32_t *p, uint32_t v) {
    asm volatile("st.relaxed.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v)
                 : "memory");
  }
  static TLE_DEV_INLINE void redAddReleaseSys(uint32_t *p, uint32_t v) {
    asm volatile("red.release.sys.global.add.u32 [%0], %1;" ::"l"(p), "r"(v)
                 : "memory");
  }
  static TLE_DEV_INLINE void redAddRelaxedSys(uint32_t *p, uint32_t v) {
    asm volatile("red.relaxed.sys.global.add.u32 [%0], %1;" ::"l"(p), "r"(v)
                 : "memory");
  }
  // The 64-bit signal words (SignalOps.h).
  static TLE_DEV_INLINE uint64_t ldAcquireSysU64(const uint64_t *p) {
    uint64_t v;
    asm volatile("ld.acquire.sys.global.u64 %0, [%1];"
                 : "=l"(v)
                 : "l"(p)
                 : "memory");
    return v;
  }
  static TLE_DEV_INLINE uint64_t ldRelaxedSysU64(const uint64_t *p) {
    uint64_t v;
    asm volatile("ld.relaxed.sys.global.u64 %0, [%1];"
                 : "=l"(v)
                 : "l"(p)
                 : "memory");
    return v;
  }
  static TLE_DEV_INLINE void stRelaxedSysU64(uint64_t *p, uint64_t v) {
    asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v)
                 : "memory");
  }
  static TLE_DEV_INLINE void redAddReleaseSysU64(uint64_t *p, uint64_t v) {
    asm volatile("red.release.sys.global.add.u64 [%0], %1;" ::"l"(p), "l"(v)
                 : "memory");
  }
  static TLE_DEV_INLINE uint32_t ldRelaxedGpu(const uint32_t *p) {
    uint32_t v;
    asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];"
                 : "=r"(v)
                 : "l"(p)
                 : "memory");
    return v;
  }
  static TLE_DEV_INLINE void stRelaxedGpu(uint32_t *p, uint32_t v) {
    asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v)
                 : "memory");
  }
  static TLE_DEV_INLINE void fenceAcqRelSys() {
    asm volatile("fence.acq_rel.sys;" ::: "memory");
  }
  static TLE_DEV_INLINE void fenceSeqCstSys() {
    asm volatile("fence.sc.sys;" ::: "memory");
  }
  static TLE_DEV_INLINE uint32_t atomAddAcqRelGpu(uint32_t *p, uint32_t v) {
    uint32_t old;
    asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], %2;"
                 : "=r"(old)
                 : "l"(p), "r"(v)
                 : "memory");
    return old;
  }
  static TLE_DEV_INLINE uint64_t atomAddRelaxedGpu(uint64_t *p, uint64_t v) {
    uint64_t old;
    asm volatile("atom.relaxed.gpu.global.add.u64 %0, [%1], %2;"
                 : "=l"(old)
                 : "l"(p), "l"(v)
                 : "memory");
    return old;
  }
  static TLE_DEV_INLINE uint32_t atomCasRelaxedSys(uint32_t *p, uint32_t cmp,
                                                   uint32_t v) {
    uint32_t old;
    asm volatile("atom.relaxed.sys.global.cas.b32 %0, [%1], %2, %3;"
                 : "=r"(old)
                 : "l"(p), "r"(cmp), "r"(v)
                 : "memory");
    return old;
  }
  /// Invariant loads (see loadConst). clang: __ldg, which it emits as an
  /// LLVM load with !invariant.load that LICM hoists (clang marks every
  /// inline asm `convergent`, which LICM never moves). nvcc: inline PTX
  /// that is neither volatile nor a memory clobber, which nvcc hoists and
  /// does not do for its __ldg.
  static TLE_DEV_INLINE uint32_t ldConstU32(const void *p) {
#if defined(__clang__)
    return __ldg(static_cast<const unsigned int *>(p));
#else
    uint32_t v;
    asm("ld.global.nc.u32 %0, [%1];" : "=r"(v) : "l"(p));
    return v;
#endif
  }
  static TLE_DEV_INLINE uint64_t ldConstU64(const void *p) {
#if defined(__clang__)
    return __ldg(static_cast<const unsigned long long *>(p));
#else
    uint64_t v;
    asm("ld.global.nc.u64 %0, [%1];" : "=l"(v) : "l"(p));
    return v;
#endif
  }
  static TLE_DEV_INLINE uint64_t globalTimer() {
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
  }
  /// bar.red.or over the CTA (barrier 0, all threads): the __syncthreads_or
  /// of CUDA C++, whose LLVM intrinsic the LLVM of a bitcode consumer
  /// (Triton 3.6's) may not know by the name LLVM 22 gives it.
  static TLE_DEV_INLINE bool barRedOr(bool v) {
    uint32_t out;
    asm volatile("{\n\t.reg .pred p, q;\n\t"
                 "setp.ne.u32 p, %1, 0;\n\t"
                 "bar.red.or.pred q, 0, p;\n\t"
                 "selp.u32 %0, 1, 0, q;\n\t}"
                 : "=r"(out)
                 : "r"(static_cast<uint32_t>(v))
                 : "memory");
    return out != 0;
  }
  /// redux.sync.max over the lanes of `mask` (sm_80 and later); inline PTX
  /// for the reason given at barRedOr.
  static TLE_DEV_INLINE uint32_t reduxMax(uint32_t mask, uint32_t v) {
    uint32_t out;
    asm volatile("redux.sync.max.u32 %0, %1, %2;"
                 : "=r"(out)
                 : "r"(v), "r"(mask)
                 : "memory");
    return out;
  }
  [[noreturn]] static TLE_DEV_INLINE void trap() {
    asm volatile("trap;" ::: "memory");
    __builtin_unreachable();
  }
};

TLE_DEV_INLINE uint32_t threadRank() {
  return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}
TLE_DEV_INLINE uint32_t blockThreads() {
  return blockDim.x * blockDim.y * blockDim.z;
}
TLE_DEV_INLINE uint32_t blockRank() {
  return blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
}
TLE_DEV_INLINE uint32_t gridBlocks() {
  return gridDim.x * gridDim.y * gridDim.z;
}

/// __syncwarp over the lanes that exist: a block whose size is not a
/// multiple of 32 has a short last warp, and naming absent lanes in the mask
/// is undefined.
TLE_DEV_INLINE void syncWarp() {
  uint32_t base = threadRank() & ~31u;
  uint32_t lanes = blockThreads() - base;
  __syncwarp(lanes >= 32 ? 0xffffffffu : (1u << lanes) - 1u);
}
TLE_DEV_INLINE void syncBlock() { __syncthreads(); }
TLE_DEV_INLINE void syncBlockTwice() {
  __syncthreads();
  __syncthreads();
}
/// FlagCX's LANES sync: the lanes of `mask`.
TLE_DEV_INLINE void syncLanes(uint32_t mask) { __syncwarp(mask); }
/// FlagCX's TILE_SPAN sync: warps t0 .. t0+nTiles-1 on named barrier
/// 1 + id (0 is __syncthreads'), or the block when the span is all of it.
TLE_DEV_INLINE void syncTiles(uint32_t t0, uint32_t nTiles, uint32_t id) {
  if (t0 == 0 && nTiles * 32 >= blockThreads()) {
    __syncthreads();
    return;
  }
  asm volatile("barrier.sync %0, %1;" ::"r"(1 + id), "r"(nTiles * 32)
               : "memory");
}

/// Wait statuses are tleResult_t values, which fit in this many bits.
constexpr int kStatusBits = 8;

/// syncBlock, returning the largest `v` (< 2^kStatusBits) of the block's
/// threads. Where every `v` is 0 (a barrier that did not give up) it costs
/// one bar.red.or in place of the bar.sync; otherwise a radix max, one
/// bar.red.or per bit, from the top.
TLE_DEV_INLINE uint32_t syncBlockMax(uint32_t v) {
  if (!Ptx::barRedOr(v != 0))
    return 0;
  uint32_t max = 0;
  for (int b = kStatusBits - 1; b >= 0; --b) {
    // Threads whose higher bits are the maximum's so far.
    bool candidate = (v >> (b + 1)) == (max >> (b + 1));
    if (Ptx::barRedOr(candidate && (v >> b & 1)))
      max |= 1u << b;
  }
  return max;
}
/// syncWarp, returning the largest `v` of the warp's lanes (redux.sync
/// synchronizes the lanes like bar.warp.sync).
TLE_DEV_INLINE uint32_t syncWarpMax(uint32_t v) {
  uint32_t base = threadRank() & ~31u;
  uint32_t lanes = blockThreads() - base;
  return Ptx::reduxMax(lanes >= 32 ? 0xffffffffu : (1u << lanes) - 1u, v);
}

/// Loads of the communicator and buffer handles, which the host writes
/// before the launch and nothing changes during it. They go through the
/// read-only path (ld.global.nc), in a form each compiler treats as a pure
/// function of the address (Ptx::ldConst*), so that a kernel that calls the
/// barrier in a loop loads the fields once, before the loop, and the
/// acquire of every poll (which invalidates L1) no longer puts an L2 round
/// trip in front of the next signal. The barrier issues them first thing,
/// from every thread (Barrier.h), where a compiler sees they always run
/// (checked in the SASS of bench/lab and the PTX of a tlec loop, see
/// docs/device-library.md).
TLE_DEV_INLINE uint32_t loadConst(const uint32_t *p) {
  return Ptx::ldConstU32(p);
}
TLE_DEV_INLINE int32_t loadConst(const int32_t *p) {
  return static_cast<int32_t>(Ptx::ldConstU32(p));
}
TLE_DEV_INLINE uint64_t loadConst(const uint64_t *p) {
  return Ptx::ldConstU64(p);
}
/// Two adjacent 32-bit fields (8-byte aligned) in one load.
TLE_DEV_INLINE void loadConstPair(const void *p, uint32_t &lo, uint32_t &hi) {
  uint64_t v = Ptx::ldConstU64(p);
  lo = static_cast<uint32_t>(v);
  hi = static_cast<uint32_t>(v >> 32);
}
template <typename T> TLE_DEV_INLINE T *loadConst(T *const *p) {
  return reinterpret_cast<T *>(Ptx::ldConstU64(p));
}

TLE_DEV_INLINE uint32_t loadAcquireSys(const uint32_t *p) {
  return Ptx::ldAcquireSys(p);
}
TLE_DEV_INLINE uint32_t loadRelaxedSys(const uint32_t *p) {
  return Ptx::ldRelaxedSys(p);
}
TLE_DEV_INLINE void storeReleaseSys(uint32_t *p, uint32_t v) {
  Ptx::stReleaseSys(p, v);
}
TLE_DEV_INLINE void storeRelaxedSys(uint32_t *p, uint32_t v) {
  Ptx::stRelaxedSys(p, v);
}
TLE_DEV_INLINE void addReleaseSys(uint32_t *p, uint32_t v) {
  Ptx::redAddReleaseSys(p, v);
}
TLE_DEV_INLINE void addRelaxedSys(uint32_t *p, uint32_t v) {
  Ptx::redAddRelaxedSys(p, v);
}
TLE_DEV_INLINE uint64_t loadAcquireSys(const uint64_t *p) {
  return Ptx::ldAcquireSysU64(p);
}
TLE_DEV_INLINE uint64_t loadRelaxedSys(const uint64_t *p) {
  return Ptx::ldRelaxedSysU64(p);
}
TLE_DEV_INLINE void storeRelaxedSys(uint64_t *p, uint64_t v) {
  Ptx::stRelaxedSysU64(p, v);
}
TLE_DEV_INLINE void addReleaseSys(uint64_t *p, uint64_t v) {
  Ptx::redAddReleaseSysU64(p, v);
}
TLE_DEV_INLINE void storeSignalSys(uint64_t *p, uint64_t v) {
  Ptx::stRelaxedSysU64(p, v);
}
TLE_DEV_INLINE void fenceAcqRelSys() { Ptx::fenceAcqRelSys(); }

/// Thread `rank` of `size`'s share of a cooperative copy (OneSided.h):
/// 16-byte vectors, four loads in flight before their stores, strided by
/// the group so that a warp's accesses are contiguous, when source and
/// destination share their alignment mod 16; 8-, 4-byte or byte elements
/// when they share less. Plain (weak) accesses: the caller orders them with
/// its fences and the signal's release.
template <typename T>
TLE_DEV_INLINE void copyUnits(T *dst, const T *src, uint64_t n, uint32_t rank,
                              uint32_t size) {
  uint64_t i = rank;
  for (; i + 3ull * size < n; i += 4ull * size) {
    T a = src[i], b = src[i + size], c = src[i + 2ull * size],
      d = src[i + 3ull * size];
    dst[i] = a;
    dst[i + size] = b;
    dst[i + 2ull * size] = c;
    dst[i + 3ull * size] = d;
  }
  for (; i < n; i += size)
    dst[i] = src[i];
}
TLE_DEV_INLINE void copyBytes(void *dst, const void *src, uint64_t bytes,
                              uint32_t rank, uint32_t size) {
  auto d = reinterpret_cast<uintptr_t>(dst);
  auto s = reinterpret_cast<uintptr_t>(src);
  uint32_t unit = ((d ^ s) & 15) == 0  ? 16
                  : ((d ^ s) & 7) == 0 ? 8
                  : ((d ^ s) & 3) == 0 ? 4
                                       : 1;
  // The bytes before the first aligned unit, then whole units, then the
  // tail.
  uint64_t head = (unit - (d & (unit - 1))) & (unit - 1);
  if (head > bytes)
    head = bytes;
  copyUnits(static_cast<char *>(dst), static_cast<const char *>(src), head,
            rank, size);
  uint64_t n = (bytes - head) / unit;
  void *vd = static_cast<char *>(dst) + head;
  const void *vs = static_cast<const char *>(src) + head;
  if (unit == 16)
    copyUnits(static_cast<uint4 *>(vd), static_cast<const uint4 *>(vs), n, rank,
              size);
  else if (unit == 8)
    copyUnits(static_cast<uint64_t *>(vd), static_cast<const uint64_t *>(vs), n,
              rank, size);
  else if (unit == 4)
    copyUnits(static_cast<uint32_t *>(vd), static_cast<const uint32_t *>(vs), n,
              rank, size);
  uint64_t done = head + n * (unit == 1 ? 0 : unit);
  copyUnits(static_cast<char *>(dst) + done,
            static_cast<const char *>(src) + done, bytes - done, rank, size);
}
TLE_DEV_INLINE void fenceSeqCstSys() { Ptx::fenceSeqCstSys(); }
TLE_DEV_INLINE uint32_t loadRelaxedGpu(const uint32_t *p) {
  return Ptx::ldRelaxedGpu(p);
}
TLE_DEV_INLINE void storeRelaxedGpu(uint32_t *p, uint32_t v) {
  Ptx::stRelaxedGpu(p, v);
}
TLE_DEV_INLINE uint32_t fetchAddAcqRelGpu(uint32_t *p, uint32_t v) {
  return Ptx::atomAddAcqRelGpu(p, v);
}
TLE_DEV_INLINE bool casRelaxedSys(uint32_t *p, uint32_t expected,
                                  uint32_t desired) {
  return Ptx::atomCasRelaxedSys(p, expected, desired) == expected;
}

/// The communicator's fault word (ErrorRecord::abort, host-mapped memory):
/// a relaxed system-scope load, the same instruction as a relaxed poll, so
/// the barrier's instruction set is unchanged; the store is the cold path's.
TLE_DEV_INLINE uint32_t loadFaultWord(const uint32_t *p) {
  return Ptx::ldRelaxedSys(p);
}
TLE_DEV_INLINE void storeFaultWord(uint32_t *p, uint32_t v) {
  Ptx::stRelaxedSys(p, v);
}

/// A flag read for a report (missingPeers): the relaxed poll's instruction.
TLE_DEV_INLINE uint32_t peekFlagSys(const uint32_t *p) {
  return Ptx::ldRelaxedSys(p);
}

/// %globaltimer counts nanoseconds (updated every few hundred ns or faster,
/// plenty for a deadline).
TLE_DEV_INLINE uint64_t nowNs() { return Ptx::globalTimer(); }
/// Reading %globaltimer costs about as much as a poll, and the fault word
/// lives in host memory (a load of about a microsecond), so a wait checks
/// both only every this many failed polls (a few tens of microseconds):
/// the bound on how late a wait sees tleCommAbort, besides the load itself.
constexpr uint32_t kPollsPerClockRead = 128;

/// GPUs spin: no nanosleep in the poll, since a sleeping poller adds its
/// sleep to the barrier's latency, and polling our own memory costs the
/// peers nothing.
constexpr bool kPlatformYields = false;
TLE_DEV_INLINE void spinWait(const WaitInfo &) {}
TLE_DEV_INLINE void pollHint(const void *, uint64_t) {}

/// A trap fails the whole launch (every CTA, sticky on the context); the
/// host then reads the error record.
[[noreturn]] TLE_DEV_INLINE void abortLaunch() { Ptx::trap(); }

/// One word of shared memory per CTA. `static` gives each translation unit
/// its own: with -rdc, a grid arrive and its wait must be compiled in the
/// same file.
static __shared__ uint32_t tleGridTarget;
TLE_DEV_INLINE uint32_t *blockScratch() { return &tleGridTarget; }

/// The trace ring's index (Trace.h): only uniqueness matters, and the host
/// reads the ring after the launch. Inline PTX, as every atomic here, so
/// that the PTX names its semantics (device-bitcode-ptx checks that every
/// add does).
TLE_DEV_INLINE uint64_t fetchAddRelaxed(uint64_t *p, uint64_t v) {
  return Ptx::atomAddRelaxedGpu(p, v);
}

/// Barrier events go to the trace ring only (Trace.h).
TLE_DEV_INLINE void emuBarrierEvent(const void *, int, int, uint32_t, int,
                                    int) {}
/// The emulator's signal history: nothing on GPUs.
TLE_DEV_INLINE void noteSignal(const uint64_t *, int, uint64_t, uint64_t, int) {
}

/// Only the emulator's reports name a call's line.
/// A typed API call's site id on GPUs: its line alone, marked with
/// kSiteLineOnly (tle/abi.h), since the device has no table to enter a
/// file name in. An immediate, read only on the failure path.
TLE_DEV_INLINE uint32_t siteOf(CallSite site) {
  return site.line ? (kSiteLineOnly | (site.line & ~kSiteLineOnly)) : 0;
}
TLE_DEV_INLINE void enterCall(const char *, CallSite) {}
TLE_DEV_INLINE void leaveCall() {}

} // namespace tle::impl

#endif // TLE_IMPL_PLATFORMCUDA_H
