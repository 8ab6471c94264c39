//===- Counters.cpp - The one-sided transfers' counters ---------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// One-sided transfers' counters (docs/design.md, "One-sided transfers"):
// nCounters uint64 per rank and network context, as many as signal words,
// in the signal words' symmetric block right after them, because the
// device library finds a peer's counters at signalPeers[p] + nSignalWords
// (peerWord). DevComm: nCounters, counters.
//
//===----------------------------------------------------------------------===//

#include "comm/Comm.h"
#include "comm/Requirement.h"

namespace tle {
namespace {

uint32_t countersOf(const CommState &c) { return countersPerRank(c.config); }

void require(const CommState &c, std::vector<Requirement> &out) {
  // The signal words' name: the same block (Requirement::name).
  out.push_back({"signal words", MemoryKind::Symmetric,
                 size_t(counterWordsPerRank(c.config)) * sizeof(uint64_t),
                 worldByMemory(c) ? Span::World : Span::Node});
}

void publish(CommState &c, const std::vector<Placed> &mem, DevComm &d) {
  d.nCounters = countersOf(c);
  d.counters = static_cast<uint64_t *>(mem[0].mem);
}

} // namespace

extern const CommFeature counterFeature = {"counters", require, publish};

} // namespace tle
