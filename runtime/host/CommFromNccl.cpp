//===- CommFromNccl.cpp - A communicator over an NCCL communicator -*- C++ -*-//
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

#include "Comm.h"
#include "Error.h"
#include "Handles.h"
#include "NcclBootstrap.h"

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
/// process; fails every rank alike when they span nodes or are mixed.
tleResult_t spreadOverProcesses(Bootstrap &bs, bool &sameProcess) {
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
      return fail(tleInvalidArgument,
                  "rank %zu of the NCCL communicator runs on another node "
                  "than rank 0: a TLE communicator spans the GPUs of one "
                  "node",
                  p);
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
  if (tleResult_t r = checkRanks(size))
    return r;
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
  bool sameProcess = false;
  if (tleResult_t r = spreadOverProcesses(*c->bootstrap, sameProcess))
    return r;
  c->multiProcess = !sameProcess;
  // A backend that cannot serve this spread (cuMem asked for across
  // processes) fails every rank through buildComm's exchange.
  tleResult_t local = createBackend(c->config, device, c->multiProcess,
                                    /*fdsTravel=*/false, c->backend);
  if (tleResult_t r = buildComm(*c, local))
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
