//===- StackPool.h - Guarded fiber stacks of a launch -----------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A launch can hold tens of thousands of fibers at once, so their stacks come
// from a pool that maps them in chunks and reuses a finished thread's stack
// for the next block. Every stack has a PROT_NONE guard region below it, so
// that an overflow faults there (and the emulator's signal handler reports
// it) instead of writing into the neighbouring stack. Each guard splits its
// chunk's mapping, so a guarded stack costs two of the process's memory
// mappings; the launch bounds its live threads accordingly
// (tle::emu::kMaxLiveThreads). The pool unmaps everything when the launch
// ends, which also frees the stacks of threads a failed launch abandoned.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_HOST_EMU_STACKPOOL_H
#define TLE_HOST_EMU_STACKPOOL_H

#include <boost/context/stack_context.hpp>

#include <cstddef>
#include <stdexcept>
#include <utility>
#include <vector>

namespace tle::emu::detail {

/// The stacks could not be mapped or guarded (address space or the limit on
/// memory mappings exhausted); what() says which.
class StackMapError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

class StackPool {
public:
  /// Guard below every stack: large enough that a frame of up to this many
  /// bytes cannot step over it. It is address space only, never memory.
  static constexpr size_t kGuardBytes = size_t(64) << 10;

  /// Stacks of `usableBytes` (a multiple of the page size).
  explicit StackPool(size_t usableBytes);
  ~StackPool();
  StackPool(const StackPool &) = delete;
  StackPool &operator=(const StackPool &) = delete;

  /// Throws StackMapError when a chunk cannot be mapped or guarded.
  boost::context::stack_context allocate();
  void deallocate(boost::context::stack_context &sctx) noexcept;

  /// Whether `addr` lies in the guard region of one of the pool's stacks.
  /// Async-signal-safe while no allocate() runs.
  bool inGuard(const void *addr) const noexcept;

private:
  size_t usable;
  size_t guard; ///< kGuardBytes and a page (StackPool's constructor)
  size_t stride;
  size_t perChunk;
  std::vector<std::pair<char *, size_t>> chunks;
  std::vector<char *> freeStacks; ///< lowest address of each free stack
};

/// The StackAllocator concept of Boost.Context over a pool.
struct PoolStackAllocator {
  StackPool *pool;
  boost::context::stack_context allocate() { return pool->allocate(); }
  void deallocate(boost::context::stack_context &sctx) noexcept {
    pool->deallocate(sctx);
  }
};

} // namespace tle::emu::detail

#endif // TLE_HOST_EMU_STACKPOOL_H
