//===- CpuBackend.cpp - Memory for ranks that run on the CPU -----*- C++
//-*-===//
//
// The backend of the CPU emulator. Ranks in one process share plain,
// page-aligned heap memory: a peer's "mapping" is its pointer. Ranks in
// separate processes share POSIX shared memory: each allocation is a fresh
// segment "/tle-<pid>-<random>" created exclusively with mode 0600, whose
// name travels in the export blob; peers shm_open and mmap it.
//
// Unlink policy: a segment's name exists only while peers still need to open
// it. The communicator calls releaseExport (shm_unlink) right after every
// rank confirmed its mappings, and freeShared unlinks a still-linked segment
// on every error path, so no name outlives the call that created it. A
// segment stays alive while any rank has it mapped, and the kernel frees it
// when the last mapping goes, also when ranks die. The one gap: a process
// killed between shm_open and that confirmation leaves its name behind.
//
//===----------------------------------------------------------------------===//

#include "Backend.h"
#include "Bootstrap.h"
#include "Error.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <unordered_map>

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

/// A segment this rank created.
struct ShmSegment {
  std::string name;
  size_t mappedBytes;
  bool linked;
};

class CpuBackend final : public Backend {
public:
  explicit CpuBackend(bool multiProcess) : multiProcess(multiProcess) {}

  tleBackend_t kind() const override { return tleBackendEmulator; }
  int device() const override { return -1; }

  tleResult_t allocShared(size_t bytes, SharedAlloc &out) override {
    if (!multiProcess) {
      out.bytes = bytes;
      return alignedCalloc(bytes, &out.ptr);
    }
    size_t mapped = roundUp(bytes);
    std::string name;
    int fd = -1;
    // A name collision is astronomically unlikely but harmless: retry.
    for (int attempt = 0; attempt < 8 && fd < 0; ++attempt) {
      uint64_t nonce;
      if (tleResult_t r = randomBytes(&nonce, sizeof(nonce)))
        return r;
      char buf[64];
      snprintf(buf, sizeof(buf), "/tle-%d-%016llx", static_cast<int>(getpid()),
               static_cast<unsigned long long>(nonce));
      name = buf;
      fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
      if (fd < 0 && errno != EEXIST)
        return failErrno(errno, "shm_open(%s)", name.c_str());
    }
    if (fd < 0)
      return fail(tleSystemError, "shm_open: no free segment name");
    if (ftruncate(fd, static_cast<off_t>(mapped)) != 0) {
      int err = errno;
      close(fd);
      shm_unlink(name.c_str());
      return failErrno(err, "ftruncate(%s, %zu)", name.c_str(), mapped);
    }
    void *p = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int err = errno;
    close(fd);
    if (p == MAP_FAILED) {
      shm_unlink(name.c_str());
      return failErrno(err, "mmap(%s, %zu)", name.c_str(), mapped);
    }
    out.ptr = p;
    out.bytes = bytes;
    out.impl = new ShmSegment{name, mapped, true};
    out.exportBlob = name;
    return tleSuccess;
  }

  tleResult_t freeShared(SharedAlloc &alloc) override {
    if (!alloc.ptr)
      return tleSuccess;
    tleResult_t result = tleSuccess;
    if (auto *seg = static_cast<ShmSegment *>(alloc.impl)) {
      if (seg->linked && shm_unlink(seg->name.c_str()) != 0 && errno != ENOENT)
        result = failErrno(errno, "shm_unlink(%s)", seg->name.c_str());
      if (munmap(alloc.ptr, seg->mappedBytes) != 0)
        result = failErrno(errno, "munmap");
      delete seg;
    } else {
      free(alloc.ptr);
    }
    alloc.ptr = nullptr;
    alloc.impl = nullptr;
    return result;
  }

  tleResult_t releaseExport(SharedAlloc &alloc) override {
    auto *seg = static_cast<ShmSegment *>(alloc.impl);
    if (!seg || !seg->linked)
      return tleSuccess;
    seg->linked = false;
    if (shm_unlink(seg->name.c_str()) != 0 && errno != ENOENT)
      return failErrno(errno, "shm_unlink(%s)", seg->name.c_str());
    return tleSuccess;
  }

  tleResult_t importPeer(const SharedAlloc &peer, bool sameProcess,
                         void **mapped) override {
    if (sameProcess) {
      *mapped = peer.ptr;
      return tleSuccess;
    }
    const std::string &name = peer.exportBlob;
    if (name.compare(0, 5, "/tle-") != 0)
      return fail(tleInternalError, "peer export '%s' is not a TLE segment",
                  name.c_str());
    int fd = shm_open(name.c_str(), O_RDWR | O_CLOEXEC, 0);
    if (fd < 0)
      return failErrno(errno, "shm_open(%s) of a peer's segment", name.c_str());
    struct stat st;
    size_t want = roundUp(peer.bytes);
    if (fstat(fd, &st) != 0 || static_cast<size_t>(st.st_size) < want) {
      close(fd);
      return fail(tleInternalError, "peer segment %s is smaller than %zu bytes",
                  name.c_str(), want);
    }
    void *p = mmap(nullptr, want, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int err = errno;
    close(fd);
    if (p == MAP_FAILED)
      return failErrno(err, "mmap of peer segment %s", name.c_str());
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
      return failErrno(errno, "munmap of a peer segment");
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
