//===- NetNccl.h - Net words as NCCL GIN signals ----------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The GPU network of a communicator that spans nodes (DevComm::netKind ==
// kNetNcclGin): TLE's net words (DevComm.h: the signal words, then the
// INTER and WORLD barrier words) are the GPU-initiated-networking signals
// of an NCCL device communicator, ids 0..nNetWords-1 of network context 0.
// NCCL's engine carries them (a NIC's queue pairs through DOCA GPUNetIO, or
// NCCL's proxy thread); TLE adds no network code of its own.
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
             ncclGin_SignalAdd{static_cast<ncclGinSignal_t>(word), value},
             ncclCoopThread(), ncclGin_None{},
             /*required=*/cuda::thread_scope_system,
             /*given=*/cuda::thread_scope_device);
}

/// This rank's net word `word`, a relaxed load (the caller fences, as the
/// intra barrier's polls do).
TLE_DEV_INLINE uint64_t netLoadGin(const DevComm *dc, uint32_t word) {
  ncclGin gin(ginComm(dc), 0);
  return gin.readSignal(static_cast<ncclGinSignal_t>(word), 64,
                        cuda::memory_order_relaxed);
}

/// Sets this rank's net word `word` to 0 (GIN's reset: no add may race it).
TLE_DEV_INLINE void netResetGin(const DevComm *dc, uint32_t word) {
  ncclGin gin(ginComm(dc), 0);
  gin.resetSignal(static_cast<ncclGinSignal_t>(word));
}

} // namespace tle::impl

#endif // TLE_WITH_NCCL_GIN

#endif // TLE_IMPL_NETNCCL_H
