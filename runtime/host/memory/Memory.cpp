//===- Memory.cpp - Symmetric buffers: the C API ----------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// tleMemAlloc is collective over a communicator's bootstrap (a socket star
// across processes, the in-process rendezvous for a tleCommInitAll set with
// one thread per rank); tleMemAllocAll serves a whole tleCommInitAll set
// from one thread. Either way each rank gets a SymMem handle in its local
// memory whose ptrs[p] is rank p's copy as this rank sees it.
//
//===----------------------------------------------------------------------===//

#include "memory/Memory.h"
#include "comm/Comm.h"
#include "comm/Handles.h"
#include "diag/Error.h"

#include "tle/support/Log.h"

#include <map>
#include <mutex>

namespace tle {

MemState::~MemState() {
  // Cleared first, as a communicator's DevComm: a stale handle must not
  // pass the library's magic check.
  if (handle) {
    SymMem cleared = {};
    backend->copyToLocal(handle, &cleared, sizeof(cleared));
    backend->freeLocal(handle);
  }
  // NCCL lets go of the memory before it is freed.
  netWindow.reset();
  view.reset();
}

std::shared_ptr<MemState> newMem(CommState &c, size_t bytes) {
  auto m = std::make_shared<MemState>();
  m->rank = c.rank;
  m->size = c.size;
  m->bytes = bytes;
  m->error = c.errorDev;
  m->backend = c.backend;
  m->view = std::make_unique<SymmetricView>(c.backend, c.rank, c.size,
                                            !c.multiProcess);
  return m;
}

void logMapped(const MemState &m) {
  TLE_LOG(Info, m.rank,
          "buffer mapped: %zu bytes on each of %d ranks, local copy at %p, "
          "handle %p",
          m.bytes, m.size, m.view->ptr(m.rank), static_cast<void *>(m.handle));
}

tleResult_t allocHandle(MemState &m) {
  void *symMem = nullptr;
  tleResult_t r = m.backend->allocLocal(sizeof(SymMem), &symMem);
  m.handle = static_cast<SymMem *>(symMem);
  return r;
}

void registerNetWindow(const CommState &c, MemState &m) {
  if (c.ncclNet)
    c.ncclNet->registerWindow(m.localPtr(), m.bytes, m.rank, m.netWindow);
}

tleResult_t publishHandle(MemState &m) {
  SymMem h = makeSymMem(*m.view, m.rank, m.size, m.bytes, m.error);
  if (m.worldPtrs) {
    h.worldPtrs = m.worldPtrs->data();
    h.nWorld = static_cast<uint32_t>(m.worldPtrs->size());
  }
  if (m.netWindow)
    h.netWindow = m.netWindow->handle();
  return m.backend->copyToLocal(m.handle, &h, sizeof(h));
}

namespace {

tleResult_t memAlloc(tleComm_t commHandle, size_t bytes, tleMem_t *outMem) {
  if (outMem)
    *outMem = nullptr;
  std::shared_ptr<CommState> comm;
  if (tleResult_t r = lookupComm(commHandle, comm))
    return r;
  if (tleResult_t r = checkUsable(*comm))
    return r;
  auto m = newMem(*comm, bytes);
  // A bad argument or a failed local allocation still takes part in the
  // exchange, so peers fail at once instead of at the deadline.
  tleResult_t local = tleSuccess;
  if (!outMem)
    local = fail(tleInvalidArgument, "outMem is NULL");
  else if (bytes == 0)
    local = fail(tleInvalidArgument, "bytes is 0");
  if (local == tleSuccess)
    local = allocHandle(*m);
  if (tleResult_t r = allocSymmetric(*comm->bootstrap, *m->view, bytes, local,
                                     0, "symmetric buffer"))
    return r;
  // After the exchange, which every rank passed: the registration is
  // collective over the NCCL communicator, so no rank may skip it.
  registerNetWindow(*comm, *m);
  if (tleResult_t r = publishHandle(*m))
    return r;
  logMapped(*m);
  *outMem = registerMem(std::move(m));
  return tleSuccess;
}

tleResult_t memAllocAll(const tleComm_t *handles, int nRanks, size_t bytes,
                        tleMem_t *outMems) {
  std::vector<std::shared_ptr<CommState>> comms;
  if (tleResult_t s = lookupCommSet(handles, nRanks, outMems, comms))
    return s;
  if (bytes == 0)
    return fail(tleInvalidArgument, "bytes is 0");
  std::vector<std::shared_ptr<MemState>> mems;
  std::vector<SymmetricView *> views;
  for (int r = 0; r < nRanks; ++r) {
    auto m = newMem(*comms[r], bytes);
    if (tleResult_t s = allocHandle(*m))
      return s;
    views.push_back(m->view.get());
    mems.push_back(std::move(m));
  }
  if (tleResult_t s = allocSymmetricAll(views, bytes))
    return s;
  pairWorldBuffers(comms, mems);
  for (auto &m : mems)
    if (tleResult_t s = publishHandle(*m))
      return s;
  for (int r = 0; r < nRanks; ++r) {
    logMapped(*mems[r]);
    outMems[r] = registerMem(std::move(mems[r]));
  }
  return tleSuccess;
}

} // namespace

namespace {
/// The world tables of each live EmuNet: its k-th entry is the table of
/// every node's k-th buffer. Keyed by address, with the owner kept weakly so
/// that a new world at a reused address starts afresh.
struct WorldTables {
  std::weak_ptr<EmuNet> net;
  std::vector<std::shared_ptr<std::vector<void *>>> tables;
};
std::mutex worldTablesMutex;
std::map<const EmuNet *, WorldTables> worldTables;
} // namespace

void pairWorldBuffers(const std::vector<std::shared_ptr<CommState>> &comms,
                      const std::vector<std::shared_ptr<MemState>> &mems) {
  CommState &first = *comms[0];
  if (!first.net || first.nNodes < 2)
    return;
  std::lock_guard<std::mutex> lock(worldTablesMutex);
  WorldTables &w = worldTables[first.net.get()];
  if (w.net.expired() || w.net.lock() != first.net) {
    w.net = first.net;
    w.tables.clear();
  }
  uint64_t k = first.worldBuffers++;
  if (w.tables.size() <= k)
    w.tables.resize(k + 1);
  auto &table = w.tables[k];
  if (!table)
    table = std::make_shared<std::vector<void *>>(
        static_cast<size_t>(first.nNodes) * first.size, nullptr);
  for (size_t r = 0; r < mems.size(); ++r) {
    const CommState &c = *comms[r];
    (*table)[static_cast<size_t>(c.node) * c.size + c.rank] =
        mems[r]->view->ptr(c.rank);
    mems[r]->worldPtrs = table;
  }
}

tleResult_t lookupCommSet(const tleComm_t *handles, int nRanks,
                          tleMem_t *outMems,
                          std::vector<std::shared_ptr<CommState>> &comms) {
  if (!handles || !outMems)
    return fail(tleInvalidArgument, "comms or outMems is NULL");
  if (nRanks < 1 || nRanks > kMaxRanks)
    return fail(tleInvalidArgument, "nRanks %d is not in 1..%d", nRanks,
                kMaxRanks);
  for (int r = 0; r < nRanks; ++r)
    outMems[r] = nullptr;
  comms.assign(nRanks, nullptr);
  for (int r = 0; r < nRanks; ++r) {
    std::string arg = "comms[" + std::to_string(r) + "]";
    if (tleResult_t s = lookupComm(handles[r], comms[r], arg.c_str()))
      return s;
    if (tleResult_t s = checkUsable(*comms[r]))
      return s;
    if (!comms[r]->group || comms[r]->group != comms[0]->group)
      return fail(tleInvalidArgument,
                  "comms[%d] is not of the same tleCommInitAll set as "
                  "comms[0]",
                  r);
    if (comms[r]->rank != r || comms[r]->size != nRanks)
      return fail(tleInvalidArgument,
                  "comms[%d] is rank %d of %d; pass every rank of the set "
                  "in rank order",
                  r, comms[r]->rank, comms[r]->size);
  }
  return tleSuccess;
}

} // namespace tle

