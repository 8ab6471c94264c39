//===- DevError.cpp - Device error records in words -----------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The wording of every device failure. A record names the entry point that
// failed (an abi::Fn); the message names it with the op or call the user
// wrote ("tle.local_pointer (flagcxGetLocalPointerS)"), so a report reads
// the same whether the kernel came from MLIR, Triton or CUDA C++.
//
//===----------------------------------------------------------------------===//

#include "diag/DevError.h"

#include "tle/abi.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <unordered_map>

namespace tle {

static_assert(TLE_MAX_RANKS == kMaxRanks,
              "tle.h's TLE_MAX_RANKS is the device layout's kMaxRanks");
static_assert(TLE_MAX_CONTEXTS == kMaxContexts,
              "tle.h's TLE_MAX_CONTEXTS is the device layout's kMaxContexts");

std::string peerList(const PeerMask &mask) {
  std::string s;
  for (int p = 0; p < kMaxRanks; ++p)
    if (mask.words[p / 64] >> (p % 64) & 1)
      s += (s.empty() ? "" : ",") + std::to_string(p);
  return s.empty() ? "none" : s;
}

void copyPeers(const PeerMask &mask, tleErrorInfo &out) {
  for (int w = 0; w < kMaxRanks / 64; ++w)
    out.missingPeers[w] = mask.words[w];
  out.missingMask = static_cast<uint32_t>(mask.words[0]);
}

// abi.def's Result column, which the device library returns to kernels,
// is the tleResult_t of each code; this is where that is checked.
static_assert(kDevErrNone == 0 && tleSuccess == 0);
#define TLE_DEV_ERROR_RESULT(Name, Result)                                     \
  static_assert(resultOf(kDevErr##Name) == Result,                             \
                "abi.def's Result of " #Name " is not " #Result);
TLE_DEV_ERROR_RESULT(Timeout, tleTimeout)
TLE_DEV_ERROR_RESULT(IndexOutOfRange, tleIndexOutOfRange)
TLE_DEV_ERROR_RESULT(BadComm, tleInvalidComm)
TLE_DEV_ERROR_RESULT(BadArgument, tleInvalidArgument)
TLE_DEV_ERROR_RESULT(Deadlock, tleDeadlock)
TLE_DEV_ERROR_RESULT(SignalOutOfRange, tleIndexOutOfRange)
TLE_DEV_ERROR_RESULT(SignalTimeout, tleTimeout)
TLE_DEV_ERROR_RESULT(SignalDeadlock, tleDeadlock)
TLE_DEV_ERROR_RESULT(Aborted, tleAborted)
TLE_DEV_ERROR_RESULT(PeerFailure, tlePeerFailure)
#undef TLE_DEV_ERROR_RESULT

tleResult_t resultOfDevError(uint32_t code) {
  if (code == kDevErrNone)
    return tleInternalError; // a complete record always names a failure
  return static_cast<tleResult_t>(resultOf(code));
}

void fitMessage(const char *text, char *out, size_t size) {
  size_t len = std::strlen(text);
  if (len < size) {
    std::memcpy(out, text, len + 1);
    return;
  }
  // Cut before a space or a comma (rank lists are "0,1,2"), so that the
  // last word or number kept is whole.
  auto boundary = [&](size_t i) { return text[i] == ' ' || text[i] == ','; };
  size_t cut = size - 4;
  while (cut > size / 2 && !boundary(cut))
    --cut;
  if (!boundary(cut))
    cut = size - 4;
  while (cut > 0 && (text[cut - 1] == ' ' || text[cut - 1] == ',' ||
                     text[cut - 1] == ';' || text[cut - 1] == ':'))
    --cut;
  std::memcpy(out, text, cut);
  std::memcpy(out + cut, "...", 4);
}

std::string callName(uint32_t fn) {
  if (fn >= static_cast<uint32_t>(abi::Fn::NumFunctions))
    return "";
  const abi::Function &f = abi::kFunctions[fn];
  return std::string(f.what) + " (" + f.name + ")";
}

bool isSignalWait(uint32_t fn) {
  return fn < static_cast<uint32_t>(abi::Fn::NumFunctions) &&
         (std::string(abi::kFunctions[fn].what) == "tle.signal_wait" ||
          std::string(abi::kFunctions[fn].what) == "tle.counter_wait" ||
          std::string(abi::kFunctions[fn].what) == "tle.shadow_wait");
}

namespace {

/// The sentence of a kDevErrBadArgument record, after "<call>: ".
/// "signal S", with " of context C" past context 0 (each network context
/// has its own signal words: tle/detail/DevComm.h, kMaxContexts).
std::string signalName(const ErrorRecord &e) {
  std::string out = "signal " + std::to_string(e.slot);
  if (e.context)
    out += " of context " + std::to_string(e.context);
  return out;
}

std::string badArgument(const ErrorRecord &e) {
  auto value = static_cast<long long>(static_cast<int64_t>(e.value));
  auto limit = static_cast<unsigned long long>(e.limit);
  char buf[192];
  switch (e.argument) {
  case kArgOffset:
    snprintf(buf, sizeof(buf),
             "offset %llu is past the end of a %llu-byte buffer",
             static_cast<unsigned long long>(e.value), limit);
    break;
  case kArgPeer:
    // `aux` is the team a signal's peer is numbered in (0, INTRA, for
    // every other call).
    if (e.aux == kTeamInter)
      snprintf(buf, sizeof(buf),
               "peer %lld is out of range (team INTER has %llu members, one "
               "per node)",
               value, limit);
    else if (e.aux == kTeamWorld)
      snprintf(buf, sizeof(buf),
               "peer %lld is out of range (team WORLD has %llu ranks)", value,
               limit);
    else
      snprintf(buf, sizeof(buf),
               "peer %lld is out of range (the communicator has %llu ranks)",
               value, limit);
    break;
  case kArgTeamKind:
    snprintf(buf, sizeof(buf),
             "team kind %lld is not a team (valid: %d intra, %d inter, %d "
             "world)",
             value, kTeamIntra, kTeamInter, kTeamWorld);
    break;
  case kArgContextId:
    snprintf(buf, sizeof(buf),
             "context id %lld is out of range (the communicator has %llu "
             "network contexts: tleConfig_t::nContexts)",
             value, limit);
    break;
  case kArgBits:
    snprintf(buf, sizeof(buf),
             "a %lld-bit signal is not supported (TLE's signal words are "
             "64-bit: pass bits = 64)",
             value);
    break;
  case kArgCounter:
    snprintf(buf, sizeof(buf),
             "counter %lld is out of range (the communicator has %llu "
             "counters)",
             value, limit);
    break;
  case kArgNet:
    snprintf(buf, sizeof(buf),
             "%#llx is not a net handle (flagcxDevNetGetFromCommS or "
             "flagcxDevNetInitC gives one)",
             static_cast<unsigned long long>(e.value));
    break;
  case kArgOrder:
    // A valid order refused: release on a call that only observes.
    if (e.value <= e.limit) {
      snprintf(buf, sizeof(buf),
               "memory order %lld (release) cannot be used here: a signal "
               "wait or read only observes (use relaxed, acquire, acq_rel "
               "or seq_cst)",
               value);
      break;
    }
    [[fallthrough]];
  case kArgCoopKind:
  case kArgScope:
  case kArgBarrierKind:
  case kArgAccess:
  case kArgFence:
  case kArgSignalOp:
    snprintf(buf, sizeof(buf), "unknown %s %lld (valid: 0..%llu)",
             abi::describe(static_cast<BadArgument>(e.argument)), value, limit);
    break;
  default:
    snprintf(buf, sizeof(buf), "bad argument %u with value %lld", e.argument,
             value);
    break;
  }
  return buf;
}

} // namespace

void describeErrorRecord(const ErrorRecord &e, tleErrorInfo &out,
                         RecordNode node) {
  out = {};
  out.result = resultOfDevError(e.code);
  out.rank = e.rank;
  out.slot = e.slot;
  out.epoch = e.epoch;
  PeerMask peers = e.missing;
  char where[96];
  int p = node.ranksPerNode;
  if (p > 0 && e.code != kDevErrPeerFailure) {
    // Several nodes: the record names ranks of its node (a net wait's
    // missing ranks are already the world's); report world ranks.
    int base = node.node * p;
    out.rank = base + e.rank;
    if (e.code == kDevErrBadComm || e.aux != kRecordWorldRanks) {
      peers = {};
      for (int q = 0; q + base < kMaxRanks; ++q)
        if (e.missing.words[q / 64] >> (q % 64) & 1)
          peers.words[(q + base) / 64] |= uint64_t(1) << ((q + base) % 64);
    }
    snprintf(where, sizeof(where),
             "rank %d (node %d, local %d) block %d thread %d", out.rank,
             node.node, e.rank, e.block, e.thread);
  } else {
    snprintf(where, sizeof(where), "rank %d block %d thread %d", e.rank,
             e.block, e.thread);
  }
  copyPeers(peers, out);
  out.block = e.block;
  out.thread = e.thread;
  out.nBarriers = e.nBarriers;
  out.elapsedNs = e.elapsedNs;
  std::string call = callName(e.function);
  // "<where>: <call>: <what happened>"; the call is left out when the
  // record names none (the emulator's deadlock reports).
  std::string at =
      std::string(where) + ": " + (call.empty() ? "" : call + ": ");
  std::string missing = peerList(peers);
  if (p > 0) {
    missing.clear();
    for (int q = 0; q < kMaxRanks; ++q)
      if (peers.words[q / 64] >> (q % 64) & 1)
        missing += (missing.empty() ? "" : ", ") + std::string("rank ") +
                   std::to_string(q) + " (node " + std::to_string(q / p) +
                   ", local " + std::to_string(q % p) + ")";
    if (missing.empty())
      missing = "none";
  }
  // Formatted at full length first, then fitted to the record's 256 bytes
  // at a word boundary with an ellipsis (a report cut mid-word reads as a
  // different word).
  char full[1024];
  char *m = full;
  size_t n = sizeof(full);
  switch (e.code) {
  case kDevErrTimeout:
    snprintf(m, n,
             "%sbarrier wait timed out after %llu ms on slot %u epoch %u; "
             "missing peers: %s",
             at.c_str(), static_cast<unsigned long long>(e.elapsedNs / 1000000),
             e.slot, e.epoch, missing.c_str());
    break;
  case kDevErrIndexOutOfRange:
    // The slot a barrier without an index uses is its program id, which the
    // user never wrote: a slot below the grid's size (the record's limit)
    // may be one, so say the number of slots that grid needs.
    if (e.slot < e.limit)
      snprintf(m, n,
               "%sbarrier slot %u out of range (nBarriers %u): the default "
               "slot is the program id; this grid has %llu programs: pass "
               "n_barriers=%llu (or more) to the communicator, or an index "
               "< %u",
               at.c_str(), e.slot, e.nBarriers,
               static_cast<unsigned long long>(e.limit),
               static_cast<unsigned long long>(e.limit), e.nBarriers);
    else
      snprintf(m, n,
               "%sbarrier slot %u out of range (nBarriers %u): create the "
               "communicator with nBarriers (n_barriers) > %u, or pass an "
               "index < %u",
               at.c_str(), e.slot, e.nBarriers, e.slot, e.nBarriers);
    break;
  case kDevErrBadComm:
    snprintf(m, n,
             "%sinvalid communicator (size field %u; a freed, overwritten or "
             "foreign comm pointer)",
             at.c_str(), e.aux);
    break;
  case kDevErrBadArgument:
    snprintf(m, n, "%s%s", at.c_str(), badArgument(e).c_str());
    break;
  case kDevErrDeadlock:
    snprintf(m, n,
             "%s: deadlock in a barrier wait on slot %u epoch %u; missing "
             "peers: %s",
             where, e.slot, e.epoch, missing.c_str());
    break;
  case kDevErrSignalOutOfRange:
    snprintf(m, n, "%s%s out of range (nSignals %llu)", at.c_str(),
             signalName(e).c_str(), static_cast<unsigned long long>(e.limit));
    break;
  case kDevErrSignalTimeout:
    snprintf(m, n,
             "%ssignal wait timed out after %llu ms on %s: it holds "
             "%llu, waiting for >= %llu",
             at.c_str(), static_cast<unsigned long long>(e.elapsedNs / 1000000),
             signalName(e).c_str(), static_cast<unsigned long long>(e.seen),
             static_cast<unsigned long long>(e.wanted));
    break;
  case kDevErrSignalDeadlock:
    snprintf(m, n,
             "%s: deadlock in a signal wait on %s: it holds %llu, "
             "waiting for >= %llu; ranks that could still signal it: %s",
             where, signalName(e).c_str(),
             static_cast<unsigned long long>(e.seen),
             static_cast<unsigned long long>(e.wanted), missing.c_str());
    break;
  case kDevErrAborted:
    if (isSignalWait(e.function)) {
      snprintf(m, n,
               "%sthe communicator was aborted (tleCommAbort) while waiting "
               "on %s: it holds %llu, waiting for >= %llu",
               at.c_str(), signalName(e).c_str(),
               static_cast<unsigned long long>(e.seen),
               static_cast<unsigned long long>(e.wanted));
      break;
    }
    snprintf(m, n,
             "%sthe communicator was aborted (tleCommAbort) while waiting on "
             "slot %u epoch %u; missing peers: %s",
             at.c_str(), e.slot, e.epoch, missing.c_str());
    break;
  case kDevErrPeerFailure:
    // Written by the host's watchdog: `rank` is the rank that noticed, the
    // dead ranks are the missing ones.
    snprintf(m, n,
             "rank %d: peer process of rank(s) %s died (its bootstrap "
             "connection closed without a goodbye); every wait on the "
             "communicator gave up",
             e.rank, missing.c_str());
    break;
  case kDevErrNotServed: {
    // ErrorRecord::aux says what (NotServedWhat, DevComm.h).
    const char *why =
        e.aux == kNotServedGet
            ? "a get past this node: NCCL 2.28's GIN has no get (put the "
              "data from its owner instead)"
        : e.aux == kNotServedAction
            ? "an action GIN has no form of: a remote counter (GIN's "
              "counters are local), or a local signal after a put past "
              "this node (use a local counter)"
        : e.aux == kNotServedNoWindow
            ? "a buffer NCCL did not register as a window (tleMemAlloc "
              "logged why: NCCL's windows take cuMem memory, "
              "tleAllocCuMem)"
            : "a transfer this network cannot carry";
    snprintf(m, n,
             "%sa transfer with world rank %llu over NCCL GIN: %s "
             "(docs/abi.md, \"Over NCCL GIN\")",
             at.c_str(), static_cast<unsigned long long>(e.value), why);
    break;
  }
  default:
    snprintf(m, n, "%s: unknown device error code %u", where, e.code);
    break;
  }
  fitMessage(full, out.message, sizeof(out.message));
}

namespace {
std::mutex takenLock;
std::unordered_map<const ErrorRecord *, ErrorRecord> &taken() {
  static auto *map = new std::unordered_map<const ErrorRecord *, ErrorRecord>;
  return *map; // never destroyed: reads may come during exit
}
} // namespace

bool lastTakenRecord(const ErrorRecord &rec, ErrorRecord &out) {
  std::lock_guard<std::mutex> lock(takenLock);
  auto it = taken().find(&rec);
  if (it == taken().end())
    return false;
  out = it->second;
  return true;
}

void forgetTakenRecord(const ErrorRecord &rec) {
  std::lock_guard<std::mutex> lock(takenLock);
  taken().erase(&rec);
}

bool takeErrorRecord(ErrorRecord &rec, tleErrorInfo &info, RecordNode node) {
  info = {};
  info.result = tleSuccess;
  // The device claims the record (state 1) before writing and publishes
  // it (state 2) with a release store; acquire pairs with that.
  if (__atomic_load_n(&rec.state, __ATOMIC_ACQUIRE) != 2) {
    forgetTakenRecord(rec);
    return false;
  }
  describeErrorRecord(rec, info, node);
  {
    std::lock_guard<std::mutex> lock(takenLock);
    taken()[&rec] = rec;
  }
  // The fault word stays: a failed or aborted communicator stays so after
  // its record was read, and tleCommAbort may store it at any moment:
  // clear around it, never through it.
  ErrorRecord cleared = {};
  std::memcpy(reinterpret_cast<char *>(&rec) + sizeof(rec.state),
              reinterpret_cast<const char *>(&cleared) + sizeof(rec.state),
              offsetof(ErrorRecord, abort) - sizeof(rec.state));
  std::memcpy(reinterpret_cast<char *>(&rec) + offsetof(ErrorRecord, abort) +
                  sizeof(rec.abort),
              reinterpret_cast<const char *>(&cleared) +
                  offsetof(ErrorRecord, abort) + sizeof(rec.abort),
              sizeof(ErrorRecord) - offsetof(ErrorRecord, abort) -
                  sizeof(rec.abort));
  __atomic_store_n(&rec.state, 0u, __ATOMIC_RELEASE);
  return true;
}

} // namespace tle
