//===- LabBarriers.cuh - Barrier variants of the run-5 lab -----*- CUDA -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Experiment-local device code for BarrierLab.cu (not part of the library):
//
// - LabPtx: the few PTX forms the lab needs that the library's Ptx helper
//   does not have: generic-address flag accesses (what NCCL's
//   cuda::atomic_ref compiles to), a read-only load the compiler may hoist,
//   and %gridid.
// - refRound: the minimal two-rank protocol of NCCL's LSA barrier for one
//   CTA (thread 0 stores epoch + 1 into the peer's word with a release and
//   polls its own word with acquire; the block syncs around it).
// - labSync<Src, Poll>: the library's stateless block-group sync
//   (flagcxIntraBarrierSyncS, order acq_rel), rebuilt from tle::impl's own
//   pieces so that one part can be swapped at a time:
//     Src  where the communicator fields come from: the library's checked
//          loads (SrcLib), the same loads as non-volatile inline asm that
//          the compiler may hoist (SrcHoistable), or a per-CTA shared-memory
//          copy keyed by (%gridid, comm) (SrcSmemCache);
//     Poll how the poll loop keeps its deadline: the library's (the clock
//          every 128 failed polls, PollLib), no bookkeeping at all
//          (PollNone), or K tight polls before the library's loop
//          (PollTwoPhase<K>).
//   labSync<SrcLib, PollLib> is groupWait(arrive = true) for a block group,
//   statement for statement: the control row `lab-stateless`, which must
//   time like `tle-stateless`. Block groups of a 1-D block of at least 32
//   threads only.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_BENCH_LAB_LABBARRIERS_CUH
#define TLE_BENCH_LAB_LABBARRIERS_CUH

#include "tle/device.h"

#include <stdint.h>

