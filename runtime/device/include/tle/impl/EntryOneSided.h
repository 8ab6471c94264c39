//===- EntryOneSided.h - FlagCX's one-sided and helper entry points -------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The definitions of the abi.def entries past the barrier and signal
// functions: FlagCX's unified put, get, put-value, counter, shadow and
// flush functions, its cooperative-group, team and pointer helpers, the
// INTER and WORLD barriers and the barrier sessions through a net handle,
// and the flagcxDevNet* family, which all come down to OneSided.h,
// Team.h and the barrier. Included by Entry.h, after its functions.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_IMPL_ENTRYONESIDED_H
#define TLE_IMPL_ENTRYONESIDED_H

#include "tle/impl/OneSided.h"

namespace tle::impl {

/// A net handle's communicator and context.
struct NetRef {
  const void *comm;
  uint32_t context;
};
/// The communicator and context of net handle `net` (a DevNet). A handle
/// that is not one has no communicator to report into: the launch ends.
TLE_DEV_INLINE NetRef netRef(const void *net, FnAt fn) {
  (void)fn;
  const DevNet *n = static_cast<const DevNet *>(net);
  if (TLE_UNLIKELY(!n || loadConst(&n->magic) != kDevNetMagic))
    failNoRecord();
  return {loadConst(&n->comm), loadConst(&n->context)};
}

/// The coop kind of a CoopAny the Init functions filled (TILE_SPAN and
/// LANES serve as a warp in the calls that take a kind, as the barrier).
TLE_DEV_INLINE int coopKindOf(const void *coop) {
  if (TLE_UNLIKELY(!coop))
    failNoRecord();
  return loadConst(&static_cast<const CoopAny *>(coop)->kind);
}

/// Which of the communicator's teams a Team {nRanks, rank, stride} is
/// (flagcxGetTeam* made it); another team is a bad argument.
TLE_DEV_INLINE int teamKindOf(const void *comm, const void *team, FnAt fn) {
  Comm c = checkComm(comm, fn);
  const Team *t = static_cast<const Team *>(team);
  if (TLE_UNLIKELY(!t))
    failArgument(comm, 0, fn, kArgTeamKind, -1, kTeamWorld);
  int32_t n = loadConst(&t->nRanks), r = loadConst(&t->rank),
          s = loadConst(&t->stride);
  int32_t node = loadConst(&c.dc->node), nodes = loadConst(&c.dc->nNodes);
  int32_t size = static_cast<int32_t>(c.size);
  int32_t rank = static_cast<int32_t>(c.rank);
  if (s == 1 && n == size && r == rank)
    return kTeamIntra;
  if (s == size && n == nodes && r == node)
    return kTeamInter;
  if (s == 1 && n == size * nodes && r == node * size + rank)
    return kTeamWorld;
  failArgument(comm, 0, fn, kArgTeamKind, n, kTeamWorld);
}

/// The Team of kind `team` of this rank.
TLE_DEV_INLINE Team makeTeam(const void *comm, int team, FnAt fn) {
  Comm c = checkComm(comm, fn);
  int32_t node = loadConst(&c.dc->node), nodes = loadConst(&c.dc->nNodes);
  int32_t size = static_cast<int32_t>(c.size);
  int32_t rank = static_cast<int32_t>(c.rank);
  if (team == kTeamIntra)
    return {size, rank, 1};
  if (team == kTeamInter)
    return {nodes, node, size};
  if (TLE_UNLIKELY(team != kTeamWorld))
    failArgument(comm, 0, fn, kArgTeamKind, team, kTeamWorld);
  return {size * nodes, node * size + rank, 1};
}

/// NCCL's and FlagCX's rule: team rank `r` is world rank (node rank, for
/// `intra`) mine + (r - team.rank) * team.stride.
TLE_DEV_INLINE int32_t teamRankTo(const void *comm, const Team &t, int32_t r,
                                  bool intra, FnAt fn) {
  Comm c = checkComm(comm, fn);
  int32_t mine = static_cast<int32_t>(c.rank);
  if (!intra)
    mine += loadConst(&c.dc->node) * static_cast<int32_t>(c.size);
  return mine + (r - t.rank) * t.stride;
}

/// The bits set in `v`, without __popc or __builtin_popcount: both become
/// llvm.ctpop, whose declaration LLVM 22 stamps with an attribute
/// (nocreateundeforpoison) that the LLVM inside Triton 3.6 cannot parse, so
/// the bitcode library would not load there. The bitcode is built without
/// LLVM passes, so nothing turns this back into the intrinsic; consumers'
/// optimizers (ptxas too) may, after linking.
TLE_DEV_INLINE uint32_t popCount(uint32_t v) {
  v = v - ((v >> 1) & 0x55555555u);
  v = (v & 0x33333333u) + ((v >> 2) & 0x33333333u);
  v = (v + (v >> 4)) & 0x0f0f0f0fu;
  return (v * 0x01010101u) >> 24;
}

/// FlagCX's extended cooperative groups: the caller's rank, the group's
/// size, its sync. TILE_SPAN is warps t0 .. t0+nTiles-1 of the block
/// (param0, param1) with named barrier `id` (param2); LANES the lanes of
/// mask param0 of the caller's warp. The basic kinds are Group.h's.
TLE_DEV_INLINE int32_t coopRankEx(int kind, uint32_t p0, uint32_t) {
  if (kind == kCoopTileSpan)
    return static_cast<int32_t>(threadRank() - p0 * kWarpSize);
  if (kind == kCoopLanes) {
    uint32_t lane = threadRank() % kWarpSize;
    return static_cast<int32_t>(popCount(p0 & ((1u << lane) - 1u)));
  }
  return static_cast<int32_t>(makeGroup(kind).rank);
}
TLE_DEV_INLINE int32_t coopSizeEx(int kind, uint32_t p0, uint32_t p1) {
  if (kind == kCoopTileSpan)
    return static_cast<int32_t>(p1 * kWarpSize);
  if (kind == kCoopLanes)
    return static_cast<int32_t>(popCount(p0));
  return static_cast<int32_t>(makeGroup(kind).size);
}
TLE_DEV_INLINE void coopSyncEx(int kind, uint32_t p0, uint32_t p1,
                               uint32_t p2) {
  if (kind == kCoopTileSpan)
    syncTiles(p0, p1, p2);
  else if (kind == kCoopLanes)
    syncLanes(p0);
  else
    groupSync(makeGroup(kind));
}
/// A coop kind of FlagCX's (thread .. lanes), else the launch ends: the
/// cooperative-group functions have no communicator to report into.
TLE_DEV_INLINE int checkedCoop(int kind) {
  if (TLE_UNLIKELY(static_cast<uint32_t>(kind) > kMaxFlagcxCoop))
    failNoRecord();
  return kind;
}

/// FlagCX's net fence level: Relaxed (0) is its only value.
TLE_DEV_INLINE void checkFence(const void *comm, uint32_t index, int fence,
                               FnAt fn) {
  if (TLE_UNLIKELY(fence != 0))
    failArgument(comm, index, fn, kArgFence, fence, 0);
}

/// The communicator of a barrier session Init filled.
TLE_DEV_INLINE const FlagcxSession &sessionOf(const void *s) {
  const FlagcxSession *b = static_cast<const FlagcxSession *>(s);
  if (TLE_UNLIKELY(!b || loadConst(&b->magic) != kSessionMagic))
    failNoRecord();
  return *b;
}
TLE_DEV_INLINE void sessionInit(void *s, const void *coop, const void *comm,
                                int team, uint32_t index) {
  FlagcxSession *b = static_cast<FlagcxSession *>(s);
  b->comm = comm;
  b->team = team;
  b->coopKind = coopKindOf(coop);
  b->index = index;
  b->magic = kSessionMagic;
}
TLE_DEV_INLINE void sessionRun(const void *s, int order, int kind, FnAt fn) {
  const FlagcxSession &b = sessionOf(s);
  devBarrier(b.comm, b.team, b.index, b.coopKind, order, kScopeSystem, kind,
             fn);
}

/// FlagCX's flagcxNotSupported (flagcx.h), what the two-sided functions
/// return.
constexpr int32_t kFlagcxNotSupported = 9;

} // namespace tle::impl

