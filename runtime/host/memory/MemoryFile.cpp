//===- MemoryFile.cpp - Host memory that other processes can map ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Memory files (memfd_create, sealed) for the CPU backend and the table of
// tleShareableAlloc's host allocations. MemoryFile.h says why both exist.
//
//===----------------------------------------------------------------------===//

#include "memory/MemoryFile.h"
#include "diag/Error.h"

#include <cerrno>
#include <cstdint>
#include <fcntl.h>
#include <map>
#include <mutex>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tle {
namespace {

constexpr size_t kPageBytes = 4096;

/// The seals a memory file carries before it is shared: a peer cannot
/// shrink it under the others' mappings (which would make their accesses
/// fault) or grow it, and no one can change the seals.
constexpr int kSeals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;

/// tleShareableAlloc's host allocations, by address. Never destroyed: a
/// free may come from a static destructor (a torch memory pool's) after
/// this file's statics would be gone.
struct Table {
  std::mutex mutex;
  std::map<uintptr_t, MemoryFile> files;
};
Table &table() {
  static Table *t = new Table;
  return *t;
}

} // namespace

size_t memoryFileBytes(size_t bytes) {
  size_t n = bytes == 0 ? 1 : bytes;
  size_t rounded = (n + kPageBytes - 1) / kPageBytes * kPageBytes;
  return rounded < n ? 0 : rounded;
}

tleResult_t createMemoryFile(size_t bytes, MemoryFile &out) {
  size_t mapped = memoryFileBytes(bytes);
  if (mapped == 0 || mapped > static_cast<size_t>(INT64_MAX))
    return fail(tleSystemError, "cannot allocate %zu bytes", bytes);
  UniqueFd fd(memfd_create("tle-shared", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (!fd)
    return failErrno(errno, "memfd_create");
  if (ftruncate(fd.get(), static_cast<off_t>(mapped)) != 0)
    return failErrno(errno, "ftruncate of a memory file to %zu bytes", mapped);
  if (fcntl(fd.get(), F_ADD_SEALS, kSeals) != 0)
    return failErrno(errno, "sealing a memory file");
  void *p =
      mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
  if (p == MAP_FAILED)
    return failErrno(errno, "mmap of a memory file of %zu bytes", mapped);
  out.fd = std::move(fd);
  out.ptr = p;
  out.mappedBytes = mapped;
  return tleSuccess;
}

tleResult_t mapMemoryFile(int fd, size_t minBytes, void **out,
                          size_t *mappedBytes) {
  if (fd < 0)
    return fail(tleInternalError, "a peer exported no memory file");
  struct stat st;
  size_t want = memoryFileBytes(minBytes);
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
      static_cast<size_t>(st.st_size) < want)
    return fail(tleInternalError,
                "a peer's memory file is not a file of %zu bytes", want);
  int seals = fcntl(fd, F_GET_SEALS);
  if (seals < 0 || (seals & kSeals) != kSeals)
    return fail(tleInternalError, "a peer's memory file is not sealed");
  size_t size = static_cast<size_t>(st.st_size);
  void *p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED)
    return failErrno(errno, "mmap of a peer's memory file");
  *out = p;
  *mappedBytes = size;
  return tleSuccess;
}

tleResult_t allocHostShareable(size_t bytes, void **out) {
  MemoryFile file;
  if (tleResult_t r = createMemoryFile(bytes, file))
    return r;
  void *p = file.ptr;
  Table &t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  t.files.emplace(reinterpret_cast<uintptr_t>(p), std::move(file));
  *out = p;
  return tleSuccess;
}

tleResult_t freeHostShareable(void *ptr) {
  MemoryFile file;
  {
    Table &t = table();
    std::lock_guard<std::mutex> lock(t.mutex);
    auto it = t.files.find(reinterpret_cast<uintptr_t>(ptr));
    if (it == t.files.end())
      return fail(tleInvalidArgument,
                  "%p is not memory tleShareableAlloc returned for the host",
                  ptr);
    file = std::move(it->second);
    t.files.erase(it);
  }
  // Peers that mapped the file keep their mappings: the kernel frees it
  // when the last one is gone.
  if (munmap(file.ptr, file.mappedBytes) != 0)
    return failErrno(errno, "munmap of a shareable allocation");
  return tleSuccess;
}

tleResult_t findHostShareable(const void *ptr, size_t bytes, HostRegion &out) {
  uintptr_t begin = reinterpret_cast<uintptr_t>(ptr);
  Table &t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  // The allocation that starts at or below `ptr`, if any.
  auto it = t.files.upper_bound(begin);
  if (it != t.files.begin()) {
    --it;
    const MemoryFile &file = it->second;
    size_t offset = begin - it->first;
    if (offset < file.mappedBytes) {
      if (bytes > file.mappedBytes - offset)
        return fail(tleInvalidArgument,
                    "%zu bytes at %p run past the end of their shareable "
                    "allocation (%zu bytes at 0x%llx)",
                    bytes, ptr, file.mappedBytes,
                    static_cast<unsigned long long>(it->first));
      int dup = fcntl(file.fd.get(), F_DUPFD_CLOEXEC, 0);
      if (dup < 0)
        return failErrno(errno, "dup of a shareable allocation's descriptor");
      out.fd.reset(dup);
      out.offset = offset;
      out.fileBytes = file.mappedBytes;
      return tleSuccess;
    }
  }
  return fail(tleInvalidArgument,
              "%p is not memory that another process can map: a rank of the "
              "CPU backend in its own process registers only host memory "
              "from tleShareableAlloc(bytes, -1, NULL) (in Python: "
              "tle.cpu.shareable_array); allocate the buffer there, or use "
              "tleMemAlloc",
              ptr);
}

} // namespace tle
