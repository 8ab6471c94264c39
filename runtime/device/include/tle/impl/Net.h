//===- Net.h - Net words: what crosses nodes --------------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The transport of the INTER and WORLD teams (docs/design.md, "Teams").
// Each rank has DevComm::nNetWords 64-bit net words: its nSignalWords
// signal words (every network context's), then INTER's barrier slots, then
// WORLD's inter-half slots. Team.h reaches a rank on another node only through
// the three calls below, which dispatch on DevComm::netKind:
//   kNetEmu      the CPU emulator's simulated network (host build only): an
//                add goes through tleEmuNetAdd, which delivers it after the
//                network's latency; loads and resets touch the word itself
//                (tle/detail/DevComm.h, EmuNet);
//   kNetNcclGin  NCCL's GPU-initiated networking (tle/impl/NetNccl.h), in
//                builds with TLE_WITH_NCCL_GIN;
//   kNetNone     one node: nothing reaches the net.
// A kind this build cannot serve means a corrupt communicator. The calls
// have no function to name in a record, so they fail without one; Team.h's
// callers check the kind first with a record (checkWorld), which makes
// these failures unreachable from a communicator TLE built.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_IMPL_NET_H
#define TLE_IMPL_NET_H

#include "tle/impl/Check.h"

#if defined(TLE_WITH_NCCL_GIN)
#include "tle/impl/NetNccl.h"
#endif

// The emulator's network exists in the host build that runs inside the
// emulator (PlatformHost.h), not on GPUs nor on a test's platform.
#if !defined(__CUDACC__) && !defined(TLE_TEST_PLATFORM)
#define TLE_NET_EMU 1
#endif

