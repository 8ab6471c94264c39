//===- Comm.cpp - Creating, querying and destroying communicators ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The C API of communicators. Every creation path chooses the topology, the
// backend and how ranks exchange, then assembles the same state per rank
// from the communicator's features (Assembly.cpp, comm/features/).
// tleCommInitRank does it with a socket bootstrap, one process per rank;
// tleCommInitAll for every rank at once from one thread, leaving the ranks
// an in-process rendezvous for later collectives such as tleMemAlloc;
// tleCommInitFromNccl (CommFromNccl.cpp) over an NCCL communicator.
// On any failure everything built so far is released before returning.
//
//===----------------------------------------------------------------------===//

#include "comm/Comm.h"
#include "backends/nccl/NcclNet.h"
#include "bootstrap/NcclBootstrap.h"
#include "comm/CommInternal.h"
#include "comm/Handles.h"
#include "diag/DevError.h"
#include "diag/Error.h"

#include "tle/support/Log.h"

#include <cstdlib>
#include <cstring>

namespace tle {

CommState::~CommState() {
  // The watchdog writes the record: stop it before the record goes.
  if (bootstrap)
    bootstrap->stopWatching();
  if (worldBootstrap)
    worldBootstrap->stopWatching();
  if (errorHost)
    forgetTakenRecord(*errorHost); // the job's report keeps a copy
  if (backend) {
    // A stale DevComm must not pass the library's magic check on memory
    // free() leaves as it was.
    if (devComm) {
      DevComm cleared = {};
      backend->copyToLocal(devComm, &cleared, sizeof(cleared));
      backend->freeLocal(devComm);
    }
    for (CommMemory &m : memory)
      if (m.kind == MemoryKind::Local && m.mem)
        backend->freeLocal(m.mem);
      else if (m.kind == MemoryKind::HostVisible && m.host)
        backend->freeHostVisible(m.host);
    if (traceHost)
      backend->freeHostVisible(traceHost);
    if (traceNext)
      backend->freeLocal(traceNext);
  }
  memory.clear();
  bootstrap.reset();
}

namespace {

/// TLE_WATCHDOG: unset, "" or "1" watch the peers' processes, "0" not.
tleResult_t watchdogEnabled(bool &out) {
  const char *v = getenv("TLE_WATCHDOG");
  out = !v || !*v || strcmp(v, "1") == 0;
  if (out || strcmp(v, "0") == 0)
    return tleSuccess;
  return fail(tleInvalidArgument, "TLE_WATCHDOG must be 0 or 1, not '%.32s'",
              v);
}

/// The watchdog saw rank `dead`'s process die: record it where the host
/// reads device failures (if the record is free), then set the fault word,
/// so every wait on the communicator gives up within its check cadence.
void recordPeerFailure(CommState &c, int dead) {
  ErrorRecord &rec = *c.errorHost;
  uint32_t expected = 0;
  if (__atomic_compare_exchange_n(&rec.state, &expected, 1u, false,
                                  __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
    rec.code = kDevErrPeerFailure;
    // World ranks, as `dead` is (docs/runtime.md, "Faults"): the reader
    // does not translate this record from the node's numbering.
    rec.rank = c.node * c.size + c.rank;
    rec.slot = 0;
    rec.epoch = 0;
    rec.missing = {};
    rec.missing.words[dead / 64] = uint64_t(1) << (dead % 64);
    rec.block = -1;
    rec.thread = -1;
    rec.nBarriers = c.config.nBarriers;
    rec.elapsedNs = 0;
    rec.function = static_cast<uint32_t>(abi::Fn::NumFunctions);
    // The first wait that gives up on this record adds its call site
    // (impl::addWaitSite): set before the fault word that makes it give up.
    rec.site = 0;
    __atomic_store_n(&rec.state, 2u, __ATOMIC_RELEASE);
  }
  setFault(*c.faults, kDevErrPeerFailure);
}

/// The simulated nodes of a communicator: tleConfig_t::ranksPerNode, checked
/// against the world's nRanks and the backend.
tleResult_t nodesOf(const ResolvedConfig &config, int nRanks, int &perNode,
                    int &nNodes) {
  perNode =
      config.ranksPerNode ? static_cast<int>(config.ranksPerNode) : nRanks;
  if (config.ranksPerNode > static_cast<uint32_t>(nRanks) ||
      nRanks % perNode != 0)
    return fail(tleInvalidArgument,
                "config.ranksPerNode %u does not divide the world's %d ranks "
                "into equal nodes",
                config.ranksPerNode, nRanks);
  nNodes = nRanks / perNode;
  if (nNodes > 1 && config.backend == tleBackendCuda)
    return fail(tleNotSupported,
                "%d nodes on the CUDA backend: nodes are simulated on the "
                "emulator only; on GPUs, nodes come from "
                "tleCommInitFromNccl's network backend",
                nNodes);
  return tleSuccess;
}

tleResult_t initRank(tleComm_t *outComm, int nRanks, const tleUniqueId *id,
                     int rank, int device, const tleConfig_t *config) {
  if (!outComm)
    return fail(tleInvalidArgument, "outComm is NULL");
  *outComm = nullptr;
  if (tleResult_t r = checkRanks(nRanks))
    return r;
  if (rank < 0 || rank >= nRanks)
    return fail(tleInvalidArgument, "rank %d is not in 0..%d", rank,
                nRanks - 1);
  if (!id)
    return fail(tleInvalidArgument, "id is NULL");
  auto c = std::make_shared<CommState>();
  if (tleResult_t r = resolveConfig(config, c->config))
    return r;
  int perNode = nRanks, nNodes = 1;
  if (tleResult_t r = nodesOf(c->config, nRanks, perNode, nNodes))
    return r;
  c->rank = rank % perNode;
  c->size = perNode;
  c->node = rank / perNode;
  c->nNodes = nNodes;
  c->multiProcess = true;
  // Before joining: a bad value fails this rank alone and at once, instead
  // of after every rank has allocated (the others then see it leave).
  bool watchdog = true;
  if (tleResult_t r = watchdogEnabled(watchdog))
    return r;
  if (tleResult_t r = createBackend(c->config, device, true,
                                    /*fdsTravel=*/true, c->backend))
    return r;
  std::unique_ptr<Bootstrap> world;
  if (tleResult_t r = connectSocketBootstrap(
          *id, nRanks, rank, c->config.bootstrapTimeoutMs, world))
    return r;
  if (nNodes > 1) {
    c->worldBootstrap = world.get();
    c->bootstrap = createNodeBootstrap(std::move(world), perNode);
  } else {
    c->bootstrap = std::move(world);
  }
  if (tleResult_t r = assembleComm(*c, tleSuccess))
    return r;
  if (watchdog) {
    CommState *self = c.get(); // the bootstrap, and its watchdog, die first
    Bootstrap &watched = c->worldBootstrap ? *c->worldBootstrap : *c->bootstrap;
    if (tleResult_t r =
            watched.watch([self](int dead) { recordPeerFailure(*self, dead); }))
      return r;
  }
  logCreated(*c, device, "one process per rank");
  *outComm = registerComm(std::move(c));
  return tleSuccess;
}

tleResult_t initAll(tleComm_t *outComms, int nRanks, const int *devices,
                    const tleConfig_t *config) {
  if (tleResult_t r = checkRanks(nRanks))
    return r;
  if (!outComms)
    return fail(tleInvalidArgument, "outComms is NULL");
  for (int r = 0; r < nRanks; ++r)
    outComms[r] = nullptr;
  ResolvedConfig resolved;
  if (tleResult_t r = resolveConfig(config, resolved))
    return r;
  int perNode = nRanks, nNodes = 1;
  if (tleResult_t r = nodesOf(resolved, nRanks, perNode, nNodes))
    return r;
  // tleCommAbort of any rank of the set aborts all of them, on every node.
  auto faults = std::make_shared<FaultGroup>(nRanks);
  // One network for the world (its table filled by assembleAll).
  std::shared_ptr<EmuNet> net;
  if (nNodes > 1)
    net = std::make_shared<EmuNet>();
  std::vector<std::shared_ptr<CommState>> comms;
  std::vector<CommState *> ranks;
  // Each node is a set of its own: its rendezvous and symmetric buffers
  // span its ranks only.
  for (int n = 0; n < nNodes; ++n) {
    auto group = createInProcGroup(perNode, resolved.bootstrapTimeoutMs);
    for (int r = 0; r < perNode; ++r) {
      int world = n * perNode + r;
      auto c = std::make_shared<CommState>();
      c->config = resolved;
      c->rank = r;
      c->size = perNode;
      c->node = n;
      c->nNodes = nNodes;
      c->net = net;
      c->group = group;
      c->faults = faults;
      c->faultIndex = world;
      if (tleResult_t s =
              createBackend(resolved, devices ? devices[world] : world, false,
                            /*fdsTravel=*/false, c->backend))
        return s;
      c->bootstrap = createInProcBootstrap(group, r);
      ranks.push_back(c.get());
      comms.push_back(std::move(c));
    }
  }
  if (tleResult_t s = assembleAll(ranks))
    return s;
  // Ranks sharing a GPU (a supported mode, for developing on one GPU:
  // docs/gpu.md): a barrier's CTAs spin until their peers' arrive, so the
  // ranks' kernels must be resident side by side (tle.torch.SharedGpu
  // refuses grids that cannot be), and their CTAs share the SMs' issue
  // slots while they spin. Said at Info: figures measured that way are not
  // those of one rank per GPU.
  for (int r = 0; devices && resolved.backend == tleBackendCuda && r < nRanks;
       ++r)
    for (int q = 0; q < r; ++q)
      if (devices[q] == devices[r]) {
        TLE_LOG(Info, r,
                "ranks %d and %d share CUDA device %d: their kernels must be "
                "resident at once (a barrier's CTAs spin until the other "
                "rank's arrive), and spinning CTAs of both ranks share the "
                "SMs; figures are not those of one rank per GPU "
                "(docs/gpu.md, \"Ranks sharing one GPU\")",
                q, r, devices[r]);
        break;
      }
  for (int r = 0; r < nRanks; ++r) {
    logCreated(*comms[r], devices ? devices[r] : r,
               "all ranks in this process");
    outComms[r] = registerComm(std::move(comms[r]));
  }
  return tleSuccess;
}

} // namespace

tleResult_t checkUsable(const CommState &c) {
  uint32_t code = __atomic_load_n(&c.errorHost->abort, __ATOMIC_RELAXED);
  if (code == 0)
    return tleSuccess;
  const char *why = code == kDevErrAborted ? "it was aborted (tleCommAbort)"
                    : code == kDevErrPeerFailure ? "a peer process died"
                                                 : "a device wait failed";
  return fail(resultOfDevError(code),
              "the communicator of rank %d is unusable because %s: read its "
              "record (tleCommGetError), then destroy it (tleCommDestroy)",
              c.rank, why);
}

tleResult_t checkRanks(int nRanks) {
  if (nRanks < 1 || nRanks > kMaxRanks)
    return fail(tleInvalidArgument, "nRanks %d is not in 1..%d", nRanks,
                kMaxRanks);
  return tleSuccess;
}

void logCreated(const CommState &c, int device, const char *how) {
  TLE_LOG(Info, c.rank,
          "communicator created: rank %d of %d (%s), backend %s%s, %u barrier "
          "slots, inbox %zu bytes per rank (%s), signal words %u, device "
          "wait timeout %llu ms",
          c.rank, c.size, how,
          c.backend->kind() == tleBackendCuda ? "cuda on device " : "emulator",
          c.backend->kind() == tleBackendCuda ? std::to_string(device).c_str()
                                              : "",
          c.config.nBarriers, commBytes(c, "barrier inboxes"),
          c.backend->sharedMemoryKind(), c.config.nSignals,
          static_cast<unsigned long long>(c.config.timeoutNs / 1000000));
}

tleResult_t getCommInfo(tleComm_t handle, CommInfo &out) {
  return guard("getCommInfo", [&] {
    std::shared_ptr<CommState> comm;
    if (tleResult_t r = lookupComm(handle, comm))
      return r;
    out.rank = comm->rank;
    out.size = comm->size;
    out.devComm = comm->devComm;
    out.errorHost = comm->errorHost;
    out.backend = comm->backend->kind();
    out.multiProcess = comm->multiProcess;
    out.group = comm->group.get();
    return tleSuccess;
  });
}

} // namespace tle

using namespace tle;

extern "C" {

tleResult_t tleGetUniqueId(tleUniqueId *outId) {
  return guard("tleGetUniqueId", [&] {
    if (!outId)
      return fail(tleInvalidArgument, "outId is NULL");
    return makeUniqueId(*outId);
  });
}

tleResult_t tleCommInitRank(tleComm_t *outComm, int nRanks,
                            const tleUniqueId *id, int rank, int device,
                            const tleConfig_t *config) {
  return guard("tleCommInitRank", [&] {
    return initRank(outComm, nRanks, id, rank, device, config);
  });
}

tleResult_t tleCommInitAll(tleComm_t *outComms, int nRanks, const int *devices,
                           const tleConfig_t *config) {
  return guard("tleCommInitAll",
               [&] { return initAll(outComms, nRanks, devices, config); });
}

tleResult_t tleCommDestroy(tleComm_t handle) {
  return guard("tleCommDestroy", [&] {
    std::shared_ptr<CommState> comm;
    // Released here, or when a call another thread is in returns.
    tleResult_t r = unregisterComm(handle, comm);
    if (r != tleSuccess)
      return r;
    // Before the record's memory may go: no abort stores to it after this.
    disarmAbort(comm->abortSlot, *comm->faults, comm->faultIndex);
    TLE_LOG(Trace, comm->rank, "communicator destroyed");
    return r;
  });
}

tleResult_t tleCommRank(tleComm_t handle, int *outRank) {
  return guard("tleCommRank", [&] {
    std::shared_ptr<CommState> comm;
    if (tleResult_t r = lookupComm(handle, comm))
      return r;
    if (!outRank)
      return fail(tleInvalidArgument, "outRank is NULL");
    // The world rank: node-major (docs/design.md, "Teams").
    *outRank = comm->node * comm->size + comm->rank;
    return tleSuccess;
  });
}

tleResult_t tleCommSize(tleComm_t handle, int *outSize) {
  return guard("tleCommSize", [&] {
    std::shared_ptr<CommState> comm;
    if (tleResult_t r = lookupComm(handle, comm))
      return r;
    if (!outSize)
      return fail(tleInvalidArgument, "outSize is NULL");
    *outSize = comm->nNodes * comm->size;
    return tleSuccess;
  });
}

tleResult_t tleCommNode(tleComm_t handle, int *outNode, int *outRanksPerNode) {
  return guard("tleCommNode", [&] {
    std::shared_ptr<CommState> comm;
    if (tleResult_t r = lookupComm(handle, comm))
      return r;
    if (!outNode || !outRanksPerNode)
      return fail(tleInvalidArgument, "outNode or outRanksPerNode is NULL");
    *outNode = comm->node;
    *outRanksPerNode = comm->size;
    return tleSuccess;
  });
}

tleResult_t tleCommBackend(tleComm_t handle, tleBackend_t *outBackend) {
  return guard("tleCommBackend", [&] {
    std::shared_ptr<CommState> comm;
    if (tleResult_t r = lookupComm(handle, comm))
      return r;
    if (!outBackend)
      return fail(tleInvalidArgument, "outBackend is NULL");
    *outBackend = comm->backend->kind();
    return tleSuccess;
  });
}

tleResult_t tleCommGetDevComm(tleComm_t handle, void **outDevComm) {
  return guard("tleCommGetDevComm", [&] {
    std::shared_ptr<CommState> comm;
    if (tleResult_t r = lookupComm(handle, comm))
      return r;
    if (!outDevComm)
      return fail(tleInvalidArgument, "outDevComm is NULL");
    if (tleResult_t r = checkUsable(*comm))
      return r;
    *outDevComm = comm->devComm;
    return tleSuccess;
  });
}

tleResult_t tleCommGetError(tleComm_t handle, tleErrorInfo *info) {
  return guard("tleCommGetError", [&] {
    std::shared_ptr<CommState> comm;
    if (tleResult_t r = lookupComm(handle, comm))
      return r;
    if (!info)
      return fail(tleInvalidArgument, "info is NULL");
    RecordNode node;
    if (comm->nNodes > 1)
      node = {comm->node, comm->size};
    if (!takeErrorRecord(*comm->errorHost, *info, node))
      return tleSuccess;
    return fail(info->result, "%s", info->message);
  });
}

tleResult_t tleCommAbort(tleComm_t handle) {
  // The lock-free path first: this may run in a signal handler.
  if (abortHandle(static_cast<uint64_t>(reinterpret_cast<uintptr_t>(handle))))
    return tleSuccess;
  // A handle the abort table does not hold: a bad one (refused here), or
  // one past the table's size, aborted under the registry's lock.
  return guard("tleCommAbort", [&] {
    std::shared_ptr<CommState> comm;
    if (tleResult_t r = lookupComm(handle, comm))
      return r;
    setFault(*comm->faults, kDevErrAborted);
    return tleSuccess;
  });
}

tleResult_t tleCommGetBarrierEpochs(tleComm_t handle, uint32_t first,
                                    uint32_t count, uint32_t *outEpochs) {
  return guard("tleCommGetBarrierEpochs", [&] {
    std::shared_ptr<CommState> comm;
    if (tleResult_t r = lookupComm(handle, comm))
      return r;
    if (!outEpochs && count)
      return fail(tleInvalidArgument, "outEpochs is NULL");
    // INTRA's epochs, then WORLD's intra half and INTER's (DevComm.h's
    // kEpochSets order); WORLD's inter half repeats WORLD's rounds.
    uint64_t slots = uint64_t(comm->config.nBarriers) * 3;
    if (first > slots || count > slots - first)
      return fail(tleInvalidArgument,
                  "slots %u..%llu are out of range (the communicator has %u "
                  "per team: intra, world, inter)",
                  first, static_cast<unsigned long long>(first) + count,
                  comm->config.nBarriers);
    if (!count)
      return tleSuccess;
    return comm->backend->copyFromLocal(outEpochs, comm->epochs + first,
                                        size_t(count) * sizeof(uint32_t));
  });
}

tleResult_t tleCommGetSignals(tleComm_t handle, uint32_t first, uint32_t count,
                              uint64_t *outValues) {
  return guard("tleCommGetSignals", [&] {
    std::shared_ptr<CommState> comm;
    if (tleResult_t r = lookupComm(handle, comm))
      return r;
    if (!outValues && count)
      return fail(tleInvalidArgument, "outValues is NULL");
    uint32_t words = comm->config.nSignals;
    if (first > words || count > words - first)
      return fail(tleInvalidArgument,
                  "signals %u..%llu are out of range (the communicator has "
                  "%u)",
                  first, static_cast<unsigned long long>(first) + count, words);
    if (!count)
      return tleSuccess;
    return comm->backend->copyFromLocal(outValues, comm->ownSignals + first,
                                        size_t(count) * sizeof(uint64_t));
  });
}

} // extern "C"
