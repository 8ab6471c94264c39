//===- Barrier.cpp - The barrier's memory: epochs, grid counts, inboxes ---===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The barrier (docs/design.md, "Barriers"): every team's epochs
// (kEpochSets, on every communicator: a kernel written for INTER or WORLD
// runs on one node too) and the grid barrier's CTA counts in local memory,
// and the inbox every peer of the node writes its arrivals into, as
// symmetric memory. DevComm: nBarriers, inboxStride, epochs, gridCount,
// routes.
//
//===----------------------------------------------------------------------===//

#include "comm/Comm.h"
#include "comm/Requirement.h"

namespace tle {
namespace {

void require(const CommState &c, std::vector<Requirement> &out) {
  size_t words = c.config.nBarriers;
  out.push_back({"barrier epochs", MemoryKind::Local,
                 kEpochSets * words * sizeof(uint32_t)});
  out.push_back(
      {"grid barrier counts", MemoryKind::Local, words * sizeof(uint32_t)});
  out.push_back(
      {"barrier inboxes", MemoryKind::Symmetric,
       size_t(kInboxSets) * words * inboxStrideWords(c.size) * sizeof(uint32_t),
       Span::Node});
}

void publish(CommState &c, const std::vector<Placed> &mem, DevComm &d) {
  d.nBarriers = c.config.nBarriers;
  d.inboxStride = inboxStrideWords(c.size);
  d.epochs = static_cast<uint32_t *>(mem[0].mem);
  d.gridCount = static_cast<uint32_t *>(mem[1].mem);
  std::vector<uint32_t *> inbox(c.size);
  for (int p = 0; p < c.size; ++p)
    inbox[p] = static_cast<uint32_t *>(mem[2].peers[p]);
  fillRoutes(d, inbox.data());
  c.epochs = d.epochs;
}

} // namespace

extern const CommFeature barrierFeature = {"barrier", require, publish};

} // namespace tle