namespace tle::impl {

/// Whether this build can serve a communicator of net kind `kind` with
/// more than one node.
TLE_DEV_INLINE bool netServed(uint32_t kind) {
#if defined(TLE_NET_EMU)
  constexpr bool emu = true;
#else
  constexpr bool emu = false;
#endif
#if defined(TLE_WITH_NCCL_GIN)
  constexpr bool gin = true;
#else
  constexpr bool gin = false;
#endif
  return (emu && kind == kNetEmu) || (gin && kind == kNetNcclGin);
}

#if defined(TLE_NET_EMU)
/// World rank `peer`'s net word `word` in the emulator's table.
inline uint64_t *emuNetWord(const DevComm *dc, uint32_t peer, uint32_t word) {
  const auto *n = static_cast<const EmuNet *>(loadConst(&dc->net));
  uint32_t nSignalWords = loadConst(&n->nSignalWords);
  uint32_t p = routeIndex(peer);
  return word < nSignalWords
             ? loadConst(&n->signals[p]) + word
             : loadConst(&n->barrier[p]) + (word - nSignalWords);
}
/// This rank's world rank.
inline uint32_t emuWorldRank(const DevComm *dc) {
  return static_cast<uint32_t>(loadConst(&dc->node) * loadConst(&dc->size) +
                               loadConst(&dc->rank));
}
#endif

/// Adds `value` to net word `word` of world rank `worldPeer`, a release at
/// system scope: what the calling thread saw before (its own writes and
/// what it acquired) is visible to whoever acquires the word's new value.
TLE_DEV_INLINE void netAdd(const DevComm *dc, int32_t worldPeer, uint32_t word,
                           uint64_t value) {
  uint32_t kind = loadConst(&dc->netKind);
#if defined(TLE_NET_EMU)
  if (kind == kNetEmu) {
    tleEmuNetAdd(dc, emuNetWord(dc, static_cast<uint32_t>(worldPeer), word),
                 value);
    return;
  }
#endif
#if defined(TLE_WITH_NCCL_GIN)
  if (kind == kNetNcclGin) {
    netAddGin(dc, worldPeer, word, value);
    return;
  }
#endif
  (void)kind;
  (void)worldPeer;
  (void)word;
  (void)value;
  failNoRecord();
}

/// This rank's net word `word`, a relaxed load: the caller adds the
/// acquire fence, as the barrier's polls do.
TLE_DEV_INLINE uint64_t netLoad(const DevComm *dc, uint32_t word) {
  uint32_t kind = loadConst(&dc->netKind);
#if defined(TLE_NET_EMU)
  if (kind == kNetEmu)
    return loadRelaxedSys(emuNetWord(dc, emuWorldRank(dc), word));
#endif
#if defined(TLE_WITH_NCCL_GIN)
  if (kind == kNetNcclGin)
    return netLoadGin(dc, word);
#endif
  (void)kind;
  (void)word;
  failNoRecord();
}

/// Sets this rank's net word `word` to 0 (relaxed, as resetSignal).
TLE_DEV_INLINE void netReset(const DevComm *dc, uint32_t word) {
  uint32_t kind = loadConst(&dc->netKind);
#if defined(TLE_NET_EMU)
  if (kind == kNetEmu) {
    storeRelaxedSys(emuNetWord(dc, emuWorldRank(dc), word), uint64_t(0));
    return;
  }
#endif
#if defined(TLE_WITH_NCCL_GIN)
  if (kind == kNetNcclGin) {
    netResetGin(dc, word);
    return;
  }
#endif
  (void)kind;
  (void)word;
  failNoRecord();
}

/// World rank `world`'s signal word `index`, or its counter `index`
/// (`counter`), as the network names it (netCopy's completion words);
/// both flat over the contexts (OneSided.h's inContext).
TLE_DEV_INLINE uint64_t *netWordOf(const DevComm *dc, uint32_t world,
                                   uint32_t index, bool counter) {
#if defined(TLE_NET_EMU)
  if (loadConst(&dc->netKind) == kNetEmu)
    return emuNetWord(dc, world, 0) +
           (counter ? loadConst(&dc->nSignalWords) : 0) + index;
#endif
  (void)dc;
  (void)world;
  (void)index;
  (void)counter;
  failNoRecord();
}

/// World rank `world`'s copy of buffer `m` as the network reaches it, or a
/// located report when the buffer was not mapped for the network.
TLE_DEV_INLINE void *netPtrOf(const SymMem *m, uint32_t world, FnAt fn) {
  uint32_t n = loadConst(&m->nWorld);
  void *const *ptrs = loadConst(&m->worldPtrs);
  void *p = ptrs && world < n ? loadConst(&ptrs[world]) : nullptr;
  // No table (one node, or memory TLE did not allocate for the world), or
  // the peer's node has not allocated its copy yet.
  if (TLE_UNLIKELY(!p)) {
    Failure f{kDevErrBadArgument, fn};
    f.argument = kArgPeer;
    f.value = world;
    f.limit = n;
    failWithRecord(loadConst(&m->error), loadConst(&m->rank), 0, f);
  }
  return p;
}

/// Hands a transfer to the network: `bytes` from `src` to `dst` (either
/// may be another node's), then `signalValue` added to `signal` and
/// `counterValue` to `counter` (null: none) as releases after the data.
/// The network reads the source when it sends, which is after this call:
/// the caller may reuse it once the counter says so, or after a flush.
TLE_DEV_INLINE void netCopy(const DevComm *dc, void *dst, const void *src,
                            uint64_t bytes, uint64_t *signal,
                            uint64_t signalValue, uint64_t *counter,
                            uint64_t counterValue) {
#if defined(TLE_NET_EMU)
  if (loadConst(&dc->netKind) == kNetEmu) {
    tleEmuNetCopy(dc, dst, src, bytes, signal, signalValue, counter,
                  TLE_MUTANT(56) ? 0 : counterValue);
    return;
  }
#endif
  (void)dc;
  (void)dst;
  (void)src;
  (void)bytes;
  (void)signal;
  (void)signalValue;
  (void)counter;
  (void)counterValue;
  failNoRecord();
}

/// netCopy of one 64-bit value the call carries (a put-value).
TLE_DEV_INLINE void netCopyValue(const DevComm *dc, void *dst, uint64_t value,
                                 uint64_t *signal, uint64_t signalValue) {
#if defined(TLE_NET_EMU)
  if (loadConst(&dc->netKind) == kNetEmu) {
    tleEmuNetValue(dc, dst, value, signal, signalValue);
    return;
  }
#endif
  (void)dc;
  (void)dst;
  (void)value;
  (void)signal;
  (void)signalValue;
  failNoRecord();
}

/// Waits until every transfer this rank handed to the network completed,
/// and acquires what the network did for them. Over NCCL GIN, "completed"
/// is GIN's flush: every put's source was read (the data may still be on
/// its way; its signal says when it landed), on every peer's queue of the
/// context, whichever thread posted it.
TLE_DEV_INLINE void netFlush(const DevComm *dc, uint32_t rank) {
#if defined(TLE_NET_EMU)
  if (loadConst(&dc->netKind) == kNetEmu) {
    for (;;) {
      uint64_t pending = tleEmuNetFlush(dc);
      if (pending == 0)
        return;
      WaitInfo info{};
      info.comm = dc;
      info.rank = static_cast<int32_t>(rank);
      info.what = "flush";
      info.seen = pending;
      spinWait(info);
    }
  }
#endif
#if defined(TLE_WITH_NCCL_GIN)
  if (loadConst(&dc->netKind) == kNetNcclGin) {
    netFlushGin(dc);
    return;
  }
#endif
  (void)dc;
  (void)rank;
  failNoRecord();
}

} // namespace tle::impl

#endif // TLE_IMPL_NET_H
