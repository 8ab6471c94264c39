//===- StackPool.cpp - Guarded fiber stacks of one emulator launch --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Stacks are carved from anonymous mappings of up to 64 stacks each,
// reserved without swap (MAP_NORESERVE), so a launch pays resident memory
// only for the pages its threads actually touch. Each stack's guard region
// is made PROT_NONE when its chunk is mapped; a failure there (ENOMEM: the
// process reached vm.max_map_count) fails the launch instead of leaving a
// stack unguarded.
//
//===----------------------------------------------------------------------===//

#include "emu/StackPool.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>

namespace tle::emu::detail {

namespace {
constexpr size_t kMaxStacksPerChunk = 64;
/// Chunks stay small enough to map under strict overcommit accounting
/// (vm.overcommit_memory=2 ignores MAP_NORESERVE).
constexpr size_t kChunkBytes = size_t(16) << 20;

size_t pageSize() {
  static const size_t size = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return size;
}

std::string maxMapCount() {
  std::ifstream in("/proc/sys/vm/max_map_count");
  std::string value;
  return in >> value ? value : "unknown";
}
} // namespace

StackPool::StackPool(size_t usableBytes) {
  size_t page = pageSize();
  usable = (usableBytes + page - 1) / page * page;
  // One page more than the guard needs. Stacks of 64 KiB and a 64 KiB
  // guard lay 128 KiB apart, a multiple of the size of a way of common L2
  // caches (and of every L1's): the top frames of every fiber, all the hot
  // part of its stack, mapped to the same few sets, and a switch between
  // fibers missed the cache. Shifted by a page each, they spread over 32
  // times as many sets: a 4-rank launch of 512 fibers ran 10-20% faster.
  // (Shifting each by cache lines within the page as well made a 72-rank
  // launch slower: its hot frames then span two pages.)
  guard = (kGuardBytes + page - 1) / page * page + page;
  stride = usable + guard;
  perChunk = std::clamp<size_t>(kChunkBytes / stride, 1, kMaxStacksPerChunk);
}

StackPool::~StackPool() {
  for (auto &[base, bytes] : chunks)
    munmap(base, bytes);
}

boost::context::stack_context StackPool::allocate() {
  if (freeStacks.empty()) {
    size_t bytes = stride * perChunk;
    void *mapped = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (mapped == MAP_FAILED)
      throw StackMapError("cannot map " + std::to_string(bytes) +
                          " bytes of fiber stacks: " + std::strerror(errno));
    char *base = static_cast<char *>(mapped);
    for (size_t i = 0; i < perChunk; ++i) {
      if (mprotect(base + i * stride, guard, PROT_NONE) != 0) {
        int err = errno;
        munmap(base, bytes);
        throw StackMapError(
            "cannot guard a fiber stack: " + std::string(std::strerror(err)) +
            (err == ENOMEM
                 ? " (the process has reached its limit of memory "
                   "mappings, vm.max_map_count = " +
                       maxMapCount() + "; every guarded stack takes two)"
                 : ""));
      }
    }
    // Registered only once complete: inGuard() may read the list from a
    // signal handler.
    chunks.reserve(chunks.size() + 1);
    // deallocate() is noexcept: room for every stack is reserved here.
    freeStacks.reserve((chunks.size() + 1) * perChunk);
    chunks.emplace_back(base, bytes);
    // Pushed highest first so that stacks are handed out in address order.
    for (size_t i = perChunk; i-- > 0;)
      freeStacks.push_back(base + i * stride + guard);
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

bool StackPool::inGuard(const void *addr) const noexcept {
  const char *p = static_cast<const char *>(addr);
  for (const auto &[base, bytes] : chunks)
    if (p >= base && p < base + bytes)
      return static_cast<size_t>(p - base) % stride < guard;
  return false;
}

} // namespace tle::emu::detail
