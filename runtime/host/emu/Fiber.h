//===- Fiber.h - An emulated thread's context and its switch ----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Each emulated thread runs on a fiber: a context on a stack of the
// launch's pool, laid out by Boost.Context (make_fcontext). A switch saves
// the callee-saved registers and the FP control words on the stack it
// leaves; the stack pointer then is the suspended context.
//
// The switch itself is the emulator's own on x86-64, in jump_fcontext's
// layout (the two mix: a fresh context starts through either). Boost's
// jump_fcontext enters the resumed context with an indirect jump, so the
// call that suspended the caller leaves an entry on the processor's
// return-address stack that no return pops, and every return of the
// resumed fiber up its call chain is mispredicted; ours enters it with a
// return, and two fibers suspended at the same call site (a barrier's
// threads) then return where the predictor expects. Measured
// (tle-emu-switch-bench: 512 fibers in one call chain, resumed in random
// order): 38 ns a switch with jump_fcontext, 8.5 ns with this one
// (docs/benchmarks.md, 2026-12-05).
// Elsewhere jump_fcontext is the switch.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_HOST_EMU_FIBER_H
#define TLE_HOST_EMU_FIBER_H

#include <boost/context/detail/fcontext.hpp>
#include <boost/context/stack_context.hpp>

#include <cstddef>

#if defined(__SANITIZE_ADDRESS__)
#define TLE_EMU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TLE_EMU_ASAN 1
#endif
#endif
#ifdef TLE_EMU_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

namespace tle::emu::detail {

/// A suspended fiber (null: none).
using FiberContext = boost::context::detail::fcontext_t;
/// What a switch returns: the context that switched back, and its word.
using FiberTransfer = boost::context::detail::transfer_t;

/// A fresh context on `stack` that calls entry({the context that first
/// switches to it, that switch's word}) when first switched to; `entry`
/// must never return (it switches away for the last time instead).
inline FiberContext makeFiber(const boost::context::stack_context &stack,
                              void (*entry)(FiberTransfer)) {
  return boost::context::detail::make_fcontext(stack.sp, stack.size, entry);
}

#if defined(__x86_64__) && defined(__ELF__)
extern "C" FiberTransfer tle_emu_switch_fiber(FiberContext to, void *word);
#endif

/// Suspends the calling fiber and resumes `to` with `word`; returns when a
/// context switches back to this one.
inline FiberTransfer switchFiber(FiberContext to, void *word) {
#if defined(__x86_64__) && defined(__ELF__)
  return tle_emu_switch_fiber(to, word);
#else
  return boost::context::detail::jump_fcontext(to, word);
#endif
}

/// A stack's extent, for AddressSanitizer.
struct FiberBounds {
  const void *bottom = nullptr;
  size_t size = 0;
};

inline FiberBounds boundsOf(const boost::context::stack_context &stack) {
  return {static_cast<const char *>(stack.sp) - stack.size, stack.size};
}

// Under AddressSanitizer every switch is announced (nothing otherwise): it
// then knows which stack runs, so that an exception thrown on a fiber
// unpoisons the frames it unwinds (without, a fiber's later calls met the
// unwound frames' redzones). Each context keeps a word for ASan (`save`).

/// Before a switch to a context on `to`; `save` is the leaving context's
/// word, or null when it leaves for good.
inline void asanLeave(void **save, FiberBounds to) {
#ifdef TLE_EMU_ASAN
  __sanitizer_start_switch_fiber(save, to.bottom, to.size);
#else
  (void)save;
  (void)to;
#endif
}

/// On arrival in a context (the switch returned, or a fresh context began)
/// whose word is `save` (null on its first arrival): the stack it came from.
inline FiberBounds asanArrive(void *save) {
  FiberBounds from;
#ifdef TLE_EMU_ASAN
  __sanitizer_finish_switch_fiber(save, &from.bottom, &from.size);
#else
  (void)save;
#endif
  return from;
}

} // namespace tle::emu::detail

#endif // TLE_HOST_EMU_FIBER_H
