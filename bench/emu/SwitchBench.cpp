//===- SwitchBench.cpp - The emulator's fiber switch against Boost's ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// tle-emu-switch-bench [fibers] [switches]: the cost of one switch between
// fibers as the emulator's scheduler makes them: `fibers` fibers (512 by
// default, a 4-rank x 4-block launch of 32 threads), each suspended in the
// same call chain four calls deep, resumed in random order, each switching
// straight to the next. Once with the emulator's switch (emu/Fiber.h) and
// once with Boost's jump_fcontext, on the same contexts and stacks; prints
// the median ns per step (a switch, or none in the 1/fibers of draws that
// pick the running fiber) of 5 runs with their min and max.
//
//===----------------------------------------------------------------------===//

#include "emu/Fiber.h"

#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

using namespace tle::emu::detail;

namespace {

using Switch = FiberTransfer (*)(FiberContext, void *);

struct Bench {
  std::vector<FiberContext> contexts;
  FiberContext main = nullptr;
  Switch doSwitch = nullptr;
  uint64_t rng = 88172645463325252ull;
  long left = 0;
  uint32_t running = 0;
  int64_t from = -1; ///< who switched last: a fiber, or -1 for main
};
Bench bench;

/// Keeps the context of whoever switched to the caller (as the
/// scheduler's adopt).
void adopt(FiberContext c) {
  if (bench.from < 0)
    bench.main = c;
  else
    bench.contexts[bench.from] = c;
}

uint32_t draw(uint32_t n) {
  bench.rng ^= bench.rng << 13;
  bench.rng ^= bench.rng >> 7;
  bench.rng ^= bench.rng << 17;
  return static_cast<uint32_t>(bench.rng % n);
}

// The call chain every fiber is suspended in; noinline so that each level
// is a real call and return.
[[gnu::noinline]] void yieldOnce() {
  uint32_t me = bench.running;
  FiberContext to;
  if (--bench.left <= 0) {
    to = bench.main;
  } else {
    uint32_t next = draw(static_cast<uint32_t>(bench.contexts.size()));
    if (next == me)
      return;
    bench.running = next;
    to = bench.contexts[next];
  }
  bench.from = me;
  adopt(bench.doSwitch(to, nullptr).fctx);
}
[[gnu::noinline]] void level3() {
  yieldOnce();
  asm volatile("");
}
[[gnu::noinline]] void level2() {
  level3();
  asm volatile("");
}
[[gnu::noinline]] void level1() {
  level2();
  asm volatile("");
}

void entry(FiberTransfer from) {
  // Started by main, which it switches back to at once: parked until the
  // timed run resumes it.
  adopt(from.fctx);
  bench.from = bench.running;
  adopt(bench.doSwitch(bench.main, nullptr).fctx);
  for (;;)
    level1();
}

FiberTransfer boostSwitch(FiberContext to, void *word) {
  return boost::context::detail::jump_fcontext(to, word);
}

/// ns per step of one run.
double run(Switch s, size_t fibers, long switches,
           std::vector<boost::context::stack_context> &stacks) {
  bench.doSwitch = s;
  bench.contexts.assign(fibers, nullptr);
  for (size_t i = 0; i < fibers; ++i) {
    bench.contexts[i] = makeFiber(stacks[i], entry);
    // Starts it; it parks at once (entry) and comes back with its context.
    bench.running = static_cast<uint32_t>(i);
    bench.from = -1;
    bench.contexts[i] = s(bench.contexts[i], nullptr).fctx;
  }
  bench.left = switches;
  bench.running = 0;
  bench.from = -1;
  auto t0 = std::chrono::steady_clock::now();
  // The fiber whose step is the last switches back here.
  (void)s(bench.contexts[0], nullptr);
  auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / switches;
}

} // namespace

int main(int argc, char **argv) {
  size_t fibers = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 512;
  long switches = argc > 2 ? std::strtol(argv[2], nullptr, 10) : 5000000;
  if (fibers < 2 || switches < 1) {
    std::fprintf(stderr, "usage: tle-emu-switch-bench [fibers >= 2] "
                         "[switches >= 1]\n");
    return 2;
  }
  // Laid out as the emulator's pool does (StackPool.cpp): 64 KiB stacks
  // with a 64 KiB guard and a page between them. Only the tops are touched.
  constexpr size_t kStack = size_t(64) << 10, kStride = 2 * kStack + 4096;
  void *mapped = mmap(nullptr, fibers * kStride, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mapped == MAP_FAILED) {
    std::perror("tle-emu-switch-bench: mmap");
    return 1;
  }
  auto base = reinterpret_cast<uintptr_t>(mapped);
  std::vector<boost::context::stack_context> stacks(fibers);
  for (size_t i = 0; i < fibers; ++i) {
    stacks[i].size = kStack;
    stacks[i].sp = reinterpret_cast<void *>(base + i * kStride + kStride);
  }
  std::printf("tle-emu-switch-bench: %zu fibers, %ld switches per run, 5 "
              "runs; ns per step, median [min-max]\n",
              fibers, switches);
  for (auto [name, s] :
       {std::pair<const char *, Switch>{"emulator (Fiber.h)", switchFiber},
        {"boost jump_fcontext", boostSwitch}}) {
    std::vector<double> ns;
    for (int k = 0; k < 5; ++k)
      ns.push_back(run(s, fibers, switches, stacks));
    std::sort(ns.begin(), ns.end());
    std::printf("  %-20s %6.2f [%.2f-%.2f]\n", name, ns[2], ns[0], ns[4]);
  }
  return 0;
}
