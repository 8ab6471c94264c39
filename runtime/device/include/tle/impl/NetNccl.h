//===- NetNccl.h - Net words and transfers over NCCL GIN --------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The GPU network of a communicator that spans nodes (DevComm::netKind ==
// kNetNcclGin): TLE's net words (DevComm.h: the signal words, then the
// INTER and WORLD barrier words) are the GPU-initiated-networking signals
// of an NCCL device communicator, ids 0..nNetWords-1 of GIN context 0;
// its counters are GIN's counters, and one-sided puts are GIN puts between
// the buffers' NCCL windows (SymMem::netWindow; OneSided.h decides what
// goes here, docs/design.md, "One-sided transfers"). NCCL's engine carries
// them (a NIC's queue pairs through DOCA GPUNetIO, or NCCL's proxy
// thread); TLE adds no network code of its own.
//
// Why GIN signals and not ncclGinBarrierSession: a session offers sync
// only, and TLE's barrier splits into arrive and wait. One signal per slot,
// to which every rail peer adds 1 per arrive, gives both halves with
// the counting rule of the intra barrier (impl/Net.h's callers).
//
// Only the nvcc header build includes this file, when the user defines
// TLE_WITH_NCCL_GIN and puts NCCL 2.28's nccl_device.h on the include path
// (docs/runtime.md, "Past one node"): NCCL's device API is CUDA C++ templates
// that need nvcc and libcu++. The clang bitcode and the host build never
// see it; a kNetNcclGin communicator there fails as a corrupt one. A test's
// platform (TLE_TEST_PLATFORM) may bring a fake of that API instead
// (unittests/device/NetTest.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef TLE_IMPL_NETNCCL_H
#define TLE_IMPL_NETNCCL_H

#if defined(TLE_WITH_NCCL_GIN)

#if !defined(__CUDACC__) && !defined(TLE_TEST_PLATFORM)
#error "TLE_WITH_NCCL_GIN needs the nvcc build (NCCL's device API is CUDA C++)"
#endif

#include "tle/detail/DevComm.h"
#include "tle/impl/Platform.h"

#include <nccl_device.h>

