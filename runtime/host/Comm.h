//===- Comm.h - The host-side communicator and symmetric buffers -*- C++ -*-=//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// What stands behind the opaque tleComm_t and tleMem_t handles (through the
// registry of Handles.h), shared by the files that implement the C API. A
// communicator is one rank's Backend, its Bootstrap channel to the other ranks,
// its barrier inbox (symmetric memory every peer writes into), and the DevComm
// kernels receive. A symmetric buffer is one rank's view of memory that every
// rank allocated together.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_HOST_COMM_H
#define TLE_HOST_COMM_H

#include "Abort.h"
#include "Backend.h"
#include "Bootstrap.h"
#include "tle/detail/DevComm.h"
#include "tle/tle.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tle {

/// uint32 words between consecutive barrier slots of an inbox of `size`
/// ranks: one flag per rank, rounded up to whole 128-byte lines, so ranks
/// spinning on different slots never share a line. The device library reads
/// it from DevComm::inboxStride; this is the one place it is chosen.
constexpr uint32_t inboxStrideWords(int size) {
  return (static_cast<uint32_t>(size) + 31u) / 32u * 32u;
}
/// Upper bound on nBarriers (128 MiB of inbox per rank).
constexpr uint32_t kMaxBarriers = 1u << 20;
/// Upper bound on nSignals (8 MiB of signal words per rank).
constexpr uint32_t kMaxSignals = 1u << 20;
/// Bootstrap step deadline when the config says -1.
constexpr int64_t kDefaultBootstrapTimeoutMs = 30000;
/// Largest timeout in ms whose nanoseconds fit in 63 bits.
constexpr int64_t kMaxTimeoutMs = INT64_MAX / 1000000;

class NcclNet;

/// A tleConfig_t checked and with its defaults applied.
struct ResolvedConfig {
  tleBackend_t backend = tleBackendEmulator;
  uint32_t nBarriers = 64;
  uint32_t nSignals = 64;
  uint64_t timeoutNs = 0;         ///< 0: device waits forever
  int64_t bootstrapTimeoutMs = 0; ///< 0: bootstrap waits forever
  /// Never tleAllocDefault: resolved through TLE_CUDA_ALLOC and
  /// TLE_DEFAULT_ALLOC_NAME.
  tleAllocType_t allocType = tleAllocCudaMalloc;
  /// TLE_ON_ERROR_RETURN (resolved through TLE_ON_ERROR): DevComm::flags
  /// gets kDevCommOnErrorReturn.
  bool onErrorReturn = false;
  /// tleConfig_t::ranksPerNode as given (0: one node); tleCommInitAll
  /// checks it against nRanks.
  uint32_t ranksPerNode = 0;
};

/// Checks `config` (NULL: defaults) and resolves timeoutMs == -1 through
/// the environment variable TLE_BARRIER_TIMEOUT_MS, allocType ==
/// tleAllocDefault through TLE_CUDA_ALLOC.
tleResult_t resolveConfig(const tleConfig_t *config, ResolvedConfig &out);

/// Creates the backend of one rank. `fdsTravel`: the rank's bootstrap can
/// carry file descriptors (needed by cuMem memory across processes).
tleResult_t createBackend(const ResolvedConfig &config, int device,
                          bool multiProcess, bool fdsTravel,
                          std::shared_ptr<Backend> &out);

/// One rank's share of memory that all ranks allocate together: its own
/// block and its mapping of every peer's block (own block at ptr(rank)).
/// Within one process a view keeps the peers' blocks alive, so a rank that
/// frees first never pulls memory from under a peer.
class SymmetricView {
public:
  SymmetricView(std::shared_ptr<Backend> backend, int rank, int size,
                bool sameProcess);
  ~SymmetricView();
  SymmetricView(const SymmetricView &) = delete;
  SymmetricView &operator=(const SymmetricView &) = delete;

  /// Allocates this rank's zero-filled block.
  tleResult_t allocate(size_t bytes);
  /// Makes `bytes` of the user's memory at `ptr` this rank's block instead
  /// (tleMemRegister): exported by Backend::exportRegion, mapped by peers
  /// with importRegion, and never freed by the view.
  tleResult_t adopt(void *ptr, size_t bytes);
  /// What a peer passes to importFrom: the backend's export blob, or within
  /// one process this view's address.
  std::string exportBlob() const;
  /// The descriptor that travels with exportBlob() (-1: none), owned by
  /// the backend.
  int exportFd() const;
  /// Maps `peer`'s block given its exportBlob() and this process's copy of
  /// its exportFd() (-1: none; the caller keeps ownership).
  tleResult_t importFrom(int peer, const std::string &blob, int fd);
  /// Maps `peer`'s block given its view (same process only).
  tleResult_t importFrom(int peer, SymmetricView &view);
  /// Every peer mapped our block: drop its name (see Backend).
  tleResult_t releaseExport();

  void *ptr(int p) const { return ptrs[p]; }
  size_t bytes() const;

private:
  struct Block;
  std::shared_ptr<Backend> backend;
  int rank;
  bool sameProcess;
  bool registered = false; ///< the blocks are user memory (adopt)
  std::shared_ptr<Block> own;
  std::vector<void *> ptrs;
  std::vector<std::shared_ptr<Block>> peerBlocks;
};

