//===- Comm.h - The host-side communicator ----------------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// What stands behind the opaque tleComm_t handle (through the registry of
// Handles.h): one rank's Backend, its Bootstrap channel to the other ranks,
// the memory its features asked for (Requirement.h) and the DevComm kernels
// receive. Buffers are memory/Memory.h's, configs comm/Config.h's.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_HOST_COMM_H
#define TLE_HOST_COMM_H

#include "bootstrap/Bootstrap.h"
#include "comm/Config.h"
#include "comm/Requirement.h"
#include "diag/Abort.h"
#include "memory/Symmetric.h"
#include "tle/detail/DevComm.h"
#include "tle/tle.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tle {

class NcclNet;

/// One allocation of a communicator's features (comm/Requirement.h), which
/// the CommState frees.
struct CommMemory {
  MemoryKind kind = MemoryKind::Local;
  const char *name = "";
  size_t bytes = 0;
  void *mem = nullptr;  ///< Local, HostVisible: the device address
  void *host = nullptr; ///< HostVisible: the host address
  std::unique_ptr<SymmetricView> view; ///< Symmetric
};

/// One rank's communicator: what a tleComm_t names (Handles.h). Its memory
/// is what its features asked for (comm/features/), assembled by
/// assembleComm or assembleAll; the pointers below into it are the ones
/// host code reads after creation.
struct CommState {
  int rank = 0; ///< in the node (DevComm::rank)
  int size = 0; ///< ranks per node
  /// With several nodes on the emulator's network (kNetEmu, worldByMemory):
  /// the world's table of net words, shared by every rank of a world in
  /// one process, and every world rank's signal words as mapped here (the
  /// signal feature keeps them for the net feature).
  std::shared_ptr<EmuNet> net;
  std::vector<uint64_t *> worldSignals;
  bool multiProcess = false;
  ResolvedConfig config;
  std::shared_ptr<Backend> backend;
  /// One process per rank on simulated nodes (tleCommInitRank with
  /// ranksPerNode): the socket bootstrap of the whole world, which
  /// `bootstrap`, this node's view of it (createNodeBootstrap), owns; else
  /// null.
  Bootstrap *worldBootstrap = nullptr;
  std::unique_ptr<Bootstrap> bootstrap;
  /// The rendezvous of a tleCommInitAll set (null for tleCommInitRank).
  std::shared_ptr<InProcGroup> group;
  /// Everything the features asked for, in assembly order.
  std::vector<CommMemory> memory;
  uint32_t *epochs = nullptr;     ///< DevComm::epochs
  uint64_t *ownSignals = nullptr; ///< DevComm::signals
  ErrorRecord *errorHost = nullptr;
  ErrorRecord *errorDev = nullptr;
  DevComm *devComm = nullptr;
  /// The barrier's trace ring (tleCommTraceStart): host and device views,
  /// its index counter (local memory), and the last event taken (seq).
  TraceRing *traceHost = nullptr;
  TraceRing *traceDev = nullptr;
  uint64_t *traceNext = nullptr;
  uint64_t traceTaken = 0;
  /// The fault words tleCommAbort sets (Abort.h): this rank's alone, or
  /// shared by a tleCommInitAll set, where this rank's is words[rank].
  std::shared_ptr<FaultGroup> faults = std::make_shared<FaultGroup>(1);
  int faultIndex = 0;
  int abortSlot = -1; ///< armAbort's slot, from registerComm to destroy
  /// Nodes (DevComm::node, nNodes; docs/design.md, "Teams"): `rank` and
  /// `size` above are this rank's in its node, the world rank is node *
  /// size + rank.
  int node = 0;
  int nNodes = 1;
  /// The GPU network of a communicator made from NCCL past one node (or
  /// with TLE_NETWORK=gin): DevComm::netKind kNetNcclGin.
  std::unique_ptr<NcclNet> ncclNet;
  /// tleMemAllocAll calls of this node so far (rank 0's count): the k-th of
  /// every node are one world buffer to the emulator's network.
  uint64_t worldBuffers = 0;

  ~CommState();
};

/// The world's ranks reach each other's memory by address (the emulator's
/// network, kNetEmu): signal and net words are symmetric over the world.
inline bool worldByMemory(const CommState &c) {
  return c.nNodes > 1 && !c.ncclNet;
}

/// tleSuccess while `c`'s fault word is 0; else the status of the fault
/// (tleAborted, tlePeerFailure, a failed wait's under onError = return)
/// with a detail that says the communicator can only be destroyed.
tleResult_t checkUsable(const CommState &c);

/// nRanks within what the DevComm layout serves, else tleInvalidArgument.
tleResult_t checkRanks(int nRanks);

/// Completes rank `c` once its rank, size, nodes, config, backend (may be
/// null when `prior` failed) and bootstraps are set: every feature's memory
/// (Assembly.cpp), exchanged through c.bootstrap and c.worldBootstrap
/// (`prior`, this rank's status so far, is shared with every rank so that
/// all fail together), and the DevComm.
tleResult_t assembleComm(CommState &c, tleResult_t prior);

/// The same for every rank of a world in this process, from one thread
/// (tleCommInitAll): `ranks` in world order, each with its backend.
tleResult_t assembleAll(const std::vector<CommState *> &ranks);

/// Bytes of `c`'s allocation named `name` (Requirement::name), 0 if none.
size_t commBytes(const CommState &c, const char *name);

/// The INFO line of a new communicator: what a user debugging a job checks
/// first (ranks, backend, slots, memory, timeout); `how` says how it was
/// made.
void logCreated(const CommState &c, int device, const char *how);

} // namespace tle

#endif // TLE_HOST_COMM_H
