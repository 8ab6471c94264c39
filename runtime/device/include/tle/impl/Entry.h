//===- Entry.h - The extern "C" entry points of the device ABI --*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The definitions of every function tle/abi.def lists, as thin wrappers over
// the library (the typed APIs of tle/barrier.h and tle/signal.h, and
// impl/). Included by tle/device.h where the ABI is defined: in the nvcc
// header build (inline functions), the clang bitcode build and the
// library's host build
// (external definitions). Each definition must match its declaration from
// abi.def, which tle/device.h makes first: a mismatch is a compile error.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_IMPL_ENTRY_H
#define TLE_IMPL_ENTRY_H

#ifndef TLE_DEVICE_H
#error "include tle/device.h, not this file"
#endif

#include "tle/barrier.h"
#include "tle/impl/Session.h"
#include "tle/impl/Team.h"
#include "tle/signal.h"

// TLE_DEVICE_API (device.h) makes these inline in the nvcc header build and
// external definitions in the bitcode and host builds. The bitcode does not
// mark them `used`: a consumer that links the library (tlec, Triton's
// extern_libs) must be free to drop what its kernel does not call.

// Every entry point brackets its call (CallScope): on the emulator a report
// then shows the threads of one call of a C++ kernel, which has no source
// lines, as one line, as it shows a compiled kernel's op. Nothing on GPUs.
#if defined(__CUDACC__)
#define TLE_ENTRY(Name)
#else
#define TLE_ENTRY(Name) tle::impl::CallScope tleEntryScope(#Name)
#endif

namespace tle::impl {
using abi::Fn;

TLE_DEV_INLINE const void *addressOf(int64_t handle) {
  return reinterpret_cast<const void *>(handle);
}
} // namespace tle::impl

#define TLE_INTRA_BARRIER(Name, Kind)                                          \
  TLE_DEVICE_API void Name(const void *comm, int32_t coopKind, uint32_t index, \
                           bool, int32_t order) {                              \
    TLE_ENTRY(Name);                                                           \
    tle::impl::barrier(comm, coopKind, index, order, Kind,                     \
                       tle::impl::Fn::Name);                                   \
  }
TLE_INTRA_BARRIER(flagcxIntraBarrierArriveS, tle::kBarrierArrive)
TLE_INTRA_BARRIER(flagcxIntraBarrierWaitS, tle::kBarrierWait)
TLE_INTRA_BARRIER(flagcxIntraBarrierSyncS, tle::kBarrierSync)
#undef TLE_INTRA_BARRIER

// The `...At` twins (abi.def, "Call sites"): the same call, reported as
// `Base`, with the caller's site id, which only a failure path reads.
#define TLE_INTRA_BARRIER_AT(Name, Base, Kind)                                 \
  TLE_DEVICE_API void Name(const void *comm, int32_t coopKind, uint32_t index, \
                           bool, int32_t order, uint32_t site) {               \
    TLE_ENTRY(Base);                                                           \
    tle::impl::barrier(comm, coopKind, index, order, Kind,                     \
                       tle::impl::FnAt(tle::impl::Fn::Base, site));            \
  }
TLE_INTRA_BARRIER_AT(tleIntraBarrierArriveAt, flagcxIntraBarrierArriveS,
                     tle::kBarrierArrive)
TLE_INTRA_BARRIER_AT(tleIntraBarrierWaitAt, flagcxIntraBarrierWaitS,
                     tle::kBarrierWait)
TLE_INTRA_BARRIER_AT(tleIntraBarrierSyncAt, flagcxIntraBarrierSyncS,
                     tle::kBarrierSync)
#undef TLE_INTRA_BARRIER_AT

#define TLE_DEV_BARRIER(Name, Kind)                                            \
  TLE_DEVICE_API void Name(const void *comm, int32_t teamKind, uint32_t index, \
                           int32_t, int32_t coopKind, int32_t order,           \
                           int32_t scope) {                                    \
    TLE_ENTRY(Name);                                                           \
    tle::impl::devBarrier(comm, teamKind, index, coopKind, order, scope, Kind, \
                          tle::impl::Fn::Name);                                \
  }
TLE_DEV_BARRIER(flagcxDevBarrierArrive, tle::kBarrierArrive)
TLE_DEV_BARRIER(flagcxDevBarrierWait, tle::kBarrierWait)
TLE_DEV_BARRIER(flagcxDevBarrierSync, tle::kBarrierSync)
#undef TLE_DEV_BARRIER

#define TLE_DEV_BARRIER_AT(Name, Base, Kind)                                   \
  TLE_DEVICE_API void Name(const void *comm, int32_t teamKind, uint32_t index, \
                           int32_t, int32_t coopKind, int32_t order,           \
                           int32_t scope, uint32_t site) {                     \
    TLE_ENTRY(Base);                                                           \
    tle::impl::devBarrier(comm, teamKind, index, coopKind, order, scope, Kind, \
                          tle::impl::FnAt(tle::impl::Fn::Base, site));         \
  }