/// Packing of one rank's contribution to an exchange, in native byte order:
/// all ranks run on one node. getU64 reads at `at` and advances it; false
/// when `s` is too short.
void putU64(std::string &s, uint64_t v);
bool getU64(const std::string &s, size_t &at, uint64_t &v);

/// All-gathers (this rank's status `local`, `payload`) and the descriptors
/// `myFds`, the step every collective of the host runtime is made of. If
/// this rank failed, returns its own failure; if a peer did, tlePeerFailure
/// with the peer's reason; else payloads[r] is rank r's payload.
tleResult_t gatherStatus(Bootstrap &bs, tleResult_t local,
                         const std::string &payload,
                         const std::vector<int> &myFds,
                         std::vector<std::string> &payloads,
                         std::vector<std::vector<UniqueFd>> &peerFds);

/// The collective allocation of `view` (`bytes` on every rank) through `bs`.
/// `prior` is this rank's status so far: a failure is shared with every rank
/// instead of leaving them waiting. `check` must be equal on all ranks
/// (`what` names the allocation in messages). Ends with every peer mapped
/// and the export released.
tleResult_t allocSymmetric(Bootstrap &bs, SymmetricView &view, size_t bytes,
                           tleResult_t prior, uint64_t check, const char *what);

/// The part of allocSymmetric after the allocation, for a view whose own
/// block is ready (allocated or adopted) or failed with `local`: the
/// exchange, the mappings and the release of the export.
tleResult_t shareSymmetric(Bootstrap &bs, SymmetricView &view, size_t bytes,
                           tleResult_t local, uint64_t check, const char *what);

/// The same for all ranks of one process at once, from one thread.
tleResult_t allocSymmetricAll(const std::vector<SymmetricView *> &views,
                              size_t bytes);

/// The device-side handle of a symmetric buffer; `error` is the
/// communicator's record, where the pointer functions report misuse.
SymMem makeSymMem(const SymmetricView &view, int rank, int size, size_t bytes,
                  ErrorRecord *error);
/// The same from the addresses of every rank's copy as this rank sees them.
SymMem makeSymMem(const std::vector<void *> &ptrs, int rank, size_t bytes,
                  ErrorRecord *error);

/// One rank's communicator: what a tleComm_t names (Handles.h). Its
/// symmetric memory is the barrier inbox and the signal words (nSignals
/// uint64 per rank, DevComm::signalPeers), two collective allocations.
struct CommState {
  int rank = 0; ///< in the node (DevComm::rank)
  int size = 0; ///< ranks per node
  /// With several nodes (the emulator's network, kNetEmu): the world's
  /// table of net words, shared by every rank of the world, and this
  /// rank's own INTER and WORLD barrier words (2 * nBarriers).
  std::shared_ptr<EmuNet> net;
  std::vector<uint64_t> netBarrierWords;
  /// With worldBootstrap: the signal words are mapped for every world rank
  /// (the network reaches them), this node's ranks from signalBase on; and
  /// the INTER and WORLD barrier words are shared memory (netWords).
  int signalBase = 0;
  std::unique_ptr<SymmetricView> netWords;
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
  std::unique_ptr<SymmetricView> inbox;
  std::unique_ptr<SymmetricView> signals;
  uint32_t *epochs = nullptr;
  uint32_t *gridCount = nullptr;
  uint64_t *shadows = nullptr; ///< DevComm::shadows, local memory
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

/// Counter words per rank (DevComm::nCounters): as many as signal words.
inline uint32_t countersOf(const CommState &c) { return c.config.nSignals; }

/// tleSuccess while `c`'s fault word is 0; else the status of the fault
/// (tleAborted, tlePeerFailure, a failed wait's under onError = return)
/// with a detail that says the communicator can only be destroyed.
tleResult_t checkUsable(const CommState &c);

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

/// nRanks within what the DevComm layout serves, else tleInvalidArgument.
tleResult_t checkRanks(int nRanks);

/// Completes rank `c` once its rank, size, config, backend (may be null
/// when `prior` failed) and bootstrap are set: local state, the inbox
/// (collective through c.bootstrap; `prior`, this rank's status so far, is
/// shared with every rank so that all fail together) and the DevComm.
tleResult_t buildComm(CommState &c, tleResult_t prior);

/// The INFO line of a new communicator: what a user debugging a job checks
/// first (ranks, backend, slots, memory, timeout); `how` says how it was
/// made.
void logCreated(const CommState &c, int device, const char *how);

/// The communicators of a ...All call (tleMemAllocAll, tleMemImportAll):
/// every rank of one tleCommInitAll set, in rank order. Sets the nRanks
/// outMems to NULL first.
tleResult_t lookupCommSet(const tleComm_t *handles, int nRanks,
                          tleMem_t *outMems,
                          std::vector<std::shared_ptr<CommState>> &comms);

/// A symmetric buffer's state for communicator `c` (its view still empty);
/// the local memory of its device-side handle; the handle's contents,
/// published from the view (Memory.cpp).
std::shared_ptr<MemState> newMem(CommState &c, size_t bytes);
tleResult_t allocHandle(MemState &m);
tleResult_t publishHandle(MemState &m);
/// The INFO line of a buffer mapped into every peer.
void logMapped(const MemState &m);

} // namespace tle

#endif // TLE_HOST_COMM_H
