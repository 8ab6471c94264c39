//===- CpuBackend.cpp - Memory for ranks that run on the CPU ---*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The backend of the CPU emulator. Ranks in one process share plain,
// page-aligned heap memory: a peer's "mapping" is its pointer. Ranks in
// separate processes share memory files: each allocation is an anonymous
// memfd, sealed against shrinking and growing, whose descriptor travels to
// the peers over the bootstrap's Unix socket (SCM_RIGHTS); peers mmap it.
//
// A memory file has no name: nothing can open it but a process that was
// handed its descriptor, nothing appears in /dev/shm, and the kernel frees
// it when the last descriptor and mapping are gone, whenever and however
// the processes end (kill -9 included). The owner closes its descriptor
// once every peer has confirmed its mapping (releaseExport) or when the
// allocation fails. Registered user memory (tleMemRegister) is shared the
// same way when it lies in a memory file of tleShareableAlloc (MemoryFile.h).
//
//===----------------------------------------------------------------------===//

#include "backends/Backend.h"
#include "diag/Error.h"
#include "memory/MemoryFile.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sys/mman.h>
#include <unistd.h>
#include <unordered_map>
#include <vector>

namespace tle {
namespace {

constexpr size_t kPageBytes = 4096;

tleResult_t alignedCalloc(size_t bytes, void **out) {
  size_t n = memoryFileBytes(bytes);
  if (n == 0)
    return fail(tleSystemError, "cannot allocate %zu bytes", bytes);
  void *p = aligned_alloc(kPageBytes, n);
  if (!p)
    return fail(tleSystemError, "out of host memory allocating %zu bytes",
                bytes);
  memset(p, 0, n);
  *out = p;
  return tleSuccess;
}

/// What SharedAlloc::impl holds across processes: the memory file of an
/// allocation, or for a registration (exportRegion) only a duplicate of the
/// descriptor of the user's file, whose mapping the user owns. The
/// descriptor is kept until every peer has mapped the file.
struct Export {
  UniqueFd fd;
  size_t mappedBytes = 0; ///< of an allocation's mapping; 0 for a registration
};

class CpuBackend final : public Backend {
public:
  explicit CpuBackend(bool multiProcess) : multiProcess(multiProcess) {}

  tleBackend_t kind() const override { return tleBackendEmulator; }
  int device() const override { return -1; }
  const char *sharedMemoryKind() const override {
    return multiProcess ? "memory files" : "heap";
  }

  tleResult_t allocShared(size_t bytes, SharedAlloc &out) override {
    if (!multiProcess) {
      out.bytes = bytes;
      return alignedCalloc(bytes, &out.ptr);
    }
    MemoryFile file;
    if (tleResult_t r = createMemoryFile(bytes, file))
      return r;
    out.ptr = file.ptr;
    out.bytes = bytes;
    out.exportFd = file.fd.get();
    out.impl = new Export{std::move(file.fd), file.mappedBytes};
    return tleSuccess;
  }

  tleResult_t freeShared(SharedAlloc &alloc) override {
    if (!alloc.ptr)
      return tleSuccess;
    tleResult_t result = tleSuccess;
    if (auto *file = static_cast<Export *>(alloc.impl)) {
      if (munmap(alloc.ptr, file->mappedBytes) != 0)
        result = failErrno(errno, "munmap");
      delete file;
    } else {
      free(alloc.ptr);
    }
    alloc.ptr = nullptr;
    alloc.impl = nullptr;
    alloc.exportFd = -1;
    return result;
  }

  tleResult_t releaseExport(SharedAlloc &alloc) override {
    if (auto *file = static_cast<Export *>(alloc.impl))
      file->fd.reset();
    alloc.exportFd = -1;
    return tleSuccess;
  }

  tleResult_t importPeer(const SharedAlloc &peer, bool sameProcess,
                         void **mapped) override {
    if (sameProcess) {
      *mapped = peer.ptr;
      return tleSuccess;
    }
    void *p;
    size_t bytes;
    if (tleResult_t r = mapMemoryFile(peer.exportFd, peer.bytes, &p, &bytes))
      return r;
    std::lock_guard<std::mutex> lock(mutex);
    peerMappings[p] = {p, bytes};
    *mapped = p;
    return tleSuccess;
  }

  tleResult_t closePeer(void *mapped, bool sameProcess) override {
    if (sameProcess || !mapped)
      return tleSuccess;
    return unmapPeer(mapped);
  }

  tleResult_t exportRegion(void *ptr, size_t bytes, bool sameProcess,
                           SharedAlloc &out) override;
  tleResult_t unexportRegion(SharedAlloc &region) override;
  tleResult_t importRegion(const SharedAlloc &peer, void **mapped) override;
  tleResult_t closeRegion(void *mapped) override { return unmapPeer(mapped); }

  tleResult_t allocLocal(size_t bytes, void **out) override {
    return alignedCalloc(bytes, out);
  }
  tleResult_t freeLocal(void *ptr) override {
    free(ptr);
    return tleSuccess;
  }
  tleResult_t allocHostVisible(size_t bytes, void **host, void **dev) override {
    if (tleResult_t r = alignedCalloc(bytes, host))
      return r;
    *dev = *host;
    return tleSuccess;
  }
  tleResult_t freeHostVisible(void *host) override {
    free(host);
    return tleSuccess;
  }
  tleResult_t copyToLocal(void *dst, const void *src, size_t bytes) override {
    memcpy(dst, src, bytes);
    return tleSuccess;
  }
  tleResult_t copyFromLocal(void *dst, const void *src, size_t bytes) override {
    memcpy(dst, src, bytes);
    return tleSuccess;
  }

