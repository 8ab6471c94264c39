//===- StackPool.h - Fiber stacks of one emulator launch ---------*- C++
//-*-===//
//
// A launch can hold tens of thousands of fibers at once, so their stacks come
// from a pool that maps them in chunks and reuses a finished thread's stack
// for the next block. Every stack gets a guard page below it while the number
// of stacks stays under the kernel's limit on memory mappings (each guard page
// splits a mapping in two); above that, stacks are unguarded. The pool unmaps
// everything when the launch ends, which also frees the stacks of threads a
// failed launch abandoned.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_HOST_EMU_STACKPOOL_H
#define TLE_HOST_EMU_STACKPOOL_H

#include <boost/context/stack_context.hpp>

#include <cstddef>
#include <utility>
#include <vector>

namespace tle::emu::detail {

class StackPool {
public:
  /// Stacks of `usableBytes` (rounded up to pages); `guard` adds a
  /// PROT_NONE page below each.
  StackPool(size_t usableBytes, bool guard);
  ~StackPool();
  StackPool(const StackPool &) = delete;
  StackPool &operator=(const StackPool &) = delete;

  /// Throws std::bad_alloc when the address space is exhausted.
  boost::context::stack_context allocate();
  void deallocate(boost::context::stack_context &sctx) noexcept;

private:
  size_t usable;
  size_t stride;
  bool guard;
  std::vector<std::pair<void *, size_t>> chunks;
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