// Transfers.
TLE_DEVICE_API void flagcxDevGet(const void *comm, const void *src,
                                 uint64_t srcOffset, const void *dst,
                                 uint64_t dstOffset, uint64_t bytes,
                                 int32_t teamKind, int32_t peer,
                                 uint32_t contextId, int32_t coopKind,
                                 int32_t scope, int32_t order) {
  TLE_ENTRY(flagcxDevGet);
  using namespace tle;
  using namespace tle::impl;
  get(comm, src, srcOffset, dst, dstOffset, bytes, teamKind, peer, contextId,
      coopKind, scope, order, Fn::flagcxDevGet);
}
TLE_DEVICE_API void flagcxDevNetGet(const void *trans, const void *team,
                                    int32_t peer, const void *src,
                                    uint64_t srcOffset, const void *dst,
                                    uint64_t dstOffset, uint64_t bytes,
                                    const void *coop) {
  TLE_ENTRY(flagcxDevNetGet);
  using namespace tle;
  using namespace tle::impl;
  NetRef n = netRef(trans, Fn::flagcxDevNetGet);
  get(n.comm, src, srcOffset, dst, dstOffset, bytes,
      teamKindOf(n.comm, team, Fn::flagcxDevNetGet), peer, n.context,
      coopKindOf(coop), kScopeSystem, kOrderAcquire, Fn::flagcxDevNetGet);
}
TLE_DEVICE_API void flagcxDevNetGetS(const void *net, const void *comm,
                                     int32_t teamKind, int32_t peer,
                                     const void *src, uint64_t srcOffset,
                                     const void *dst, uint64_t dstOffset,
                                     uint64_t bytes, int32_t coopKind) {
  TLE_ENTRY(flagcxDevNetGetS);
  using namespace tle;
  using namespace tle::impl;
  NetRef n = netRef(net, Fn::flagcxDevNetGetS);
  get(comm, src, srcOffset, dst, dstOffset, bytes, teamKind, peer, n.context,
      coopKind, kScopeSystem, kOrderAcquire, Fn::flagcxDevNetGetS);
}

// Counters, shadows, flush.
TLE_DEVICE_API void flagcxDevWaitCounter(const void *comm, uint32_t counter,
                                         uint64_t least, int32_t bits,
                                         uint32_t contextId, int32_t coopKind,
                                         int32_t order) {
  TLE_ENTRY(flagcxDevWaitCounter);
  using namespace tle;
  using namespace tle::impl;
  checkWordArgs(comm, counter, true, contextId, bits, Fn::flagcxDevWaitCounter);
  waitCounter(comm, counter, least, coopKind, order, Fn::flagcxDevWaitCounter,
              contextId);
}
TLE_DEVICE_API void tleDevWaitCounterAt(const void *comm, uint32_t counter,
                                        uint64_t least, int32_t bits,
                                        uint32_t contextId, int32_t coopKind,
                                        int32_t order, uint32_t site) {
  TLE_ENTRY(flagcxDevWaitCounter);
  using namespace tle;
  using namespace tle::impl;
  const FnAt fn(Fn::flagcxDevWaitCounter, site);
  checkWordArgs(comm, counter, true, contextId, bits, fn);
  waitCounter(comm, counter, least, coopKind, order, fn, contextId);
}
TLE_DEVICE_API uint64_t flagcxDevReadCounter(const void *comm, uint32_t counter,
                                             int32_t bits, uint32_t contextId,
                                             int32_t order) {
  TLE_ENTRY(flagcxDevReadCounter);
  using namespace tle;
  using namespace tle::impl;
  checkWordArgs(comm, counter, true, contextId, bits, Fn::flagcxDevReadCounter);
  return readCounter(comm, counter, order, Fn::flagcxDevReadCounter, contextId);
}
TLE_DEVICE_API void flagcxDevResetCounter(const void *comm, uint32_t contextId,
                                          uint32_t slot) {
  TLE_ENTRY(flagcxDevResetCounter);
  using namespace tle;
  using namespace tle::impl;
  const DevComm *dc =
      checkWordArgs(comm, slot, true, contextId, 64, Fn::flagcxDevResetCounter);
  resetCounter(dc, wordIndex(dc, true, contextId, slot));
}
TLE_DEVICE_API void flagcxDevFlush(const void *comm, uint32_t contextId,
                                   int32_t coopKind, int32_t order) {
  TLE_ENTRY(flagcxDevFlush);
  tle::impl::flush(comm, contextId, coopKind, order,
                   tle::impl::Fn::flagcxDevFlush);
}
TLE_DEVICE_API void flagcxDevIncreaseSignalShadow(const void *comm,
                                                  uint32_t contextId,
                                                  uint32_t slot,
                                                  uint64_t delta) {
  TLE_ENTRY(flagcxDevIncreaseSignalShadow);
  using namespace tle;
  using namespace tle::impl;
  const DevComm *dc = checkWordArgs(comm, slot, false, contextId, 64,
                                    Fn::flagcxDevIncreaseSignalShadow);
  fetchAddRelaxed(
      loadConst(&dc->shadows) + wordIndex(dc, false, contextId, slot), delta);
}
TLE_DEVICE_API void flagcxDevWaitSignalMeetShadow(const void *comm,
                                                  uint32_t contextId,
                                                  uint32_t slot, int32_t bits,
                                                  int32_t coopKind,
                                                  int32_t order) {
  TLE_ENTRY(flagcxDevWaitSignalMeetShadow);
  using namespace tle;
  using namespace tle::impl;
  checkWordArgs(comm, slot, false, contextId, bits,
                Fn::flagcxDevWaitSignalMeetShadow);
  waitShadow(comm, slot, coopKind, order, Fn::flagcxDevWaitSignalMeetShadow,
             contextId);
}
TLE_DEVICE_API void tleDevWaitSignalMeetShadowAt(const void *comm,
                                                 uint32_t contextId,
                                                 uint32_t slot, int32_t bits,
                                                 int32_t coopKind,
                                                 int32_t order, uint32_t site) {
  TLE_ENTRY(flagcxDevWaitSignalMeetShadow);
  using namespace tle;
  using namespace tle::impl;
  const FnAt fn(Fn::flagcxDevWaitSignalMeetShadow, site);
  checkWordArgs(comm, slot, false, contextId, bits, fn);
  waitShadow(comm, slot, coopKind, order, fn, contextId);
}

// Cooperative groups.
TLE_DEVICE_API void flagcxCoopAnyInitBlock(void *coop) {
  TLE_ENTRY(flagcxCoopAnyInitBlock);
  *static_cast<tle::CoopAny *>(coop) = {tle::kCoopBlock, 0, 0, 0};
}
TLE_DEVICE_API void flagcxCoopAnyInitWarp(void *coop) {
  TLE_ENTRY(flagcxCoopAnyInitWarp);
  *static_cast<tle::CoopAny *>(coop) = {tle::kCoopWarp, 0, 0, 0};
}
TLE_DEVICE_API void flagcxCoopAnyInitThread(void *coop) {
  TLE_ENTRY(flagcxCoopAnyInitThread);
  *static_cast<tle::CoopAny *>(coop) = {tle::kCoopThread, 0, 0, 0};
}
TLE_DEVICE_API void flagcxCoopAnyInitTileSpan(void *coop, int32_t t0,
                                              int32_t nTiles, int32_t id) {
  TLE_ENTRY(flagcxCoopAnyInitTileSpan);
  *static_cast<tle::CoopAny *>(coop) = {
      tle::kCoopTileSpan, static_cast<uint32_t>(t0),
      static_cast<uint32_t>(nTiles), static_cast<uint32_t>(id)};
}
TLE_DEVICE_API void flagcxCoopAnyInitLanes(void *coop, uint32_t laneMask) {
  TLE_ENTRY(flagcxCoopAnyInitLanes);
  *static_cast<tle::CoopAny *>(coop) = {tle::kCoopLanes, laneMask, 0, 0};
}
TLE_DEVICE_API int32_t flagcxCoopThreadRankC(const void *coop) {
  TLE_ENTRY(flagcxCoopThreadRankC);
  const auto *c = static_cast<const tle::CoopAny *>(coop);
  return tle::impl::coopRankEx(tle::impl::checkedCoop(c->kind), c->param0,
                               c->param1);
}
TLE_DEVICE_API int32_t flagcxCoopSizeC(const void *coop) {
  TLE_ENTRY(flagcxCoopSizeC);
  const auto *c = static_cast<const tle::CoopAny *>(coop);
  return tle::impl::coopSizeEx(tle::impl::checkedCoop(c->kind), c->param0,
                               c->param1);
}
TLE_DEVICE_API void flagcxCoopSyncC(void *coop) {
  TLE_ENTRY(flagcxCoopSyncC);
  const auto *c = static_cast<const tle::CoopAny *>(coop);
  tle::impl::coopSyncEx(tle::impl::checkedCoop(c->kind), c->param0, c->param1,
                        c->param2);
}
TLE_DEVICE_API int32_t flagcxCoopThreadRankS(int32_t kind) {
  TLE_ENTRY(flagcxCoopThreadRankS);
  using namespace tle;
  using namespace tle::impl;
  return static_cast<int32_t>(makeGroup(checkedCoop(kind)).rank);
}
TLE_DEVICE_API int32_t flagcxCoopSizeS(int32_t kind) {
  TLE_ENTRY(flagcxCoopSizeS);
  using namespace tle;
  using namespace tle::impl;
  return static_cast<int32_t>(makeGroup(checkedCoop(kind)).size);
}
TLE_DEVICE_API void flagcxCoopSyncS(int32_t kind) {
  TLE_ENTRY(flagcxCoopSyncS);
  using namespace tle;
  using namespace tle::impl;
  groupSync(makeGroup(checkedCoop(kind)));
}
TLE_DEVICE_API int32_t flagcxCoopThreadRankExS(int32_t kind, uint32_t param0,
                                               uint32_t param1, uint32_t) {
  TLE_ENTRY(flagcxCoopThreadRankExS);
  using namespace tle;
  using namespace tle::impl;
  return coopRankEx(checkedCoop(kind), param0, param1);
}
TLE_DEVICE_API int32_t flagcxCoopSizeExS(int32_t kind, uint32_t param0,
                                         uint32_t param1, uint32_t) {
  TLE_ENTRY(flagcxCoopSizeExS);
  using namespace tle;
  using namespace tle::impl;
  return coopSizeEx(checkedCoop(kind), param0, param1);
}
TLE_DEVICE_API void flagcxCoopSyncExS(int32_t kind, uint32_t param0,
                                      uint32_t param1, uint32_t param2) {
  TLE_ENTRY(flagcxCoopSyncExS);
  using namespace tle;
  using namespace tle::impl;
  coopSyncEx(checkedCoop(kind), param0, param1, param2);
}