TLE_DEV_BARRIER_AT(tleDevBarrierArriveAt, flagcxDevBarrierArrive,
                   tle::kBarrierArrive)
TLE_DEV_BARRIER_AT(tleDevBarrierWaitAt, flagcxDevBarrierWait, tle::kBarrierWait)
TLE_DEV_BARRIER_AT(tleDevBarrierSyncAt, flagcxDevBarrierSync, tle::kBarrierSync)
#undef TLE_DEV_BARRIER_AT

#define TLE_GRID_BARRIER(Name, Kind)                                           \
  TLE_DEVICE_API void Name(const void *comm, uint32_t index, bool,             \
                           int32_t order) {                                    \
    TLE_ENTRY(Name);                                                           \
    tle::impl::gridBarrier(comm, index, order, Kind, tle::impl::Fn::Name);     \
  }
TLE_GRID_BARRIER(tleIntraGridBarrierArriveS, tle::kBarrierArrive)
TLE_GRID_BARRIER(tleIntraGridBarrierWaitS, tle::kBarrierWait)
TLE_GRID_BARRIER(tleIntraGridBarrierSyncS, tle::kBarrierSync)
#undef TLE_GRID_BARRIER

#define TLE_GRID_BARRIER_AT(Name, Base, Kind)                                  \
  TLE_DEVICE_API void Name(const void *comm, uint32_t index, bool,             \
                           int32_t order, uint32_t site) {                     \
    TLE_ENTRY(Base);                                                           \
    tle::impl::gridBarrier(comm, index, order, Kind,                           \
                           tle::impl::FnAt(tle::impl::Fn::Base, site));        \
  }
TLE_GRID_BARRIER_AT(tleIntraGridBarrierArriveAt, tleIntraGridBarrierArriveS,
                    tle::kBarrierArrive)
TLE_GRID_BARRIER_AT(tleIntraGridBarrierWaitAt, tleIntraGridBarrierWaitS,
                    tle::kBarrierWait)
TLE_GRID_BARRIER_AT(tleIntraGridBarrierSyncAt, tleIntraGridBarrierSyncS,
                    tle::kBarrierSync)
#undef TLE_GRID_BARRIER_AT

TLE_DEVICE_API uint32_t tleIntraBarrierSessionOpen(const void *comm,
                                                   int32_t coopKind,
                                                   uint32_t index) {
  TLE_ENTRY(tleIntraBarrierSessionOpen);
  return tle::impl::compiledOpen(comm, coopKind, index,
                                 tle::impl::Fn::tleIntraBarrierSessionOpen);
}
#define TLE_SESSION_BARRIER(Name, Kind)                                        \
  TLE_DEVICE_API uint32_t Name(const void *comm, int32_t coopKind,             \
                               uint32_t index, int32_t order,                  \
                               uint32_t epoch) {                               \
    TLE_ENTRY(Name);                                                           \
    return tle::impl::compiledBarrier(comm, coopKind, index, order, Kind,      \
                                      epoch, nullptr, tle::impl::Fn::Name);    \
  }
TLE_SESSION_BARRIER(tleIntraBarrierSessionArrive, tle::kBarrierArrive)
TLE_SESSION_BARRIER(tleIntraBarrierSessionWait, tle::kBarrierWait)
TLE_SESSION_BARRIER(tleIntraBarrierSessionSync, tle::kBarrierSync)
#undef TLE_SESSION_BARRIER
#define TLE_SESSION_BARRIER_AT(Name, Base, Kind)                               \
  TLE_DEVICE_API uint32_t Name(const void *comm, int32_t coopKind,             \
                               uint32_t index, int32_t order, uint32_t epoch,  \
                               uint32_t site) {                                \
    TLE_ENTRY(Base);                                                           \
    return tle::impl::compiledBarrier(                                         \
        comm, coopKind, index, order, Kind, epoch, nullptr,                    \
        tle::impl::FnAt(tle::impl::Fn::Base, site));                           \
  }
TLE_SESSION_BARRIER_AT(tleIntraBarrierSessionArriveAt,
                       tleIntraBarrierSessionArrive, tle::kBarrierArrive)
TLE_SESSION_BARRIER_AT(tleIntraBarrierSessionWaitAt, tleIntraBarrierSessionWait,
                       tle::kBarrierWait)
TLE_SESSION_BARRIER_AT(tleIntraBarrierSessionSyncAt, tleIntraBarrierSessionSync,
                       tle::kBarrierSync)
#undef TLE_SESSION_BARRIER_AT
TLE_DEVICE_API void tleIntraBarrierSessionClose(const void *comm,
                                                int32_t coopKind,
                                                uint32_t index,
                                                uint32_t epoch) {
  TLE_ENTRY(tleIntraBarrierSessionClose);
  tle::impl::compiledClose(comm, coopKind, index, epoch,
                           tle::impl::Fn::tleIntraBarrierSessionClose);
}

