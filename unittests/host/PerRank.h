//===- PerRank.h - One thread per rank of a tleCommInitAll set --*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The host tests' collectives on the ranks of one process: a call on one
// thread per rank, each rank's status and error detail, and the verdict
// of a collective where one rank's own argument was wrong (that rank's
// error, every other rank's tlePeerFailure with its reason, at once rather
// than after the bootstrap deadline, and no output left behind).
//
//===----------------------------------------------------------------------===//

#ifndef TLE_UNITTESTS_HOST_PERRANK_H
#define TLE_UNITTESTS_HOST_PERRANK_H

#include "tle/tle.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace tle::test {

/// Each rank's status and last error detail.
struct PerRank {
  std::vector<tleResult_t> result;
  std::vector<std::string> detail;
  /// How long the slowest rank took.
  std::chrono::steady_clock::duration elapsed{};
};

/// Runs `body(rank)` on one thread per rank in `ranks` (of `n`; the others'
/// entries stay tleSuccess and empty).
template <typename Body>
PerRank onRanks(int n, const std::vector<int> &ranks, Body body) {
  PerRank out{std::vector<tleResult_t>(n, tleSuccess),
              std::vector<std::string>(n)};
  auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int r : ranks)
    threads.emplace_back([&, r] {
      out.result[r] = body(r);
      out.detail[r] = tleGetLastErrorDetail();
    });
  for (std::thread &t : threads)
    t.join();
  out.elapsed = std::chrono::steady_clock::now() - start;
  return out;
}

/// Runs `body(rank)` on one thread per rank of `n`.
template <typename Body> PerRank onEveryRank(int n, Body body) {
  std::vector<int> all;
  for (int r = 0; r < n; ++r)
    all.push_back(r);
  return onRanks(n, all, body);
}

/// Rank `bad` of `out` failed with tleInvalidArgument and detail `error`
/// (the whole text); every other rank failed with tlePeerFailure naming it
/// ("rank B failed: <error after the call's name>") and left its output
/// `mems[r]` null; all well within the 30 s bootstrap deadline.
inline void expectOneBadRank(const PerRank &out, int bad,
                             const std::string &error,
                             const std::vector<tleMem_t> &mems) {
  EXPECT_LT(out.elapsed, std::chrono::seconds(10));
  EXPECT_EQ(out.result[bad], tleInvalidArgument);
  EXPECT_EQ(out.detail[bad], error);
  std::string reason = "rank " + std::to_string(bad) + " failed: " +
                       error.substr(error.find(": ") + 2);
  for (int r = 0; r < static_cast<int>(out.result.size()); ++r) {
    if (r == bad)
      continue;
    EXPECT_EQ(out.result[r], tlePeerFailure) << r;
    EXPECT_NE(out.detail[r].find(reason), std::string::npos) << out.detail[r];
    EXPECT_EQ(mems[r], nullptr) << r;
  }
}

} // namespace tle::test

#endif // TLE_UNITTESTS_HOST_PERRANK_H