// Teams.
TLE_DEVICE_API void flagcxGetTeamIntra(const void *comm, void *team) {
  TLE_ENTRY(flagcxGetTeamIntra);
  *static_cast<tle::Team *>(team) = tle::impl::makeTeam(
      comm, tle::kTeamIntra, tle::impl::Fn::flagcxGetTeamIntra);
}
TLE_DEVICE_API void flagcxGetTeamInter(const void *comm, void *team) {
  TLE_ENTRY(flagcxGetTeamInter);
  *static_cast<tle::Team *>(team) = tle::impl::makeTeam(
      comm, tle::kTeamInter, tle::impl::Fn::flagcxGetTeamInter);
}
TLE_DEVICE_API void flagcxGetTeamWorld(const void *comm, void *team) {
  TLE_ENTRY(flagcxGetTeamWorld);
  *static_cast<tle::Team *>(team) = tle::impl::makeTeam(
      comm, tle::kTeamWorld, tle::impl::Fn::flagcxGetTeamWorld);
}
TLE_DEVICE_API int32_t flagcxTeamRankToWorldC(const void *comm,
                                              const void *team, int32_t rank) {
  TLE_ENTRY(flagcxTeamRankToWorldC);
  using namespace tle;
  using namespace tle::impl;
  teamKindOf(comm, team, Fn::flagcxTeamRankToWorldC);
  return teamRankTo(comm, *static_cast<const tle::Team *>(team), rank, false,
                    Fn::flagcxTeamRankToWorldC);
}
TLE_DEVICE_API int32_t flagcxTeamRankToIntraC(const void *comm,
                                              const void *team, int32_t rank) {
  TLE_ENTRY(flagcxTeamRankToIntraC);
  using namespace tle;
  using namespace tle::impl;
  teamKindOf(comm, team, Fn::flagcxTeamRankToIntraC);
  return teamRankTo(comm, *static_cast<const tle::Team *>(team), rank, true,
                    Fn::flagcxTeamRankToIntraC);
}
TLE_DEVICE_API int32_t flagcxTeamRankToWorldS(const void *comm,
                                              int32_t teamKind, int32_t rank) {
  TLE_ENTRY(flagcxTeamRankToWorldS);
  using namespace tle;
  using namespace tle::impl;
  return teamRankTo(comm, makeTeam(comm, teamKind, Fn::flagcxTeamRankToWorldS),
                    rank, false, Fn::flagcxTeamRankToWorldS);
}
TLE_DEVICE_API int32_t flagcxTeamRankToIntraS(const void *comm,
                                              int32_t teamKind, int32_t rank) {
  TLE_ENTRY(flagcxTeamRankToIntraS);
  using namespace tle;
  using namespace tle::impl;
  return teamRankTo(comm, makeTeam(comm, teamKind, Fn::flagcxTeamRankToIntraS),
                    rank, true, Fn::flagcxTeamRankToIntraS);
}

// Pointers.
TLE_DEVICE_API void *flagcxGetPeerPointerS(const void *mem, uint64_t offset,
                                           const void *comm, int32_t teamKind,
                                           int32_t peer, int32_t access) {
  TLE_ENTRY(flagcxGetPeerPointerS);
  using namespace tle;
  using namespace tle::impl;
  if (TLE_UNLIKELY(static_cast<uint32_t>(access) > 2))
    failArgument(comm, 0, Fn::flagcxGetPeerPointerS, kArgAccess, access, 2);
  if (TLE_UNLIKELY(static_cast<uint32_t>(teamKind) > tle::kTeamWorld))
    failArgument(comm, 0, Fn::flagcxGetPeerPointerS, kArgTeamKind, teamKind,
                 tle::kTeamWorld);
  Comm c = checkComm(comm, Fn::flagcxGetPeerPointerS);
  Target t = resolvePeer(c, teamKind, peer, Fn::flagcxGetPeerPointerS);
  if (!t.local)
    return nullptr;
  return memPointer(mem, offset, static_cast<int>(t.intra), /*local=*/false,
                    Fn::flagcxGetPeerPointerS);
}
TLE_DEVICE_API void *flagcxGetPeerPointerC(const void *mem, uint64_t offset,
                                           const void *team, int32_t peer,
                                           int32_t access) {
  TLE_ENTRY(flagcxGetPeerPointerC);
  using namespace tle;
  using namespace tle::impl;
  const SymMem *m = static_cast<const SymMem *>(mem);
  const tle::Team *t = static_cast<const tle::Team *>(team);
  if (TLE_UNLIKELY(!m || !t || loadConst(&m->magic) != tle::kSymMemMagic ||
                   static_cast<uint32_t>(access) > 2))
    failNoRecord();
  // This node's rank of the member, as teamRankTo: outside the node, null.
  int32_t q = loadConst(&m->rank) +
              (peer - loadConst(&t->rank)) * loadConst(&t->stride);
  if (q < 0 || q >= loadConst(&m->size))
    return nullptr;
  return memPointer(mem, offset, q, /*local=*/false, Fn::flagcxGetPeerPointerC);
}
TLE_DEVICE_API void *flagcxGetLocalPointerC(const void *mem, uint64_t offset) {
  TLE_ENTRY(flagcxGetLocalPointerC);
  return tle::impl::memPointer(mem, offset, 0, /*local=*/true,
                               tle::impl::Fn::flagcxGetLocalPointerC);
}
TLE_DEVICE_API void *flagcxGetIntraPointerC(const void *mem, uint64_t offset,
                                            int32_t peer) {
  TLE_ENTRY(flagcxGetIntraPointerC);
  return tle::impl::memPointer(mem, offset, peer, /*local=*/false,
                               tle::impl::Fn::flagcxGetIntraPointerC);
}
// No multicast objects here (they are not available on these machines):
// null, as FlagCX's default backend answers.
TLE_DEVICE_API void *flagcxGetMulticastPointerS(const void *, uint64_t,
                                                const void *) {
  TLE_ENTRY(flagcxGetMulticastPointerS);
  return nullptr;
}
TLE_DEVICE_API void *flagcxGetMulticastPointerC(const void *, uint64_t,
                                                const void *) {
  TLE_ENTRY(flagcxGetMulticastPointerC);
  return nullptr;
}
TLE_DEVICE_API uint64_t flagcxDataTypeSizeDevice(int32_t dt) {
  TLE_ENTRY(flagcxDataTypeSizeDevice);
  // flagcx.h's flagcxDataType_t: int8, uint8, int32, uint32, int64, uint64,
  // float16, float32, float64, bfloat16.
  constexpr uint8_t kSizes[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2};
  return static_cast<uint32_t>(dt) < sizeof(kSizes) ? kSizes[dt] : 0;
}

// INTER and WORLD barriers and sessions through a net handle.
#define TLE_NET_BARRIER(Name, Team, Kind, ...)                                 \
  TLE_DEVICE_API void Name(const void *net, int32_t coopKind, uint32_t index,  \
                           __VA_ARGS__ int32_t order, int32_t fence) {         \
    TLE_ENTRY(Name);                                                           \
    using namespace tle;                                                       \
    using namespace tle::impl;                                                 \
    NetRef n = netRef(net, Fn::Name);                                          \
    checkFence(n.comm, index, fence, Fn::Name);                                \
    devBarrier(n.comm, Team, index, coopKind, order, tle::kScopeSystem, Kind,  \
               Fn::Name);                                                      \
  }
TLE_NET_BARRIER(flagcxInterBarrierArriveS, tle::kTeamInter,
                tle::kBarrierArrive, )
TLE_NET_BARRIER(flagcxInterBarrierWaitS, tle::kTeamInter, tle::kBarrierWait, )
TLE_NET_BARRIER(flagcxInterBarrierSyncS, tle::kTeamInter, tle::kBarrierSync, )
TLE_NET_BARRIER(flagcxWorldBarrierArriveS, tle::kTeamWorld, tle::kBarrierArrive,
                bool, )
TLE_NET_BARRIER(flagcxWorldBarrierWaitS, tle::kTeamWorld, tle::kBarrierWait,
                bool, )
TLE_NET_BARRIER(flagcxWorldBarrierSyncS, tle::kTeamWorld, tle::kBarrierSync,
                bool, )
#undef TLE_NET_BARRIER