  tleResult_t adoptImported(void *ptr, size_t bytes,
                            const ImportedCopy &copy) override {
    // After fork() every process has the same layout, so a peer's address
    // is mapped here too, but to this process's own memory: nothing could
    // tell such a copy from a shared one.
    if (copy.source == ImportedCopy::Peer && !copy.peerInProcess)
      return fail(tleInvalidArgument,
                  "the emulator cannot check that an address another "
                  "process reported means the same memory here: pass "
                  "peerPtrs, the peers' copies as this process maps them");
    // Imported memory is host memory the emulator's threads load and store
    // directly: every page must be mapped in this process, or a kernel
    // would fault instead of reporting. mincore fails with ENOMEM when a
    // page of the range is not mapped.
    uintptr_t begin = reinterpret_cast<uintptr_t>(ptr);
    if (begin > UINTPTR_MAX - bytes)
      return fail(tleInvalidArgument, "%zu bytes at %p wrap around", bytes,
                  ptr);
    // A fixed buffer, range by range: a huge size costs time only while
    // its pages are mapped, never memory (one byte per page of the whole
    // range was 4 GiB for 2^44 bytes).
    constexpr size_t kChunkPages = 4096;
    unsigned char resident[kChunkPages];
    uintptr_t end = begin + bytes;
    for (uintptr_t at = begin & ~uintptr_t(kPageBytes - 1); at < end;) {
      size_t span = std::min<uintptr_t>(end - at, kChunkPages * kPageBytes);
      if (mincore(reinterpret_cast<void *>(at), span, resident) != 0) {
        if (errno == ENOMEM)
          return fail(tleInvalidArgument,
                      "%zu bytes at %p are not all mapped in this process",
                      bytes, ptr);
        return failErrno(errno, "mincore of %zu bytes at %p", bytes, ptr);
      }
      at += span;
    }
    return tleSuccess;
  }

private:
  /// A peer's file as mapped here: `base` and the whole file's size, by the
  /// address handed out (base itself, or inside it for a registration).
  struct PeerMapping {
    void *base;
    size_t bytes;
  };

  tleResult_t unmapPeer(void *mapped) {
    if (!mapped)
      return tleSuccess;
    PeerMapping m;
    {
      std::lock_guard<std::mutex> lock(mutex);
      auto it = peerMappings.find(mapped);
      if (it == peerMappings.end())
        return fail(tleInternalError, "closing an unknown peer mapping");
      m = it->second;
      peerMappings.erase(it);
    }
    if (munmap(m.base, m.bytes) != 0)
      return failErrno(errno, "munmap of a peer's memory file");
    return tleSuccess;
  }

  bool multiProcess;
  std::mutex mutex;
  std::unordered_map<void *, PeerMapping> peerMappings;
};

// Registration (tleMemRegister). In one process a peer uses the pointer
// itself, so any host memory does. Across processes the peers map the
// memory file behind the range, which only tleShareableAlloc's memory has;
// the blob carries the range's offset in the file.

tleResult_t CpuBackend::exportRegion(void *ptr, size_t bytes, bool sameProcess,
                                     SharedAlloc &out) {
  HostRegion region;
  if (!sameProcess)
    if (tleResult_t r = findHostShareable(ptr, bytes, region))
      return r;
  out.ptr = ptr;
  out.bytes = bytes;
  if (sameProcess)
    return tleSuccess;
  uint64_t offset = region.offset;
  out.exportBlob.assign(reinterpret_cast<const char *>(&offset),
                        sizeof(offset));
  out.exportFd = region.fd.get();
  out.impl = new Export{std::move(region.fd)};
  return tleSuccess;
}

tleResult_t CpuBackend::unexportRegion(SharedAlloc &region) {
  delete static_cast<Export *>(region.impl);
  region.impl = nullptr;
  region.exportFd = -1;
  region.ptr = nullptr;
  return tleSuccess;
}

tleResult_t CpuBackend::importRegion(const SharedAlloc &peer, void **mapped) {
  uint64_t offset;
  if (peer.exportBlob.size() != sizeof(offset))
    return fail(tleInternalError, "malformed registration from a peer");
  memcpy(&offset, peer.exportBlob.data(), sizeof(offset));
  if (offset + peer.bytes < offset)
    return fail(tleInternalError, "malformed registration from a peer");
  void *base;
  size_t fileBytes;
  if (tleResult_t r =
          mapMemoryFile(peer.exportFd, offset + peer.bytes, &base, &fileBytes))
    return r;
  void *p = static_cast<char *>(base) + offset;
  std::lock_guard<std::mutex> lock(mutex);
  // Two registrations of one peer's file at the same offset get two
  // mappings, hence two distinct addresses: the key stays unique.
  peerMappings[p] = {base, fileBytes};
  *mapped = p;
  return tleSuccess;
}

} // namespace

std::unique_ptr<Backend> createCpuBackend(bool multiProcess) {
  return std::make_unique<CpuBackend>(multiProcess);
}

} // namespace tle