TLE_DEVICE_API int32_t flagcxDevCommGetIntraRank(const void *comm) {
  TLE_ENTRY(flagcxDevCommGetIntraRank);
  return tle::impl::intraRank(comm, tle::impl::Fn::flagcxDevCommGetIntraRank);
}
TLE_DEVICE_API int32_t flagcxDevCommGetIntraSize(const void *comm) {
  TLE_ENTRY(flagcxDevCommGetIntraSize);
  return tle::impl::intraSize(comm, tle::impl::Fn::flagcxDevCommGetIntraSize);
}

TLE_DEVICE_API int32_t flagcxDevCommGetRank(const void *comm) {
  TLE_ENTRY(flagcxDevCommGetRank);
  return tle::impl::teamRank(comm, tle::kTeamWorld,
                             tle::impl::Fn::flagcxDevCommGetRank);
}
TLE_DEVICE_API int32_t flagcxDevCommGetSize(const void *comm) {
  TLE_ENTRY(flagcxDevCommGetSize);
  return tle::impl::teamSize(comm, tle::kTeamWorld,
                             tle::impl::Fn::flagcxDevCommGetSize);
}
TLE_DEVICE_API int32_t tleDevCommGetTeamRank(const void *comm,
                                             int32_t teamKind) {
  TLE_ENTRY(tleDevCommGetTeamRank);
  return tle::impl::teamRank(comm, teamKind,
                             tle::impl::Fn::tleDevCommGetTeamRank);
}
TLE_DEVICE_API int32_t tleDevCommGetTeamSize(const void *comm,
                                             int32_t teamKind) {
  TLE_ENTRY(tleDevCommGetTeamSize);
  return tle::impl::teamSize(comm, teamKind,
                             tle::impl::Fn::tleDevCommGetTeamSize);
}

TLE_DEVICE_API int32_t tleCommFailed(const void *comm) {
  TLE_ENTRY(tleCommFailed);
  return tle::impl::commFailed(comm, tle::impl::Fn::tleCommFailed);
}

TLE_DEVICE_API void *flagcxGetLocalPointerS(const void *mem, uint64_t offset) {
  TLE_ENTRY(flagcxGetLocalPointerS);
  return tle::impl::memPointer(mem, offset, 0, /*local=*/true,
                               tle::impl::Fn::flagcxGetLocalPointerS);
}
TLE_DEVICE_API void *flagcxGetIntraPointerS(const void *mem, uint64_t offset,
                                            int32_t peer) {
  TLE_ENTRY(flagcxGetIntraPointerS);
  return tle::impl::memPointer(mem, offset, peer, /*local=*/false,
                               tle::impl::Fn::flagcxGetIntraPointerS);
}

namespace tle::impl {
/// FlagCX's unified signal functions and their `...At` twins.
TLE_DEV_INLINE void devSignalAdd(const void *comm, int32_t teamKind,
                                 int32_t peer, uint32_t signal, uint64_t value,
                                 uint32_t contextId, int32_t coopKind,
                                 int32_t scope, FnAt fn) {
  checkSignalArgs(comm, signal, kHasTeam | kHasScope, teamKind, scope, 0, fn);
  teamSignalAdd(comm, teamKind, peer, signal, value, coopKind, fn, contextId);
}
TLE_DEV_INLINE void devWaitSignal(const void *comm, uint32_t signal,
                                  uint64_t least, int32_t bits,
                                  uint32_t contextId, int32_t coopKind,
                                  int32_t order, FnAt fn) {
  checkSignalArgs(comm, signal, kHasBits, 0, 0, bits, fn);
  signalWait(comm, signal, least, coopKind, order, fn, contextId);
}
} // namespace tle::impl

