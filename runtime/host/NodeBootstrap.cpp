//===- NodeBootstrap.cpp - One node's ranks of a world's bootstrap --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A communicator of simulated nodes with one process per rank
// (tleCommInitRank with ranksPerNode): its node-local state (inboxes,
// signal words as the node's ranks see them, symmetric buffers) is
// exchanged among the node's ranks only, but the processes share one
// socket bootstrap over the world. This view runs every collective over
// the world and hands back the node's slice, so that every collective of
// the communicator is one of the whole world (every world rank calls it),
// which is how a program run on every rank calls them anyway.
//
//===----------------------------------------------------------------------===//

#include "Bootstrap.h"

namespace tle {

namespace {
class NodeBootstrap final : public Bootstrap {
public:
  NodeBootstrap(Bootstrap &world, int ranksPerNode)
      : world(world), perNode(ranksPerNode),
        base(world.rank() / ranksPerNode * ranksPerNode) {}

  int rank() const override { return world.rank() - base; }
  int size() const override { return perNode; }

  tleResult_t allGather(const std::string &mine,
                        std::vector<std::string> &out) override {
    std::vector<std::string> all;
    if (tleResult_t r = world.allGather(mine, all))
      return r;
    out.assign(all.begin() + base, all.begin() + base + perNode);
    return tleSuccess;
  }

  tleResult_t
  allGatherFds(const std::string &mine, const std::vector<int> &myFds,
               std::vector<std::string> &out,
               std::vector<std::vector<UniqueFd>> &outFds) override {
    std::vector<std::string> all;
    std::vector<std::vector<UniqueFd>> allFds;
    if (tleResult_t r = world.allGatherFds(mine, myFds, all, allFds))
      return r;
    out.assign(all.begin() + base, all.begin() + base + perNode);
    // The other nodes' descriptors close with allFds.
    outFds.clear();
    for (int q = 0; q < perNode; ++q)
      outFds.push_back(std::move(allFds[base + q]));
    return tleSuccess;
  }

private:
  Bootstrap &world;
  int perNode;
  int base;
};
} // namespace

std::unique_ptr<Bootstrap> createNodeBootstrap(Bootstrap &world,
                                               int ranksPerNode) {
  return std::make_unique<NodeBootstrap>(world, ranksPerNode);
}

} // namespace tle
