//===- DevComm.h - Layout of the device communicator ------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The device communicator and the symmetric-buffer handle as the device
// library reads them. The host runtime builds these structs in device memory
// (GPU) or in plain memory (CPU emulator); kernels receive a pointer to them.
// This header is shared by the host runtime and all three builds of the
// device library, so it holds only plain data: no constructors, no virtuals,
// fixed-width fields, the same layout for nvcc, clang and the host compiler.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_DETAIL_DEVCOMM_H
#define TLE_DETAIL_DEVCOMM_H

#include "tle/abi.h"

#include <stddef.h>
#include <stdint.h>

namespace tle {

/// "TLEC": the first word of every device communicator.
constexpr uint32_t kDevCommMagic = 0x544c4543u;
/// "TLEM": the first word of every symmetric-buffer handle.
constexpr uint32_t kSymMemMagic = 0x544c454du;
/// Bumped whenever the layout below changes. 6: signal words
/// (DevComm::nSignals, signals, signalPeers) and the signal fields of
/// ErrorRecord. 7: DevComm::trace, the trace ring, in the old pad. 8: the
/// fault word (ErrorRecord::abort, was pad0) and DevComm::flags. 9: nodes
/// (DevComm::node, nNodes, netKind, nNetWords, net). 10: one-sided
/// transfers (DevComm::nCounters, nContexts, counters, counterPeers'
/// words after the signals, shadows, nets; SymMem::worldPtrs). 11: the call
/// site of a failure (ErrorRecord::site, a new word at the end). 12:
/// network contexts (DevComm::nSignalWords, was reserved; the signal,
/// counter and shadow arrays hold nContexts sets; ErrorRecord::context,
/// was reserved) and the buffer's NCCL window (SymMem::netWindow, at the
/// end).
constexpr uint32_t kDevCommVersion = 12;
/// "TLEN": the first word of every net handle (DevNet).
constexpr uint32_t kDevNetMagic = 0x544c454eu;
/// Network contexts a communicator may serve (FlagCX's contextId, tle.h's
/// TLE_MAX_CONTEXTS). As in FlagCX, each context has its own nSignals
/// signal words, counters and shadows: signal `s` of context `c` is word
/// c * nSignals + s (DevComm::nSignalWords words in all). Barriers take a
/// context and use the same words in every one: the context names the
/// network channel that carries them, and TLE has one.
constexpr uint32_t kMaxContexts = 8;
/// Largest communicator the layout serves: an NVLink domain of 72 GPUs
/// (GB200 NVL72) fits, with room. DevComm's route table, SymMem's pointers
/// and PeerMask are sized for it.
constexpr int kMaxRanks = 128;
static_assert(kMaxRanks % 64 == 0, "PeerMask holds whole 64-bit words");
static_assert((kMaxRanks & (kMaxRanks - 1)) == 0,
              "route indices are bounded by a mask (DevComm::routes)");
/// Lanes of a warp: the barrier's workers are lanes of the group's first
/// warp, and each lane's first route is loaded with the communicator.
constexpr int kRouteLanes = 32;

/// A set of ranks, bit p % 64 of words[p / 64] for rank p.
struct PeerMask {
  uint64_t words[kMaxRanks / 64];
};
inline bool samePeers(const PeerMask &a, const PeerMask &b) {
  for (int w = 0; w < kMaxRanks / 64; ++w)
    if (a.words[w] != b.words[w])
      return false;
  return true;
}

/// Where the first failure of a launch is recorded. It lives in memory the
/// host can read after a failed launch (host-mapped pinned memory on GPUs),
/// and the first writer claims it by a compare-and-swap on `state`.
///
/// `abort` is the communicator's fault word, which outlives the record
/// (tleCommGetError clears the record, never this word): 0 while the
/// communicator is usable, else the DevErrorCode every wait gives up with.
/// The host stores kDevErrAborted (tleCommAbort) or kDevErrPeerFailure (the
/// watchdog) while kernels run; a wait that fails under
/// kDevCommOnErrorReturn stores its own code. Waits read it only every
/// kPollsPerAbortCheck failed polls (impl/BarrierFlags.h).
struct ErrorRecord {
  uint32_t state;     ///< 0 free, 1 being written, 2 complete
  uint32_t code;      ///< a DevErrorCode
  int32_t rank;       ///< rank that detected the failure
  uint32_t slot;      ///< barrier slot (index as given by the caller)
  uint32_t epoch;     ///< epoch the wait was waiting for
  uint32_t abort;     ///< the fault word (above); 0: usable
  int32_t block;      ///< linear block id of the reporting thread
  int32_t thread;     ///< linear thread id in its block
  uint32_t nBarriers; ///< slots in the communicator (for range errors)
  uint32_t aux;       ///< kDevErrBadComm: the communicator's size field;
                      ///< a wait's failure: kRecordWorldRanks or 0;
                      ///< a bad peer: the TeamKind it is numbered in;
                      ///< kDevErrNotServed: a NotServedWhat
  uint64_t elapsedNs; ///< time spent waiting before the timeout fired
  uint32_t function;  ///< the entry point that failed (an abi::Fn)
  uint32_t argument;  ///< kDevErrBadArgument: which one (a BadArgument)
  uint64_t value;     ///< kDevErrBadArgument: the value passed
  uint64_t limit;     ///< kDevErrBadArgument: the bound it broke (ranks,
                      ///< buffer bytes), 0 if none;
                      ///< kDevErrSignalOutOfRange: nSignals;
                      ///< kDevErrIndexOutOfRange: the blocks (programs)
                      ///< of the failing launch's grid
  PeerMask missing;   ///< peers that had not arrived; a signal deadlock:
                      ///< the ranks that could still have signalled
  uint64_t seen;      ///< kDevErrSignalTimeout/SignalDeadlock: the word's
                      ///< value when the wait gave up (`slot` holds the
                      ///< signal index)
  uint64_t wanted;    ///< and the value it waited for (>=)
  uint32_t site;      ///< the failing call's site id (docs/design.md,
                      ///< "Call sites"); 0: unknown (FlagCX's entry points)
  uint32_t context;   ///< a signal's or counter's network context (`slot`
                      ///< is its index in the context)
};

/// DevComm::flags: a failed wait records and returns instead of ending the
/// launch (tleConfig_t::onError = TLE_ON_ERROR_RETURN).
constexpr uint32_t kDevCommOnErrorReturn = 1u;

/// ErrorRecord::aux of a timeout or deadlock whose `missing` names world
/// ranks, not ranks of the node: a net wait's (INTER, WORLD's inter half),
/// and the emulator's deadlock records on several nodes.
constexpr uint32_t kRecordWorldRanks = 1;

/// What a kDevErrNotServed record refuses (ErrorRecord::aux; `value` holds
/// the world rank of the transfer's peer).
enum NotServedWhat : uint32_t {
  /// A get past this node over NCCL GIN: NCCL 2.28's GIN has no get.
  kNotServedGet = 0,
  /// An action GIN has no form of: a remote counter (_RCtrInc, on any peer
  /// of a GIN communicator, whose counters are GIN's) or a local signal
  /// after a put past this node (_LSigInc, _LSigAdd).
  kNotServedAction = 1,
  /// A buffer without an NCCL window (SymMem::netWindow null): NCCL could
  /// not register its memory (the log said why at tleMemAlloc).
  kNotServedNoWindow = 2,
};

/// How words reach ranks on other nodes (DevComm::netKind).
enum NetKind : uint32_t {
  kNetNone = 0,    ///< one node: INTER is this rank alone, no network
  kNetEmu = 1,     ///< the CPU emulator's simulated network
  kNetNcclGin = 2, ///< NCCL's GPU-initiated networking (GIN signals)
};

/// Barrier state per slot index, by team (docs/design.md, "Teams"): each
/// team has its own nBarriers slots, so slot i of one team never shares a
/// word with slot i of another. The inbox holds kInboxSets slots per index
/// (INTRA's at s, WORLD's intra half at nBarriers + s) and DevComm::epochs
/// kEpochSets words per index: INTRA's at s, WORLD's intra half at
/// nBarriers + s, INTER's at 2 * nBarriers + s, WORLD's inter half at
/// 3 * nBarriers + s. Allocated on every communicator, one node or many, so
/// that a kernel written for INTER or WORLD runs unchanged on one node.
constexpr uint32_t kInboxSets = 2;
constexpr uint32_t kEpochSets = 4;

/// A barrier event's slot as the device library reports it to traces and
/// to the emulator's slot checks (impl/Barrier.h): INTRA's slot s as s,
/// WORLD's as nBarriers + s, INTER's as 2 * nBarriers + s, so that one
/// number names a team's slot. Host tools split it back here.
struct TeamSlot {
  int team;      ///< a TeamKind
  uint32_t slot; ///< the slot within the team
};
inline TeamSlot splitTeamSlot(uint32_t reported, uint32_t nBarriers) {
  if (nBarriers == 0 || reported < nBarriers)
    return {kTeamIntra, reported};
  if (reported < 2 * nBarriers)
    return {kTeamWorld, reported - nBarriers};
  return {kTeamInter, reported - 2 * nBarriers};
}

/// kNetEmu's DevComm::net: every world rank's net words, so that the host
/// build of the device library reaches any of them by world rank and the
/// emulator delivers an add to it (tleEmuNetAdd). Net word w < nSignalWords of
/// world rank p is signals[p][w] (the rank's signal words); the others are
/// barrier[p][w - nSignalWords]. Host memory, shared by every rank of the
/// world.
struct EmuNet {
  uint32_t worldSize;           ///< nNodes * size
  uint32_t nSignalWords;        ///< DevComm::nSignalWords
  uint64_t *signals[kMaxRanks]; ///< [worldSize]: DevComm::signals of each
  uint64_t *barrier[kMaxRanks]; ///< [worldSize]: 2 * nBarriers words each
};

/// FlagCX's flagcxDevNet as TLE lays it out: the handle of network context
/// `context` of communicator `comm`. flagcxDevNetGetFromCommS returns the
/// one inside the DevComm (DevComm::nets, filled by the host with the
/// DevComm's own address); flagcxDevNetInitC copies it into caller memory.
/// 16 bytes: no larger than FlagCX's own, so memory sized for FlagCX's
/// holds it.
struct DevNet {
  uint32_t magic;   ///< kDevNetMagic
  uint32_t context; ///< 0..nContexts-1
  const void *comm; ///< the DevComm (device address)
};

/// FlagCX's flagcxCoopAny as TLE lays it out (the C cooperative-group
/// functions): the coop kind and its parameters (TILE_SPAN: first warp,
/// warps, named barrier id; LANES: the lane mask in param0). 16 bytes,
/// within FlagCX's 24.
struct CoopAny {
  int32_t kind;
  uint32_t param0, param1, param2;
};

/// FlagCX's flagcxTeam: {nRanks, rank, stride}, the same layout.
struct Team {
  int32_t nRanks;
  int32_t rank;
  int32_t stride;
};

/// "TLES": the last word of a barrier session.
constexpr uint32_t kSessionMagic = 0x544c4553u;
/// A FlagCX barrier session as TLE lays it out (flagcx*BarrierSessionInit
/// fills it in caller memory): the communicator, the team, the group, the
/// slot. 24 bytes, within FlagCX's session (which holds a 24-byte
/// flagcxCoopAny besides).
struct FlagcxSession {
  const void *comm;
  int32_t team;     ///< a TeamKind
  int32_t coopKind; ///< a CoopKind (FlagCX's)
  uint32_t index;   ///< the team's slot
  uint32_t magic;   ///< kSessionMagic
};

/// Where entry j of a rank's round signals and polls (see DevComm).
struct Route {
  uint32_t *out;      ///< our word for slot 0 in entry j's inbox
  const uint32_t *in; ///< entry j's word for slot 0 in our inbox
};

/// One barrier event in a trace ring: what the group's rank 0 records when
/// its arrive, wait or sync begins or ends (tle/impl/Trace.h).
struct TraceEvent {
  uint64_t ns;     ///< %globaltimer (the emulator: its clock), nanoseconds
  uint64_t seq;    ///< index of the event in the ring's history, plus 1;
                   ///< written last, so a reader can skip torn records
  uint32_t block;  ///< linear block id
  uint32_t thread; ///< linear thread id in the block
  uint32_t slot;   ///< barrier slot
  uint8_t kind;    ///< a BarrierKind
  uint8_t coop;    ///< a CoopKind (kCoopGrid for the grid barrier)
  uint8_t order;   ///< a MemoryOrder
  uint8_t phase;   ///< a TracePhase
};

/// A ring of barrier events in memory the host can read after a launch,
/// even a failed one (host-mapped on GPUs: the event stores are posted
/// writes). Writers take the next index with an atomic add on `next`, which
/// lives in device memory (an atomic on host memory would be a round trip
/// per event), and write event `index % capacity`, so the ring keeps the
/// latest `capacity` events. The host orders them by `seq` and needs no
/// counter. `capacity` is a power of two.
struct TraceRing {
  uint64_t *next;    ///< events ever recorded (device memory)
  uint64_t capacity; ///< events the ring holds
  TraceEvent events[1];
};

/// The device communicator of one rank.
///
/// Barrier state. For slot s, rank r's inbox holds one 32-bit flag per peer
/// at inbox_r[s * inboxStride + q], written only by rank q: q adds 1 per
/// arrive (a release reduction; the grid barrier's last CTA stores), so the
/// word is the epoch q reached. epochs[s] is the epoch this rank completed on
/// slot s; it lives in this rank's device memory, so barriers carry across
/// launches and graph replays with no host involvement. Epoch comparisons
/// are wrap-safe: (int32_t)(a - b) >= 0.
///
/// The inboxes are reached through routes, pre-rotated by the host
/// (fillRoutes): entry j is rank (rank + 1 + j) % size, so entries
/// 0..size-2 are the peers and entry size-1 is this rank. routes[j].out is
/// our word for slot 0 in that rank's inbox, routes[j].in that rank's word
/// for slot 0 in ours; slot s is `+ s * inboxStride`. A lane's route then
/// depends only on loads it can issue at once, not on a load of `rank`
/// followed by a load of the peer's inbox address. The table always holds
/// kMaxRanks routes (entries past size-1 repeat entry 0 and are never
/// used), and the device library indexes it through a mask (impl::routeIndex):
/// lane j loads routes[j] before it knows `size`, and compilers speculate
/// these side-effect-free loads, hoisting one out of a loop of barriers to
/// threads that never use it (nvcc does, for group ranks past the first
/// warp) or loading both sides of a bound check. With a mask, every such
/// load still reads inside the struct, whatever the compiler moves.
///
/// Grid barrier state (group `grid`): gridCount[s] counts the CTAs of this
/// rank that arrived in the current round of slot s.
///
/// Signal words (tle.signal): every rank owns nSignals 64-bit words per
/// network context (nSignalWords in all; kMaxContexts says how), zero
/// at creation, which any rank (itself included) adds to with a release and
/// only their owner waits on, reads and resets. signalPeers[p] is rank p's
/// words as mapped here (kMaxRanks entries, null past size-1, indexed
/// through impl::routeIndex like the routes); signals is ours
/// (signalPeers[rank]), kept apart so that a wait loads its address without
/// loading `rank` first. They follow the barrier's fields, whose offsets
/// the barrier's loads rely on.
struct DevComm {
  uint32_t magic;       ///< kDevCommMagic
  uint32_t version;     ///< kDevCommVersion
  int32_t rank;         ///< intra-node rank, 0..size-1
  int32_t size;         ///< ranks in the node, 1..kMaxRanks
  uint32_t nBarriers;   ///< number of barrier slots
  uint32_t inboxStride; ///< uint32 words between consecutive slots (>= size)
  uint64_t timeoutNs;   ///< wait deadline; 0 waits forever
  uint32_t *epochs;     ///< [kEpochSets * nBarriers], this rank's memory
  uint32_t *gridCount;  ///< [nBarriers], this rank's memory
  ErrorRecord *error;   ///< host-readable
  /// Where the barrier records its events (tleCommTraceStart), or null: no
  /// trace, which costs the barrier one more load among the communicator's
  /// (hoisted with them out of a loop) and a branch on it.
  TraceRing *trace;
  uint32_t flags; ///< kDevCommOnErrorReturn, read on failure only
  uint32_t pad;
  Route routes[kMaxRanks];          ///< see above
  uint32_t nSignals;                ///< signal words per rank and context
  uint32_t nSignalWords;            ///< nContexts * nSignals: every context's
  uint64_t *signals;                ///< [nSignalWords], this rank's words
  uint64_t *signalPeers[kMaxRanks]; ///< signalPeers[p]: rank p's words
  /// Nodes (docs/design.md, "Teams"). The world is nNodes nodes of `size`
  /// ranks each, and this rank is world rank node * size + rank. Net words
  /// are what crosses nodes: per rank, the nSignalWords signal words, then one
  /// word per slot of the INTER team, then one per slot of WORLD's inter
  /// half (nNetWords = nSignalWords + 2 * nBarriers); `net` is the transport's
  /// state, which netKind names. Placed last: the barrier's and the
  /// signals' loads rely on the offsets above.
  int32_t node;       ///< this rank's node, 0..nNodes-1
  int32_t nNodes;     ///< nodes in the world, >= 1
  uint32_t netKind;   ///< a NetKind
  uint32_t nNetWords; ///< net words per rank (above); 0 with kNetNone
  const void *net;    ///< kNetNone: null; kNetEmu: an EmuNet
  /// One-sided transfers (docs/design.md, "One-sided transfers"). Every
  /// rank owns nCounters 64-bit counters per context, zero at creation, in
  /// the symmetric allocation of its signal words (right after its
  /// nSignalWords words, so counterPeer(p) is signalPeers[p] +
  /// nSignalWords; counter k of context c is counters[c * nCounters + k]):
  /// a put's local counter (_LCtrInc) and the deprecated remote counter
  /// (_RCtrInc) add to them. shadows are this rank's nSignalWords signal
  /// shadows (local memory), one per signal word. nets[c] is network
  /// context c's handle (DevNet); nContexts of them.
  uint32_t nCounters; ///< counter words per rank and context
  uint32_t nContexts; ///< network contexts served, 1..kMaxContexts
  uint64_t *counters; ///< [nContexts * nCounters], this rank's
  uint64_t *shadows;  ///< [nSignalWords], this rank's
  DevNet nets[kMaxContexts];
};

/// Fills the routes of `d` (rank and size set) from `inbox`, where inbox[p]
/// is rank p's inbox as mapped here, for size ranks.
inline void fillRoutes(DevComm &d, uint32_t *const *inbox) {
  for (int j = 0; j < kMaxRanks; ++j) {
    int q = (d.rank + 1 + (j < d.size ? j : 0)) % d.size;
    d.routes[j].out = inbox[q] + d.rank;
    d.routes[j].in = inbox[d.rank] + q;
  }
}

/// Rank q's inbox as mapped here, read back from the routes (for host code
/// and tests; the device library only follows routes).
inline uint32_t *inboxOf(const DevComm &d, int q) {
  int j = (q - d.rank - 1 + 2 * d.size) % d.size;
  return d.routes[j].out - d.rank;
}

/// A symmetric buffer: `bytes` on every rank, each rank's copy mapped here.
/// `ptrs` holds kMaxRanks pointers (null past size-1), indexed through the
/// mask of impl::routeIndex for the reason given at DevComm::routes: a compiler
/// may load ptrs[peer] before the check that rejects the peer.
struct SymMem {
  uint32_t magic; ///< kSymMemMagic
  int32_t rank;
  int32_t size;
  uint32_t pad;
  uint64_t bytes;
  ErrorRecord *error;    ///< the communicator's record (may be null): where
                         ///< the pointer functions report a bad peer/offset
  void *ptrs[kMaxRanks]; ///< ptrs[p]: rank p's copy, as seen by this rank
  /// On the emulator's nodes (kNetEmu), every world rank's copy, which the
  /// simulated network reads and writes (a put or get past this node);
  /// null otherwise. nWorld entries.
  void *const *worldPtrs;
  uint32_t nWorld; ///< entries of worldPtrs (nNodes * size), else 0
  uint32_t pad1;
  /// On an NCCL GIN communicator (kNetNcclGin): the buffer's NCCL window
  /// (an ncclWindow_t, NCCL's device-readable handle that
  /// ncclCommWindowRegister returned for this rank), which GIN's puts name
  /// their source and destination by; null elsewhere, and where NCCL could
  /// not register the memory (a GIN transfer on it is then refused with a
  /// located report, kNotServedNoWindow).
  const void *netWindow;
};

} // namespace tle

#endif // TLE_DETAIL_DEVCOMM_H