TLE_DEVICE_API void flagcxDevSignalInc(const void *comm, int32_t teamKind,
                                       int32_t peer, uint32_t signal,
                                       uint32_t contextId, int32_t coopKind,
                                       int32_t scope) {
  TLE_ENTRY(flagcxDevSignalInc);
  tle::impl::devSignalAdd(comm, teamKind, peer, signal, 1, contextId, coopKind,
                          scope, tle::impl::Fn::flagcxDevSignalInc);
}
TLE_DEVICE_API void flagcxDevSignalAdd(const void *comm, int32_t teamKind,
                                       int32_t peer, uint32_t signal,
                                       uint64_t value, uint32_t contextId,
                                       int32_t coopKind, int32_t scope) {
  TLE_ENTRY(flagcxDevSignalAdd);
  tle::impl::devSignalAdd(comm, teamKind, peer, signal, value, contextId,
                          coopKind, scope, tle::impl::Fn::flagcxDevSignalAdd);
}
TLE_DEVICE_API void flagcxDevWaitSignal(const void *comm, uint32_t signal,
                                        uint64_t least, int32_t bits,
                                        uint32_t contextId, int32_t coopKind,
                                        int32_t order) {
  TLE_ENTRY(flagcxDevWaitSignal);
  tle::impl::devWaitSignal(comm, signal, least, bits, contextId, coopKind,
                           order, tle::impl::Fn::flagcxDevWaitSignal);
}
TLE_DEVICE_API void tleDevSignalIncAt(const void *comm, int32_t teamKind,
                                      int32_t peer, uint32_t signal,
                                      uint32_t contextId, int32_t coopKind,
                                      int32_t scope, uint32_t site) {
  TLE_ENTRY(flagcxDevSignalInc);
  using namespace tle::impl;
  devSignalAdd(comm, teamKind, peer, signal, 1, contextId, coopKind, scope,
               FnAt(Fn::flagcxDevSignalInc, site));
}
TLE_DEVICE_API void tleDevSignalAddAt(const void *comm, int32_t teamKind,
                                      int32_t peer, uint32_t signal,
                                      uint64_t value, uint32_t contextId,
                                      int32_t coopKind, int32_t scope,
                                      uint32_t site) {
  TLE_ENTRY(flagcxDevSignalAdd);
  using namespace tle::impl;
  devSignalAdd(comm, teamKind, peer, signal, value, contextId, coopKind, scope,
               FnAt(Fn::flagcxDevSignalAdd, site));
}
TLE_DEVICE_API void tleDevWaitSignalAt(const void *comm, uint32_t signal,
                                       uint64_t least, int32_t bits,
                                       uint32_t contextId, int32_t coopKind,
                                       int32_t order, uint32_t site) {
  TLE_ENTRY(flagcxDevWaitSignal);
  using namespace tle::impl;
  devWaitSignal(comm, signal, least, bits, contextId, coopKind, order,
                FnAt(Fn::flagcxDevWaitSignal, site));
}
TLE_DEVICE_API uint64_t flagcxDevReadSignal(const void *comm, uint32_t signal,
                                            int32_t bits, uint32_t contextId,
                                            int32_t order) {
  TLE_ENTRY(flagcxDevReadSignal);
  using namespace tle::impl;
  checkSignalArgs(comm, signal, kHasBits, 0, 0, bits, Fn::flagcxDevReadSignal);
  return readSignal(comm, signal, order, Fn::flagcxDevReadSignal, contextId);
}
TLE_DEVICE_API void flagcxDevResetSignal(const void *comm, uint32_t contextId,
                                         uint32_t slot) {
  TLE_ENTRY(flagcxDevResetSignal);
  using namespace tle::impl;
  resetSignal(comm, slot, Fn::flagcxDevResetSignal, contextId);
  // FlagCX's reset zeroes the signal's shadow too (the reset checked the
  // signal and its context).
  const auto *dc = static_cast<const tle::DevComm *>(comm);
  storeRelaxedSys(loadConst(&dc->shadows) +
                      contextWord(contextId, loadConst(&dc->nSignals), slot),
                  uint64_t(0));
}

namespace tle::impl {
/// The Triton barrier entry points (tleTritonBarrier and FlagTree's
/// spelling): `barrierKind` and `groupKind` arrive as plain ints.
TLE_DEV_INLINE int32_t tritonBarrier(int64_t comm, int32_t barrierKind,
                                     int32_t groupKind, int32_t index,
                                     int32_t order, FnAt fn) {
  const void *c = addressOf(comm);
  uint32_t slot = static_cast<uint32_t>(index);
  if (TLE_UNLIKELY(static_cast<uint32_t>(barrierKind) > tle::kBarrierSync))
    failArgument(c, slot, fn, tle::kArgBarrierKind, barrierKind,
                 tle::kBarrierSync);
  // Triton's group space is FlagCX's plus grid; report it as such.
  if (TLE_UNLIKELY(static_cast<uint32_t>(groupKind) > tle::kCoopGrid))
    failArgument(c, slot, fn, tle::kArgCoopKind, groupKind, tle::kCoopGrid);
  // The status-returning forms: the group agrees on the status in place of
  // its final sync (void callers keep the plain one).
  if (groupKind == tle::kCoopGrid)
    return static_cast<int32_t>(
        gridBarrier</*Status=*/true>(c, slot, order, barrierKind, fn));
  return static_cast<int32_t>(
      barrier</*Status=*/true>(c, groupKind, slot, order, barrierKind, fn));
}
/// A peer's (or with `local`, this rank's) address of byte `offset` of a
/// buffer, as Triton's int64.
TLE_DEV_INLINE int64_t tritonPointer(int64_t mem, int64_t offset, int32_t peer,
                                     bool local, FnAt fn) {
  return reinterpret_cast<int64_t>(memPointer(
      addressOf(mem), static_cast<uint64_t>(offset), peer, local, fn));
}
} // namespace tle::impl

