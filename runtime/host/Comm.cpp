//===- Comm.cpp - Creating, querying and destroying communicators -*- C++ -*-=//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The C API of communicators. Every creation path builds the same state per
// rank: epochs and grid counters in local memory, the error record in
// host-visible memory, the inbox and the signal words as symmetric memory,
// and finally the DevComm, assembled on the host and copied into local
// (device) memory.
// tleCommInitRank does it with a socket bootstrap, one process per rank;
// tleCommInitAll for every rank at once from one thread, leaving the ranks
// an in-process rendezvous for later collectives such as tleMemAlloc;
// tleCommInitFromNccl (CommFromNccl.cpp) over an NCCL communicator.
// On any failure everything built so far is released before returning.
//
//===----------------------------------------------------------------------===//

#include "Comm.h"
#include "CommInternal.h"
#include "DevError.h"
#include "Error.h"
#include "Handles.h"
#include "NcclBootstrap.h"
#include "NcclNet.h"

#include "tle/detail/Log.h"

#include <cstdlib>
#include <cstring>

namespace tle {

CommState::~CommState() {
  // The watchdog writes the record: stop it before the record goes.
  if (bootstrap)
    bootstrap->stopWatching();
  if (worldBootstrap)
    worldBootstrap->stopWatching();
  if (backend) {
    // A stale DevComm must not pass the library's magic check on memory
    // free() leaves as it was.
    if (devComm) {
      DevComm cleared = {};
      backend->copyToLocal(devComm, &cleared, sizeof(cleared));
      backend->freeLocal(devComm);
    }
    if (epochs)
      backend->freeLocal(epochs);
    if (gridCount)
      backend->freeLocal(gridCount);
    if (shadows)
      backend->freeLocal(shadows);
    if (errorHost)
      backend->freeHostVisible(errorHost);
    if (traceHost)
      backend->freeHostVisible(traceHost);
    if (traceNext)
      backend->freeLocal(traceNext);
  }
  inbox.reset();
  signals.reset();
  netWords.reset();
  bootstrap.reset();
}

namespace {

/// Allocates the rank-local parts of `c` (not the inbox).
tleResult_t allocateLocalState(CommState &c) {
  Backend &b = *c.backend;
  size_t words = c.config.nBarriers * sizeof(uint32_t);
  void *p;
  // Every team's epochs (kEpochSets), on every communicator: a kernel
  // written for INTER or WORLD runs on one node too.
  if (tleResult_t r = b.allocLocal(kEpochSets * words, &p))
    return r;
  c.epochs = static_cast<uint32_t *>(p);
  if (tleResult_t r = b.allocLocal(words, &p))
    return r;
  c.gridCount = static_cast<uint32_t *>(p);
  void *host, *dev;
  if (tleResult_t r = b.allocHostVisible(sizeof(ErrorRecord), &host, &dev))
    return r;
  c.errorHost = static_cast<ErrorRecord *>(host);
  c.errorDev = static_cast<ErrorRecord *>(dev);
  c.faults->words[c.faultIndex].store(&c.errorHost->abort);
  if (tleResult_t r = b.allocLocal(sizeof(DevComm), &p))
    return r;
  c.devComm = static_cast<DevComm *>(p);
  // The signal shadows (flagcxDevIncreaseSignalShadow): one per signal
  // word, rank-local.
  if (tleResult_t r = b.allocLocal(c.config.nSignals * sizeof(uint64_t), &p))
    return r;
  c.shadows = static_cast<uint64_t *>(p);
  return tleSuccess;
}

size_t inboxBytes(const CommState &c) {
  return size_t(kInboxSets) * c.config.nBarriers * inboxStrideWords(c.size) *
         sizeof(uint32_t);
}

/// The signal words, then the counters (DevComm::counters): one symmetric
/// allocation, so that a peer's counters are its signals + nSignals.
size_t signalBytes(const CommState &c) {
  return (size_t(c.config.nSignals) + countersOf(c)) * sizeof(uint64_t);
}

/// Assembles the DevComm of `c` and copies it to local memory.
tleResult_t publishDevComm(CommState &c) {
  DevComm d = {};
  d.magic = kDevCommMagic;
  d.version = kDevCommVersion;
  d.rank = c.rank;
  d.size = c.size;
  d.nBarriers = c.config.nBarriers;
  d.inboxStride = inboxStrideWords(c.size);
  d.timeoutNs = c.config.timeoutNs;
  d.epochs = c.epochs;
  d.gridCount = c.gridCount;
  d.error = c.errorDev;
  d.flags = c.config.onErrorReturn ? kDevCommOnErrorReturn : 0;
  std::vector<uint32_t *> inbox(c.size);
  for (int p = 0; p < c.size; ++p)
    inbox[p] = static_cast<uint32_t *>(c.inbox->ptr(p));
  fillRoutes(d, inbox.data());
  d.nSignals = c.config.nSignals;
  for (int p = 0; p < c.size; ++p)
    d.signalPeers[p] =
        static_cast<uint64_t *>(c.signals->ptr(c.signalBase + p));
  d.signals = d.signalPeers[c.rank];
  d.nCounters = countersOf(c);
  d.counters = d.signals + d.nSignals;
  d.shadows = c.shadows;
  d.nContexts = kMaxContexts;
  for (uint32_t k = 0; k < kMaxContexts; ++k)
    d.nets[k] = {kDevNetMagic, k, c.devComm};
  d.node = c.node;
  d.nNodes = c.nNodes;
  d.netKind = kNetNone;
  if (c.net) {
    d.netKind = kNetEmu;
    d.nNetWords = c.config.nSignals + 2 * c.config.nBarriers;
    d.net = c.net.get();
  }
  if (c.ncclNet) {
    d.netKind = kNetNcclGin;
    d.nNetWords = c.config.nSignals + 2 * c.config.nBarriers;
    d.net = c.ncclNet->deviceCopy();
  }
  return c.backend->copyToLocal(c.devComm, &d, sizeof(DevComm));
}

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
  if (tleResult_t r = buildComm(*c, tleSuccess))
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
  std::shared_ptr<EmuNet> net;
  if (nNodes > 1) {
    net = std::make_shared<EmuNet>();
    net->worldSize = static_cast<uint32_t>(nRanks);
    net->nSignals = resolved.nSignals;
  }
  std::vector<std::shared_ptr<CommState>> comms;
  // Each node is a set of its own: its rendezvous, inboxes, signal words
  // and symmetric buffers span its ranks only.
  for (int n = 0; n < nNodes; ++n) {
    auto group = createInProcGroup(perNode, resolved.bootstrapTimeoutMs);
    std::vector<SymmetricView *> inboxes, signals;
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
      c->inbox = std::make_unique<SymmetricView>(c->backend, r, perNode, true);
      c->signals =
          std::make_unique<SymmetricView>(c->backend, r, perNode, true);
      if (tleResult_t s = allocateLocalState(*c))
        return s;
      inboxes.push_back(c->inbox.get());
      signals.push_back(c->signals.get());
      comms.push_back(std::move(c));
    }
    if (tleResult_t s = allocSymmetricAll(inboxes, inboxBytes(*comms.back())))
      return s;
    if (tleResult_t s = allocSymmetricAll(signals, signalBytes(*comms.back())))
      return s;
  }
  if (net)
    for (int w = 0; w < nRanks; ++w) {
      CommState &c = *comms[w];
      c.netBarrierWords.assign(2 * size_t(resolved.nBarriers), 0);
      net->signals[w] = static_cast<uint64_t *>(c.signals->ptr(c.rank));
      net->barrier[w] = c.netBarrierWords.data();
    }
  for (auto &c : comms)
    if (tleResult_t s = publishDevComm(*c))
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

tleResult_t buildComm(CommState &c, tleResult_t prior) {
  c.inbox = std::make_unique<SymmetricView>(c.backend, c.rank, c.size,
                                            !c.multiProcess);
  // Processes on simulated nodes map every world rank's signal words, which
  // the network adds to; the DevComm takes this node's.
  Bootstrap &signalBs = c.worldBootstrap ? *c.worldBootstrap : *c.bootstrap;
  c.signalBase = c.worldBootstrap ? c.node * c.size : 0;
  c.signals = std::make_unique<SymmetricView>(c.backend, signalBs.rank(),
                                              signalBs.size(), !c.multiProcess);
  tleResult_t local = prior;
  if (local == tleSuccess)
    local = allocateLocalState(c);
  // Ranks must agree on the backend as well as on nBarriers and nSignals
  // (the sizes). A failure of the first allocation returns on every rank.
  if (tleResult_t r = allocSymmetric(
          *c.bootstrap, *c.inbox, inboxBytes(c), local,
          static_cast<uint64_t>(c.config.backend), "barrier inboxes"))
    return r;
  if (tleResult_t r = allocSymmetric(
          signalBs, *c.signals, signalBytes(c), tleSuccess,
          static_cast<uint64_t>(c.config.backend), "signal words"))
    return r;
  if (c.worldBootstrap) {
    int world = c.worldBootstrap->size();
    c.netWords = std::make_unique<SymmetricView>(
        c.backend, c.worldBootstrap->rank(), world, false);
    if (tleResult_t r = allocSymmetric(
            *c.worldBootstrap, *c.netWords,
            2 * size_t(c.config.nBarriers) * sizeof(uint64_t), tleSuccess,
            static_cast<uint64_t>(c.config.backend), "net barrier words"))
      return r;
    c.net = std::make_shared<EmuNet>();
    c.net->worldSize = static_cast<uint32_t>(world);
    c.net->nSignals = c.config.nSignals;
    for (int w = 0; w < world; ++w) {
      c.net->signals[w] = static_cast<uint64_t *>(c.signals->ptr(w));
      c.net->barrier[w] = static_cast<uint64_t *>(c.netWords->ptr(w));
    }
  }
  return publishDevComm(c);
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
          c.config.nBarriers, inboxBytes(c), c.backend->sharedMemoryKind(),
          c.config.nSignals,
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
    // The view holds every world rank's words on simulated nodes with one
    // process per rank (signalBase), this node's alone otherwise.
    const auto *own = static_cast<const uint64_t *>(
        comm->signals->ptr(comm->signalBase + comm->rank));
    return comm->backend->copyFromLocal(outValues, own + first,
                                        size_t(count) * sizeof(uint64_t));
  });
}

} // extern "C"
