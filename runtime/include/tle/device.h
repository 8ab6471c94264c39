//===- device.h - TLE device ABI: the intra-node barrier ---------*- C++
//-*-===//
//
// The device ABI of TLE as CUDA C++ kernels (nvcc or clang) and emulator
// kernels (host C++) see it. Compiled as CUDA, this header also pulls in the
// implementation, so a kernel built with `nvcc -arch=sm_90` gets the
// functions inline and needs neither -rdc nor a library; compiled as plain
// C++ it only declares them, and libtle (the emulator build) defines them.
// Names and encodings are FlagCX's, so IR that calls FlagCX's bitcode links
// against TLE's and the reverse. docs/device-library.md is the long form.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_DEVICE_H
#define TLE_DEVICE_H

#include "tle/detail/DevComm.h"

#include <stdint.h>

namespace tle {
/// Who executes a barrier call together (FlagCX's flagcxCoopKind_t). TileSpan
/// and Lanes carry no size in this ABI; TLE runs them as one full warp.
enum CoopKind : int {
  kCoopThread = 0,
  kCoopWarp = 1,
  kCoopBlock = 2,
  kCoopTileSpan = 3,
  kCoopLanes = 4,
};
/// Memory order of a barrier half (FlagCX's flagcxDeviceMemoryOrder_t).
enum MemoryOrder : int {
  kOrderRelaxed = 0,
  kOrderAcquire = 1,
  kOrderRelease = 2,
  kOrderAcqRel = 3,
  kOrderSeqCst = 4,
};
/// Team of the unified barrier; TLE serves kTeamIntra only.
enum TeamKind : int { kTeamIntra = 0, kTeamInter = 1, kTeamWorld = 2 };
/// Scope of the unified barrier; accepted, the barrier is always system-wide.
enum MemoryScope : int {
  kScopeSystem = 0,
  kScopeDevice = 1,
  kScopeBlock = 2,
  kScopeThread = 3,
};
/// Triton's group encoding (tleTritonBarrier): 0..4 as CoopKind, plus grid.
enum TritonGroupKind : int32_t { kTritonGroupGrid = 5 };
} // namespace tle

#if defined(__CUDACC__) && defined(TLE_DEVICE_EXPORT)
#define TLE_DEVICE_API extern "C" __device__
#elif defined(__CUDACC__)
#define TLE_DEVICE_API extern "C" __device__ __forceinline__
#else
#define TLE_DEVICE_API extern "C" __attribute__((visibility("default")))
#endif

/// Barrier on slot `index` for the group `coopKind`: arrive signals every
/// peer, wait blocks until every peer arrived, sync does both. `multimem` is
/// accepted and served by unicast.
TLE_DEVICE_API void flagcxIntraBarrierArriveS(const void *comm, int coopKind,
                                              uint32_t index, bool multimem,
                                              int order);
TLE_DEVICE_API void flagcxIntraBarrierWaitS(const void *comm, int coopKind,
                                            uint32_t index, bool multimem,
                                            int order);
TLE_DEVICE_API void flagcxIntraBarrierSyncS(const void *comm, int coopKind,
                                            uint32_t index, bool multimem,
                                            int order);

/// FlagCX's unified barrier; `teamKind` must be kTeamIntra, `contextId` is
/// ignored (it selects a network context for other teams).
TLE_DEVICE_API void flagcxDevBarrierArrive(const void *comm, int teamKind,
                                           uint32_t index, int contextId,
                                           int coopKind, int order, int scope);
TLE_DEVICE_API void flagcxDevBarrierWait(const void *comm, int teamKind,
                                         uint32_t index, int contextId,
                                         int coopKind, int order, int scope);
TLE_DEVICE_API void flagcxDevBarrierSync(const void *comm, int teamKind,
                                         uint32_t index, int contextId,
                                         int coopKind, int order, int scope);

/// Grid barrier on slot `index`: every thread of every CTA of the launch on
/// every rank calls it (the launch must be co-resident). At most one grid
/// arrive per CTA may be waiting for its wait.
TLE_DEVICE_API void tleIntraGridBarrierArriveS(const void *comm, uint32_t index,
                                               bool multimem, int order);
TLE_DEVICE_API void tleIntraGridBarrierWaitS(const void *comm, uint32_t index,
                                             bool multimem, int order);
TLE_DEVICE_API void tleIntraGridBarrierSyncS(const void *comm, uint32_t index,
                                             bool multimem, int order);

/// This rank and the number of ranks in the node.
TLE_DEVICE_API int flagcxDevCommGetIntraRank(const void *comm);
TLE_DEVICE_API int flagcxDevCommGetIntraSize(const void *comm);

/// Address of byte `offset` of a symmetric buffer (`mem` is a tle::SymMem*)
/// in this rank's copy, or in peer `peer`'s copy as mapped here.
TLE_DEVICE_API void *flagcxGetLocalPointerS(const void *mem, uint64_t offset);
TLE_DEVICE_API void *flagcxGetIntraPointerS(const void *mem, uint64_t offset,
                                            int peer);

/// Entry points shaped for Triton's extern_elementwise (one result, scalars,
/// addresses as int64). tleTritonBarrier: barrierKind 0 arrive, 1 wait,
/// 2 sync; groupKind a CoopKind or kTritonGroupGrid; returns 0.
TLE_DEVICE_API int32_t tleTritonBarrier(int64_t comm, int32_t barrierKind,
                                        int32_t groupKind, int32_t index,
                                        int32_t order);
TLE_DEVICE_API int32_t tleTritonIntraRank(int64_t comm);
TLE_DEVICE_API int32_t tleTritonIntraSize(int64_t comm);
TLE_DEVICE_API int64_t tleTritonLocalPointer(int64_t mem, int64_t offset);
TLE_DEVICE_API int64_t tleTritonIntraPointer(int64_t mem, int64_t offset,
                                             int32_t peer);

#if defined(__CUDACC__) || defined(TLE_DEVICE_EXPORT)
#include "tle/impl/Barrier.h"
#endif

#endif // TLE_DEVICE_H