using namespace tle;

extern "C" {

tleResult_t tleMemAlloc(tleComm_t comm, size_t bytes, tleMem_t *outMem) {
  return guard("tleMemAlloc", [&] { return memAlloc(comm, bytes, outMem); });
}

tleResult_t tleMemAllocAll(const tleComm_t *comms, int nRanks, size_t bytes,
                           tleMem_t *outMems) {
  return guard("tleMemAllocAll",
               [&] { return memAllocAll(comms, nRanks, bytes, outMems); });
}

tleResult_t tleMemFree(tleMem_t handle) {
  return guard("tleMemFree", [&] {
    std::shared_ptr<MemState> mem;
    // Released here, or when a call another thread is in returns.
    return unregisterMem(handle, mem);
  });
}

tleResult_t tleMemGetHandle(tleMem_t handle, void **outHandle) {
  return guard("tleMemGetHandle", [&] {
    std::shared_ptr<MemState> mem;
    if (tleResult_t r = lookupMem(handle, mem))
      return r;
    if (!outHandle)
      return fail(tleInvalidArgument, "outHandle is NULL");
    *outHandle = mem->handle;
    return tleSuccess;
  });
}

tleResult_t tleMemGetLocalPtr(tleMem_t handle, void **outPtr) {
  return guard("tleMemGetLocalPtr", [&] {
    std::shared_ptr<MemState> mem;
    if (tleResult_t r = lookupMem(handle, mem))
      return r;
    if (!outPtr)
      return fail(tleInvalidArgument, "outPtr is NULL");
    *outPtr = mem->localPtr();
    return tleSuccess;
  });
}

} // extern "C"