namespace tle::lab {

using namespace tle::impl;

/// Failure reports of the lab's variants name the function they stand for.
constexpr abi::Fn kLabFn = abi::Fn::flagcxIntraBarrierSyncS;

/// The lab's own inline PTX (the library's lives in tle::impl::Ptx).
struct LabPtx {
  static __device__ __forceinline__ uint32_t
  ldAcquireSysGeneric(const uint32_t *p) {
    uint32_t v;
    asm volatile("ld.acquire.sys.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
  }
  static __device__ __forceinline__ void stReleaseSysGeneric(uint32_t *p,
                                                             uint32_t v) {
    asm volatile("st.release.sys.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
  }
  /// ld.global.nc as a pure function of its address: not volatile and no
  /// memory clobber, so the compiler may merge it with an earlier identical
  /// load and hoist it out of a loop (which the library's __ldg, an
  /// intrinsic that reads memory, may not cross the barrier's clobbers).
  static __device__ __forceinline__ uint64_t ldNc64(const void *p) {
    uint64_t v;
    asm("ld.global.nc.u64 %0, [%1];" : "=l"(v) : "l"(p));
    return v;
  }
  /// %gridid: distinct for every launch (PTX ISA: a temporal grid id).
  static __device__ __forceinline__ uint64_t gridId() {
    uint64_t v;
    asm("mov.u64 %0, %%gridid;" : "=l"(v));
    return v;
  }
};

//===----------------------------------------------------------------------===//
// The minimal protocol (experiment 1)
//===----------------------------------------------------------------------===//

/// One round of the reference barrier on one slot: `mine` is the word the
/// peer signals, `theirs` the peer's word for us, `epoch` (thread 0's) the
/// rounds completed so far.
template <bool kGeneric>
__device__ __forceinline__ void refRound(const uint32_t *mine, uint32_t *theirs,
                                         uint32_t &epoch) {
  __syncthreads();
  if (threadIdx.x == 0) {
    ++epoch;
    if (kGeneric) {
      LabPtx::stReleaseSysGeneric(theirs, epoch);
      while (static_cast<int32_t>(LabPtx::ldAcquireSysGeneric(mine) - epoch) <
             0) {
      }
    } else {
      Ptx::stReleaseSys(theirs, epoch);
      while (static_cast<int32_t>(Ptx::ldAcquireSys(mine) - epoch) < 0) {
      }
    }
  }
  __syncthreads();
}

//===----------------------------------------------------------------------===//
// Where the communicator comes from (experiment 2)
//===----------------------------------------------------------------------===//

/// The library's loads and check (tle::impl::checkSlot).
struct SrcLib {
  static __device__ __forceinline__ Comm load(const void *comm, uint32_t index,
                                              uint32_t lane) {
    return checkSlot(comm, index, lane, kLabFn);
  }
};

/// How a SrcLoads variant reads one 8-byte field of the communicator.
struct LoadNcAsm { ///< non-volatile asm: hoistable (the library since run 5)
  static __device__ __forceinline__ uint64_t ld(const void *p) {
    return LabPtx::ldNc64(p);
  }
};
struct LoadLdg { ///< __ldg: the library before run 5, not hoisted by nvcc
  static __device__ __forceinline__ uint64_t ld(const void *p) {
    return __ldg(static_cast<const unsigned long long *>(p));
  }
};

/// tle::impl::loadComm with every load as Load::ld: LoadNcAsm, which the
/// compiler may merge with the loads of an earlier call and hoist out of a
/// loop, or LoadLdg, the library's loads before run 5 (the "before" row).
/// The check is the library's.
template <typename Load> struct SrcLoads {
  static __device__ __forceinline__ Comm load(const void *comm, uint32_t index,
                                              uint32_t lane) {
    const DevComm *dc = static_cast<const DevComm *>(comm);
    if (TLE_UNLIKELY(!dc))
      failNoRecord();
    Comm c;
    c.dc = dc;
    c.entry = lane % kRouteLanes;
    const uint64_t mv = Load::ld(&dc->magic);
    const uint64_t rs = Load::ld(&dc->rank);
    const uint64_t ns = Load::ld(&dc->nBarriers);
    c.rank = static_cast<uint32_t>(rs);
    c.size = static_cast<uint32_t>(rs >> 32);
    c.nBarriers = static_cast<uint32_t>(ns);
    c.stride = static_cast<uint32_t>(ns >> 32);
    c.epochs = reinterpret_cast<uint32_t *>(Load::ld(&dc->epochs));
    c.outEntry =
        reinterpret_cast<uint32_t *>(Load::ld(&dc->routes[routeIndex(c.entry)].out));
    c.inEntry =
        reinterpret_cast<const uint32_t *>(Load::ld(&dc->routes[routeIndex(c.entry)].in));
    const uintptr_t misaligned = (reinterpret_cast<uintptr_t>(c.epochs) |
                                  reinterpret_cast<uintptr_t>(c.outEntry) |
                                  reinterpret_cast<uintptr_t>(c.inEntry)) &
                                 (sizeof(uint32_t) - 1);
    const bool bad = (static_cast<uint32_t>(mv) != kDevCommMagic) |
                     (static_cast<uint32_t>(mv >> 32) != kDevCommVersion) |
                     (c.size - 1 >= kMaxRanks) | (c.rank >= c.size) |
                     (index >= c.nBarriers) | (misaligned != 0);
    if (TLE_UNLIKELY(bad))
      failCheck(dc, index, true, kLabFn);
    return c;
  }
};

using SrcHoistable = SrcLoads<LoadNcAsm>;
using SrcLdg = SrcLoads<LoadLdg>;

/// The checked fields of one communicator, per CTA, for the rest of the
/// launch. Shared memory is not invalidated by an acquire, so after the
/// first call of a launch a call reads these instead of reloading the
/// communicator from L2. The key is (%gridid, comm): %gridid differs
/// between launches, so whatever a previous kernel left in this shared
/// memory never matches; a CTA that finds its predecessor's entry of the
/// same launch may use it (same communicator, same fields). Only the
/// group's first warp reads or writes it (block groups).
struct SmemCommCache {
  uint64_t gridId;
  const void *comm;
  uint32_t rank, size, nBarriers, stride;
  uint32_t *epochs;
  uint32_t *out[kRouteLanes];
  const uint32_t *in[kRouteLanes];
};

static __shared__ SmemCommCache labCommCache;

struct SrcSmemCache {
  static __device__ __forceinline__ Comm load(const void *comm, uint32_t index,
                                              uint32_t lane) {
    SmemCommCache &k = labCommCache;
    const uint64_t gid = LabPtx::gridId();
    if (TLE_UNLIKELY(k.gridId != gid || k.comm != comm)) {
      // First call of the launch (the condition is the same for every
      // lane): the library's checked load, then publish it to the warp.
      Comm c = checkSlot(comm, index, lane, kLabFn);
      if (lane < kRouteLanes) {
        k.out[lane] = c.outEntry;
        k.in[lane] = c.inEntry;
      }
      if (lane == 0) {
        k.rank = c.rank;
        k.size = c.size;
        k.nBarriers = c.nBarriers;
        k.stride = c.stride;
        k.epochs = c.epochs;
      }
      __syncwarp();
      if (lane == 0) {
        k.gridId = gid;
        k.comm = comm;
      }
      __syncwarp();
      return c;
    }
    Comm c;
    c.dc = static_cast<const DevComm *>(comm);
    c.entry = lane % kRouteLanes;
    c.rank = k.rank;
    c.size = k.size;
    c.nBarriers = k.nBarriers;
    c.stride = k.stride;
    c.epochs = k.epochs;
    c.outEntry = k.out[c.entry];
    c.inEntry = k.in[c.entry];
    // The index is an argument of every call: still checked every call.
    // The pointers' alignment joins the check only so that the branch
    // depends on every load (as in loadComm): otherwise the compiler sinks
    // the loads below it and they cost a second shared-memory round trip.
    const uintptr_t misaligned = (reinterpret_cast<uintptr_t>(c.epochs) |
                                  reinterpret_cast<uintptr_t>(c.outEntry) |
                                  reinterpret_cast<uintptr_t>(c.inEntry)) &
                                 (sizeof(uint32_t) - 1);
    if (TLE_UNLIKELY((index >= c.nBarriers) | (misaligned != 0)))
      failCheck(c.dc, index, true, kLabFn);
    return c;
  }
};

//===----------------------------------------------------------------------===//
// How the poll loop keeps its deadline (experiment 2)
//===----------------------------------------------------------------------===//

/// The library's: every 128 failed polls a clock read (tle::impl::onMiss).
struct PollLib {
  static __device__ __forceinline__ void await(const WaitCtx &w, uint32_t first,
                                               uint32_t stride) {
    tle::impl::await(w, first, stride, /*acquire=*/true);
  }
};

/// No bookkeeping at all: the load and the compare (no deadline, so not a
/// candidate for the library; it measures what the bookkeeping costs).
/// A thread with several entries (more than two ranks) uses the library's.
struct PollNone {
  static __device__ __forceinline__ void await(const WaitCtx &w, uint32_t first,
                                               uint32_t stride) {
    if (first + stride < w.count) {
      tle::impl::await(w, first, stride, true);
      return;
    }
    const uint32_t *flag = inFlag(w.c, w.slot, first);
    while (!reached(loadAcquireSys(flag), w.target)) {
    }
  }
};

/// K polls with nothing but the load and the compare, then the library's
/// loop (whose first clock read starts the deadline, K polls late). The K
/// polls are unrolled: a counted loop would carry a counter and a compare
/// per poll, as much bookkeeping as the library's loop has.
template <uint32_t K> struct PollTwoPhase {
  static __device__ __forceinline__ void await(const WaitCtx &w, uint32_t first,
                                               uint32_t stride) {
    if (first + stride < w.count) {
      tle::impl::await(w, first, stride, true);
      return;
    }
    const uint32_t *flag = inFlag(w.c, w.slot, first);
#pragma unroll
    for (uint32_t i = 0; i < K; ++i)
      if (reached(loadAcquireSys(flag), w.target))
        return;
    pollOne<true>(w, flag);
  }
};

/// The stateless block-group sync with acq_rel order: tle::impl::groupWait
/// with arrive = true, minus the argument checks that constant arguments
/// remove anyway and the trace hooks that are empty on GPUs.
template <class Src, class Poll>
__device__ __forceinline__ void labSync(const void *comm, uint32_t index) {
  syncBlock();
  const uint32_t t = threadIdx.x;
  if (t < kWarpSize) {
    Comm c = Src::load(comm, index, t);
    const uint32_t workers = minU(c.size - 1, blockDim.x);
    if (t < workers)
      arriveAt(c, index, t, workers, kOrderAcqRel);
    uint32_t next = 0;
    if (t < workers || t == 0)
      next = loadRelaxedGpu(epochWord(c, index)) + 1;
    WaitCtx w{c, index, next, c.size - 1, "barrier wait", kLabFn};
    if (workers > 1) {
      syncWarp();
      if (t == 0)
        storeRelaxedGpu(epochWord(c, index), next);
      if (t < workers)
        Poll::await(w, t, workers);
    } else if (t == 0) {
      if (workers == 1)
        Poll::await(w, 0, 1);
      storeRelaxedGpu(epochWord(c, index), next);
    }
  }
  syncBlock();
}

} // namespace tle::lab

#endif // TLE_BENCH_LAB_LABBARRIERS_CUH
