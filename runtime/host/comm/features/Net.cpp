//===- Net.cpp - The net words and the network's contexts -------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// What crosses nodes (docs/design.md, "Teams"): per rank the signal words
// and one word per slot of the INTER team and of WORLD's inter half. On
// the emulator's network (worldByMemory) the barrier words are symmetric
// memory over the world and the EmuNet tables every rank's words by world
// rank; with NCCL's GIN (CommFromNccl.cpp) they are NCCL's signals. Also
// the network contexts' handles (DevNet). DevComm: node, nNodes, netKind,
// nNetWords, net, nContexts, nets.
//
//===----------------------------------------------------------------------===//

#include "backends/nccl/NcclNet.h"
#include "comm/Comm.h"
#include "comm/Requirement.h"

namespace tle {
namespace {

void require(const CommState &c, std::vector<Requirement> &out) {
  if (worldByMemory(c))
    out.push_back({"net barrier words", MemoryKind::Symmetric,
                   2 * size_t(c.config.nBarriers) * sizeof(uint64_t),
                   Span::World});
}

void publish(CommState &c, const std::vector<Placed> &mem, DevComm &d) {
  d.nContexts = c.config.nContexts;
  for (uint32_t k = 0; k < kMaxContexts; ++k)
    d.nets[k] = k < d.nContexts ? DevNet{kDevNetMagic, k, c.devComm} : DevNet{};
  d.node = c.node;
  d.nNodes = c.nNodes;
  d.netKind = kNetNone;
  uint32_t nNetWords = netWordsPerRank(c.config);
  if (worldByMemory(c)) {
    // One EmuNet for a world in one process (tleCommInitAll sets it, and
    // every rank fills the same table), one per process otherwise.
    if (!c.net)
      c.net = std::make_shared<EmuNet>();
    EmuNet &net = *c.net;
    net.worldSize = static_cast<uint32_t>(mem[0].peers.size());
    net.nSignalWords = signalWordsPerRank(c.config);
    for (size_t w = 0; w < mem[0].peers.size(); ++w) {
      net.signals[w] = c.worldSignals[w];
      net.barrier[w] = static_cast<uint64_t *>(mem[0].peers[w]);
    }
    d.netKind = kNetEmu;
    d.nNetWords = nNetWords;
    d.net = c.net.get();
  }
  if (c.ncclNet) {
    d.netKind = kNetNcclGin;
    d.nNetWords = nNetWords;
    d.net = c.ncclNet->deviceCopy();
  }
}

} // namespace

extern const CommFeature netFeature = {"network", require, publish};

} // namespace tle