TLE_DEVICE_API void
flagcxIntraBarrierSessionInit(void *session, const void *coop, const void *comm,
                              const void *team, uint32_t index, bool) {
  TLE_ENTRY(flagcxIntraBarrierSessionInit);
  using namespace tle;
  using namespace tle::impl;
  if (team)
    teamKindOf(comm, team, Fn::flagcxIntraBarrierSessionInit);
  sessionInit(session, coop, comm, tle::kTeamIntra, index);
}
TLE_DEVICE_API void flagcxIntraBarrierSessionArrive(void *session,
                                                    int32_t order) {
  TLE_ENTRY(flagcxIntraBarrierSessionArrive);
  tle::impl::sessionRun(session, order, tle::kBarrierArrive,
                        tle::impl::Fn::flagcxIntraBarrierSessionArrive);
}
TLE_DEVICE_API void flagcxIntraBarrierSessionWait(void *session,
                                                  int32_t order) {
  TLE_ENTRY(flagcxIntraBarrierSessionWait);
  tle::impl::sessionRun(session, order, tle::kBarrierWait,
                        tle::impl::Fn::flagcxIntraBarrierSessionWait);
}
TLE_DEVICE_API void flagcxIntraBarrierSessionSync(void *session,
                                                  int32_t order) {
  TLE_ENTRY(flagcxIntraBarrierSessionSync);
  tle::impl::sessionRun(session, order, tle::kBarrierSync,
                        tle::impl::Fn::flagcxIntraBarrierSessionSync);
}
TLE_DEVICE_API void
flagcxInterBarrierSessionInit(void *session, const void *coop,
                              const void *trans, const void *, uint32_t index) {
  TLE_ENTRY(flagcxInterBarrierSessionInit);
  using namespace tle;
  using namespace tle::impl;
  NetRef n = netRef(trans, Fn::flagcxInterBarrierSessionInit);
  sessionInit(session, coop, n.comm, tle::kTeamInter, index);
}
TLE_DEVICE_API void flagcxInterBarrierSessionSync(void *session, int32_t order,
                                                  int32_t fence) {
  TLE_ENTRY(flagcxInterBarrierSessionSync);
  using namespace tle;
  using namespace tle::impl;
  checkFence(sessionOf(session).comm, sessionOf(session).index, fence,
             Fn::flagcxInterBarrierSessionSync);
  sessionRun(session, order, tle::kBarrierSync,
             Fn::flagcxInterBarrierSessionSync);
}
TLE_DEVICE_API void flagcxWorldBarrierSessionInit(void *session,
                                                  const void *coop,
                                                  tle::TeamTagWorld,
                                                  const void *trans,
                                                  uint32_t index, bool) {
  TLE_ENTRY(flagcxWorldBarrierSessionInit);
  using namespace tle;
  using namespace tle::impl;
  NetRef n = netRef(trans, Fn::flagcxWorldBarrierSessionInit);
  sessionInit(session, coop, n.comm, tle::kTeamWorld, index);
}
TLE_DEVICE_API void flagcxWorldBarrierSessionSync(void *session, int32_t order,
                                                  int32_t fence) {
  TLE_ENTRY(flagcxWorldBarrierSessionSync);
  using namespace tle;
  using namespace tle::impl;
  checkFence(sessionOf(session).comm, sessionOf(session).index, fence,
             Fn::flagcxWorldBarrierSessionSync);
  sessionRun(session, order, tle::kBarrierSync,
             Fn::flagcxWorldBarrierSessionSync);
}

// The net handle and its signal, counter, shadow and flush functions.
TLE_DEVICE_API const void *flagcxDevNetGetFromCommS(const void *comm,
                                                    int32_t idx) {
  TLE_ENTRY(flagcxDevNetGetFromCommS);
  using namespace tle;
  using namespace tle::impl;
  const DevComm *dc = checkComm(comm, Fn::flagcxDevNetGetFromCommS).dc;
  uint32_t n = loadConst(&dc->nContexts);
  if (TLE_UNLIKELY(static_cast<uint32_t>(idx) >= n))
    failArgument(comm, 0, Fn::flagcxDevNetGetFromCommS, kArgContextId, idx, n);
  return &dc->nets[idx];
}
TLE_DEVICE_API void flagcxDevNetInitC(void *trans, const void *comm,
                                      int32_t idx) {
  TLE_ENTRY(flagcxDevNetInitC);
  using namespace tle;
  using namespace tle::impl;
  const DevComm *dc = checkComm(comm, Fn::flagcxDevNetInitC).dc;
  uint32_t n = loadConst(&dc->nContexts);
  if (TLE_UNLIKELY(static_cast<uint32_t>(idx) >= n))
    failArgument(comm, 0, Fn::flagcxDevNetInitC, kArgContextId, idx, n);
  *static_cast<tle::DevNet *>(trans) = {tle::kDevNetMagic,
                                        static_cast<uint32_t>(idx), comm};
}
#define TLE_NET_READ_SIGNAL(Name)                                              \
  TLE_DEVICE_API uint64_t Name(const void *net, uint32_t signalId,             \
                               int32_t bits, int32_t order) {                  \
    TLE_ENTRY(Name);                                                           \
    using namespace tle;                                                       \
    using namespace tle::impl;                                                 \
    NetRef n = netRef(net, Fn::Name);                                          \
    checkSignalArgs(n.comm, signalId, kHasBits, 0, 0, bits, Fn::Name);         \
    return readSignal(n.comm, signalId, order, Fn::Name, n.context);           \
  }
TLE_NET_READ_SIGNAL(flagcxDevNetReadSignal)
TLE_NET_READ_SIGNAL(flagcxDevNetReadSignalS)
#undef TLE_NET_READ_SIGNAL
#define TLE_NET_READ_COUNTER(Name)                                             \
  TLE_DEVICE_API uint64_t Name(const void *net, uint32_t counterId,            \
                               int32_t bits, int32_t order) {                  \
    TLE_ENTRY(Name);                                                           \
    using namespace tle;                                                       \
    using namespace tle::impl;                                                 \
    NetRef n = netRef(net, Fn::Name);                                          \
    checkWordArgs(n.comm, counterId, true, n.context, bits, Fn::Name);         \
    return readCounter(n.comm, counterId, order, Fn::Name, n.context);         \
  }
TLE_NET_READ_COUNTER(flagcxDevNetReadCounter)
TLE_NET_READ_COUNTER(flagcxDevNetReadCounterS)
#undef TLE_NET_READ_COUNTER

namespace tle::impl {
TLE_DEV_INLINE void netWaitSignal(const void *net, int coop, uint32_t sig,
                                  uint64_t least, int bits, int order,
                                  FnAt fn) {
  NetRef n = netRef(net, fn);
  checkSignalArgs(n.comm, sig, kHasBits, 0, 0, bits, fn);
  signalWait(n.comm, sig, least, coop, order, fn, n.context);
}
TLE_DEV_INLINE void netWaitShadow(const void *net, int coop, uint32_t sig,
                                  int bits, int order, FnAt fn) {
  NetRef n = netRef(net, fn);
  checkWordArgs(n.comm, sig, false, n.context, bits, fn);
  waitShadow(n.comm, sig, coop, order, fn, n.context);
}
TLE_DEV_INLINE void netWaitCounter(const void *net, int coop, uint32_t ctr,
                                   uint64_t least, int bits, int order,
                                   FnAt fn) {
  NetRef n = netRef(net, fn);
  checkWordArgs(n.comm, ctr, true, n.context, bits, fn);
  waitCounter(n.comm, ctr, least, coop, order, fn, n.context);
}
} // namespace tle::impl