namespace tle::impl {

/// The NCCL device communicator the host stored in DevComm::net (a copy of
/// what ncclDevCommCreate returned, in device memory).
TLE_DEV_INLINE const ncclDevComm &ginComm(const DevComm *dc) {
  return *static_cast<const ncclDevComm *>(loadConst(&dc->net));
}

/// GIN's id of TLE's net word `word` (a signal word, then the barrier
/// words) or of counter `counter`, both flat over TLE's network contexts
/// (DevComm.h, kMaxContexts: context c's signal s is word c * nSignals +
/// s). The one place that maps TLE's words to NCCL's ids: ids
/// 0..nNetWords-1 and 0..nContexts * nCounters - 1 of GIN context 0
/// (NcclNet.cpp asks for exactly these).
TLE_DEV_INLINE ncclGinSignal_t ginSignalId(uint32_t word) {
  return static_cast<ncclGinSignal_t>(word);
}
TLE_DEV_INLINE ncclGinCounter_t ginCounterId(uint32_t counter) {
  return static_cast<ncclGinCounter_t>(counter);
}

/// Adds `value` to net word `word` of world rank `worldPeer`, as a release
/// at system scope: GIN's signal takes the scope the release must reach
/// (required) and the scope the caller already released to (given), and
/// fences when the first is wider; with required = system and given =
/// device it issues fence.release.sys before handing the add to the
/// engine (unittests/device/ptx-gin.check pins it). That orders this thread's
/// earlier writes (and, after the caller's group sync, its group's) before the
/// add.
TLE_DEV_INLINE void netAddGin(const DevComm *dc, int32_t worldPeer,
                              uint32_t word, uint64_t value) {
  const ncclDevComm &nc = ginComm(dc);
  ncclGin gin(nc, 0);
  gin.signal(ncclTeamWorld(nc), worldPeer,
             ncclGin_SignalAdd{ginSignalId(word), value}, ncclCoopThread(),
             ncclGin_None{},
             /*required=*/cuda::thread_scope_system,
             /*given=*/cuda::thread_scope_device);
}

/// This rank's net word `word`, a relaxed load (the caller fences, as the
/// intra barrier's polls do).
TLE_DEV_INLINE uint64_t netLoadGin(const DevComm *dc, uint32_t word) {
  ncclGin gin(ginComm(dc), 0);
  return gin.readSignal(ginSignalId(word), 64, cuda::memory_order_relaxed);
}

/// Sets this rank's net word `word` to 0 (GIN's reset: no add may race it).
TLE_DEV_INLINE void netResetGin(const DevComm *dc, uint32_t word) {
  ncclGin gin(ginComm(dc), 0);
  gin.resetSignal(ginSignalId(word));
}

/// A GIN put's completion actions: a signal add at the peer (`signal`,
/// none when `hasSignal` is false) and a counter increment here
/// (`counter`, none when `hasCounter` is false).
struct GinActions {
  bool hasSignal;
  ncclGinSignal_t signal;
  uint64_t value;
  bool hasCounter;
  ncclGinCounter_t counter;
};

/// Calls `f` with GIN's remote and local action objects for `a`: always
/// ncclGin_SignalAdd, never ncclGin_SignalInc, which NCCL forbids to mix
/// with any other operator on a signal between resets (gin.h), and TLE's
/// callers mix SigInc and SigAdd on one signal freely.
template <typename F>
TLE_DEV_INLINE void withGinActions(const GinActions &a, F &&f) {
  if (a.hasSignal && a.hasCounter)
    f(ncclGin_SignalAdd{a.signal, a.value}, ncclGin_CounterInc{a.counter});
  else if (a.hasSignal)
    f(ncclGin_SignalAdd{a.signal, a.value}, ncclGin_None{});
  else if (a.hasCounter)
    f(ncclGin_None{}, ncclGin_CounterInc{a.counter});
  else
    f(ncclGin_None{}, ncclGin_None{});
}

/// Hands NCCL's engine a put of `bytes` from this rank's copy of window
/// `srcWin` at `srcOffset` to world rank `worldPeer`'s copy of `dstWin` at
/// `dstOffset`, then the actions `a`. Called by one thread after its
/// group's sync (the group's writes of the source are then this thread's
/// to release), so GIN's group is that thread. As netAddGin: a release at
/// system scope (the engine, a NIC or NCCL's proxy, reads the source
/// outside the GPU), so GIN fences.release.sys before the hand-off. NCCL
/// orders the signal after this put's data and every earlier put's on
/// this context to the same peer; the counter moves once the source was
/// read.
TLE_DEV_INLINE void netPutGin(const DevComm *dc, int32_t worldPeer,
                              const void *dstWin, uint64_t dstOffset,
                              const void *srcWin, uint64_t srcOffset,
                              uint64_t bytes, const GinActions &a) {
  const ncclDevComm &nc = ginComm(dc);
  ncclGin gin(nc, 0);
  auto dst = static_cast<ncclWindow_t>(const_cast<void *>(dstWin));
  auto src = static_cast<ncclWindow_t>(const_cast<void *>(srcWin));
  withGinActions(a, [&](auto remote, auto local) {
    gin.put(ncclTeamWorld(nc), worldPeer, dst, dstOffset, src, srcOffset, bytes,
            remote, local, ncclCoopThread(), ncclGin_None{},
            /*required=*/cuda::thread_scope_system,
            /*given=*/cuda::thread_scope_device);
  });
}

/// netPutGin of one 64-bit `value` the call carries (GIN's putValue: the
/// value travels in the descriptor, no source window), then the signal of
/// `a` (a put-value has no local action).
TLE_DEV_INLINE void netPutValueGin(const DevComm *dc, int32_t worldPeer,
                                   const void *dstWin, uint64_t dstOffset,
                                   uint64_t value, const GinActions &a) {
  const ncclDevComm &nc = ginComm(dc);
  ncclGin gin(nc, 0);
  auto dst = static_cast<ncclWindow_t>(const_cast<void *>(dstWin));
  withGinActions({a.hasSignal, a.signal, a.value, false, 0},
                 [&](auto remote, auto) {
                   gin.putValue(ncclTeamWorld(nc), worldPeer, dst, dstOffset,
                                value, remote, ncclCoopThread(), ncclGin_None{},
                                /*required=*/cuda::thread_scope_system,
                                /*given=*/cuda::thread_scope_device);
                 });
}

/// Waits until NCCL's engine read the source of every put this thread
/// handed it (GIN's flush: "safe to reuse"; it does not say the data
/// landed), with an acquire.
TLE_DEV_INLINE void netFlushGin(const DevComm *dc) {
  ncclGin gin(ginComm(dc), 0);
  gin.flush(ncclCoopThread(), cuda::memory_order_acquire);
}

/// This rank's GIN counter `counter` (flat over the contexts), a relaxed
/// load of its 56 bits (GIN's counters carry no more; the caller fences).
TLE_DEV_INLINE uint64_t netCounterLoadGin(const DevComm *dc, uint32_t counter) {
  ncclGin gin(ginComm(dc), 0);
  return gin.readCounter(ginCounterId(counter), 56, cuda::memory_order_relaxed);
}

/// Sets this rank's GIN counter `counter` to 0 (no put may race it).
TLE_DEV_INLINE void netCounterResetGin(const DevComm *dc, uint32_t counter) {
  ncclGin gin(ginComm(dc), 0);
  gin.resetCounter(ginCounterId(counter));
}

} // namespace tle::impl

#endif // TLE_WITH_NCCL_GIN

#endif // TLE_IMPL_NETNCCL_H
