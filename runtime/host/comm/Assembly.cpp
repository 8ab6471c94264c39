//===- Assembly.cpp - Building a communicator from its features -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The one assembly sequence of every communicator (Requirement.h):
//   1. plan: every feature states its requirements; consecutive symmetric
//      requirements of one name become one block;
//   2. allocate: local and host-visible memory, and the DevComm;
//   3. exchange: each symmetric block is allocated by every rank of its span
//      and mapped by the others, through the rank's bootstraps (one rank
//      per call: tleCommInitRank, tleCommInitFromNccl) or all at once (every
//      rank of the world in this process: tleCommInitAll);
//   4. publish: each feature fills its DevComm fields, and the DevComm is
//      copied into local memory.
// What is allocated belongs to the CommState, which frees it.
//
//===----------------------------------------------------------------------===//

#include "comm/Comm.h"
#include "comm/Requirement.h"

#include <cstring>
#include <map>

namespace tle {

#define TLE_COMM_FEATURE(F) extern const CommFeature F;
#include "comm/Features.def"

const std::vector<const CommFeature *> &commFeatures() {
  static const std::vector<const CommFeature *> features = {
#define TLE_COMM_FEATURE(F) &F,
#include "comm/Features.def"
  };
  return features;
}

namespace {

/// Symmetric requirements that share one allocation.
struct Block {
  const char *name = "";
  Span span = Span::Node;
  size_t bytes = 0;
  std::vector<size_t> members; ///< indices into Plan::reqs
  std::vector<size_t> offsets; ///< of each member in the block
  SymmetricView *view = nullptr;
};

/// One rank's requirements, in feature order, and where they landed.
struct Plan {
  std::vector<Requirement> reqs;
  std::vector<size_t> featureEnd; ///< feature f's are [end[f-1], end[f])
  std::vector<Placed> placed;     ///< per requirement
  std::vector<Block> blocks;
};

/// Rounds up to whole 64-bit words, the device library's widest access.
size_t wordAligned(size_t bytes) { return (bytes + 7) / 8 * 8; }

void planOf(const CommState &c, Plan &p) {
  for (const CommFeature *f : commFeatures()) {
    f->require(c, p.reqs);
    p.featureEnd.push_back(p.reqs.size());
  }
  p.placed.resize(p.reqs.size());
  for (size_t i = 0; i < p.reqs.size(); ++i) {
    const Requirement &r = p.reqs[i];
    if (r.kind != MemoryKind::Symmetric)
      continue;
    if (p.blocks.empty() || strcmp(p.blocks.back().name, r.name) != 0 ||
        p.blocks.back().span != r.span)
      p.blocks.emplace_back();
    Block &b = p.blocks.back();
    if (b.members.empty()) {
      b.name = r.name;
      b.span = r.span;
    }
    b.members.push_back(i);
    b.offsets.push_back(b.bytes);
    b.bytes += wordAligned(r.bytes);
  }
}

/// This rank's index and the size of `span`.
int spanRank(const CommState &c, Span span) {
  return span == Span::World ? c.node * c.size + c.rank : c.rank;
}
int spanSize(const CommState &c, Span span) {
  return span == Span::World ? c.nNodes * c.size : c.size;
}

/// The views of step 3, still empty: made on every rank, whatever failed
/// before, so that the exchange can share the failure.
void makeViews(CommState &c, Plan &p) {
  for (Block &b : p.blocks) {
    CommMemory m;
    m.kind = MemoryKind::Symmetric;
    m.name = b.name;
    m.bytes = b.bytes;
    m.view = std::make_unique<SymmetricView>(
        c.backend, spanRank(c, b.span), spanSize(c, b.span), !c.multiProcess);
    b.view = m.view.get();
    c.memory.push_back(std::move(m));
  }
}

/// Step 2.
tleResult_t allocate(CommState &c, Plan &p) {
  Backend &be = *c.backend;
  void *mem;
  if (tleResult_t r = be.allocLocal(sizeof(DevComm), &mem))
    return r;
  c.devComm = static_cast<DevComm *>(mem);
  for (size_t i = 0; i < p.reqs.size(); ++i) {
    const Requirement &r = p.reqs[i];
    CommMemory m;
    m.kind = r.kind;
    m.name = r.name;
    m.bytes = r.bytes;
    if (r.kind == MemoryKind::Local) {
      if (tleResult_t s = be.allocLocal(r.bytes, &m.mem))
        return s;
    } else if (r.kind == MemoryKind::HostVisible) {
      if (tleResult_t s = be.allocHostVisible(r.bytes, &m.host, &m.mem))
        return s;
    } else {
      continue;
    }
    p.placed[i].mem = m.mem;
    p.placed[i].host = m.host;
    c.memory.push_back(std::move(m));
  }
  return tleSuccess;
}

/// Step 3 for one rank, collective through its bootstraps. `local` is this
/// rank's status so far: the first exchange shares it with every rank.
tleResult_t exchange(CommState &c, Plan &p, tleResult_t local) {
  for (Block &b : p.blocks) {
    Bootstrap &bs = b.span == Span::World && c.worldBootstrap
                        ? *c.worldBootstrap
                        : *c.bootstrap;
    // Ranks must agree on the backend as well as on the sizes.
    if (tleResult_t r =
            allocSymmetric(bs, *b.view, b.bytes, local,
                           static_cast<uint64_t>(c.config.backend), b.name))
      return r;
    local = tleSuccess;
  }
  return local;
}

/// Step 3 for every rank of a world at once: block k of every rank, grouped
/// by node for a node span.
tleResult_t exchangeAll(const std::vector<CommState *> &ranks,
                        std::vector<Plan> &plans) {
  for (size_t k = 0; k < plans[0].blocks.size(); ++k) {
    std::map<int, std::vector<SymmetricView *>> spans;
    for (size_t r = 0; r < ranks.size(); ++r) {
      const Block &b = plans[r].blocks[k];
      spans[b.span == Span::World ? 0 : ranks[r]->node].push_back(b.view);
    }
    for (auto &[instance, views] : spans)
      if (tleResult_t s = allocSymmetricAll(views, plans[0].blocks[k].bytes))
        return s;
  }
  return tleSuccess;
}

/// Step 4: the symmetric placements, then every feature's fields.
tleResult_t publish(CommState &c, Plan &p) {
  for (Block &b : p.blocks)
    for (size_t j = 0; j < b.members.size(); ++j) {
      Placed &pl = p.placed[b.members[j]];
      int n = spanSize(c, b.span);
      pl.peers.resize(n);
      for (int q = 0; q < n; ++q)
        pl.peers[q] = static_cast<char *>(b.view->ptr(q)) + b.offsets[j];
      pl.mem = pl.peers[spanRank(c, b.span)];
    }
  DevComm d = {};
  d.magic = kDevCommMagic;
  d.version = kDevCommVersion;
  d.rank = c.rank;
  d.size = c.size;
  d.timeoutNs = c.config.timeoutNs;
  const auto &features = commFeatures();
  for (size_t f = 0; f < features.size(); ++f) {
    size_t first = f ? p.featureEnd[f - 1] : 0;
    std::vector<Placed> mine(p.placed.begin() + first,
                             p.placed.begin() + p.featureEnd[f]);
    features[f]->publish(c, mine, d);
  }
  return c.backend->copyToLocal(c.devComm, &d, sizeof(DevComm));
}

} // namespace

tleResult_t assembleComm(CommState &c, tleResult_t prior) {
  Plan p;
  planOf(c, p);
  makeViews(c, p);
  tleResult_t local = prior == tleSuccess ? allocate(c, p) : prior;
  if (tleResult_t r = exchange(c, p, local))
    return r;
  return publish(c, p);
}

tleResult_t assembleAll(const std::vector<CommState *> &ranks) {
  std::vector<Plan> plans(ranks.size());
  for (size_t r = 0; r < ranks.size(); ++r) {
    planOf(*ranks[r], plans[r]);
    makeViews(*ranks[r], plans[r]);
    if (tleResult_t s = allocate(*ranks[r], plans[r]))
      return s;
  }
  if (tleResult_t s = exchangeAll(ranks, plans))
    return s;
  for (size_t r = 0; r < ranks.size(); ++r)
    if (tleResult_t s = publish(*ranks[r], plans[r]))
      return s;
  return tleSuccess;
}

size_t commBytes(const CommState &c, const char *name) {
  for (const CommMemory &m : c.memory)
    if (strcmp(m.name, name) == 0)
      return m.bytes;
  return 0;
}

} // namespace tle
