//===- Memory.h - Symmetric buffers: what a tleMem_t names ------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// One rank's handle of a symmetric buffer, shared by the files that
// implement the C API of buffers (Memory.cpp, Import.cpp, Register.cpp)
// and the emulator's reports.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_HOST_MEMORY_MEMORY_H
#define TLE_HOST_MEMORY_MEMORY_H

#include "backends/nccl/NcclNet.h"
#include "comm/Comm.h"
#include "memory/Symmetric.h"

#include <memory>
#include <vector>

namespace tle {

/// One rank's handle of a symmetric buffer: what a tleMem_t names. It owns
/// a reference to the backend, so it stays valid after its communicator
/// is destroyed.
struct MemState {
  int rank = 0;
  int size = 0;
  size_t bytes = 0;
  /// The communicator's error record (device address) for SymMem::error.
  ErrorRecord *error = nullptr;
  std::shared_ptr<Backend> backend;
  std::unique_ptr<SymmetricView> view; ///< null for imported memory
  /// Imported memory (tleMemImport): every rank's copy as this rank
  /// addresses it. TLE owns none of it.
  std::vector<void *> imported;
  SymMem *handle = nullptr;
  /// On the emulator's nodes (kNetEmu): every world rank's copy of this
  /// buffer (SymMem::worldPtrs), shared with the buffers of the other nodes
  /// it pairs with (WorldBuffers.cpp); null otherwise.
  std::shared_ptr<std::vector<void *>> worldPtrs;
  /// One process per rank on simulated nodes (CommState::worldBootstrap):
  /// registered memory mapped for every world rank, which fills worldPtrs;
  /// null otherwise.
  std::unique_ptr<SymmetricView> worldView;
  /// On an NCCL GIN communicator: this rank's copy registered as an NCCL
  /// window (SymMem::netWindow), or null where NCCL refused it.
  std::unique_ptr<NcclWindow> netWindow;

  void *localPtr() const { return view ? view->ptr(rank) : imported[rank]; }
  ~MemState();
};

/// On the emulator's nodes in one process: gives `mems`, one node's ranks
/// of its next tleMemAllocAll buffer, the table of every world rank's copy
/// that the same call of the other nodes fills (SymMem::worldPtrs), so the
/// simulated network can reach a peer's copy on another node. Nothing
/// without a multi-node EmuNet.
void pairWorldBuffers(const std::vector<std::shared_ptr<CommState>> &comms,
                      const std::vector<std::shared_ptr<MemState>> &mems);

/// The communicators of a ...All call (tleMemAllocAll, tleMemImportAll):
/// every rank of one tleCommInitAll set, in rank order. Sets the nRanks
/// outMems to NULL first.
tleResult_t lookupCommSet(const tleComm_t *handles, int nRanks,
                          tleMem_t *outMems,
                          std::vector<std::shared_ptr<CommState>> &comms);

/// On an NCCL GIN communicator, registers `m`'s copy as an NCCL window
/// (NcclNet::registerWindow); nothing elsewhere.
void registerNetWindow(const CommState &c, MemState &m);

/// A symmetric buffer's state for communicator `c` (its view still empty);
/// the local memory of its device-side handle; the handle's contents,
/// published from the view (Memory.cpp).
std::shared_ptr<MemState> newMem(CommState &c, size_t bytes);
tleResult_t allocHandle(MemState &m);
tleResult_t publishHandle(MemState &m);
/// The INFO line of a buffer mapped into every peer.
void logMapped(const MemState &m);

} // namespace tle

#endif // TLE_HOST_MEMORY_MEMORY_H
