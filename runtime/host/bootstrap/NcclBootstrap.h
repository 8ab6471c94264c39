//===- NcclBootstrap.h - The exchange over an existing NCCL comm ----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The NCCL functions a communicator made from an NCCL communicator calls,
// found at run time (libtle never links NCCL), and the Bootstrap that runs
// TLE's exchanges as NCCL all-gathers on that communicator.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_HOST_NCCLBOOTSTRAP_H
#define TLE_HOST_NCCLBOOTSTRAP_H

#include "backends/Backend.h"
#include "bootstrap/Bootstrap.h"
#include "tle/tle.h"

#include <memory>

namespace tle {

/// tleNcclFunctions_t without its size: what the NCCL bootstrap calls.
struct NcclApi {
  decltype(tleNcclFunctions_t::allGather) allGather = nullptr;
  decltype(tleNcclFunctions_t::commCount) commCount = nullptr;
  decltype(tleNcclFunctions_t::commUserRank) commUserRank = nullptr;
  decltype(tleNcclFunctions_t::commCuDevice) commCuDevice = nullptr;
  decltype(tleNcclFunctions_t::commGetAsyncError) commGetAsyncError = nullptr;
  decltype(tleNcclFunctions_t::getErrorString) getErrorString = nullptr;
  /// NCCL 2.28's device API (NcclNet.h); null when the NCCL lacks it or
  /// the caller's tleNcclFunctions_t predates these members.
  decltype(tleNcclFunctions_t::getVersion) getVersion = nullptr;
  decltype(tleNcclFunctions_t::devCommCreate) devCommCreate = nullptr;
  decltype(tleNcclFunctions_t::devCommDestroy) devCommDestroy = nullptr;
  /// NCCL's windows (NcclNet.h, registerWindow); null as above.
  decltype(tleNcclFunctions_t::commWindowRegister) commWindowRegister = nullptr;
  decltype(tleNcclFunctions_t::commWindowDeregister) commWindowDeregister =
      nullptr;
};

/// The caller's functions (`given`), checked, or with `given` NULL those of
/// the libnccl already loaded in this process (tleNotSupported if none is).
tleResult_t resolveNccl(const tleNcclFunctions_t *given, NcclApi &out);

/// Rank `rank` of `size`'s end of an exchange through NCCL communicator
/// `comm`: staging memory and the stream come from `staging`, a backend of
/// the communicator's device; a step waits at most `timeoutMs` (0: forever).
tleResult_t createNcclBootstrap(const NcclApi &api, void *comm, int rank,
                                int size, std::shared_ptr<Backend> staging,
                                int64_t timeoutMs,
                                std::unique_ptr<Bootstrap> &out);

/// The ranks of this rank's node, world ranks node * nodeSize ..
/// node * nodeSize + nodeSize - 1 of `world` (node-major), as a Bootstrap
/// of their own: rank() is the rank in the node. Each exchange is one of
/// `world`'s, which every world rank joins, keeping this node's entries;
/// a communicator past one node builds its node-local half (inboxes,
/// signal words, symmetric buffers) over it.
std::unique_ptr<Bootstrap> createNodeBootstrap(std::unique_ptr<Bootstrap> world,
                                               int nodeSize);

} // namespace tle

#endif // TLE_HOST_NCCLBOOTSTRAP_H
