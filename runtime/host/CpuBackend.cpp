//===- CpuBackend.cpp - Memory for ranks that run on the CPU ---*- C++ -*-===//
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
// allocation fails.
//
//===----------------------------------------------------------------------===//

#include "Backend.h"
#include "Error.h"
#include "UniqueFd.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <unordered_map>
#include <vector>

namespace tle {
namespace {

constexpr size_t kPageBytes = 4096;

size_t roundUp(size_t bytes) {
  size_t n = bytes == 0 ? 1 : bytes;
  return (n + kPageBytes - 1) / kPageBytes * kPageBytes;
}

tleResult_t alignedCalloc(size_t bytes, void **out) {
  size_t n = roundUp(bytes);
  if (n < bytes)
    return fail(tleSystemError, "cannot allocate %zu bytes", bytes);
  void *p = aligned_alloc(kPageBytes, n);
  if (!p)
    return fail(tleSystemError, "out of host memory allocating %zu bytes",
                bytes);
  memset(p, 0, n);
  *out = p;
  return tleSuccess;
}

/// A memory file this rank created, and its descriptor until every peer
/// has mapped it.
struct MemoryFile {
  UniqueFd fd;
  size_t mappedBytes;
};

/// The seals a memory file carries before it is shared: a peer cannot
/// shrink it under the others' mappings (which would make their accesses
/// fault) or grow it, and no one can change the seals.
constexpr int kSeals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;

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
    size_t mapped = roundUp(bytes);
    if (mapped < bytes || mapped > static_cast<size_t>(INT64_MAX))
      return fail(tleSystemError, "cannot allocate %zu bytes", bytes);
    UniqueFd fd(memfd_create("tle-shared", MFD_CLOEXEC | MFD_ALLOW_SEALING));
    if (!fd)
      return failErrno(errno, "memfd_create");
    if (ftruncate(fd.get(), static_cast<off_t>(mapped)) != 0)
      return failErrno(errno, "ftruncate of a memory file to %zu bytes",
                       mapped);
    if (fcntl(fd.get(), F_ADD_SEALS, kSeals) != 0)
      return failErrno(errno, "sealing a memory file");
    void *p =
        mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
    if (p == MAP_FAILED)
      return failErrno(errno, "mmap of a memory file of %zu bytes", mapped);
    out.ptr = p;
    out.bytes = bytes;
    out.exportFd = fd.get();
    out.impl = new MemoryFile{std::move(fd), mapped};
    return tleSuccess;
  }

  tleResult_t freeShared(SharedAlloc &alloc) override {
    if (!alloc.ptr)
      return tleSuccess;
    tleResult_t result = tleSuccess;
    if (auto *file = static_cast<MemoryFile *>(alloc.impl)) {
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
    if (auto *file = static_cast<MemoryFile *>(alloc.impl))
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
    int fd = peer.exportFd;
    if (fd < 0)
      return fail(tleInternalError, "a peer exported no memory file");
    // The file came from an authenticated peer, but it is checked anyway:
    // a file too small or not sealed could fault this process later.
    struct stat st;
    size_t want = roundUp(peer.bytes);
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
        static_cast<size_t>(st.st_size) < want)
      return fail(tleInternalError,
                  "a peer's memory file is not a file of %zu bytes", want);
    int seals = fcntl(fd, F_GET_SEALS);
    if (seals < 0 || (seals & kSeals) != kSeals)
      return fail(tleInternalError, "a peer's memory file is not sealed");
    void *p = mmap(nullptr, want, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED)
      return failErrno(errno, "mmap of a peer's memory file");
    std::lock_guard<std::mutex> lock(mutex);
    peerMappings[p] = want;
    *mapped = p;
    return tleSuccess;
  }

  tleResult_t closePeer(void *mapped, bool sameProcess) override {
    if (sameProcess || !mapped)
      return tleSuccess;
    size_t bytes;
    {
      std::lock_guard<std::mutex> lock(mutex);
      auto it = peerMappings.find(mapped);
      if (it == peerMappings.end())
        return fail(tleInternalError, "closePeer of an unknown mapping");
      bytes = it->second;
      peerMappings.erase(it);
    }
    if (munmap(mapped, bytes) != 0)
      return failErrno(errno, "munmap of a peer's memory file");
    return tleSuccess;
  }

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
  tleResult_t copyFromLocal(void *dst, const void *src,
                            size_t bytes) override {
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
    uintptr_t first = begin & ~uintptr_t(kPageBytes - 1);
    size_t span = begin + bytes - first;
    std::vector<unsigned char> resident((span + kPageBytes - 1) / kPageBytes);
    if (mincore(reinterpret_cast<void *>(first), span, resident.data()) != 0) {
      if (errno == ENOMEM)
        return fail(tleInvalidArgument,
                    "%zu bytes at %p are not all mapped in this process", bytes,
                    ptr);
      return failErrno(errno, "mincore of %zu bytes at %p", bytes, ptr);
    }
    return tleSuccess;
  }

private:
  bool multiProcess;
  std::mutex mutex;
  std::unordered_map<void *, size_t> peerMappings;
};

} // namespace

std::unique_ptr<Backend> createCpuBackend(bool multiProcess) {
  return std::make_unique<CpuBackend>(multiProcess);
}

} // namespace tle
