//===- SessionFaultTest.cpp - A Triton session whose wait gave up --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The Triton session entry points (tleTritonSession*) when a wait gives up
// under onError = return, with one process per rank so that the wait times
// out instead of being reported as a deadlock. A session's barriers do not
// reduce the group's status in every round (that reduction cost Triton's
// loops 0.05 us per round on GPUs); the close does. Also built into
// tle-emu-tests-mutant: mutants 86 and 87 (docs/testing.md).
//
//===----------------------------------------------------------------------===//

#include "../host/ChildProcess.h"
#include "EmuTestUtil.h"

#include "tle/device.h"

#include <string>
#include <vector>

using namespace tle;
using namespace tle::emu;
using namespace tle::emutest;
using tle::test::Child;
using tle::test::Outcome;

namespace {

// A Triton session whose wait gives up under onError = return: only the
// worker that waited holds the status until the close (the barriers do not
// reduce the group's status in every round); it keeps taking part in the
// group's syncs of the later barriers, so the block stays in step with its
// other threads (the emulator would report a deadlock otherwise), and the
// close gives every thread the status. The slot's word holds the epoch of
// the wait that gave up, which group rank 0 stored before its poll (as the
// C++ session's wait does); the skipped barriers and the close store none.
TEST(SessionFault, AThreadThatGaveUpKeepsItsGroupInStepToTheClose) {
  tleUniqueId id;
  ASSERT_EQ(tleGetUniqueId(&id), tleSuccess);
  Child waiter = tle::test::spawn([&](std::string &detail) {
    tleConfig_t cfg = forkedConfig(300, TLE_ON_ERROR_RETURN);
    tleComm_t comm = nullptr;
    if (tleCommInitRank(&comm, 2, &id, 0, -1, &cfg) != tleSuccess)
      return failed(detail, std::string("init: ") + tleGetLastErrorDetail());
    constexpr int kThreads = 64;
    constexpr int kCalls = 6;
    std::vector<int> closed(kThreads, -1), negative(kThreads, 0);
    // entered[k]: threads that entered barrier call k; a call that returns
    // before every thread entered it left its group out of step.
    std::vector<int> entered(kCalls, 0);
    int early = 0;
    LaunchResult r = launch(
        &comm, 1, shape({1, 1, 1}, {kThreads, 1, 1}), [&](int, void *dc) {
          uint32_t t = linearThreadId();
          auto h = reinterpret_cast<int64_t>(dc);
          int64_t s = tleTritonSessionOpen(h, kCoopBlock, 2);
          // Syncs, then an arrive and a wait, after the one that gives up.
          for (int k = 0; k < kCalls; ++k) {
            int kind = k < 4    ? kBarrierSync
                       : k == 4 ? kBarrierArrive
                                : kBarrierWait;
            ++entered[k];
            s = tleTritonSession(h, kind, kCoopBlock, kOrderAcqRel, s, 2);
            early += entered[k] != kThreads;
          }
          negative[t] = s < 0;
          closed[t] = tleTritonSessionClose(h, kCoopBlock, s);
        });
    if (r.result != tleTimeout)
      return failed(detail,
                    "launch: " + std::to_string(r.result) + " " + r.message);
    if (early != 0)
      return failed(detail, std::to_string(early) +
                                " barrier calls returned before every thread "
                                "of the block entered them");
    for (int t = 0; t < kThreads; ++t)
      if (closed[t] != tleTimeout)
        return failed(detail, "thread " + std::to_string(t) +
                                  "'s close returned " +
                                  std::to_string(closed[t]));
    // Two ranks: the block's one worker, group rank 0, waited.
    if (!negative[0] || negative[1] || negative[kThreads - 1])
      return failed(detail, "the threads holding the status are not the "
                            "worker alone");
    uint32_t epoch = ~0u;
    if (tleCommGetBarrierEpochs(comm, 2, 1, &epoch) != tleTimeout && epoch != 1)
      return failed(detail, "the slot's word holds epoch " +
                                std::to_string(epoch) +
                                ", not the 1 that the wait which gave up "
                                "stored");
    tleCommDestroy(comm);
    return tleSuccess;
  });
  Child skipper = tle::test::spawn([&](std::string &detail) {
    tleConfig_t cfg = forkedConfig(300, TLE_ON_ERROR_RETURN);
    tleComm_t comm = nullptr;
    if (tleCommInitRank(&comm, 2, &id, 1, -1, &cfg) != tleSuccess)
      return failed(detail, std::string("init: ") + tleGetLastErrorDetail());
    tleCommDestroy(comm);
    return tleSuccess;
  });
  Outcome w = tle::test::collect(waiter), s = tle::test::collect(skipper);
  EXPECT_EQ(w.result, tleSuccess) << w.detail;
  EXPECT_EQ(s.result, tleSuccess) << s.detail;
}

} // namespace