TLE_DEVICE_API int32_t tleTritonBarrier(int64_t comm, int32_t barrierKind,
                                        int32_t groupKind, int32_t index,
                                        int32_t order) {
  TLE_ENTRY(tleTritonBarrier);
  return tle::impl::tritonBarrier(comm, barrierKind, groupKind, index, order,
                                  tle::impl::Fn::tleTritonBarrier);
}
TLE_DEVICE_API int32_t tleTritonBarrierAt(int64_t comm, int32_t barrierKind,
                                          int32_t groupKind, int32_t index,
                                          int32_t order, int32_t site) {
  TLE_ENTRY(tleTritonBarrier);
  using namespace tle::impl;
  return tritonBarrier(comm, barrierKind, groupKind, index, order,
                       FnAt(Fn::tleTritonBarrier, static_cast<uint32_t>(site)));
}
namespace tle::impl {
TLE_DEV_INLINE int32_t tritonTeamBarrier(int64_t comm, int32_t teamKind,
                                         int32_t barrierKind, int32_t groupKind,
                                         int32_t index, int32_t order,
                                         FnAt fn) {
  if (teamKind == tle::kTeamIntra)
    return tritonBarrier(comm, barrierKind, groupKind, index, order, fn);
  const void *c = addressOf(comm);
  uint32_t slot = static_cast<uint32_t>(index);
  if (TLE_UNLIKELY(static_cast<uint32_t>(teamKind) > tle::kTeamWorld))
    failArgument(c, slot, fn, tle::kArgTeamKind, teamKind, tle::kTeamWorld);
  if (TLE_UNLIKELY(static_cast<uint32_t>(barrierKind) > tle::kBarrierSync))
    failArgument(c, slot, fn, tle::kArgBarrierKind, barrierKind,
                 tle::kBarrierSync);
  // The grid group is INTRA's only: INTER and WORLD serve FlagCX's kinds.
  return static_cast<int32_t>(teamBarrier</*Status=*/true>(
      c, teamKind, groupKind, slot, order, barrierKind, fn));
}
} // namespace tle::impl
TLE_DEVICE_API int32_t tleTritonTeamBarrier(int64_t comm, int32_t teamKind,
                                            int32_t barrierKind,
                                            int32_t groupKind, int32_t index,
                                            int32_t order) {
  TLE_ENTRY(tleTritonTeamBarrier);
  return tle::impl::tritonTeamBarrier(comm, teamKind, barrierKind, groupKind,
                                      index, order,
                                      tle::impl::Fn::tleTritonTeamBarrier);
}
TLE_DEVICE_API int32_t tleTritonTeamBarrierAt(int64_t comm, int32_t teamKind,
                                              int32_t barrierKind,
                                              int32_t groupKind, int32_t index,
                                              int32_t order, int32_t site) {
  TLE_ENTRY(tleTritonTeamBarrier);
  using namespace tle::impl;
  return tritonTeamBarrier(
      comm, teamKind, barrierKind, groupKind, index, order,
      FnAt(Fn::tleTritonTeamBarrier, static_cast<uint32_t>(site)));
}
namespace tle::impl {
/// tleTritonSession*'s int64: the slot above the epoch (abi.def).
TLE_DEV_INLINE int64_t tritonSession(uint32_t slot, uint32_t epoch) {
  return static_cast<int64_t>((uint64_t(slot) << 32) | epoch);
}
TLE_DEV_INLINE uint32_t tritonSessionSlot(int64_t session) {
  return static_cast<uint32_t>(static_cast<uint64_t>(session) >> 32);
}
/// Triton's group space includes grid, which sessions do not serve.
TLE_DEV_INLINE void checkSessionGroup(const void *comm, uint32_t slot,
                                      int32_t groupKind, FnAt fn) {
  if (TLE_UNLIKELY(static_cast<uint32_t>(groupKind) > kMaxFlagcxCoop))
    failArgument(comm, slot, fn, kArgCoopKind, groupKind, kMaxFlagcxCoop);
}
} // namespace tle::impl

