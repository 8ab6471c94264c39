//===- EmuHooks.h - What the CPU emulator offers running code ---*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The C entry points through which code running inside the CPU emulator
// reaches it: the host build of the device library (its platform layer) and
// kernels compiled by `tlec --target=host` (thread/block ids and
// `gpu.barrier` become these calls). They are valid only on an emulator
// fiber; called elsewhere they report an internal error and abort the launch.
// Their names and signatures come from tle/abi.def (TLE_EMU_HOOK):
//
//   tleEmuThreadId/BlockId/BlockDim/GridDim(dim)  CUDA's ids, dim 0..2 = x..z
//   tleEmuThreadRank()    the linear thread id in the block (x fastest)
//   tleEmuBlockThreads()  the threads of a block (the product of blockDim):
//                         what the device library computes its groups from,
//                         one call instead of five and three
//   tleEmuSyncBlock()     __syncthreads() / gpu.barrier: all threads of the
//                         block
//   tleEmuSyncWarp()      __syncwarp() over the full warp (32 lanes, or the
//                         block's tail)
//   tleEmuSyncBlockTwice()  two tleEmuSyncBlock() with nothing between, in
//                         one step: the device library's barrier threads
//                         that neither signal nor wait take the group's two
//                         syncs with it (the emulator's switch per sync is
//                         most of such a thread's cost)
//   tleEmuSpinWait(info)  a poll that did not make progress: yield to the
//                         scheduler; `info` (a tle::WaitInfo) describes the
//                         wait for the deadlock report and stays valid until
//                         the call returns
//   tleEmuSpinHint(addr, value)  the thread has just loaded `value`
//                         (zero-extended, or its low 64 bits) from `addr`
//                         with an atomic or volatile load, possibly a poll
//                         of a flag another thread or rank sets: yield to
//                         the scheduler so that the writer can run.
//                         Consecutive hints of a thread count as polls (no
//                         progress); a launch in which every live thread
//                         only polls for its timeout ends with tleTimeout.
//                         The host pipeline is to call it after every
//                         atomic or volatile load of a compiled kernel.
//   tleEmuAbortLaunch()   end the launch after an error was recorded in the
//                         comm's ErrorRecord (the emulator's trap)
//   tleEmuNowNs()         monotonic nanoseconds
//   tleEmuBlockScratch(id, words)  `words` zero-initialised uint32 words
//                         private to the calling block, kept for the launch
//                         (`id` distinguishes users; the library uses 0)
//   tleEmuBarrierEvent(comm, barrierKind, coopKind, slot, order, phase)
//                         called by a barrier group's rank 0 when its arrive,
//                         wait or sync on `slot` of `comm` begins or ends
//                         (phase a TracePhase; coopKind kCoopGrid for the
//                         grid barrier, whose every CTA reports): the trace,
//                         and the checks that one slot serves one group at
//                         a time; also by a signal's or a signal wait's
//                         group rank 0 on word `slot`, with barrierKind a
//                         TraceKind (kTraceSignal, kTraceSignalWait): the
//                         trace only
//   tleEmuSite(where)     the calling thread is about to run the op at
//                         source location `where` ("file:line:col", a
//                         string that lives as long as the code), or
//                         returned from it (null): the host lowering wraps
//                         every device-library call and block sync in two
//                         calls, so that reports and traces name the line
//   tleEmuAccess(addr, bytes, kind, order, where)  the thread accessed
//                         `bytes` at `addr` (kind an AccessKind; order a
//                         MemoryOrder for the atomic kinds; a fence has no
//                         address): the race checker orders and checks it.
//                         The host lowering calls it after every load,
//                         store, atomic and fence of a kernel, and the host
//                         build of the device library after each of its
//                         atomics and fences (where null)
//   tleEmuSignal(word, event, value, operand, order)  a signal word (or a
//                         counter) changed or was observed (event a
//                         SignalEvent): Add (`value` the word before,
//                         `operand` what was added, a release), Wait (the
//                         wait's final read passed: `value` its target,
//                         `operand` what it read, `order` its MemoryOrder),
//                         Read (read_signal read `value`), Store (the word
//                         was set to `value`, a plain write): the race
//                         checker's signal history, in place of the
//                         tleEmuAccess the word's atomics would give it
//   tleEmuCountOp(kind)   the host build did one device-memory operation of
//                         `kind` (a DeviceOp), for tle::emu::deviceOpCounts
//   tleEmuNetAdd(comm, word, value)  the simulated network (kNetEmu): adds
//                         `value` to the 64-bit `word` of a rank on another
//                         node, as a release, after the network's latency
//                         (docs/emulator.md, "Nodes"); at once off a fiber
//   tleEmuNetCopy(comm, dst, src, bytes, signal, signalValue, counter,
//                 counterValue)  the simulated network's transfer (a put or
//                         get past this node): after the latency it reads
//                         `bytes` at `src` and writes them at `dst`, then adds
//                         signalValue to `signal` and counterValue to
//                         `counter` (either may be null) as releases; the race
//                         checker sees the read, the write and the releases
//                         as the network's, ordered after the send
//   tleEmuNetValue(comm, dst, value, signal, signalValue)  the same for a
//                         64-bit value the call carries (a put-value)
//   tleEmuNetFlush(comm)  the number of this rank's transfers still in
//                         flight; at 0 the caller has acquired what the
//                         network did for them (flagcxDevFlush polls it)
//   tleEmuEnterCall(name, file, line) / tleEmuLeaveCall()  the calling
//                         thread enters or leaves one call of the device
//                         library: an entry point `name` of abi.def, or a
//                         typed C++ API call made at `file`:`line` (file
//                         null: unknown; both strings live as long as the
//                         code). Calls nest; the outermost counts. Reports
//                         show a group's threads inside one call as one
//                         line, and the caller's file:line becomes the
//                         thread's source location (as tleEmuSite's) unless
//                         a compiled kernel's op already set one
//
//===----------------------------------------------------------------------===//

