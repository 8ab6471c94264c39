//===- NcclNet.cpp - NCCL's GPU-initiated networking for TLE's words -----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// See NcclNet.h.
//
//===----------------------------------------------------------------------===//

#include "backends/nccl/NcclNet.h"

#include "diag/Error.h"

#include "tle/support/Log.h"

namespace tle {

NcclNet::~NcclNet() {
  if (device)
    backend->freeLocal(device);
  if (created)
    api.devCommDestroy(comm, &host);
}

NcclWindow::~NcclWindow() {
  if (window && api.commWindowDeregister)
    api.commWindowDeregister(comm, window);
}

void NcclNet::registerWindow(void *local, size_t bytes, int rank,
                             std::unique_ptr<NcclWindow> &out) const {
  out.reset();
  if (!api.commWindowRegister || !api.commWindowDeregister) {
    TLE_LOG(Warn, rank,
            "buffer of %zu bytes has no NCCL window (this NCCL's functions "
            "lack ncclCommWindowRegister): GIN puts on it will be refused",
            bytes);
    return;
  }
  void *window = nullptr;
  int r = api.commWindowRegister(comm, local, bytes, &window,
                                 kNcclWinCollSymmetric);
  if (r != 0 || !window) {
    const char *why = api.getErrorString ? api.getErrorString(r) : nullptr;
    TLE_LOG(Warn, rank,
            "NCCL did not register the buffer of %zu bytes at %p as a "
            "window (NCCL error %d: %s): NCCL's symmetric windows take "
            "cuMem memory (tleAllocCuMem); GIN puts on this buffer will be "
            "refused",
            bytes, local, r, why ? why : "no handle");
    return;
  }
  out = std::make_unique<NcclWindow>(api, comm, window);
}

tleResult_t NcclNet::create(const NcclApi &api, void *comm, uint32_t nNetWords,
                            uint32_t nCounters,
                            std::shared_ptr<Backend> backend,
                            std::unique_ptr<NcclNet> &out) {
  if (!api.getVersion || !api.devCommCreate || !api.devCommDestroy)
    return fail(tleNotSupported,
                "the NCCL in this process has no device API "
                "(ncclDevCommCreate): a communicator past one node needs "
                "NCCL 2.28's GPU-initiated networking");
  int version = 0;
  if (int r = api.getVersion(&version))
    return fail(tleInternalError, "ncclGetVersion failed with NCCL error %d",
                r);
  if (version < kNcclDevApiVersionMin || version >= kNcclDevApiVersionEnd)
    return fail(tleNotSupported,
                "NCCL %d.%d.%d: TLE's network speaks NCCL 2.28's device "
                "API (its ncclDevComm layout), not this version's",
                version / 10000, version / 100 % 100, version % 100);
  if (nNetWords > static_cast<uint32_t>(INT32_MAX) ||
      nCounters > static_cast<uint32_t>(INT32_MAX))
    return fail(tleInvalidArgument,
                "%u net words or %u counters exceed NCCL's int count",
                nNetWords, nCounters);
  std::unique_ptr<NcclNet> net(new NcclNet());
  net->api = api;
  net->comm = comm;
  net->backend = std::move(backend);
  NcclDevCommRequirements228 req = {};
  req.ginForceEnable = true;
  req.ginContextCount = 1;
  req.ginSignalCount = static_cast<int>(nNetWords);
  // GIN's counters are TLE's counters on this communicator (a put's local
  // counter is GIN's CounterInc): ids 0..nCounters-1, context 0.
  req.ginCounterCount = static_cast<int>(nCounters);
  if (int r = api.devCommCreate(comm, &req, &net->host)) {
    const char *why = api.getErrorString ? api.getErrorString(r) : nullptr;
    return fail(tleNotSupported,
                "ncclDevCommCreate with GPU-initiated networking (%u GIN "
                "signals) failed with NCCL error %d (%s): NCCL found no "
                "GIN-capable network here; NCCL_DEBUG=INFO says why",
                nNetWords, r, why ? why : "no description");
  }
  net->created = true;
  const NcclDevComm228 &d = net->host;
  if (d.nRanks < 1 || d.rank < 0 || d.rank >= d.nRanks || d.lsaSize < 1 ||
      d.lsaRank < 0 || d.lsaRank >= d.lsaSize)
    return fail(tleInternalError,
                "ncclDevCommCreate returned rank %d of %d, LSA rank %d of "
                "%d: not NCCL 2.28's layout?",
                d.rank, d.nRanks, d.lsaRank, d.lsaSize);
  // A backend the caller could not make (its failure is the caller's to
  // report) still let this rank take part in the collective creation.
  if (!net->backend)
    return fail(tleInternalError, "no backend for the device communicator");
  if (tleResult_t r = net->backend->allocLocal(sizeof(d), &net->device))
    return r;
  if (tleResult_t r = net->backend->copyToLocal(net->device, &d, sizeof(d)))
    return r;
  out = std::move(net);
  return tleSuccess;
}

} // namespace tle