TLE_DEVICE_API void flagcxDevNetWaitSignal(const void *trans, const void *coop,
                                           uint32_t signalId, uint64_t least,
                                           int32_t bits, int32_t order) {
  TLE_ENTRY(flagcxDevNetWaitSignal);
  using namespace tle;
  using namespace tle::impl;
  netWaitSignal(trans, coopKindOf(coop), signalId, least, bits, order,
                Fn::flagcxDevNetWaitSignal);
}
TLE_DEVICE_API void flagcxDevNetWaitSignalS(const void *net, int32_t coopKind,
                                            uint32_t signalId, uint64_t least,
                                            int32_t bits, int32_t order) {
  TLE_ENTRY(flagcxDevNetWaitSignalS);
  tle::impl::netWaitSignal(net, coopKind, signalId, least, bits, order,
                           tle::impl::Fn::flagcxDevNetWaitSignalS);
}
TLE_DEVICE_API void flagcxDevNetWaitSignalMeetShadow(const void *trans,
                                                     const void *coop,
                                                     uint32_t signalId,
                                                     int32_t bits,
                                                     int32_t order) {
  TLE_ENTRY(flagcxDevNetWaitSignalMeetShadow);
  using namespace tle;
  using namespace tle::impl;
  netWaitShadow(trans, coopKindOf(coop), signalId, bits, order,
                Fn::flagcxDevNetWaitSignalMeetShadow);
}
TLE_DEVICE_API void flagcxDevNetWaitSignalMeetShadowS(const void *net,
                                                      int32_t coopKind,
                                                      uint32_t signalId,
                                                      int32_t bits,
                                                      int32_t order) {
  TLE_ENTRY(flagcxDevNetWaitSignalMeetShadowS);
  tle::impl::netWaitShadow(net, coopKind, signalId, bits, order,
                           tle::impl::Fn::flagcxDevNetWaitSignalMeetShadowS);
}
TLE_DEVICE_API void flagcxDevNetWaitCounter(const void *trans, const void *coop,
                                            uint32_t counterId, uint64_t least,
                                            int32_t bits, int32_t order) {
  TLE_ENTRY(flagcxDevNetWaitCounter);
  using namespace tle;
  using namespace tle::impl;
  netWaitCounter(trans, coopKindOf(coop), counterId, least, bits, order,
                 Fn::flagcxDevNetWaitCounter);
}
TLE_DEVICE_API void flagcxDevNetWaitCounterS(const void *net, int32_t coopKind,
                                             uint32_t counterId, uint64_t least,
                                             int32_t bits, int32_t order) {
  TLE_ENTRY(flagcxDevNetWaitCounterS);
  tle::impl::netWaitCounter(net, coopKind, counterId, least, bits, order,
                            tle::impl::Fn::flagcxDevNetWaitCounterS);
}
TLE_DEVICE_API void flagcxDevNetFlush(const void *trans, const void *coop,
                                      int32_t order) {
  TLE_ENTRY(flagcxDevNetFlush);
  using namespace tle;
  using namespace tle::impl;
  NetRef n = netRef(trans, Fn::flagcxDevNetFlush);
  flush(n.comm, n.context, coopKindOf(coop), order, Fn::flagcxDevNetFlush);
}
TLE_DEVICE_API void flagcxDevNetFlushS(const void *net, int32_t coopKind,
                                       int32_t order) {
  TLE_ENTRY(flagcxDevNetFlushS);
  using namespace tle;
  using namespace tle::impl;
  NetRef n = netRef(net, Fn::flagcxDevNetFlushS);
  flush(n.comm, n.context, coopKind, order, Fn::flagcxDevNetFlushS);
}
TLE_DEVICE_API void flagcxDevNetResetSignal(const void *net, uint32_t slot) {
  TLE_ENTRY(flagcxDevNetResetSignal);
  using namespace tle;
  using namespace tle::impl;
  NetRef n = netRef(net, Fn::flagcxDevNetResetSignal);
  flagcxDevResetSignal(n.comm, n.context, slot);
}
TLE_DEVICE_API void flagcxDevNetResetCounter(const void *net, uint32_t slot) {
  TLE_ENTRY(flagcxDevNetResetCounter);
  using namespace tle;
  using namespace tle::impl;
  NetRef n = netRef(net, Fn::flagcxDevNetResetCounter);
  flagcxDevResetCounter(n.comm, n.context, slot);
}
TLE_DEVICE_API void flagcxDevNetIncreaseSignalShadow(const void *net,
                                                     uint32_t slot,
                                                     uint64_t delta) {
  TLE_ENTRY(flagcxDevNetIncreaseSignalShadow);
  using namespace tle;
  using namespace tle::impl;
  NetRef n = netRef(net, Fn::flagcxDevNetIncreaseSignalShadow);
  flagcxDevIncreaseSignalShadow(n.comm, n.context, slot, delta);
}

// Two-sided transfers: not served (abi.def).
TLE_DEVICE_API int32_t flagcxDevNetSend(const void *, const void *,
                                        const void *, uint64_t, uint64_t,
                                        int32_t, int32_t) {
  TLE_ENTRY(flagcxDevNetSend);
  return tle::impl::kFlagcxNotSupported;
}
TLE_DEVICE_API int32_t flagcxDevNetRecv(const void *, const void *,
                                        const void *, uint64_t, uint64_t,
                                        int32_t, int32_t) {
  TLE_ENTRY(flagcxDevNetRecv);
  return tle::impl::kFlagcxNotSupported;
}
TLE_DEVICE_API int32_t flagcxDevNetWait(const void *, const void *) {
  TLE_ENTRY(flagcxDevNetWait);
  return tle::impl::kFlagcxNotSupported;
}
TLE_DEVICE_API int32_t flagcxDevNetTerm(const void *, const void *) {
  TLE_ENTRY(flagcxDevNetTerm);
  return tle::impl::kFlagcxNotSupported;
}
TLE_DEVICE_API int32_t flagcxDevNetSendS(const void *, int32_t, const void *,
                                         uint64_t, uint64_t, int32_t, int32_t) {
  TLE_ENTRY(flagcxDevNetSendS);
  return tle::impl::kFlagcxNotSupported;
}
TLE_DEVICE_API int32_t flagcxDevNetRecvS(const void *, int32_t, const void *,
                                         uint64_t, uint64_t, int32_t, int32_t) {
  TLE_ENTRY(flagcxDevNetRecvS);
  return tle::impl::kFlagcxNotSupported;
}
TLE_DEVICE_API int32_t flagcxDevNetWaitS(const void *, int32_t) {
  TLE_ENTRY(flagcxDevNetWaitS);
  return tle::impl::kFlagcxNotSupported;
}
TLE_DEVICE_API int32_t flagcxDevNetTermS(const void *, int32_t) {
  TLE_ENTRY(flagcxDevNetTermS);
  return tle::impl::kFlagcxNotSupported;
}

// The put, put-value and signal families (abi.def's comments give the
// variant table).
// flagcxDevNetPut[S][_R<action>][_L<action>]: the action halves of FlagCX's
// names, each with its parameters and the ActionArg it makes, listed once
// (remote: SigInc, SigAdd, CtrInc on the peer's word; local: the same on
// this rank's), and the two forms (through a net handle and a team; the S
// form through a net and a communicator with a team kind) expanded once per
// variant: 32 entry points, each as its own function with FlagCX's symbol.
#define TLE_NET_PUT_VARIANTS(X)                                                \
  X(, (), ActionArg{}, ActionArg{})                                            \
  X(_LSigInc, (, uint32_t localSignal), ActionArg{}, sigInc(localSignal))      \
  X(_LSigAdd, (, uint32_t localSignal, uint64_t localValue), ActionArg{},      \
    sigAdd(localSignal, localValue))                                           \
  X(_LCtrInc, (, uint32_t localCounter), ActionArg{}, ctrInc(localCounter))    \
  X(_RSigInc, (, uint32_t remoteSignal), sigInc(remoteSignal), ActionArg{})    \
  X(_RSigInc_LSigInc, (, uint32_t remoteSignal, uint32_t localSignal),         \
    sigInc(remoteSignal), sigInc(localSignal))                                 \
  X(_RSigInc_LSigAdd,                                                          \
    (, uint32_t remoteSignal, uint32_t localSignal, uint64_t localValue),      \
    sigInc(remoteSignal), sigAdd(localSignal, localValue))                     \
  X(_RSigInc_LCtrInc, (, uint32_t remoteSignal, uint32_t localCounter),        \
    sigInc(remoteSignal), ctrInc(localCounter))                                \
  X(_RSigAdd, (, uint32_t remoteSignal, uint64_t remoteValue),                 \
    sigAdd(remoteSignal, remoteValue), ActionArg{})                            \
  X(_RSigAdd_LSigInc,                                                          \
    (, uint32_t remoteSignal, uint64_t remoteValue, uint32_t localSignal),     \
    sigAdd(remoteSignal, remoteValue), sigInc(localSignal))                    \
  X(_RSigAdd_LSigAdd,                                                          \
    (, uint32_t remoteSignal, uint64_t remoteValue, uint32_t localSignal,      \
     uint64_t localValue),                                                     \
    sigAdd(remoteSignal, remoteValue), sigAdd(localSignal, localValue))        \
  X(_RSigAdd_LCtrInc,                                                          \
    (, uint32_t remoteSignal, uint64_t remoteValue, uint32_t localCounter),    \
    sigAdd(remoteSignal, remoteValue), ctrInc(localCounter))                   \
  X(_RCtrInc, (, uint32_t remoteCounter), ctrInc(remoteCounter), ActionArg{})  \
  X(_RCtrInc_LSigInc, (, uint32_t remoteCounter, uint32_t localSignal),        \
    ctrInc(remoteCounter), sigInc(localSignal))                                \
  X(_RCtrInc_LSigAdd,                                                          \
    (, uint32_t remoteCounter, uint32_t localSignal, uint64_t localValue),     \
    ctrInc(remoteCounter), sigAdd(localSignal, localValue))                    \
  X(_RCtrInc_LCtrInc, (, uint32_t remoteCounter, uint32_t localCounter),       \
    ctrInc(remoteCounter), ctrInc(localCounter))