#ifndef TLE_DETAIL_EMUHOOKS_H
#define TLE_DETAIL_EMUHOOKS_H

#include "tle/abi.h"
#include "tle/detail/DevComm.h"

#include <stdint.h>

namespace tle {
/// What a spinning wait is waiting for, for the deadlock report. A signal
/// wait (`signal` set) names its word in `slot` and leaves epoch and
/// missing empty: any rank may still signal a word.
struct WaitInfo {
  const void *comm; ///< the DevComm being waited on (may be null)
  int32_t rank;     ///< the waiting rank
  uint32_t slot;    ///< barrier slot, or signal index
  uint32_t epoch;   ///< epoch it waits for
  PeerMask missing; ///< peers that have not arrived yet
  const char *what; ///< "barrier wait", "grid arrive", "signal wait"
  // Initialised here so that a barrier's WaitInfo, written with the six
  // fields above, is complete.
  uint32_t signal = 0;  ///< 1: a signal wait
  uint64_t seen = 0;    ///< signal wait: the word's value at the last poll
  uint64_t wanted = 0;  ///< signal wait: the value it waits for (>=)
  uint32_t context = 0; ///< signal wait: the signal's network context
  /// A wait on a net word (docs/design.md, "Teams"): the team whose
  /// barrier waits (kTeamInter, or kTeamWorld for WORLD's inter half), and
  /// the word; `rank` and `missing` are then world ranks, `seen` and
  /// `wanted` the word's value and the value it waits for. team 0: not one.
  int32_t team = 0;
  uint32_t netWord = 0;
  /// The word whose change may end the wait (a flag or signal word the
  /// thread polls that has not reached its target), or null. The scheduler
  /// then parks the thread until some thread or the network writes that
  /// word, instead of resuming it to poll again after every other step.
  const void *watch = nullptr;
  /// Fills `missing` when the scheduler needs it (a report), for waits
  /// whose missing peers cost a load per peer: a failed poll then costs
  /// O(1) instead of O(ranks). `peersCtx` (the wait's own state, on the
  /// waiting thread's stack) is valid while the thread is suspended in this
  /// tleEmuSpinWait call. Null: `missing` is filled.
  void (*peers)(const void *peersCtx, PeerMask *missing) = nullptr;
  const void *peersCtx = nullptr;
};

/// `info`'s missing peers, filled on demand (WaitInfo::peers).
inline PeerMask waitMissing(const WaitInfo &info) {
  if (!info.peers)
    return info.missing;
  PeerMask out = {};
  info.peers(info.peersCtx, &out);
  return out;
}
/// The kinds of device-memory operation the host build counts
/// (tleEmuCountOp): what a barrier costs in memory traffic, by kind.
enum class DeviceOp : int32_t {
  Signal,     ///< an add or store into a flag word (a peer's, usually)
  Poll,       ///< a load of a flag word (acquire or relaxed)
  Fence,      ///< a system-scope fence
  EpochLoad,  ///< a load of this rank's own epoch or counter
  EpochStore, ///< a store of this rank's own epoch or counter
  CommLoad,   ///< a load of the communicator or a buffer handle
  Rmw,        ///< another read-modify-write (grid counter, record claim)
  NumKinds
};

#ifdef TLE_HOST_IN_LIBTLE
namespace emu::detail {
/// Not part of the hooks: inside libtle only (DeviceHost.cpp), the table
/// of DeviceOp counts of the launch running on this OS thread, or null off
/// a launch. The emulator adds it to deviceOpCounts when the launch ends.
/// Initial-exec: one load off the thread pointer, as currentScheduler.
[[gnu::tls_model(
    "initial-exec")]] extern constinit thread_local uint64_t *opTally;
} // namespace emu::detail
#endif
} // namespace tle

extern "C" {
#define TLE_EMU_HOOK(Name, Result, ...)                                        \
  TLE_ABI_CTYPE_##Result Name(TLE_ABI_MAP(TLE_ABI_CPARAM, __VA_ARGS__));
#define TLE_EMU_HOOK0(Name, Result) TLE_ABI_CTYPE_##Result Name(void);
#include "tle/abi.def"
}

#endif // TLE_DETAIL_EMUHOOKS_H
