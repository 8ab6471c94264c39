//===- NcclNet.h - NCCL's GPU-initiated networking for TLE's words --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The network of a communicator made from an NCCL communicator that spans
// nodes (or asked for one with TLE_NETWORK=gin): an NCCL device communicator
// (ncclDevCommCreate) whose GIN signals are TLE's net words
// (tle/detail/DevComm.h), and its copy in device memory that
// DevComm::net points at (tle/impl/NetNccl.h reads it). libtle is built
// without NCCL's headers and never links NCCL, so the two structs it passes
// are declared here with NCCL 2.28's layout, and creation refuses any
// other NCCL minor version; integration_test/GinProbe.cu checks the layout
// against NCCL's own header.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_HOST_NCCLNET_H
#define TLE_HOST_NCCLNET_H

#include "backends/Backend.h"
#include "bootstrap/NcclBootstrap.h"

#include <cstdint>
#include <memory>

namespace tle {

/// NCCL 2.28's ncclDevCommRequirements.
struct NcclDevCommRequirements228 {
  void *resourceRequirementsList;
  void *teamRequirementsList;
  bool lsaMultimem;
  int barrierCount;
  int lsaBarrierCount;
  int railGinBarrierCount;
  int lsaLLA2ABlockCount;
  int lsaLLA2ASlotCount;
  bool ginForceEnable;
  int ginContextCount;
  int ginSignalCount;
  int ginCounterCount;
};
static_assert(sizeof(NcclDevCommRequirements228) == 56,
              "NCCL 2.28's ncclDevCommRequirements is 56 bytes");

/// NCCL 2.28's ncclDevComm: the leading fields TLE reads, the rest opaque.
struct alignas(8) NcclDevComm228 {
  int rank;
  int nRanks;
  uint32_t nRanksRcp32;
  int lsaRank; ///< rank in the LSA team: the ranks this one reaches by
               ///< loads and stores (its node)
  int lsaSize;
  unsigned char rest[200 - 5 * sizeof(int)];
};
static_assert(sizeof(NcclDevComm228) == 200,
              "NCCL 2.28's ncclDevComm is 200 bytes");

/// nccl.h's NCCL_WIN_COLL_SYMMETRIC: the window every rank registers at the
/// same offsets, whose device handle GIN's puts name (ginWins).
constexpr int kNcclWinCollSymmetric = 0x01;

/// One buffer's NCCL window (ncclCommWindowRegister), deregistered when
/// destroyed: a symmetric buffer's on a GIN communicator (SymMem::netWindow
/// holds handle()). It keeps its own copy of the functions and the NCCL
/// communicator, which must outlive it (tle.h: the NCCL communicator
/// outlives TLE's collective calls, tleMemFree included). Whether NCCL's
/// deregistration waits for the other ranks is not measured
/// (docs/runtime.md, "One-sided transfers over GIN").
class NcclWindow {
public:
  NcclWindow(const NcclApi &api, void *comm, void *window)
      : api(api), comm(comm), window(window) {}
  ~NcclWindow();
  NcclWindow(const NcclWindow &) = delete; // owns the registration
  NcclWindow &operator=(const NcclWindow &) = delete;
  /// The ncclWindow_t: NCCL's handle, which kernels read (device memory).
  const void *handle() const { return window; }

private:
  NcclApi api;
  void *comm;
  void *window;
};

/// NCCL 2.28.x (NCCL_VERSION_CODE 22800..22899): the layout above.
constexpr int kNcclDevApiVersionMin = 22800;
constexpr int kNcclDevApiVersionEnd = 22900;

/// One rank's GIN network: the NCCL device communicator and its copy in
/// device memory. Destroying it destroys both.
class NcclNet {
public:
  ~NcclNet();
  const NcclDevComm228 &devComm() const { return host; }
  /// DevComm::net: the copy in device memory.
  const void *deviceCopy() const { return device; }

  /// Creates the NCCL device communicator of `comm` with `nNetWords` GIN
  /// signals (ids 0..nNetWords-1) in one network context, GIN forced on,
  /// and copies it to `backend`'s device memory. Fails with
  /// tleNotSupported, NCCL's words attached, when this NCCL has no device
  /// API or cannot make GIN here (no GIN-capable network). Collective over
  /// `comm`, as ncclDevCommCreate is.
  static tleResult_t create(const NcclApi &api, void *comm, uint32_t nNetWords,
                            uint32_t nCounters,
                            std::shared_ptr<Backend> backend,
                            std::unique_ptr<NcclNet> &out);

  /// Registers this rank's copy of a symmetric buffer (`bytes` at `local`)
  /// as an NCCL window for GIN's puts: collective over the NCCL
  /// communicator, as ncclCommWindowRegister is, so every rank of the world
  /// calls it for every buffer (tleMemAlloc is collective over them all).
  /// NCCL's symmetric windows take only memory it can map (cuMem, as
  /// ncclMemAlloc and tleAllocCuMem allocate); where NCCL refuses, or this
  /// NCCL's functions lack windows, `out` stays null and the log says why:
  /// the buffer still serves everything but GIN transfers, which a kernel
  /// then sees refused with a located report (kNotServedNoWindow).
  void registerWindow(void *local, size_t bytes, int rank,
                      std::unique_ptr<NcclWindow> &out) const;

private:
  NcclNet() = default;
  NcclApi api;
  void *comm = nullptr;
  NcclDevComm228 host = {};
  std::shared_ptr<Backend> backend;
  void *device = nullptr;
  bool created = false;
};

} // namespace tle

#endif // TLE_HOST_NCCLNET_H
