//===- OpCounts.cpp - Device-memory operations the host build performed --===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The counters behind tle::emu::deviceOpCounts: the host build of the
// device library reports each flag, epoch, fence and communicator access
// through tleEmuCountOp, so that tests and docs can state what a barrier
// costs in memory operations per rank for any number of ranks (the same
// code runs on GPUs, where nothing counts). Relaxed atomics: ranks may run
// on several OS threads (the interpreter's CPU ranks), and a count needs no
// order.
//
//===----------------------------------------------------------------------===//

// opTally's declaration (EmuHooks.h) is libtle's, as this file is.
#define TLE_HOST_IN_LIBTLE 1
#include "emu/OpCounts.h"
#include "tle/emu.h"

#include <atomic>

namespace {
constexpr int kKinds = static_cast<int>(tle::DeviceOp::NumKinds);
std::atomic<uint64_t> counts[kKinds];
} // namespace

extern "C" TLE_API void tleEmuCountOp(int32_t kind) {
  if (kind >= 0 && kind < kKinds)
    counts[kind].fetch_add(1, std::memory_order_relaxed);
}

namespace tle::emu {

namespace detail {
constinit thread_local uint64_t *opTally = nullptr;

OpTallyScope::OpTallyScope() : outer(opTally) { opTally = table; }

OpTallyScope::~OpTallyScope() {
  opTally = outer;
  for (int k = 0; k < kKinds; ++k)
    if (table[k])
      counts[k].fetch_add(table[k], std::memory_order_relaxed);
}
} // namespace detail

DeviceOpCounts deviceOpCounts() {
  DeviceOpCounts c;
  for (int k = 0; k < kKinds; ++k)
    c.byKind[k] = counts[k].load(std::memory_order_relaxed);
  return c;
}

void resetDeviceOpCounts() {
  for (int k = 0; k < kKinds; ++k)
    counts[k].store(0, std::memory_order_relaxed);
}

} // namespace tle::emu
