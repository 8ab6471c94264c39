//===- Symmetric.cpp - Memory every rank allocates and maps ----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The collective allocation behind barrier inboxes and symmetric buffers,
// and the exchange behind registered user memory (tleMemRegister). Each
// step is an all-gather that carries every rank's status, so a rank that
// fails makes all ranks fail at once with its reason, and all ranks take
// the same decision from the same data:
//   1. each rank allocates its block, or for a registration exports the
//      user's (or reports why it could not);
//   2. all-gather of (status, size, check, export blob) with the export's
//      descriptor, if the backend has one (the CPU backend's memory file);
//      any failure or disagreement fails everyone;
//   3. each rank maps every peer's block;
//   4. all-gather of the mapping status: it doubles as the confirmation that
//      every peer has mapped our block, after which the export is released
//      (the CPU backend closes its descriptor).
//
//===----------------------------------------------------------------------===//

#include "memory/Symmetric.h"
#include "diag/Error.h"

#include <cstring>

namespace tle {

struct SymmetricView::Block {
  std::shared_ptr<Backend> backend;
  SharedAlloc alloc;
  bool registered = false; ///< user memory: unexported, never freed
  ~Block() {
    if (registered)
      backend->unexportRegion(alloc);
    else if (alloc.ptr)
      backend->freeShared(alloc);
  }
};

SymmetricView::SymmetricView(std::shared_ptr<Backend> backend, int rank,
                             int size, bool sameProcess)
    : backend(std::move(backend)), rank(rank), sameProcess(sameProcess),
      ptrs(size, nullptr), peerBlocks(size) {}

SymmetricView::~SymmetricView() {
  for (size_t p = 0; p < ptrs.size(); ++p) {
    if (static_cast<int>(p) == rank || !ptrs[p])
      continue;
    if (registered && !sameProcess)
      backend->closeRegion(ptrs[p]);
    else
      backend->closePeer(ptrs[p], sameProcess);
  }
}

tleResult_t SymmetricView::allocate(size_t bytes) {
  auto block = std::make_shared<Block>();
  block->backend = backend;
  if (tleResult_t r = backend->allocShared(bytes, block->alloc))
    return r;
  own = std::move(block);
  ptrs[rank] = own->alloc.ptr;
  return tleSuccess;
}

tleResult_t SymmetricView::adopt(void *ptr, size_t bytes) {
  auto block = std::make_shared<Block>();
  block->backend = backend;
  // Registered before the export: whatever the export filled in before it
  // failed must be unexported, never freed (it is the user's memory).
  block->registered = true;
  if (tleResult_t r =
          backend->exportRegion(ptr, bytes, sameProcess, block->alloc))
    return r;
  registered = true;
  own = std::move(block);
  ptrs[rank] = ptr;
  return tleSuccess;
}

size_t SymmetricView::bytes() const { return own ? own->alloc.bytes : 0; }

std::string SymmetricView::exportBlob() const {
  if (!sameProcess)
    return own->alloc.exportBlob;
  const SymmetricView *self = this;
  return std::string(reinterpret_cast<const char *>(&self), sizeof(self));
}

int SymmetricView::exportFd() const {
  return own && !sameProcess ? own->alloc.exportFd : -1;
}

tleResult_t SymmetricView::importFrom(int peer, const std::string &blob,
                                      int fd) {
  if (sameProcess) {
    SymmetricView *view;
    if (blob.size() != sizeof(view))
      return fail(tleInternalError, "malformed in-process export blob");
    memcpy(&view, blob.data(), sizeof(view));
    return importFrom(peer, *view);
  }
  SharedAlloc peerAlloc;
  peerAlloc.bytes = bytes();
  peerAlloc.exportBlob = blob;
  peerAlloc.exportFd = fd;
  if (registered)
    return backend->importRegion(peerAlloc, &ptrs[peer]);
  return backend->importPeer(peerAlloc, false, &ptrs[peer]);
}

tleResult_t SymmetricView::importFrom(int peer, SymmetricView &view) {
  if (!sameProcess || !view.own)
    return fail(tleInternalError, "bad in-process import");
  if (tleResult_t r = backend->importPeer(view.own->alloc, true, &ptrs[peer]))
    return r;
  peerBlocks[peer] = view.own;
  return tleSuccess;
}

tleResult_t SymmetricView::releaseExport() {
  return own ? backend->releaseExport(own->alloc) : tleSuccess;
}

void putU64(std::string &s, uint64_t v) {
  s.append(reinterpret_cast<const char *>(&v), sizeof(v));
}

bool getU64(const std::string &s, size_t &at, uint64_t &v) {
  if (at > s.size() || s.size() - at < sizeof(v))
    return false;
  memcpy(&v, s.data() + at, sizeof(v));
  at += sizeof(v);
  return true;
}

tleResult_t gatherStatus(Bootstrap &bs, tleResult_t local,
                         const std::string &payload,
                         const std::vector<int> &myFds,
                         std::vector<std::string> &payloads,
                         std::vector<std::vector<UniqueFd>> &peerFds) {
  std::string mine;
  std::string localDetail = local ? lastErrorDetail() : std::string();
  putU64(mine, static_cast<uint64_t>(local));
  putU64(mine, localDetail.size());
  mine += localDetail;
  mine += payload;
  if (local != tleSuccess) {
    // Posted, not waited for where the channel allows: this rank fails at
    // once, and the peers with its reason as they reach the step (not at
    // the bootstrap deadline).
    bs.post(mine);
    setLastErrorDetail(localDetail);
    return local;
  }
  std::vector<std::string> all;
  tleResult_t r = bs.allGatherFds(mine, myFds, all, peerFds);
  if (r != tleSuccess)
    return r;
  payloads.assign(all.size(), std::string());
  for (size_t p = 0; p < all.size(); ++p) {
    size_t at = 0;
    uint64_t status, detailBytes;
    if (!getU64(all[p], at, status) || !getU64(all[p], at, detailBytes) ||
        detailBytes > all[p].size() - at)
      return fail(tleInternalError, "malformed contribution from rank %zu", p);
    if (status != tleSuccess)
      return fail(tlePeerFailure, "rank %zu failed: %s", p,
                  all[p].substr(at, detailBytes).c_str());
    payloads[p] = all[p].substr(at + detailBytes);
  }
  return tleSuccess;
}

tleResult_t allocSymmetric(Bootstrap &bs, SymmetricView &view, size_t bytes,
                           tleResult_t prior, uint64_t check,
                           const char *what) {
  tleResult_t local = prior;
  if (local == tleSuccess)
    local = view.allocate(bytes);
  return shareSymmetric(bs, view, bytes, local, check, what);
}

tleResult_t shareSymmetric(Bootstrap &bs, SymmetricView &view, size_t bytes,
                           tleResult_t local, uint64_t check,
                           const char *what) {
  std::string payload;
  std::vector<int> myFds;
  if (local == tleSuccess) {
    putU64(payload, bytes);
    putU64(payload, check);
    payload += view.exportBlob();
    if (view.exportFd() >= 0)
      myFds.push_back(view.exportFd());
  }
  std::vector<std::string> payloads;
  std::vector<std::vector<UniqueFd>> peerFds;
  if (tleResult_t r =
          gatherStatus(bs, local, payload, myFds, payloads, peerFds))
    return r;

  const int me = bs.rank();
  std::vector<std::string> blobs(payloads.size());
  uint64_t bytes0 = 0, check0 = 0;
  for (size_t p = 0; p < payloads.size(); ++p) {
    size_t at = 0;
    uint64_t b, c;
    if (!getU64(payloads[p], at, b) || !getU64(payloads[p], at, c))
      return fail(tleInternalError, "malformed contribution from rank %zu", p);
    if (p == 0) {
      bytes0 = b;
      check0 = c;
    } else if (b != bytes0) {
      return fail(tleInvalidArgument,
                  "%s: rank %zu asked for %llu bytes, rank 0 for %llu (every "
                  "rank must ask for the same size)",
                  what, p, static_cast<unsigned long long>(b),
                  static_cast<unsigned long long>(bytes0));
    } else if (c != check0) {
      return fail(tleInvalidArgument,
                  "%s: rank %zu was configured differently from rank 0", what,
                  p);
    }
    blobs[p] = payloads[p].substr(at);
  }

  tleResult_t mapped = tleSuccess;
  for (size_t p = 0; p < blobs.size() && mapped == tleSuccess; ++p)
    if (static_cast<int>(p) != me)
      mapped =
          view.importFrom(static_cast<int>(p), blobs[p],
                          peerFds[p].empty() ? -1 : peerFds[p].front().get());
  // Mapped: this process no longer needs its copies of the descriptors.
  peerFds.clear();
  std::vector<std::string> ignored;
  std::vector<std::vector<UniqueFd>> none;
  if (tleResult_t r =
          gatherStatus(bs, mapped, std::string(), {}, ignored, none))
    return r;
  return view.releaseExport();
}

tleResult_t allocSymmetricAll(const std::vector<SymmetricView *> &views,
                              size_t bytes) {
  for (SymmetricView *view : views)
    if (tleResult_t r = view->allocate(bytes))
      return r;
  for (size_t r = 0; r < views.size(); ++r)
    for (size_t p = 0; p < views.size(); ++p)
      if (p != r)
        if (tleResult_t s =
                views[r]->importFrom(static_cast<int>(p), *views[p]))
          return s;
  for (SymmetricView *view : views)
    if (tleResult_t r = view->releaseExport())
      return r;
  return tleSuccess;
}

SymMem makeSymMem(const SymmetricView &view, int rank, int size, size_t bytes,
                  ErrorRecord *error) {
  std::vector<void *> ptrs(size);
  for (int p = 0; p < size; ++p)
    ptrs[p] = view.ptr(p);
  return makeSymMem(ptrs, rank, bytes, error);
}

SymMem makeSymMem(const std::vector<void *> &ptrs, int rank, size_t bytes,
                  ErrorRecord *error) {
  SymMem m = {};
  m.magic = kSymMemMagic;
  m.rank = rank;
  m.size = static_cast<int32_t>(ptrs.size());
  m.bytes = bytes;
  for (size_t p = 0; p < ptrs.size(); ++p)
    m.ptrs[p] = ptrs[p];
  m.error = error;
  return m;
}

} // namespace tle