TLE_DEVICE_API int64_t tleTritonSessionOpen(int64_t comm, int32_t groupKind,
                                            int32_t index) {
  TLE_ENTRY(tleTritonSessionOpen);
  using namespace tle::impl;
  const void *c = addressOf(comm);
  uint32_t slot = static_cast<uint32_t>(index);
  checkSessionGroup(c, slot, groupKind, Fn::tleTritonSessionOpen);
  return tritonSession(
      slot, compiledOpen(c, groupKind, slot, Fn::tleTritonSessionOpen));
}
namespace tle::impl {
/// `index`: the session's slot, which the front end passes beside the
/// session (a loop invariant; the session's own bits are not decoded).
TLE_DEV_INLINE int64_t tritonSessionBarrier(int64_t comm, int32_t barrierKind,
                                            int32_t groupKind, int32_t order,
                                            int64_t session, int32_t index,
                                            FnAt fn) {
  const void *c = addressOf(comm);
  uint32_t slot = static_cast<uint32_t>(index);
  if (TLE_UNLIKELY(static_cast<uint32_t>(barrierKind) > tle::kBarrierSync))
    failArgument(c, slot, fn, tle::kArgBarrierKind, barrierKind,
                 tle::kBarrierSync);
  checkSessionGroup(c, slot, groupKind, fn);
  // A thread whose wait gave up holds minus its status: the communicator
  // is unusable (its fault word is set), so it waits no more, but takes
  // part in its group's syncs until the close, which reduces the group's
  // status (the other threads' sessions go on until then).
  if (session < 0) {
    if (!TLE_MUTANT(86))
      compiledSkip(groupKind, barrierKind);
    return session;
  }
  uint32_t status = 0;
  uint32_t next = compiledBarrier</*Status=*/true>(
      c, groupKind, slot, order, barrierKind, static_cast<uint32_t>(session),
      &status, fn);
  return status ? -static_cast<int64_t>(status) : tritonSession(slot, next);
}
} // namespace tle::impl
TLE_DEVICE_API int64_t tleTritonSession(int64_t comm, int32_t barrierKind,
                                        int32_t groupKind, int32_t order,
                                        int64_t session, int32_t slot) {
  TLE_ENTRY(tleTritonSession);
  return tle::impl::tritonSessionBarrier(comm, barrierKind, groupKind, order,
                                         session, slot,
                                         tle::impl::Fn::tleTritonSession);
}
TLE_DEVICE_API int64_t tleTritonSessionAt(int64_t comm, int32_t barrierKind,
                                          int32_t groupKind, int32_t order,
                                          int64_t session, int32_t slot,
                                          int32_t site) {
  TLE_ENTRY(tleTritonSession);
  using namespace tle::impl;
  return tritonSessionBarrier(
      comm, barrierKind, groupKind, order, session, slot,
      FnAt(Fn::tleTritonSession, static_cast<uint32_t>(site)));
}
TLE_DEVICE_API int32_t tleTritonSessionClose(int64_t comm, int32_t groupKind,
                                             int64_t session) {
  TLE_ENTRY(tleTritonSessionClose);
  using namespace tle::impl;
  const void *c = addressOf(comm);
  uint32_t slot = session < 0 ? 0 : tritonSessionSlot(session);
  checkSessionGroup(c, slot, groupKind, Fn::tleTritonSessionClose);
  // The group's status, reduced once here rather than in every barrier of
  // the session: the status of a wait that gave up in any of its threads.
  uint32_t mine = session < 0 ? static_cast<uint32_t>(-session) : 0;
  uint32_t status =
      TLE_MUTANT(87) ? mine : groupSyncStatus(makeGroup(groupKind), mine);
  if (status != 0)
    return static_cast<int32_t>(status);
  compiledClose(c, groupKind, slot, static_cast<uint32_t>(session),
                Fn::tleTritonSessionClose);
  return 0;
}
TLE_DEVICE_API int32_t tleTritonTeamRank(int64_t comm, int32_t teamKind) {
  TLE_ENTRY(tleTritonTeamRank);
  return tle::impl::teamRank(tle::impl::addressOf(comm), teamKind,
                             tle::impl::Fn::tleTritonTeamRank);
}
TLE_DEVICE_API int32_t tleTritonTeamSize(int64_t comm, int32_t teamKind) {
  TLE_ENTRY(tleTritonTeamSize);
  return tle::impl::teamSize(tle::impl::addressOf(comm), teamKind,
                             tle::impl::Fn::tleTritonTeamSize);
}
TLE_DEVICE_API int32_t tleTritonIntraRank(int64_t comm) {
  TLE_ENTRY(tleTritonIntraRank);
  return tle::impl::intraRank(tle::impl::addressOf(comm),
                              tle::impl::Fn::tleTritonIntraRank);
}
TLE_DEVICE_API int32_t tleTritonIntraSize(int64_t comm) {
  TLE_ENTRY(tleTritonIntraSize);
  return tle::impl::intraSize(tle::impl::addressOf(comm),
                              tle::impl::Fn::tleTritonIntraSize);
}
TLE_DEVICE_API int64_t tleTritonLocalPointer(int64_t mem, int64_t offset) {
  TLE_ENTRY(tleTritonLocalPointer);
  return tle::impl::tritonPointer(mem, offset, 0, /*local=*/true,
                                  tle::impl::Fn::tleTritonLocalPointer);
}
TLE_DEVICE_API int64_t tleTritonIntraPointer(int64_t mem, int64_t offset,
                                             int32_t peer) {
  TLE_ENTRY(tleTritonIntraPointer);
  return tle::impl::tritonPointer(mem, offset, peer, /*local=*/false,
                                  tle::impl::Fn::tleTritonIntraPointer);
}

