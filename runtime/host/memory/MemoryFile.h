//===- MemoryFile.h - Host memory that other processes can map --*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The CPU backend shares memory between the processes of a communicator as
// memory files: anonymous memfds, sealed so that no one can shrink or grow
// them, whose descriptors travel over the bootstrap's socket. This file
// makes and maps them, for the backend's own allocations and for
// tleShareableAlloc with device -1: host memory that a rank in its own
// process can register (tleMemRegister). Registration starts from a bare
// pointer, so the process keeps a table of the latter, to find the file
// behind a pointer; plain malloc memory has no file behind it, which is why
// only this memory can be registered across processes.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_HOST_MEMORYFILE_H
#define TLE_HOST_MEMORYFILE_H

#include "bootstrap/UniqueFd.h"
#include "tle/tle.h"

#include <cstddef>

namespace tle {

/// `bytes` rounded up to whole pages (at least one), the size of a file.
size_t memoryFileBytes(size_t bytes);

/// A memory file of memoryFileBytes(bytes), sealed, zero-filled, mapped
/// here read-write.
struct MemoryFile {
  UniqueFd fd;
  void *ptr = nullptr;
  size_t mappedBytes = 0;
};
tleResult_t createMemoryFile(size_t bytes, MemoryFile &out);

/// Maps a peer's memory file of at least `minBytes` (its whole size is
/// mapped; `*mappedBytes` says how much). The file is checked first,
/// although it came from an authenticated peer: a file too small or not
/// sealed could fault this process later.
tleResult_t mapMemoryFile(int fd, size_t minBytes, void **out,
                          size_t *mappedBytes);

/// tleShareableAlloc(device -1): a memory file of at least `bytes`, recorded
/// in the process's table.
tleResult_t allocHostShareable(size_t bytes, void **out);
/// Unmaps and forgets what allocHostShareable returned; tleInvalidArgument
/// for any other pointer.
tleResult_t freeHostShareable(void *ptr);

/// Where `bytes` at `ptr` lie in an allocation of allocHostShareable.
struct HostRegion {
  UniqueFd fd;          ///< a duplicate of the file's descriptor
  size_t offset = 0;    ///< of `ptr` in the file
  size_t fileBytes = 0; ///< the file's size
};
/// Fills `out`; tleInvalidArgument, with a detail that says what to use
/// instead, when the range is not inside one such allocation.
tleResult_t findHostShareable(const void *ptr, size_t bytes, HostRegion &out);

} // namespace tle

#endif // TLE_HOST_MEMORYFILE_H
