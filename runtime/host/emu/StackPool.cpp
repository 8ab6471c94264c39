//===- StackPool.cpp - Fiber stacks of one emulator launch ----------------===//
//
// Stacks are carved from anonymous mappings of 64 stacks each, reserved
// without swap (MAP_NORESERVE), so a launch pays resident memory only for
// the pages its threads actually touch.
//
//===----------------------------------------------------------------------===//

#include "emu/StackPool.h"

#include <sys/mman.h>
#include <unistd.h>

#include <new>

namespace tle::emu::detail {

namespace {
constexpr size_t kStacksPerChunk = 64;

size_t pageSize() {
  static const size_t size = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return size;
}
} // namespace

StackPool::StackPool(size_t usableBytes, bool guard) : guard(guard) {
  size_t page = pageSize();
  usable = (usableBytes + page - 1) / page * page;
  stride = usable + (guard ? page : 0);
}

StackPool::~StackPool() {
  for (auto &[base, bytes] : chunks)
    munmap(base, bytes);
}

boost::context::stack_context StackPool::allocate() {
  if (freeStacks.empty()) {
    size_t bytes = stride * kStacksPerChunk;
    void *base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED)
      throw std::bad_alloc();
    chunks.emplace_back(base, bytes);
    // deallocate() is noexcept: room for every stack is reserved here.
    freeStacks.reserve(chunks.size() * kStacksPerChunk);
    char *p = static_cast<char *>(base);
    // Pushed highest first so that stacks are handed out in address order.
    for (size_t i = kStacksPerChunk; i-- > 0;) {
      char *stack = p + i * stride;
      if (guard)
        mprotect(stack, pageSize(), PROT_NONE);
      freeStacks.push_back(stack + (guard ? pageSize() : 0));
    }
  }
  char *low = freeStacks.back();
  freeStacks.pop_back();
  boost::context::stack_context sctx;
  sctx.size = usable;
  sctx.sp = low + usable;
  return sctx;
}

void StackPool::deallocate(boost::context::stack_context &sctx) noexcept {
  freeStacks.push_back(static_cast<char *>(sctx.sp) - sctx.size);
}

} // namespace tle::emu::detail