// FlagTree's spellings of the same functions (abi.def says why).
TLE_DEVICE_API int32_t tle_distributed_barrier(int64_t comm,
                                               int32_t barrierKind,
                                               int32_t groupKind, int32_t index,
                                               int32_t order) {
  TLE_ENTRY(tle_distributed_barrier);
  return tle::impl::tritonBarrier(comm, barrierKind, groupKind, index, order,
                                  tle::impl::Fn::tle_distributed_barrier);
}
TLE_DEVICE_API int64_t tle_remote_pointer(int64_t mem, int64_t offset,
                                          int32_t peer) {
  TLE_ENTRY(tle_remote_pointer);
  return tle::impl::tritonPointer(mem, offset, peer, /*local=*/false,
                                  tle::impl::Fn::tle_remote_pointer);
}
TLE_DEVICE_API int32_t tle_get_device_id(int64_t comm) {
  TLE_ENTRY(tle_get_device_id);
  return tle::impl::intraRank(tle::impl::addressOf(comm),
                              tle::impl::Fn::tle_get_device_id);
}
TLE_DEVICE_API int32_t tle_get_world_rank(int64_t comm) {
  TLE_ENTRY(tle_get_world_rank);
  return tle::impl::teamRank(tle::impl::addressOf(comm), tle::kTeamWorld,
                             tle::impl::Fn::tle_get_world_rank);
}
TLE_DEVICE_API int32_t tle_get_num_pes(int64_t comm) {
  TLE_ENTRY(tle_get_num_pes);
  return tle::impl::intraSize(tle::impl::addressOf(comm),
                              tle::impl::Fn::tle_get_num_pes);
}

namespace tle::impl {
/// The Triton signal entry points (tleTritonSignal, tleTritonSignalWait and
/// FlagTree's spellings): indices and values arrive as Triton's ints.
TLE_DEV_INLINE int32_t tritonSignal(int64_t comm, int32_t peer, int32_t signal,
                                    int64_t value, int32_t groupKind, FnAt fn) {
  signalAdd(addressOf(comm), peer, static_cast<uint32_t>(signal),
            static_cast<uint64_t>(value), groupKind, fn);
  return 0;
}
TLE_DEV_INLINE int32_t tritonSignalWait(int64_t comm, int32_t signal,
                                        int64_t least, int32_t groupKind,
                                        int32_t order, FnAt fn,
                                        int32_t context = 0) {
  // The status-returning form, as tritonBarrier: the group agrees on the
  // status in place of its final sync.
  return static_cast<int32_t>(signalWait</*Status=*/true>(
      addressOf(comm), static_cast<uint32_t>(signal),
      static_cast<uint64_t>(least), groupKind, order, fn,
      static_cast<uint32_t>(context)));
}
} // namespace tle::impl

