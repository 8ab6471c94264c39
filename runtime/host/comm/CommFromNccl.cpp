//===- CommFromNccl.cpp - A communicator over an NCCL communicator --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// tleCommInitFromNccl: rank, size and device come from the NCCL
// communicator, and every exchange runs through it (NcclBootstrap.h). The
// first exchange finds out how the ranks are spread over processes, which
// NCCL does not say: each process draws a random token once, and ranks
// whose tokens match share a process (one process driving every GPU, as
// after ncclCommInitAll) and share memory by pointer; ranks with distinct
// tokens map each other's memory across processes. A mix of the two is
// refused: a symmetric view shares one way or the other. The same exchange
// checks that every rank runs on this node (the kernel's boot id), since an
// NCCL communicator may span nodes and TLE's memory cannot.
//
//===----------------------------------------------------------------------===//

#include "backends/nccl/NcclNet.h"
#include "bootstrap/NcclBootstrap.h"
#include "comm/Comm.h"
#include "comm/Handles.h"
#include "diag/Error.h"

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <set>

namespace tle {
namespace {

/// 16 random bytes drawn once per process: equal for ranks that share it.
tleResult_t processToken(std::string &out) {
  static std::once_flag once;
  static std::string token;
  static tleResult_t status = tleSuccess;
  std::call_once(once, [] {
    token.resize(16);
    status = randomBytes(token.data(), token.size());
  });
  out = token;
  return status;
}

/// This kernel's boot id ("" when unreadable): equal exactly for processes
/// of one node.
std::string bootId() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(in, id);
  return id;
}

/// Decides from every rank's (token, boot id) whether the ranks share one
/// process and whether they span nodes; fails every rank alike when they
/// are mixed.
tleResult_t spreadOverProcesses(Bootstrap &bs, bool &sameProcess,
                                bool &spansNodes) {
  spansNodes = false;
  std::string token;
  tleResult_t local = processToken(token);
  std::string payload = token + bootId();
  std::vector<std::string> all;
  std::vector<std::vector<UniqueFd>> noFds;
  if (tleResult_t r = gatherStatus(bs, local, payload, {}, all, noFds))
    return r;
  std::set<std::string> processes;
  for (size_t p = 0; p < all.size(); ++p) {
    if (all[p].size() < token.size())
      return fail(tleInternalError, "malformed contribution from rank %zu", p);
    processes.insert(all[p].substr(0, token.size()));
    std::string boot = all[p].substr(token.size());
    std::string boot0 = all[0].substr(token.size());
    if (!boot.empty() && !boot0.empty() && boot != boot0)
      spansNodes = true;
  }
  if (processes.size() != 1 && processes.size() != all.size())
    return fail(tleNotSupported,
                "the NCCL communicator's %zu ranks live in %zu processes: "
                "TLE serves ranks that all share one process or each have "
                "their own",
                all.size(), processes.size());
  sameProcess = processes.size() == 1;
  return tleSuccess;
}

/// TLE_NETWORK: how a communicator made from NCCL reaches other nodes.
enum class NetworkChoice { Auto, Gin, None };

tleResult_t networkChoice(NetworkChoice &out) {
  const char *v = getenv("TLE_NETWORK");
  if (!v || !*v || strcmp(v, "auto") == 0)
    out = NetworkChoice::Auto;
  else if (strcmp(v, "gin") == 0)
    out = NetworkChoice::Gin;
  else if (strcmp(v, "none") == 0)
    out = NetworkChoice::None;
  else
    return fail(tleInvalidArgument,
                "TLE_NETWORK must be auto, gin or none, not '%.32s'", v);
  return tleSuccess;
}

/// The network half of a communicator past one node: NCCL's device
/// communicator with GIN (its signals are the net words), and the split of
/// the world into nodes, which NCCL's LSA team gives (the ranks that reach
/// each other by loads and stores). TLE's world rank is NCCL's rank, and a
/// node is NCCL_rank / nodeSize, so the LSA teams must be node-major runs of
/// equal size (how torchrun and mpirun number ranks). Every rank learns
/// every rank's outcome, so that all fail alike. On success `c` becomes
/// its node's rank (`c.rank`, `c.size`, node-local bootstrap), with
/// `c.node`, `c.nNodes` and `c.ncclNet` set.
tleResult_t joinNetwork(CommState &c, const NcclApi &api, void *ncclComm,
                        int device, bool spansNodes) {
  uint32_t nNetWords = netWordsPerRank(c.config);
  ResolvedConfig localConfig = c.config;
  localConfig.allocType = tleAllocCudaMalloc;
  std::shared_ptr<Backend> local;
  tleResult_t status = createBackend(localConfig, device, false, false, local);
  std::string backendDetail = status ? lastErrorDetail() : std::string();
  std::unique_ptr<NcclNet> net;
  // ncclDevCommCreate is collective: every rank calls it, whatever failed
  // before, or the others would wait in NCCL. The first failure is the one
  // this rank reports.
  tleResult_t created =
      NcclNet::create(api, ncclComm, nNetWords, counterWordsPerRank(c.config),
                      std::move(local), net);
  if (status == tleSuccess)
    status = created;
  else
    setLastErrorDetail(backendDetail);
  // Each rank's LSA rank and size; every rank checks all of them, so that
  // a split TLE cannot serve fails every rank with the same words.
  int lsa[2] = {0, 0};
  if (status == tleSuccess) {
    const NcclDevComm228 &d = net->devComm();
    if (d.nRanks != c.size || d.rank != c.rank)
      status = fail(tleInternalError,
                    "ncclDevCommCreate says rank %d of %d, NCCL said %d of %d",
                    d.rank, d.nRanks, c.rank, c.size);
    lsa[0] = d.lsaRank;
    lsa[1] = d.lsaSize;
  }
  std::vector<std::string> all;
  std::vector<std::vector<UniqueFd>> noFds;
  if (tleResult_t r =
          gatherStatus(*c.bootstrap, status,
                       std::string(reinterpret_cast<char *>(lsa), sizeof(lsa)),
                       {}, all, noFds))
    return r;
  int nodeSize = net->devComm().lsaSize;
  for (size_t p = 0; p < all.size(); ++p) {
    int theirs[2] = {0, 0};
    if (all[p].size() < sizeof(theirs))
      return fail(tleInternalError, "malformed contribution from rank %zu", p);
    memcpy(theirs, all[p].data(), sizeof(theirs));
    if (theirs[1] != nodeSize || c.size % nodeSize != 0 ||
        theirs[0] != static_cast<int>(p) % nodeSize)
      return fail(tleNotSupported,
                  "NCCL rank %zu is LSA rank %d of %d (and rank %d's node has "
                  "%d ranks of %d): TLE needs nodes of equal size with "
                  "node-major ranks (world rank = node * ranks per node + "
                  "local rank)",
                  p, theirs[0], theirs[1], c.rank, nodeSize, c.size);
  }
  if (spansNodes && nodeSize == c.size)
    return fail(tleInternalError,
                "the ranks run on several nodes, but NCCL's LSA team holds "
                "all %d of them",
                c.size);
  c.node = c.rank / nodeSize;
  c.nNodes = c.size / nodeSize;
  c.rank = net->devComm().lsaRank;
  c.size = nodeSize;
  c.bootstrap = createNodeBootstrap(std::move(c.bootstrap), nodeSize);
  c.ncclNet = std::move(net);
  return tleSuccess;
}

/// Asks NCCL one integer about `comm`.
tleResult_t askNccl(int (*fn)(void *, int *), void *comm, const char *what,
                    int &out) {
  int r = fn(comm, &out);
  if (r != 0)
    return fail(tleInvalidArgument,
                "%s failed with NCCL error %d: is ncclComm a live NCCL "
                "communicator?",
                what, r);
  return tleSuccess;
}

tleResult_t initFromNccl(tleComm_t *outComm, void *ncclComm,
                         const tleNcclFunctions_t *functions,
                         const tleConfig_t *config) {
  if (!outComm)
    return fail(tleInvalidArgument, "outComm is NULL");
  *outComm = nullptr;
  if (!ncclComm)
    return fail(tleInvalidArgument, "ncclComm is NULL");
  NcclApi api;
  if (tleResult_t r = resolveNccl(functions, api))
    return r;
  int size, rank, device;
  if (tleResult_t r = askNccl(api.commCount, ncclComm, "ncclCommCount", size))
    return r;
  if (tleResult_t r =
          askNccl(api.commUserRank, ncclComm, "ncclCommUserRank", rank))
    return r;
  if (tleResult_t r =
          askNccl(api.commCuDevice, ncclComm, "ncclCommCuDevice", device))
    return r;
  // A node holds at most kMaxRanks (checked below, once the nodes are
  // known); the world past one node is NCCL's to carry.
  if (size < 1 || rank < 0 || rank >= size)
    return fail(tleInvalidArgument, "NCCL says rank %d of %d", rank, size);
  auto c = std::make_shared<CommState>();
  tleConfig_t cudaDefaults = TLE_CONFIG_INITIALIZER;
  cudaDefaults.backend = tleBackendCuda;
  if (tleResult_t r = resolveConfig(config ? config : &cudaDefaults, c->config))
    return r;
  c->rank = rank;
  c->size = size;
  // Staging memory and the stream of the exchange are local to this rank,
  // so they come from a backend made before anyone knows how the ranks are
  // spread over processes; the communicator gets its own backend after.
  // It allocates nothing peers map, so it never needs cuMem: a type the
  // driver cannot serve must fail in the exchange below, where every rank
  // learns of it, not here, where the others would wait for this rank.
  ResolvedConfig stagingConfig = c->config;
  stagingConfig.allocType = tleAllocCudaMalloc;
  std::shared_ptr<Backend> staging;
  if (tleResult_t r =
          createBackend(stagingConfig, device, false, false, staging))
    return r;
  if (tleResult_t r =
          createNcclBootstrap(api, ncclComm, rank, size, std::move(staging),
                              c->config.bootstrapTimeoutMs, c->bootstrap))
    return r;
  NetworkChoice choice = NetworkChoice::Auto;
  if (tleResult_t r = networkChoice(choice))
    return r;
  bool sameProcess = false, spansNodes = false;
  if (tleResult_t r =
          spreadOverProcesses(*c->bootstrap, sameProcess, spansNodes))
    return r;
  if (spansNodes && choice == NetworkChoice::None)
    return fail(tleInvalidArgument,
                "the NCCL communicator spans nodes and TLE_NETWORK=none: a "
                "TLE communicator without a network serves one node");
  if (spansNodes || choice == NetworkChoice::Gin)
    if (tleResult_t r = joinNetwork(*c, api, ncclComm, device, spansNodes))
      return r;
  // Every rank of a node sees the same size, so all fail alike.
  if (tleResult_t r = checkRanks(c->size))
    return r;
  c->multiProcess = !sameProcess;
  // A backend that cannot serve this spread (cuMem asked for across
  // processes) fails every rank through assembleComm's exchange.
  tleResult_t local = createBackend(c->config, device, c->multiProcess,
                                    /*fdsTravel=*/false, c->backend);
  if (tleResult_t r = assembleComm(*c, local))
    return r;
  logCreated(*c, device,
             sameProcess ? "from an NCCL communicator, ranks in one process"
                         : "from an NCCL communicator, one process per rank");
  *outComm = registerComm(std::move(c));
  return tleSuccess;
}

} // namespace
} // namespace tle

using namespace tle;

extern "C" tleResult_t tleCommInitFromNccl(tleComm_t *outComm, void *ncclComm,
                                           const tleNcclFunctions_t *nccl,
                                           const tleConfig_t *config) {
  return guard("tleCommInitFromNccl",
               [&] { return initFromNccl(outComm, ncclComm, nccl, config); });
}
