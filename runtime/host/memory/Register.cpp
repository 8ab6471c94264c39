//===- Register.cpp - Symmetric buffers over the user's memory --*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// tleMemRegister: memory the user already allocated becomes a symmetric
// buffer. It is tleMemAlloc without the allocation: each rank adopts its
// own range as its block (the backend exports the allocation the range
// lies in, with the range's offset in it), the ranks exchange and map as
// for an allocation (shareSymmetric), and the handle is published the same
// way, so kernels cannot tell the two apart. Freeing the handle unmaps the
// peers' copies and leaves the user's memory alone.
//
// Also tleShareableAlloc/Free, the allocator whose memory registration can
// share across processes, and the Backend defaults that refuse
// registration.
//
//===----------------------------------------------------------------------===//

#include "comm/Comm.h"
#include "comm/Handles.h"
#include "diag/Error.h"
#include "memory/Memory.h"
#include "memory/MemoryFile.h"

namespace tle {

tleResult_t Backend::exportRegion(void *, size_t, bool, SharedAlloc &) {
  return fail(tleNotSupported,
              "this backend cannot register memory it did not allocate");
}
tleResult_t Backend::unexportRegion(SharedAlloc &) { return tleSuccess; }
tleResult_t Backend::importRegion(const SharedAlloc &, void **) {
  return fail(tleNotSupported,
              "this backend cannot map memory a peer registered");
}
tleResult_t Backend::closeRegion(void *) { return tleSuccess; }

namespace {

/// One process per rank on simulated nodes: the registration is mapped for
/// every world rank as well (over the world's bootstrap), so that the
/// emulator's network reaches a peer's copy on another node (worldPtrs, as
/// pairWorldBuffers gives the buffers of a tleCommInitAll set).
tleResult_t shareWithWorld(const CommState &c, MemState &m, void *ptr,
                           size_t bytes) {
  Bootstrap &world = *c.worldBootstrap;
  m.worldView = std::make_unique<SymmetricView>(c.backend, world.rank(),
                                                world.size(), false);
  tleResult_t local = m.worldView->adopt(ptr, bytes);
  if (tleResult_t r = shareSymmetric(world, *m.worldView, bytes, local, 0,
                                     "registration (world)"))
    return r;
  auto table = std::make_shared<std::vector<void *>>(world.size());
  for (int w = 0; w < world.size(); ++w)
    (*table)[w] = m.worldView->ptr(w);
  m.worldPtrs = std::move(table);
  return tleSuccess;
}

tleResult_t memRegister(tleComm_t commHandle, void *ptr, size_t bytes,
                        tleMem_t *outMem) {
  if (outMem)
    *outMem = nullptr;
  std::shared_ptr<CommState> comm;
  if (tleResult_t r = lookupComm(commHandle, comm))
    return r;
  if (tleResult_t r = checkUsable(*comm))
    return r;
  auto m = newMem(*comm, bytes);
  // A bad argument (a NULL outMem too) or memory that cannot be shared
  // still takes part in the exchange, so that the peers fail at once with
  // this rank's reason instead of at the bootstrap deadline.
  tleResult_t local = tleSuccess;
  if (!outMem)
    local = fail(tleInvalidArgument, "outMem is NULL");
  else if (!ptr)
    local = fail(tleInvalidArgument, "ptr is NULL");
  else if (bytes == 0)
    local = fail(tleInvalidArgument, "bytes is 0");
  if (local == tleSuccess)
    local = allocHandle(*m);
  if (local == tleSuccess)
    local = m->view->adopt(ptr, bytes);
  if (tleResult_t r = shareSymmetric(*comm->bootstrap, *m->view, bytes, local,
                                     0, "registration"))
    return r;
  if (comm->worldBootstrap && comm->nNodes > 1)
    if (tleResult_t r = shareWithWorld(*comm, *m, ptr, bytes))
      return r;
  if (tleResult_t r = publishHandle(*m))
    return r;
  logMapped(*m);
  *outMem = registerMem(std::move(m));
  return tleSuccess;
}

} // namespace
} // namespace tle

using namespace tle;

extern "C" {

tleResult_t tleMemRegister(tleComm_t comm, void *ptr, size_t bytes,
                           tleMem_t *outMem) {
  return guard("tleMemRegister",
               [&] { return memRegister(comm, ptr, bytes, outMem); });
}

void *tleShareableAlloc(size_t bytes, int device, void *stream) {
  (void)stream;
  void *out = nullptr;
  tleResult_t r = guard("tleShareableAlloc", [&] {
    return device < 0 ? allocHostShareable(bytes, &out)
                      : allocCudaShareable(device, bytes, &out);
  });
  return r == tleSuccess ? out : nullptr;
}

void tleShareableFree(void *ptr, size_t bytes, int device, void *stream) {
  (void)bytes;
  (void)stream;
  if (!ptr)
    return;
  // No status to return (the allocator interface has none): a failure
  // stays in the thread's last error detail.
  guard("tleShareableFree", [&] {
    return device < 0 ? freeHostShareable(ptr) : freeCudaShareable(device, ptr);
  });
}

} // extern "C"