TLE_DEVICE_API int32_t tleTritonSignal(int64_t comm, int32_t peer,
                                       int32_t signal, int64_t value,
                                       int32_t groupKind) {
  TLE_ENTRY(tleTritonSignal);
  return tle::impl::tritonSignal(comm, peer, signal, value, groupKind,
                                 tle::impl::Fn::tleTritonSignal);
}
TLE_DEVICE_API int32_t tleTritonSignalAt(int64_t comm, int32_t peer,
                                         int32_t signal, int64_t value,
                                         int32_t groupKind, int32_t site) {
  TLE_ENTRY(tleTritonSignal);
  using namespace tle::impl;
  return tritonSignal(comm, peer, signal, value, groupKind,
                      FnAt(Fn::tleTritonSignal, static_cast<uint32_t>(site)));
}
namespace tle::impl {
TLE_DEV_INLINE int32_t tritonTeamSignal(int64_t comm, int32_t teamKind,
                                        int32_t peer, int32_t signal,
                                        int64_t value, int32_t groupKind,
                                        FnAt fn, int32_t context = 0) {
  const void *c = addressOf(comm);
  checkSignalArgs(c, static_cast<uint32_t>(signal), kHasTeam, teamKind, 0, 0,
                  fn);
  teamSignalAdd(c, teamKind, peer, static_cast<uint32_t>(signal),
                static_cast<uint64_t>(value), groupKind, fn,
                static_cast<uint32_t>(context));
  return 0;
}
} // namespace tle::impl
TLE_DEVICE_API int32_t tleTritonTeamSignal(int64_t comm, int32_t teamKind,
                                           int32_t peer, int32_t signal,
                                           int64_t value, int32_t groupKind) {
  TLE_ENTRY(tleTritonTeamSignal);
  return tle::impl::tritonTeamSignal(comm, teamKind, peer, signal, value,
                                     groupKind,
                                     tle::impl::Fn::tleTritonTeamSignal);
}
TLE_DEVICE_API int32_t tleTritonTeamSignalAt(int64_t comm, int32_t teamKind,
                                             int32_t peer, int32_t signal,
                                             int64_t value, int32_t groupKind,
                                             int32_t site) {
  TLE_ENTRY(tleTritonTeamSignal);
  using namespace tle::impl;
  return tritonTeamSignal(
      comm, teamKind, peer, signal, value, groupKind,
      FnAt(Fn::tleTritonTeamSignal, static_cast<uint32_t>(site)));
}
TLE_DEVICE_API int32_t tleTritonSignalWait(int64_t comm, int32_t signal,
                                           int64_t least, int32_t groupKind,
                                           int32_t order) {
  TLE_ENTRY(tleTritonSignalWait);
  return tle::impl::tritonSignalWait(comm, signal, least, groupKind, order,
                                     tle::impl::Fn::tleTritonSignalWait);
}
TLE_DEVICE_API int32_t tleTritonSignalWaitAt(int64_t comm, int32_t signal,
                                             int64_t least, int32_t groupKind,
                                             int32_t order, int32_t site) {
  TLE_ENTRY(tleTritonSignalWait);
  using namespace tle::impl;
  return tritonSignalWait(
      comm, signal, least, groupKind, order,
      FnAt(Fn::tleTritonSignalWait, static_cast<uint32_t>(site)));
}
TLE_DEVICE_API int32_t tleTritonContextSignal(int64_t comm, int32_t teamKind,
                                              int32_t peer, int32_t signal,
                                              int64_t value, int32_t groupKind,
                                              int32_t contextId) {
  TLE_ENTRY(tleTritonContextSignal);
  using namespace tle::impl;
  return tritonTeamSignal(comm, teamKind, peer, signal, value, groupKind,
                          Fn::tleTritonContextSignal, contextId);
}
TLE_DEVICE_API int32_t tleTritonContextSignalAt(
    int64_t comm, int32_t teamKind, int32_t peer, int32_t signal, int64_t value,
    int32_t groupKind, int32_t contextId, int32_t site) {
  TLE_ENTRY(tleTritonContextSignal);
  using namespace tle::impl;
  return tritonTeamSignal(
      comm, teamKind, peer, signal, value, groupKind,
      FnAt(Fn::tleTritonContextSignal, static_cast<uint32_t>(site)), contextId);
}
TLE_DEVICE_API int32_t tleTritonContextSignalWait(int64_t comm, int32_t signal,
                                                  int64_t least,
                                                  int32_t groupKind,
                                                  int32_t order,
                                                  int32_t contextId) {
  TLE_ENTRY(tleTritonContextSignalWait);
  using namespace tle::impl;
  return tritonSignalWait(comm, signal, least, groupKind, order,
                          Fn::tleTritonContextSignalWait, contextId);
}
TLE_DEVICE_API int32_t tleTritonContextSignalWaitAt(
    int64_t comm, int32_t signal, int64_t least, int32_t groupKind,
    int32_t order, int32_t contextId, int32_t site) {
  TLE_ENTRY(tleTritonContextSignalWait);
  using namespace tle::impl;
  return tritonSignalWait(
      comm, signal, least, groupKind, order,
      FnAt(Fn::tleTritonContextSignalWait, static_cast<uint32_t>(site)),
      contextId);
}
TLE_DEVICE_API int64_t tleTritonReadSignal(int64_t comm, int32_t signal,
                                           int32_t order) {
  TLE_ENTRY(tleTritonReadSignal);
  return static_cast<int64_t>(tle::impl::readSignal(
      tle::impl::addressOf(comm), static_cast<uint32_t>(signal), order,
      tle::impl::Fn::tleTritonReadSignal));
}
TLE_DEVICE_API int32_t tleTritonResetSignal(int64_t comm, int32_t signal) {
  TLE_ENTRY(tleTritonResetSignal);
  tle::impl::resetSignal(tle::impl::addressOf(comm),
                         static_cast<uint32_t>(signal),
                         tle::impl::Fn::tleTritonResetSignal);
  return 0;
}
TLE_DEVICE_API int32_t tleTritonCommFailed(int64_t comm) {
  TLE_ENTRY(tleTritonCommFailed);
  return tle::impl::commFailed(tle::impl::addressOf(comm),
                               tle::impl::Fn::tleTritonCommFailed);
}

// FlagTree's spellings of the signal functions (abi.def).
TLE_DEVICE_API int32_t tle_signal(int64_t comm, int32_t peer, int32_t signal,
                                  int64_t value, int32_t groupKind) {
  TLE_ENTRY(tle_signal);
  return tle::impl::tritonSignal(comm, peer, signal, value, groupKind,
                                 tle::impl::Fn::tle_signal);
}
TLE_DEVICE_API int32_t tle_signal_wait(int64_t comm, int32_t signal,
                                       int64_t least, int32_t groupKind,
                                       int32_t order) {
  TLE_ENTRY(tle_signal_wait);
  return tle::impl::tritonSignalWait(comm, signal, least, groupKind, order,
                                     tle::impl::Fn::tle_signal_wait);
}

#include "tle/impl/EntryOneSided.h"

#endif // TLE_IMPL_ENTRY_H
