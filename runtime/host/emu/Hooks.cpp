//===- Hooks.cpp - The C hooks code inside the emulator calls -------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Implements tle/detail/EmuHooks.h by forwarding to the scheduler of the
// calling fiber. Called off a fiber (plain host code), they behave as
// OffFiber.h describes: the caller's program (Interp.cpp) or a 1x1 launch,
// syncs are no-ops for its one thread, a spin wait yields or sleeps (a spin
// hint yields), and an abort returns to the program's entry point or ends
// the process.
//
//===----------------------------------------------------------------------===//

#include "emu/InterpCheck.h"
#include "emu/OffFiber.h"
#include "emu/Scheduler.h"

#include <thread>

using tle::emu::detail::EmuThread;
using tle::emu::detail::Scheduler;

namespace {
/// The running thread, or null off a fiber.
EmuThread *thread() {
  Scheduler *s = Scheduler::current();
  return s ? s->currentThread() : nullptr;
}

uint32_t pick(int32_t dim, uint32_t x, uint32_t y, uint32_t z) {
  return dim == 0 ? x : dim == 1 ? y : dim == 2 ? z : 0;
}
} // namespace

extern "C" {

TLE_API uint32_t tleEmuThreadId(int32_t dim) {
  EmuThread *t = thread();
  return t ? pick(dim, t->x, t->y, t->z) : 0;
}

TLE_API uint32_t tleEmuBlockId(int32_t dim) {
  EmuThread *t = thread();
  return t ? pick(dim, t->block->x, t->block->y, t->block->z)
           : tle::emu::detail::offFiberBlockId(dim);
}

TLE_API uint32_t tleEmuBlockDim(int32_t dim) {
  EmuThread *t = thread();
  if (!t)
    return 1;
  const auto &d = Scheduler::current()->spec().block;
  return pick(dim, d.x, d.y, d.z);
}

TLE_API uint32_t tleEmuGridDim(int32_t dim) {
  EmuThread *t = thread();
  if (!t)
    return tle::emu::detail::offFiberGridDim(dim);
  const auto &d = Scheduler::current()->spec().grid;
  return pick(dim, d.x, d.y, d.z);
}

TLE_API uint32_t tleEmuThreadRank(void) {
  EmuThread *t = thread();
  return t ? t->tid : 0;
}

TLE_API uint32_t tleEmuBlockThreads(void) {
  EmuThread *t = thread();
  return t ? t->block->size : 1;
}

TLE_API void tleEmuSyncBlock(void) {
  if (thread())
    Scheduler::current()->syncBlock();
}

TLE_API void tleEmuSyncBlockTwice(void) {
  if (thread())
    Scheduler::current()->syncBlockTwice();
}

TLE_API void tleEmuSyncWarp(void) {
  if (thread())
    Scheduler::current()->syncWarp();
}

TLE_API void tleEmuSpinWait(const tle::WaitInfo *info) {
  if (thread())
    Scheduler::current()->spinWait(info);
  else
    tle::emu::detail::offFiberSpinWait(info);
}

TLE_API void tleEmuSpinHint(const void *addr, uint64_t value) {
  if (thread())
    Scheduler::current()->spinHint(addr, value);
  else
    std::this_thread::yield();
}

TLE_API void tleEmuAbortLaunch(void) {
  if (thread())
    Scheduler::current()->abortLaunch();
  tle::emu::detail::offFiberAbort();
}

TLE_API uint64_t tleEmuNowNs(void) { return tle::emu::detail::steadyNowNs(); }

TLE_API uint32_t *tleEmuBlockScratch(uint32_t id, uint32_t n) {
  if (thread())
    return Scheduler::current()->blockScratch(id, n);
  return tle::emu::detail::offFiberScratch(id, n);
}

TLE_API void tleEmuBarrierEvent(const void *comm, int32_t barrierKind,
                                int32_t coopKind, uint32_t slot, int32_t order,
                                int32_t phase) {
  if (thread())
    Scheduler::current()->barrierEvent(comm, barrierKind, coopKind, slot, order,
                                       phase);
  else if (tle::emu::detail::interpChecking)
    tle::emu::detail::interpCheckHookEvent(comm, barrierKind, coopKind, slot,
                                           order, phase);
}

TLE_API void tleEmuSite(const char *where) {
  if (thread())
    Scheduler::current()->site(where);
}

// Called after every load and store of a compiled kernel: off a fiber, or
// with the race check off, it returns after two tests.
TLE_API void tleEmuAccess(const void *addr, uint64_t bytes, int32_t kind,
                          int32_t order, const char *where) {
  Scheduler *s = Scheduler::current();
  EmuThread *t = s ? s->currentThread() : nullptr;
  if (!t) {
    if (tle::emu::detail::interpChecking)
      tle::emu::detail::interpCheckHookAccess(addr, bytes, kind, order);
    return;
  }
  // A spin hint that follows names this load's line; a spin that follows a
  // store is not a re-poll (Scheduler::afterYield).
  t->accessSite = where;
  if (kind == tle::kAccessStore || kind == tle::kAccessAtomicStore ||
      kind == tle::kAccessAtomicUpdate) {
    t->storedSinceYield = true;
    // A thread parked on this word (a barrier flag, a counter) may pass.
    s->wake(addr);
  }
  if (s->racing())
    s->access(addr, bytes, kind, order, where);
}

TLE_API void tleEmuSignal(const void *word, int32_t event, uint64_t value,
                          uint64_t operand, int32_t order) {
  Scheduler *s = Scheduler::current();
  EmuThread *t = s ? s->currentThread() : nullptr;
  if (!t) {
    tle::emu::detail::interpCheckHookSignal(word, event, order);
    return;
  }
  if (event == tle::kSignalAdd || event == tle::kSignalStore) {
    t->storedSinceYield = true;
    s->wake(word);
  }
  if (s->racing())
    s->signal(word, event, value, operand, order);
}

TLE_API void tleEmuNetAdd(const void *comm, const void *word, uint64_t value) {
  auto *w = static_cast<uint64_t *>(const_cast<void *>(word));
  if (thread())
    Scheduler::current()->netAdd(comm, w, value);
  else
    // Off a fiber (the interpreter runs one thread at a time): no
    // scheduler to delay it, so the network delivers at once.
    tle::emu::detail::offFiberNetAdd(w, value);
}

TLE_API void tleEmuNetCopy(const void *, const void *dst, const void *src,
                           uint64_t bytes, const void *signal,
                           uint64_t signalValue, const void *counter,
                           uint64_t counterValue) {
  auto *d = const_cast<void *>(dst);
  auto *s = static_cast<uint64_t *>(const_cast<void *>(signal));
  auto *c = static_cast<uint64_t *>(const_cast<void *>(counter));
  if (thread()) {
    Scheduler::current()->netCopy(d, src, bytes, s, signalValue, c,
                                  counterValue, nullptr);
    return;
  }
  tle::emu::detail::offFiberNetCopy(d, src, bytes, s, signalValue, c,
                                    counterValue);
}

TLE_API void tleEmuNetValue(const void *, const void *dst, uint64_t value,
                            const void *signal, uint64_t signalValue) {
  auto *d = const_cast<void *>(dst);
  auto *s = static_cast<uint64_t *>(const_cast<void *>(signal));
  if (thread()) {
    Scheduler::current()->netCopy(d, nullptr, sizeof(value), s, signalValue,
                                  nullptr, 0, &value);
    return;
  }
  tle::emu::detail::offFiberNetCopy(d, &value, sizeof(value), s, signalValue,
                                    nullptr, 0);
}

TLE_API uint64_t tleEmuNetFlush(const void *) {
  return thread() ? Scheduler::current()->netFlush()
                  : tle::emu::detail::offFiberNetFlush();
}

TLE_API void tleEmuEnterCall(const char *name, const char *file,
                             uint32_t line) {
  if (thread())
    Scheduler::current()->enterCall(name, file, line);
}

TLE_API void tleEmuLeaveCall(void) {
  if (thread())
    Scheduler::current()->leaveCall();
}

} // extern "C"

namespace tle::emu {
uint64_t netNow() {
  Scheduler *s = Scheduler::current();
  return s && s->currentThread() ? s->netNow() : 0;
}
} // namespace tle::emu
