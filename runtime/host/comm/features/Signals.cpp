//===- Signals.cpp - The signal words and their shadows ---------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// tle.signal's words (docs/design.md, "Signals"): nSignals uint64 per rank
// and network context (signalWordsPerRank),
// symmetric over the node, or over the world when the network is the
// emulator's (worldByMemory), which adds to a peer's words on another node
// by address; and the signal shadows (flagcxDevIncreaseSignalShadow), one
// per word, rank-local. DevComm: nSignals, nSignalWords, signals,
// signalPeers, shadows.
//
//===----------------------------------------------------------------------===//

#include "comm/Comm.h"
#include "comm/Requirement.h"

namespace tle {
namespace {

void require(const CommState &c, std::vector<Requirement> &out) {
  size_t bytes = size_t(signalWordsPerRank(c.config)) * sizeof(uint64_t);
  Span span = worldByMemory(c) ? Span::World : Span::Node;
  out.push_back({"signal words", MemoryKind::Symmetric, bytes, span});
  out.push_back({"signal shadows", MemoryKind::Local, bytes});
}

void publish(CommState &c, const std::vector<Placed> &mem, DevComm &d) {
  // The span's ranks of this node start at node * size in a world span.
  size_t base = worldByMemory(c) ? size_t(c.node) * c.size : 0;
  d.nSignals = c.config.nSignals;
  d.nSignalWords = signalWordsPerRank(c.config);
  for (int p = 0; p < c.size; ++p)
    d.signalPeers[p] = static_cast<uint64_t *>(mem[0].peers[base + p]);
  d.signals = d.signalPeers[c.rank];
  d.shadows = static_cast<uint64_t *>(mem[1].mem);
  c.ownSignals = d.signals;
  c.worldSignals.clear();
  if (worldByMemory(c))
    for (void *p : mem[0].peers)
      c.worldSignals.push_back(static_cast<uint64_t *>(p));
}

} // namespace

extern const CommFeature signalFeature = {"signals", require, publish};

} // namespace tle
