//===- InProcBootstrap.cpp - Rendezvous of threads in one process ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The ranks of a tleCommInitAll set are threads of one process; a collective
// such as tleMemAlloc called by one thread per rank meets here. Each step is
// a generation: the last thread to arrive publishes the gathered blobs and
// starts the next generation. A thread that times out (or a rank whose
// bootstrap is destroyed) breaks the group, waking everyone else with the
// reason, because a half-completed step cannot be resumed consistently. A
// rank that fails before a step posts its failure and returns (post): the
// others fail as they arrive, and its own next step first waits for that
// one to complete.
//
//===----------------------------------------------------------------------===//

#include "bootstrap/Bootstrap.h"
#include "diag/Error.h"

#include <chrono>
#include <condition_variable>
#include <mutex>

namespace tle {

struct InProcGroup {
  std::mutex mutex;
  std::condition_variable cv;
  int nRanks = 0;
  int64_t timeoutMs = 0;
  uint64_t generation = 0;
  int arrived = 0;
  std::vector<bool> present;
  std::vector<std::string> slots;
  std::vector<std::string> result;
  bool broken = false;
  std::string brokenReason;
};

namespace {

class InProcBootstrap final : public Bootstrap {
public:
  InProcBootstrap(std::shared_ptr<InProcGroup> group, int rank)
      : group(std::move(group)), myRank(rank) {}

  ~InProcBootstrap() override {
    std::lock_guard<std::mutex> lock(group->mutex);
    if (!group->broken) {
      group->broken = true;
      group->brokenReason =
          "rank " + std::to_string(myRank) + " destroyed its communicator";
    }
    group->cv.notify_all();
  }

  int rank() const override { return myRank; }
  int size() const override { return group->nRanks; }

  tleResult_t allGather(const std::string &mine,
                        std::vector<std::string> &out) override {
    return step(mine, &out);
  }
  tleResult_t post(const std::string &mine) override {
    return step(mine, nullptr);
  }
  tleResult_t
  allGatherFds(const std::string &mine, const std::vector<int> &myFds,
               std::vector<std::string> &out,
               std::vector<std::vector<UniqueFd>> &outFds) override {
    if (!myFds.empty())
      return fail(tleInternalError,
                  "file descriptors cannot travel between ranks of one "
                  "process");
    outFds.clear();
    outFds.resize(group->nRanks);
    return allGather(mine, out);
  }

private:
  /// Enters a step with `mine`; with `out`, waits for the others and
  /// fills it, else (post) returns at once, and the next step waits for
  /// this one to complete first.
  tleResult_t step(const std::string &mine, std::vector<std::string> *out) {
    InProcGroup &g = *group;
    std::unique_lock<std::mutex> lock(g.mutex);
    if (posted && g.generation == postedGeneration && !g.broken)
      if (tleResult_t r = await(lock, postedGeneration))
        return r;
    posted = false;
    if (g.broken)
      return fail(tlePeerFailure, "%s", g.brokenReason.c_str());
    if (g.present[myRank])
      return fail(tleInvalidArgument,
                  "rank %d entered a collective twice at once (two threads "
                  "using one rank's communicator)",
                  myRank);
    g.slots[myRank] = mine;
    g.present[myRank] = true;
    uint64_t generation = g.generation;
    if (++g.arrived == g.nRanks) {
      g.result.swap(g.slots);
      g.slots.assign(g.nRanks, std::string());
      g.present.assign(g.nRanks, false);
      g.arrived = 0;
      ++g.generation;
      if (out)
        *out = g.result;
      g.cv.notify_all();
      return tleSuccess;
    }
    if (!out) {
      posted = true;
      postedGeneration = generation;
      return tleSuccess;
    }
    if (tleResult_t r = await(lock, generation))
      return r;
    // The result of this generation stays in place until every rank,
    // including this one, has entered the next step, so it is still ours.
    *out = g.result;
    return tleSuccess;
  }

  /// Waits for generation `generation` to complete: tleSuccess, or the
  /// failure of a group that broke or of this rank's deadline (which breaks
  /// it).
  tleResult_t await(std::unique_lock<std::mutex> &lock, uint64_t generation) {
    InProcGroup &g = *group;
    auto done = [&] { return g.generation != generation || g.broken; };
    if (g.timeoutMs == 0) {
      g.cv.wait(lock, done);
    } else if (!g.cv.wait_for(lock, std::chrono::milliseconds(g.timeoutMs),
                              done)) {
      std::string missing;
      for (int r = 0; r < g.nRanks; ++r)
        if (!g.present[r])
          missing += (missing.empty() ? "" : ",") + std::to_string(r);
      g.broken = true;
      g.brokenReason = "rank " + std::to_string(myRank) +
                       " timed out in a collective waiting for rank(s) " +
                       missing;
      g.cv.notify_all();
      return fail(tleTimeout,
                  "collective timed out after %lld ms waiting for rank(s) %s "
                  "(each rank's thread must call it; from one thread use the "
                  "...All variant)",
                  static_cast<long long>(g.timeoutMs), missing.c_str());
    }
    if (g.generation != generation)
      return tleSuccess;
    return fail(tlePeerFailure, "%s", g.brokenReason.c_str());
  }

  std::shared_ptr<InProcGroup> group;
  int myRank;
  /// A step this rank posted to (post) that may not have completed yet.
  bool posted = false;
  uint64_t postedGeneration = 0;
};

} // namespace

std::shared_ptr<InProcGroup> createInProcGroup(int nRanks, int64_t timeoutMs) {
  auto group = std::make_shared<InProcGroup>();
  group->nRanks = nRanks;
  group->timeoutMs = timeoutMs;
  group->present.assign(nRanks, false);
  group->slots.assign(nRanks, std::string());
  return group;
}

std::unique_ptr<Bootstrap>
createInProcBootstrap(std::shared_ptr<InProcGroup> group, int rank) {
  return std::make_unique<InProcBootstrap>(std::move(group), rank);
}

} // namespace tle
