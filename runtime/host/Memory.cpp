//===- Memory.cpp - Symmetric buffers: the C API ------------------*- C++ -*-=//
//
// tleMemAlloc is collective over a communicator's bootstrap (a socket star
// across processes, the in-process rendezvous for a tleCommInitAll set with
// one thread per rank); tleMemAllocAll serves a whole tleCommInitAll set
// from one thread. Either way each rank gets a SymMem handle in its local
// memory whose ptrs[p] is rank p's copy as this rank sees it.
//
//===----------------------------------------------------------------------===//

#include "Comm.h"
#include "Error.h"

tleMem::~tleMem() {
  magic = 0;
  if (handle)
    backend->freeLocal(handle);
  view.reset();
}

namespace tle {
namespace {

tleResult_t checkMem(tleMem_t mem) {
  if (!mem)
    return fail(tleInvalidArgument, "mem is NULL");
  if (mem->magic != tleMem::kAlive)
    return fail(tleInvalidArgument, "mem is not a live symmetric buffer");
  return tleSuccess;
}

std::unique_ptr<tleMem> newMem(tleComm &c, size_t bytes) {
  auto m = std::make_unique<tleMem>();
  m->rank = c.rank;
  m->size = c.size;
  m->bytes = bytes;
  m->error = c.errorDev;
  m->backend = c.backend;
  m->view = std::make_unique<SymmetricView>(c.backend, c.rank, c.size,
                                            !c.multiProcess);
  return m;
}

tleResult_t publishHandle(tleMem &m) {
  SymMem h = makeSymMem(*m.view, m.rank, m.size, m.bytes, m.error);
  return m.backend->copyToLocal(m.handle, &h, sizeof(h));
}

tleResult_t memAlloc(tleComm_t comm, size_t bytes, tleMem_t *outMem) {
  if (tleResult_t r = checkComm(comm))
    return r;
  if (!outMem)
    return fail(tleInvalidArgument, "outMem is NULL");
  *outMem = nullptr;
  auto m = newMem(*comm, bytes);
  // A bad size or a failed local allocation still takes part in the
  // exchange, so peers fail at once instead of at the deadline.
  tleResult_t local = tleSuccess;
  if (bytes == 0)
    local = fail(tleInvalidArgument, "bytes is 0");
  void *handle = nullptr;
  if (local == tleSuccess)
    local = comm->backend->allocLocal(sizeof(SymMem), &handle);
  m->handle = static_cast<SymMem *>(handle);
  if (tleResult_t r = allocSymmetric(*comm->bootstrap, *m->view, bytes, local,
                                     0, "symmetric buffer"))
    return r;
  if (tleResult_t r = publishHandle(*m))
    return r;
  *outMem = m.release();
  return tleSuccess;
}

tleResult_t memAllocAll(const tleComm_t *comms, int nRanks, size_t bytes,
                        tleMem_t *outMems) {
  if (!comms || !outMems)
    return fail(tleInvalidArgument, "comms or outMems is NULL");
  if (nRanks < 1 || nRanks > kMaxRanks)
    return fail(tleInvalidArgument, "nRanks %d is not in 1..%d", nRanks,
                kMaxRanks);
  for (int r = 0; r < nRanks; ++r) {
    if (tleResult_t s = checkComm(comms[r]))
      return fail(s, "comms[%d]: %s", r, lastErrorDetail().c_str());
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
  if (bytes == 0)
    return fail(tleInvalidArgument, "bytes is 0");
  for (int r = 0; r < nRanks; ++r)
    outMems[r] = nullptr;
  std::vector<std::unique_ptr<tleMem>> mems;
  std::vector<SymmetricView *> views;
  for (int r = 0; r < nRanks; ++r) {
    auto m = newMem(*comms[r], bytes);
    void *handle;
    if (tleResult_t s = m->backend->allocLocal(sizeof(SymMem), &handle))
      return s;
    m->handle = static_cast<SymMem *>(handle);
    views.push_back(m->view.get());
    mems.push_back(std::move(m));
  }
  if (tleResult_t s = allocSymmetricAll(views, bytes))
    return s;
  for (auto &m : mems)
    if (tleResult_t s = publishHandle(*m))
      return s;
  for (int r = 0; r < nRanks; ++r)
    outMems[r] = mems[r].release();
  return tleSuccess;
}

} // namespace
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

tleResult_t tleMemFree(tleMem_t mem) {
  return guard("tleMemFree", [&] {
    if (tleResult_t r = checkMem(mem))
      return r;
    delete mem;
    return tleSuccess;
  });
}

tleResult_t tleMemGetHandle(tleMem_t mem, void **outHandle) {
  return guard("tleMemGetHandle", [&] {
    if (tleResult_t r = checkMem(mem))
      return r;
    if (!outHandle)
      return fail(tleInvalidArgument, "outHandle is NULL");
    *outHandle = mem->handle;
    return tleSuccess;
  });
}

tleResult_t tleMemGetLocalPtr(tleMem_t mem, void **outPtr) {
  return guard("tleMemGetLocalPtr", [&] {
    if (tleResult_t r = checkMem(mem))
      return r;
    if (!outPtr)
      return fail(tleInvalidArgument, "outPtr is NULL");
    *outPtr = mem->view->ptr(mem->rank);
    return tleSuccess;
  });
}

} // extern "C"
