//===- Pointer.h - Rank queries and pointers into symmetric buffers -------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The communicator's rank and size, and the address of a byte of a
// symmetric buffer (tle/detail/DevComm.h's SymMem) in this rank's copy or
// in a peer's copy as mapped here, with the peer and the offset checked.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_IMPL_POINTER_H
#define TLE_IMPL_POINTER_H

#include "tle/impl/Check.h"

namespace tle::impl {

[[noreturn]] TLE_DEV_COLD void failMem(const SymMem *m, FnAt fn,
                                       BadArgument arg, uint64_t value,
                                       uint64_t limit) {
  Failure f{kDevErrBadArgument, fn};
  f.argument = arg;
  f.value = value;
  f.limit = limit;
  failWithRecord(loadConst(&m->error), loadConst(&m->rank), 0, f);
}

/// Byte `offset` of rank `peer`'s copy (ours when `local`). offset == bytes
/// (one past the end) is allowed, as in C++.
TLE_DEV_INLINE void *memPointer(const void *mem, uint64_t offset, int peer,
                                bool local, FnAt fn) {
  const SymMem *m = static_cast<const SymMem *>(mem);
  if (TLE_UNLIKELY(!m || loadConst(&m->magic) != kSymMemMagic))
    failNoRecord();
  uint32_t rank = static_cast<uint32_t>(loadConst(&m->rank));
  uint32_t size = static_cast<uint32_t>(loadConst(&m->size));
  if (TLE_UNLIKELY(size - 1 >= kMaxRanks || rank >= size))
    failNoRecord();
  uint32_t q = local ? rank : static_cast<uint32_t>(peer);
  if (TLE_UNLIKELY(q >= size))
    failMem(m, fn, kArgPeer, static_cast<uint64_t>(static_cast<int64_t>(peer)),
            size);
  uint64_t bytes = loadConst(&m->bytes);
  if (TLE_UNLIKELY(offset > bytes))
    failMem(m, fn, kArgOffset, offset, bytes);
  return static_cast<char *>(loadConst(&m->ptrs[routeIndex(q)])) + offset;
}

TLE_DEV_INLINE int intraRank(const void *comm, FnAt fn) {
  return static_cast<int>(checkComm(comm, fn).rank);
}
TLE_DEV_INLINE int intraSize(const void *comm, FnAt fn) {
  return static_cast<int>(checkComm(comm, fn).size);
}

} // namespace tle::impl

#endif // TLE_IMPL_POINTER_H