#define TLE_UNPAREN(...) __VA_ARGS__
#define TLE_NET_PUT(Suffix, Params, Remote, Local)                             \
  TLE_DEVICE_API void flagcxDevNetPut##Suffix(                                 \
      const void *trans, const void *team, int32_t peer, const void *dst,      \
      uint64_t dstOffset, const void *src, uint64_t srcOffset, uint64_t bytes, \
      const void *coop TLE_UNPAREN Params) {                                   \
    TLE_ENTRY(flagcxDevNetPut##Suffix);                                        \
    using namespace tle;                                                       \
    using namespace tle::impl;                                                 \
    NetRef n = netRef(trans, Fn::flagcxDevNetPut##Suffix);                     \
    put(n.comm, dst, dstOffset, src, srcOffset, bytes,                         \
        teamKindOf(n.comm, team, Fn::flagcxDevNetPut##Suffix), peer,           \
        n.context, coopKindOf(coop), kScopeSystem, kOrderRelease, Remote,      \
        Local, Fn::flagcxDevNetPut##Suffix);                                   \
  }
#define TLE_NET_PUT_S(Suffix, Params, Remote, Local)                           \
  TLE_DEVICE_API void flagcxDevNetPutS##Suffix(                                \
      const void *net, const void *comm, int32_t teamKind, int32_t peer,       \
      const void *dst, uint64_t dstOffset, const void *src,                    \
      uint64_t srcOffset, uint64_t bytes,                                      \
      int32_t coopKind TLE_UNPAREN Params) {                                   \
    TLE_ENTRY(flagcxDevNetPutS##Suffix);                                       \
    using namespace tle;                                                       \
    using namespace tle::impl;                                                 \
    NetRef n = netRef(net, Fn::flagcxDevNetPutS##Suffix);                      \
    put(comm, dst, dstOffset, src, srcOffset, bytes, teamKind, peer,           \
        n.context, coopKind, kScopeSystem, kOrderRelease, Remote, Local,       \
        Fn::flagcxDevNetPutS##Suffix);                                         \
  }
TLE_NET_PUT_VARIANTS(TLE_NET_PUT)
TLE_NET_PUT_VARIANTS(TLE_NET_PUT_S)
#undef TLE_NET_PUT_S
#undef TLE_NET_PUT
#undef TLE_UNPAREN
#undef TLE_NET_PUT_VARIANTS

TLE_DEVICE_API void flagcxDevPut(const void *comm, const void *dst,
                                 uint64_t dstOffset, const void *src,
                                 uint64_t srcOffset, uint64_t bytes,
                                 int32_t teamKind, int32_t peer,
                                 uint32_t contextId, int32_t coopKind,
                                 int32_t scope, int32_t order) {
  TLE_ENTRY(flagcxDevPut);
  using namespace tle;
  using namespace tle::impl;
  put(comm, dst, dstOffset, src, srcOffset, bytes, teamKind, peer, contextId,
      coopKind, scope, order, ActionArg{}, ActionArg{}, Fn::flagcxDevPut);
}
TLE_DEVICE_API void flagcxDevPut_RSigInc(const void *comm, const void *dst,
                                         uint64_t dstOffset, const void *src,
                                         uint64_t srcOffset, uint64_t bytes,
                                         int32_t teamKind, int32_t peer,
                                         uint32_t contextId, int32_t coopKind,
                                         int32_t scope, int32_t order,
                                         uint32_t remoteSignal) {
  TLE_ENTRY(flagcxDevPut_RSigInc);
  using namespace tle;
  using namespace tle::impl;
  put(comm, dst, dstOffset, src, srcOffset, bytes, teamKind, peer, contextId,
      coopKind, scope, order, sigInc(remoteSignal), ActionArg{},
      Fn::flagcxDevPut_RSigInc);
}
TLE_DEVICE_API void
flagcxDevPut_RSigAdd(const void *comm, const void *dst, uint64_t dstOffset,
                     const void *src, uint64_t srcOffset, uint64_t bytes,
                     int32_t teamKind, int32_t peer, uint32_t contextId,
                     int32_t coopKind, int32_t scope, int32_t order,
                     uint32_t remoteSignal, uint64_t signalValue) {
  TLE_ENTRY(flagcxDevPut_RSigAdd);
  using namespace tle;
  using namespace tle::impl;
  put(comm, dst, dstOffset, src, srcOffset, bytes, teamKind, peer, contextId,
      coopKind, scope, order, sigAdd(remoteSignal, signalValue), ActionArg{},
      Fn::flagcxDevPut_RSigAdd);
}
TLE_DEVICE_API void flagcxDevPut_LCtrInc(const void *comm, const void *dst,
                                         uint64_t dstOffset, const void *src,
                                         uint64_t srcOffset, uint64_t bytes,
                                         int32_t teamKind, int32_t peer,
                                         uint32_t contextId, int32_t coopKind,
                                         int32_t scope, int32_t order,
                                         uint32_t localCounter) {
  TLE_ENTRY(flagcxDevPut_LCtrInc);
  using namespace tle;
  using namespace tle::impl;
  put(comm, dst, dstOffset, src, srcOffset, bytes, teamKind, peer, contextId,
      coopKind, scope, order, ActionArg{}, ctrInc(localCounter),
      Fn::flagcxDevPut_LCtrInc);
}
TLE_DEVICE_API void flagcxDevPut_RSigInc_LCtrInc(
    const void *comm, const void *dst, uint64_t dstOffset, const void *src,
    uint64_t srcOffset, uint64_t bytes, int32_t teamKind, int32_t peer,
    uint32_t contextId, int32_t coopKind, int32_t scope, int32_t order,
    uint32_t remoteSignal, uint32_t localCounter) {
  TLE_ENTRY(flagcxDevPut_RSigInc_LCtrInc);
  using namespace tle;
  using namespace tle::impl;
  put(comm, dst, dstOffset, src, srcOffset, bytes, teamKind, peer, contextId,
      coopKind, scope, order, sigInc(remoteSignal), ctrInc(localCounter),
      Fn::flagcxDevPut_RSigInc_LCtrInc);
}
TLE_DEVICE_API void flagcxDevPut_RSigAdd_LCtrInc(
    const void *comm, const void *dst, uint64_t dstOffset, const void *src,
    uint64_t srcOffset, uint64_t bytes, int32_t teamKind, int32_t peer,
    uint32_t contextId, int32_t coopKind, int32_t scope, int32_t order,
    uint32_t remoteSignal, uint64_t signalValue, uint32_t localCounter) {
  TLE_ENTRY(flagcxDevPut_RSigAdd_LCtrInc);
  using namespace tle;
  using namespace tle::impl;
  put(comm, dst, dstOffset, src, srcOffset, bytes, teamKind, peer, contextId,
      coopKind, scope, order, sigAdd(remoteSignal, signalValue),
      ctrInc(localCounter), Fn::flagcxDevPut_RSigAdd_LCtrInc);
}
TLE_DEVICE_API void flagcxDevPutValue(const void *comm, const void *dst,
                                      uint64_t dstOffset, uint64_t value,
                                      int32_t teamKind, int32_t peer,
                                      uint32_t contextId, int32_t coopKind,
                                      int32_t scope, int32_t order) {
  TLE_ENTRY(flagcxDevPutValue);
  using namespace tle;
  using namespace tle::impl;
  putValue(comm, dst, dstOffset, value, teamKind, peer, contextId, coopKind,
           scope, order, ActionArg{}, Fn::flagcxDevPutValue);
}
TLE_DEVICE_API void
flagcxDevPutValue_RSigInc(const void *comm, const void *dst, uint64_t dstOffset,
                          uint64_t value, int32_t teamKind, int32_t peer,
                          uint32_t contextId, int32_t coopKind, int32_t scope,
                          int32_t order, uint32_t remoteSignal) {
  TLE_ENTRY(flagcxDevPutValue_RSigInc);
  using namespace tle;
  using namespace tle::impl;
  putValue(comm, dst, dstOffset, value, teamKind, peer, contextId, coopKind,
           scope, order, sigInc(remoteSignal), Fn::flagcxDevPutValue_RSigInc);
}
TLE_DEVICE_API void flagcxDevPutValue_RSigAdd(
    const void *comm, const void *dst, uint64_t dstOffset, uint64_t value,
    int32_t teamKind, int32_t peer, uint32_t contextId, int32_t coopKind,
    int32_t scope, int32_t order, uint32_t remoteSignal, uint64_t signalValue) {
  TLE_ENTRY(flagcxDevPutValue_RSigAdd);
  using namespace tle;
  using namespace tle::impl;
  putValue(comm, dst, dstOffset, value, teamKind, peer, contextId, coopKind,
           scope, order, sigAdd(remoteSignal, signalValue),
           Fn::flagcxDevPutValue_RSigAdd);
}
TLE_DEVICE_API void flagcxDevNetPutValue(const void *trans, const void *team,
                                         int32_t peer, const void *dst,
                                         uint64_t dstOffset, uint64_t value,
                                         const void *coop) {
  TLE_ENTRY(flagcxDevNetPutValue);
  using namespace tle;
  using namespace tle::impl;
  NetRef n = netRef(trans, Fn::flagcxDevNetPutValue);
  putValue(n.comm, dst, dstOffset, value,
           teamKindOf(n.comm, team, Fn::flagcxDevNetPutValue), peer, n.context,
           coopKindOf(coop), kScopeSystem, kOrderRelease, ActionArg{},
           Fn::flagcxDevNetPutValue);
}
TLE_DEVICE_API void
flagcxDevNetPutValue_RSigInc(const void *trans, const void *team, int32_t peer,
                             const void *dst, uint64_t dstOffset,
                             uint64_t value, const void *coop,
                             uint32_t remoteSignal) {
  TLE_ENTRY(flagcxDevNetPutValue_RSigInc);
  using namespace tle;
  using namespace tle::impl;
  NetRef n = netRef(trans, Fn::flagcxDevNetPutValue_RSigInc);
  putValue(n.comm, dst, dstOffset, value,
           teamKindOf(n.comm, team, Fn::flagcxDevNetPutValue_RSigInc), peer,
           n.context, coopKindOf(coop), kScopeSystem, kOrderRelease,
           sigInc(remoteSignal), Fn::flagcxDevNetPutValue_RSigInc);
}
TLE_DEVICE_API void
flagcxDevNetPutValue_RSigAdd(const void *trans, const void *team, int32_t peer,
                             const void *dst, uint64_t dstOffset,
                             uint64_t value, const void *coop,
                             uint32_t remoteSignal, uint64_t remoteAddValue) {
  TLE_ENTRY(flagcxDevNetPutValue_RSigAdd);
  using namespace tle;
  using namespace tle::impl;
  NetRef n = netRef(trans, Fn::flagcxDevNetPutValue_RSigAdd);
  putValue(n.comm, dst, dstOffset, value,
           teamKindOf(n.comm, team, Fn::flagcxDevNetPutValue_RSigAdd), peer,
           n.context, coopKindOf(coop), kScopeSystem, kOrderRelease,
           sigAdd(remoteSignal, remoteAddValue),
           Fn::flagcxDevNetPutValue_RSigAdd);
}
TLE_DEVICE_API void
flagcxDevNetPutValue_RCtrInc(const void *trans, const void *team, int32_t peer,
                             const void *dst, uint64_t dstOffset,
                             uint64_t value, const void *coop,
                             uint32_t remoteCounter) {
  TLE_ENTRY(flagcxDevNetPutValue_RCtrInc);
  using namespace tle;
  using namespace tle::impl;
  NetRef n = netRef(trans, Fn::flagcxDevNetPutValue_RCtrInc);
  putValue(n.comm, dst, dstOffset, value,
           teamKindOf(n.comm, team, Fn::flagcxDevNetPutValue_RCtrInc), peer,
           n.context, coopKindOf(coop), kScopeSystem, kOrderRelease,
           ctrInc(remoteCounter), Fn::flagcxDevNetPutValue_RCtrInc);
}
TLE_DEVICE_API void flagcxDevNetPutValueS(const void *net, const void *comm,
                                          int32_t teamKind, int32_t peer,
                                          const void *dst, uint64_t dstOffset,
                                          uint64_t value, int32_t coopKind) {
  TLE_ENTRY(flagcxDevNetPutValueS);
  using namespace tle;
  using namespace tle::impl;
  NetRef n = netRef(net, Fn::flagcxDevNetPutValueS);
  putValue(comm, dst, dstOffset, value, teamKind, peer, n.context, coopKind,
           kScopeSystem, kOrderRelease, ActionArg{}, Fn::flagcxDevNetPutValueS);
}
TLE_DEVICE_API void
flagcxDevNetPutValueS_RSigInc(const void *net, const void *comm,
                              int32_t teamKind, int32_t peer, const void *dst,
                              uint64_t dstOffset, uint64_t value,
                              int32_t coopKind, uint32_t remoteSignal) {
  TLE_ENTRY(flagcxDevNetPutValueS_RSigInc);
  using namespace tle;
  using namespace tle::impl;
  NetRef n = netRef(net, Fn::flagcxDevNetPutValueS_RSigInc);
  putValue(comm, dst, dstOffset, value, teamKind, peer, n.context, coopKind,
           kScopeSystem, kOrderRelease, sigInc(remoteSignal),
           Fn::flagcxDevNetPutValueS_RSigInc);
}
TLE_DEVICE_API void flagcxDevNetPutValueS_RSigAdd(
    const void *net, const void *comm, int32_t teamKind, int32_t peer,
    const void *dst, uint64_t dstOffset, uint64_t value, int32_t coopKind,
    uint32_t remoteSignal, uint64_t remoteAddValue) {
  TLE_ENTRY(flagcxDevNetPutValueS_RSigAdd);
  using namespace tle;
  using namespace tle::impl;
  NetRef n = netRef(net, Fn::flagcxDevNetPutValueS_RSigAdd);
  putValue(comm, dst, dstOffset, value, teamKind, peer, n.context, coopKind,
           kScopeSystem, kOrderRelease, sigAdd(remoteSignal, remoteAddValue),
           Fn::flagcxDevNetPutValueS_RSigAdd);
}
TLE_DEVICE_API void
flagcxDevNetPutValueS_RCtrInc(const void *net, const void *comm,
                              int32_t teamKind, int32_t peer, const void *dst,
                              uint64_t dstOffset, uint64_t value,
                              int32_t coopKind, uint32_t remoteCounter) {
  TLE_ENTRY(flagcxDevNetPutValueS_RCtrInc);
  using namespace tle;
  using namespace tle::impl;
  NetRef n = netRef(net, Fn::flagcxDevNetPutValueS_RCtrInc);
  putValue(comm, dst, dstOffset, value, teamKind, peer, n.context, coopKind,
           kScopeSystem, kOrderRelease, ctrInc(remoteCounter),
           Fn::flagcxDevNetPutValueS_RCtrInc);
}
TLE_DEVICE_API void flagcxDevNetSignalSigInc(const void *trans,
                                             const void *team, int32_t peer,
                                             const void *coop,
                                             uint32_t signal) {
  TLE_ENTRY(flagcxDevNetSignalSigInc);
  using namespace tle;
  using namespace tle::impl;
  NetRef n = netRef(trans, Fn::flagcxDevNetSignalSigInc);
  signalOnly(n.comm, teamKindOf(n.comm, team, Fn::flagcxDevNetSignalSigInc),
             peer, coopKindOf(coop), sigInc(signal), n.context,
             Fn::flagcxDevNetSignalSigInc);
}
TLE_DEVICE_API void flagcxDevNetSignalSigAdd(const void *trans,
                                             const void *team, int32_t peer,
                                             const void *coop, uint32_t signal,
                                             uint64_t value) {
  TLE_ENTRY(flagcxDevNetSignalSigAdd);
  using namespace tle;
  using namespace tle::impl;
  NetRef n = netRef(trans, Fn::flagcxDevNetSignalSigAdd);
  signalOnly(n.comm, teamKindOf(n.comm, team, Fn::flagcxDevNetSignalSigAdd),
             peer, coopKindOf(coop), sigAdd(signal, value), n.context,
             Fn::flagcxDevNetSignalSigAdd);
}
TLE_DEVICE_API void flagcxDevNetSignalCtrInc(const void *trans,
                                             const void *team, int32_t peer,
                                             const void *coop,
                                             uint32_t counter) {
  TLE_ENTRY(flagcxDevNetSignalCtrInc);
  using namespace tle;
  using namespace tle::impl;
  NetRef n = netRef(trans, Fn::flagcxDevNetSignalCtrInc);
  signalOnly(n.comm, teamKindOf(n.comm, team, Fn::flagcxDevNetSignalCtrInc),
             peer, coopKindOf(coop), ctrInc(counter), n.context,
             Fn::flagcxDevNetSignalCtrInc);
}
TLE_DEVICE_API void flagcxDevNetSignalSigIncS(const void *net, const void *comm,
                                              int32_t teamKind, int32_t peer,
                                              int32_t coopKind,
                                              uint32_t signal) {
  TLE_ENTRY(flagcxDevNetSignalSigIncS);
  using namespace tle;
  using namespace tle::impl;
  NetRef n = netRef(net, Fn::flagcxDevNetSignalSigIncS);
  signalOnly(comm, teamKind, peer, coopKind, sigInc(signal), n.context,
             Fn::flagcxDevNetSignalSigIncS);
}
TLE_DEVICE_API void flagcxDevNetSignalSigAddS(const void *net, const void *comm,
                                              int32_t teamKind, int32_t peer,
                                              int32_t coopKind, uint32_t signal,
                                              uint64_t value) {
  TLE_ENTRY(flagcxDevNetSignalSigAddS);
  using namespace tle;
  using namespace tle::impl;
  NetRef n = netRef(net, Fn::flagcxDevNetSignalSigAddS);
  signalOnly(comm, teamKind, peer, coopKind, sigAdd(signal, value), n.context,
             Fn::flagcxDevNetSignalSigAddS);
}
TLE_DEVICE_API void flagcxDevNetSignalCtrIncS(const void *net, const void *comm,
                                              int32_t teamKind, int32_t peer,
                                              int32_t coopKind,
                                              uint32_t counter) {
  TLE_ENTRY(flagcxDevNetSignalCtrIncS);
  using namespace tle;
  using namespace tle::impl;
  NetRef n = netRef(net, Fn::flagcxDevNetSignalCtrIncS);
  signalOnly(comm, teamKind, peer, coopKind, ctrInc(counter), n.context,
             Fn::flagcxDevNetSignalCtrIncS);
}

namespace tle::impl {
/// tleTritonPut's and tleTritonPutValue's `signalOp` (abi.def): no signal,
/// or the dialect's signal kinds.
enum TritonSignalOp : int32_t {
  kTritonNoSignal = -1,
  kTritonSignalInc = 0,
  kTritonSignalAdd = 1
};
/// The remote action of a Triton put: signal `signal` of the peer by
/// `signalOp`; another op is a bad argument.
TLE_DEV_INLINE ActionArg tritonSignalAction(const void *comm, int32_t signalOp,
                                            int32_t signal, int64_t value,
                                            FnAt fn) {
  auto s = static_cast<uint32_t>(signal);
  if (signalOp == kTritonNoSignal)
    return ActionArg{};
  if (signalOp == kTritonSignalInc)
    return sigInc(s);
  if (TLE_UNLIKELY(signalOp != kTritonSignalAdd))
    failArgument(comm, s, fn, kArgSignalOp, signalOp, kTritonSignalAdd);
  return sigAdd(s, static_cast<uint64_t>(value));
}
} // namespace tle::impl

// The one-sided calls for Triton (abi.def): one entry point each, the
// variant chosen by the arguments; Triton's handles are int64.
TLE_DEVICE_API int32_t tleTritonPut(
    int64_t comm, int64_t dst, int64_t dstOffset, int64_t src,
    int64_t srcOffset, int64_t bytes, int32_t teamKind, int32_t peer,
    int32_t signalOp, int32_t signal, int64_t signalValue, int32_t counter,
    int32_t contextId, int32_t groupKind, int32_t order) {
  TLE_ENTRY(tleTritonPut);
  using namespace tle;
  using namespace tle::impl;
  const void *c = addressOf(comm);
  ActionArg remote =
      tritonSignalAction(c, signalOp, signal, signalValue, Fn::tleTritonPut);
  ActionArg local =
      counter == -1 ? ActionArg{} : ctrInc(static_cast<uint32_t>(counter));
  put(c, addressOf(dst), static_cast<uint64_t>(dstOffset), addressOf(src),
      static_cast<uint64_t>(srcOffset), static_cast<uint64_t>(bytes), teamKind,
      peer, static_cast<uint32_t>(contextId), groupKind, kScopeSystem, order,
      remote, local, Fn::tleTritonPut);
  return 0;
}
TLE_DEVICE_API int32_t tleTritonGet(int64_t comm, int64_t src,
                                    int64_t srcOffset, int64_t dst,
                                    int64_t dstOffset, int64_t bytes,
                                    int32_t teamKind, int32_t peer,
                                    int32_t contextId, int32_t groupKind,
                                    int32_t order) {
  TLE_ENTRY(tleTritonGet);
  using namespace tle;
  using namespace tle::impl;
  get(addressOf(comm), addressOf(src), static_cast<uint64_t>(srcOffset),
      addressOf(dst), static_cast<uint64_t>(dstOffset),
      static_cast<uint64_t>(bytes), teamKind, peer,
      static_cast<uint32_t>(contextId), groupKind, kScopeSystem, order,
      Fn::tleTritonGet);
  return 0;
}
TLE_DEVICE_API int32_t tleTritonPutValue(int64_t comm, int64_t dst,
                                         int64_t dstOffset, int64_t value,
                                         int32_t teamKind, int32_t peer,
                                         int32_t signalOp, int32_t signal,
                                         int64_t signalValue, int32_t contextId,
                                         int32_t groupKind, int32_t order) {
  TLE_ENTRY(tleTritonPutValue);
  using namespace tle;
  using namespace tle::impl;
  const void *c = addressOf(comm);
  putValue(c, addressOf(dst), static_cast<uint64_t>(dstOffset),
           static_cast<uint64_t>(value), teamKind, peer,
           static_cast<uint32_t>(contextId), groupKind, kScopeSystem, order,
           tritonSignalAction(c, signalOp, signal, signalValue,
                              Fn::tleTritonPutValue),
           Fn::tleTritonPutValue);
  return 0;
}
TLE_DEVICE_API int32_t tleTritonFlush(int64_t comm, int32_t contextId,
                                      int32_t groupKind, int32_t order) {
  TLE_ENTRY(tleTritonFlush);
  using namespace tle::impl;
  flush(addressOf(comm), static_cast<uint32_t>(contextId), groupKind, order,
        Fn::tleTritonFlush);
  return 0;
}
namespace tle::impl {
/// tleTritonWaitCounter and its `At` twin: the status-returning form, as
/// tleTritonSignalWait.
TLE_DEV_INLINE int32_t tritonWaitCounter(int64_t comm, int32_t counter,
                                         int64_t least, int32_t contextId,
                                         int32_t groupKind, int32_t order,
                                         FnAt fn) {
  const void *c = addressOf(comm);
  auto ctr = static_cast<uint32_t>(counter);
  auto context = static_cast<uint32_t>(contextId);
  checkWordArgs(c, ctr, true, context, 64, fn);
  return static_cast<int32_t>(waitCounter</*Status=*/true>(
      c, ctr, static_cast<uint64_t>(least), groupKind, order, fn, context));
}
/// tleTritonWaitSignalShadow and its `At` twin.
TLE_DEV_INLINE int32_t tritonWaitShadow(int64_t comm, int32_t signal,
                                        int32_t contextId, int32_t groupKind,
                                        int32_t order, FnAt fn) {
  const void *c = addressOf(comm);
  auto sig = static_cast<uint32_t>(signal);
  auto context = static_cast<uint32_t>(contextId);
  checkWordArgs(c, sig, false, context, 64, fn);
  return static_cast<int32_t>(
      waitShadow</*Status=*/true>(c, sig, groupKind, order, fn, context));
}
} // namespace tle::impl

TLE_DEVICE_API int32_t tleTritonWaitCounter(int64_t comm, int32_t counter,
                                            int64_t least, int32_t contextId,
                                            int32_t groupKind, int32_t order) {
  TLE_ENTRY(tleTritonWaitCounter);
  using namespace tle::impl;
  return tritonWaitCounter(comm, counter, least, contextId, groupKind, order,
                           Fn::tleTritonWaitCounter);
}
TLE_DEVICE_API int32_t tleTritonWaitCounterAt(int64_t comm, int32_t counter,
                                              int64_t least, int32_t contextId,
                                              int32_t groupKind, int32_t order,
                                              int32_t site) {
  TLE_ENTRY(tleTritonWaitCounter);
  using namespace tle::impl;
  return tritonWaitCounter(
      comm, counter, least, contextId, groupKind, order,
      FnAt(Fn::tleTritonWaitCounter, static_cast<uint32_t>(site)));
}
TLE_DEVICE_API int64_t tleTritonReadCounter(int64_t comm, int32_t counter,
                                            int32_t contextId, int32_t order) {
  TLE_ENTRY(tleTritonReadCounter);
  using namespace tle::impl;
  const void *c = addressOf(comm);
  auto ctr = static_cast<uint32_t>(counter);
  checkWordArgs(c, ctr, true, static_cast<uint32_t>(contextId), 64,
                Fn::tleTritonReadCounter);
  return static_cast<int64_t>(readCounter(c, ctr, order,
                                          Fn::tleTritonReadCounter,
                                          static_cast<uint32_t>(contextId)));
}
TLE_DEVICE_API int32_t tleTritonResetCounter(int64_t comm, int32_t counter,
                                             int32_t contextId) {
  TLE_ENTRY(tleTritonResetCounter);
  using namespace tle::impl;
  auto ctr = static_cast<uint32_t>(counter);
  const tle::DevComm *dc = checkWordArgs(addressOf(comm), ctr, true,
                                         static_cast<uint32_t>(contextId), 64,
                                         Fn::tleTritonResetCounter);
  resetCounter(dc, wordIndex(dc, true, static_cast<uint32_t>(contextId), ctr));
  return 0;
}
TLE_DEVICE_API int32_t tleTritonIncreaseSignalShadow(int64_t comm,
                                                     int32_t signal,
                                                     int64_t delta,
                                                     int32_t contextId) {
  TLE_ENTRY(tleTritonIncreaseSignalShadow);
  using namespace tle::impl;
  auto sig = static_cast<uint32_t>(signal);
  const tle::DevComm *dc = checkWordArgs(addressOf(comm), sig, false,
                                         static_cast<uint32_t>(contextId), 64,
                                         Fn::tleTritonIncreaseSignalShadow);
  fetchAddRelaxed(
      loadConst(&dc->shadows) +
          wordIndex(dc, false, static_cast<uint32_t>(contextId), sig),
      static_cast<uint64_t>(delta));
  return 0;
}
TLE_DEVICE_API int32_t tleTritonWaitSignalShadow(int64_t comm, int32_t signal,
                                                 int32_t contextId,
                                                 int32_t groupKind,
                                                 int32_t order) {
  TLE_ENTRY(tleTritonWaitSignalShadow);
  using namespace tle::impl;
  return tritonWaitShadow(comm, signal, contextId, groupKind, order,
                          Fn::tleTritonWaitSignalShadow);
}
TLE_DEVICE_API int32_t tleTritonWaitSignalShadowAt(int64_t comm, int32_t signal,
                                                   int32_t contextId,
                                                   int32_t groupKind,
                                                   int32_t order,
                                                   int32_t site) {
  TLE_ENTRY(tleTritonWaitSignalShadow);
  using namespace tle::impl;
  return tritonWaitShadow(
      comm, signal, contextId, groupKind, order,
      FnAt(Fn::tleTritonWaitSignalShadow, static_cast<uint32_t>(site)));
}

#endif // TLE_IMPL_ENTRYONESIDED_H
