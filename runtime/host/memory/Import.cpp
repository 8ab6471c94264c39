//===- Import.cpp - Buffers mapped by someone else: tleMemImport ----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// tleMemImport makes memory that is already mapped into every rank (PyTorch's
// symmetric memory, an NCCL window, NVSHMEM's heap, another TLE buffer) a
// tleMem_t whose SymMem handle kernels use like one of tleMemAlloc. TLE maps
// nothing and frees nothing: the handle lists the address of every rank's
// copy as this rank sees it, and the backend only checks that each copy is
// reachable (and enables peer access between GPUs of one process).
//
// Like tleMemAlloc it is collective, and all-or-nothing: a first all-gather
// carries every rank's status, size, address and device (the addresses are
// the peers' copies when the caller gives none), a second one every rank's
// verdict on the copies it was given, so that either every rank gets a
// handle or every rank fails with the reason of the first that failed.
//
//===----------------------------------------------------------------------===//

#include "comm/Comm.h"
#include "comm/Handles.h"
#include "diag/Error.h"
#include "memory/Memory.h"

namespace tle {
namespace {

std::shared_ptr<MemState> newImported(CommState &c, size_t bytes,
                                      std::vector<void *> ptrs) {
  auto m = std::make_shared<MemState>();
  m->rank = c.rank;
  m->size = c.size;
  m->bytes = bytes;
  m->error = c.errorDev;
  m->backend = c.backend;
  m->imported = std::move(ptrs);
  return m;
}

/// Allocates and fills the handle of `m` in local memory.
tleResult_t publishImported(MemState &m) {
  void *handle;
  if (tleResult_t r = m.backend->allocLocal(sizeof(SymMem), &handle))
    return r;
  m.handle = static_cast<SymMem *>(handle);
  SymMem h = makeSymMem(m.imported, m.rank, m.bytes, m.error);
  return m.backend->copyToLocal(m.handle, &h, sizeof(h));
}

/// Checks every copy of `ptrs` for this rank, naming the failing one.
tleResult_t adoptAll(Backend &backend, int me, const std::vector<void *> &ptrs,
                     size_t bytes, const std::vector<ImportedCopy> &copies) {
  for (size_t p = 0; p < ptrs.size(); ++p)
    if (tleResult_t r = backend.adoptImported(ptrs[p], bytes, copies[p]))
      return fail(r, "rank %d cannot use rank %zu's copy %p: %s", me, p,
                  ptrs[p], lastErrorDetail().c_str());
  return tleSuccess;
}

/// This rank's arguments, checked; a bad one still takes part in the
/// exchange, so that peers fail at once instead of at the deadline.
tleResult_t checkLocal(const CommState &c, void *localPtr, size_t bytes,
                       void *const *peerPtrs) {
  if (bytes == 0)
    return fail(tleInvalidArgument, "bytes is 0");
  if (!localPtr)
    return fail(tleInvalidArgument, "localPtr is NULL");
  if (!peerPtrs)
    return tleSuccess;
  if (peerPtrs[c.rank] != localPtr)
    return fail(tleInvalidArgument,
                "peerPtrs[%d] (%p) is not localPtr (%p): entry p is rank "
                "p's copy, and this is rank %d",
                c.rank, peerPtrs[c.rank], localPtr, c.rank);
  for (int p = 0; p < c.size; ++p)
    if (!peerPtrs[p])
      return fail(tleInvalidArgument, "peerPtrs[%d] is NULL", p);
  return tleSuccess;
}

tleResult_t memImport(tleComm_t commHandle, void *localPtr, size_t bytes,
                      void *const *peerPtrs, tleMem_t *outMem) {
  if (outMem)
    *outMem = nullptr;
  std::shared_ptr<CommState> comm;
  if (tleResult_t r = lookupComm(commHandle, comm))
    return r;
  if (tleResult_t r = checkUsable(*comm))
    return r;
  CommState &c = *comm;
  // A NULL outMem takes part in the exchange as checkLocal's errors do.
  tleResult_t local = outMem ? checkLocal(c, localPtr, bytes, peerPtrs)
                             : fail(tleInvalidArgument, "outMem is NULL");
  std::string payload;
  putU64(payload, bytes);
  putU64(payload, reinterpret_cast<uintptr_t>(localPtr));
  putU64(payload,
         static_cast<uint64_t>(static_cast<int64_t>(c.backend->device())));
  std::vector<std::string> payloads;
  std::vector<std::vector<UniqueFd>> noFds;
  if (tleResult_t r =
          gatherStatus(*c.bootstrap, local, payload, {}, payloads, noFds))
    return r;

  std::vector<void *> ptrs(c.size);
  std::vector<ImportedCopy> copies(c.size);
  for (int p = 0; p < c.size; ++p) {
    size_t at = 0;
    uint64_t b, address, device;
    if (!getU64(payloads[p], at, b) || !getU64(payloads[p], at, address) ||
        !getU64(payloads[p], at, device))
      return fail(tleInternalError, "malformed contribution from rank %d", p);
    if (b != bytes)
      return fail(tleInvalidArgument,
                  "rank %d imports %llu bytes, rank %d %zu (every rank must "
                  "import the same size)",
                  p, static_cast<unsigned long long>(b), c.rank, bytes);
    ImportedCopy &copy = copies[p];
    if (p == c.rank) {
      copy.source = ImportedCopy::Own;
      ptrs[p] = localPtr;
    } else if (peerPtrs) {
      copy.source = ImportedCopy::Caller;
      ptrs[p] = peerPtrs[p];
    } else {
      copy.source = ImportedCopy::Peer;
      copy.peerDevice = static_cast<int>(static_cast<int64_t>(device));
      copy.peerInProcess = !c.multiProcess;
      ptrs[p] = reinterpret_cast<void *>(static_cast<uintptr_t>(address));
    }
  }
  auto m = newImported(c, bytes, ptrs);
  tleResult_t adopted = adoptAll(*c.backend, c.rank, ptrs, bytes, copies);
  if (adopted == tleSuccess)
    adopted = publishImported(*m);
  std::vector<std::string> ignored;
  if (tleResult_t r = gatherStatus(*c.bootstrap, adopted, std::string(), {},
                                   ignored, noFds))
    return r;
  *outMem = registerMem(std::move(m));
  return tleSuccess;
}

tleResult_t memImportAll(const tleComm_t *handles, int nRanks,
                         void *const *localPtrs, size_t bytes,
                         tleMem_t *outMems) {
  std::vector<std::shared_ptr<CommState>> comms;
  if (tleResult_t s = lookupCommSet(handles, nRanks, outMems, comms))
    return s;
  if (!localPtrs)
    return fail(tleInvalidArgument, "localPtrs is NULL");
  std::vector<void *> ptrs(localPtrs, localPtrs + nRanks);
  for (int r = 0; r < nRanks; ++r)
    if (tleResult_t s = checkLocal(*comms[r], ptrs[r], bytes, ptrs.data()))
      return s;
  std::vector<std::shared_ptr<MemState>> mems;
  for (int r = 0; r < nRanks; ++r) {
    std::vector<ImportedCopy> copies(nRanks);
    for (int p = 0; p < nRanks; ++p)
      copies[p].source = p == r ? ImportedCopy::Own : ImportedCopy::Caller;
    if (tleResult_t s = adoptAll(*comms[r]->backend, r, ptrs, bytes, copies))
      return s;
    auto m = newImported(*comms[r], bytes, ptrs);
    if (tleResult_t s = publishImported(*m))
      return s;
    mems.push_back(std::move(m));
  }
  for (int r = 0; r < nRanks; ++r)
    outMems[r] = registerMem(std::move(mems[r]));
  return tleSuccess;
}

} // namespace
} // namespace tle

using namespace tle;

extern "C" {

tleResult_t tleMemImport(tleComm_t comm, void *localPtr, size_t bytes,
                         void *const *peerPtrs, tleMem_t *outMem) {
  return guard("tleMemImport", [&] {
    return memImport(comm, localPtr, bytes, peerPtrs, outMem);
  });
}

tleResult_t tleMemImportAll(const tleComm_t *comms, int nRanks,
                            void *const *localPtrs, size_t bytes,
                            tleMem_t *outMems) {
  return guard("tleMemImportAll", [&] {
    return memImportAll(comms, nRanks, localPtrs, bytes, outMems);
  });
}

} // extern "C"
