//===- AbortTest.cpp - Faults a program survives --------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Issue 14's scenarios on the emulator, with one process per rank (forked
// children) wherever a wait must block without the emulator calling it a
// deadlock: a rank that skips a barrier under onError = return (the peer's
// launch ends with the timeout recorded, and a new communicator in the same
// process works), a rank killed with SIGKILL in a barrier loop (the
// survivors' launches end with tlePeerFailure naming it, within a second,
// also through rank 0's relay), and tleCommAbort from another thread while
// a launch is blocked in a barrier or in a signal wait (every spelling).
// Also what an aborted communicator still allows, and a signal wait past
// its deadline under onError = return.
//
//===----------------------------------------------------------------------===//

#include "../host/ChildProcess.h"
#include "EmuTestUtil.h"

#include "tle/barrier.h"
#include "tle/session.h"
#include "tle/signal.h"

#include <atomic>
#include <chrono>
#include <csignal>
#include <string>
#include <thread>
#include <vector>

using namespace tle;
using namespace tle::emu;
using namespace tle::emutest;
using tle::test::Child;
using tle::test::Outcome;

namespace {

using Clock = std::chrono::steady_clock;

/// Nanoseconds of CLOCK_MONOTONIC, comparable between processes.
int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             Clock::now().time_since_epoch())
      .count();
}

/// `rounds` barrier rounds with data between 2 ranks of a fresh
/// communicator of `id` (the control: a communicator works).
std::string correctRounds(const tleUniqueId &id, int rank, uint32_t rounds) {
  tleConfig_t cfg = forkedConfig(5000, TLE_ON_ERROR_TRAP);
  tleComm_t comm = nullptr;
  if (tleCommInitRank(&comm, 2, &id, rank, -1, &cfg) != tleSuccess)
    return std::string("init: ") + tleGetLastErrorDetail();
  tleMem_t mem = nullptr;
  if (tleMemAlloc(comm, 2 * sizeof(uint32_t), &mem) != tleSuccess)
    return std::string("alloc: ") + tleGetLastErrorDetail();
  void *handle = nullptr;
  tleMemGetHandle(mem, &handle);
  uint64_t bad = 0;
  LaunchResult r =
      launch(&comm, 1, shape({1, 1, 1}, {1, 1, 1}), [&](int me, void *dc) {
        for (uint32_t k = 0; k < rounds; ++k) {
          auto *peer = static_cast<uint32_t *>(flagcxGetIntraPointerS(
              handle, (k % 2) * sizeof(uint32_t), 1 - me));
          *peer = k + 1;
          flagcxIntraBarrierSyncS(dc, kCoopThread, 0, false, kOrderAcqRel);
          auto *mine =
              static_cast<uint32_t *>(flagcxGetLocalPointerS(handle, 0));
          bad += mine[k % 2] != k + 1;
        }
      });
  tleMemFree(mem);
  tleCommDestroy(comm);
  if (r.result != tleSuccess)
    return "rounds: " + r.message;
  return bad ? std::to_string(bad) + " rounds saw wrong data" : "";
}

// Scenario (1): rank 1 skips a barrier under onError = return. Rank 0's
// wait times out, records it, returns the status to every thread of its
// block, and the kernel runs to its end; the launch reports tleTimeout;
// later calls on the failed communicator say so; it is destroyed, and a new
// communicator in the same process runs correct barrier rounds.
TEST(EmuAbort, SkippedBarrierUnderReturnThenRecovery) {
  tleUniqueId first, second;
  ASSERT_EQ(tleGetUniqueId(&first), tleSuccess);
  ASSERT_EQ(tleGetUniqueId(&second), tleSuccess);
  Child waiter = tle::test::spawn([&](std::string &detail) {
    tleConfig_t cfg = forkedConfig(300, TLE_ON_ERROR_RETURN);
    tleComm_t comm = nullptr;
    if (tleCommInitRank(&comm, 2, &first, 0, -1, &cfg) != tleSuccess)
      return failed(detail, std::string("init: ") + tleGetLastErrorDetail());
    constexpr int kThreads = 64;
    std::vector<int> status(kThreads, -1);
    std::atomic<int> ranToEnd{0};
    LaunchResult r = launch(
        &comm, 1, shape({1, 1, 1}, {kThreads, 1, 1}), [&](int, void *dc) {
          uint32_t t = linearThreadId();
          status[t] =
              tleTritonBarrier(reinterpret_cast<int64_t>(dc), kBarrierSync,
                               kCoopBlock, 3, kOrderAcqRel);
          // A later barrier gives up at once.
          flagcxIntraBarrierSyncS(dc, kCoopBlock, 4, false, kOrderAcqRel);
          if (tleCommFailed(dc) == tleTimeout)
            ++ranToEnd;
        });
    if (r.result != tleTimeout)
      return failed(detail,
                    "launch: " + std::to_string(r.result) + " " + r.message);
    for (int s : status)
      if (s != tleTimeout)
        return failed(detail, "a thread's status is " + std::to_string(s));
    if (ranToEnd != kThreads)
      return failed(detail, std::to_string(ranToEnd.load()) +
                                " threads ran to the end");
    if (r.error.missingMask != 0b10 || r.error.slot != 3 ||
        !contains(r.message, "timed out"))
      return failed(detail, "record: " + r.message);
    void *dc = nullptr;
    if (tleCommGetDevComm(comm, &dc) != tleTimeout ||
        !contains(tleGetLastErrorDetail(), "unusable"))
      return failed(detail, std::string("a failed communicator was usable: ") +
                                tleGetLastErrorDetail());
    if (tleCommDestroy(comm) != tleSuccess)
      return failed(detail, "destroy");
    std::string again = correctRounds(second, 0, 20);
    return again.empty() ? tleSuccess : failed(detail, again);
  });
  Child skipper = tle::test::spawn([&](std::string &detail) {
    tleConfig_t cfg = forkedConfig(300, TLE_ON_ERROR_RETURN);
    tleComm_t comm = nullptr;
    if (tleCommInitRank(&comm, 2, &first, 1, -1, &cfg) != tleSuccess)
      return failed(detail, std::string("init: ") + tleGetLastErrorDetail());
    // No launch: the barrier is skipped. An orderly destroy says goodbye,
    // so the peer's watchdog does not take it for a death.
    tleCommDestroy(comm);
    std::string again = correctRounds(second, 1, 20);
    return again.empty() ? tleSuccess : failed(detail, again);
  });
  Outcome w = tle::test::collect(waiter), s = tle::test::collect(skipper);
  EXPECT_EQ(w.result, tleSuccess) << w.detail;
  EXPECT_EQ(s.result, tleSuccess) << s.detail;
  EXPECT_TRUE(tle::test::segmentsOf(waiter.pid).empty());
}

/// One rank of `n` in a barrier loop until a barrier gives up; reports how
/// it ended and when (CLOCK_MONOTONIC ns) in `detail`.
tleResult_t loopUntilGivenUp(const tleUniqueId &id, int n, int rank,
                             std::string &detail) {
  tleConfig_t cfg = forkedConfig(10000, TLE_ON_ERROR_TRAP);
  tleComm_t comm = nullptr;
  if (tleCommInitRank(&comm, n, &id, rank, -1, &cfg) != tleSuccess)
    return failed(detail, std::string("init: ") + tleGetLastErrorDetail());
  int last = 0;
  LaunchResult r =
      launch(&comm, 1, shape({1, 1, 1}, {32, 1, 1}), [&](int, void *dc) {
        int s = 0;
        while (s == 0)
          s = tryBarrierSync(dc, kCoopWarp, 0, kOrderAcqRel);
        last = s;
      });
  int64_t end = nowNs();
  tleCommDestroy(comm);
  detail = std::to_string(end) + " " + std::to_string(last) + " " +
           std::to_string(r.error.missingMask) + " " + r.message;
  return r.result;
}

// Scenario (2): rank 2 of 3 is killed with SIGKILL in a barrier loop. Rank
// 0 (the bootstrap's hub) sees its connection close without a goodbye and
// relays the death to rank 1; both survivors' waits give up, and their
// launches end with tlePeerFailure naming rank 2, within a second of the
// kill, far under the 10 s barrier timeout.
TEST(EmuAbort, KilledRankFailsTheSurvivorsWithinASecond) {
  tleUniqueId id;
  ASSERT_EQ(tleGetUniqueId(&id), tleSuccess);
  std::vector<Child> ranks;
  for (int r = 0; r < 3; ++r)
    ranks.push_back(tle::test::spawn([&, r](std::string &detail) {
      return loopUntilGivenUp(id, 3, r, detail);
    }));
  // Long enough for every rank to join and loop (bootstrap, then barriers).
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  int64_t killed = nowNs();
  ASSERT_EQ(kill(ranks[2].pid, SIGKILL), 0);
  for (int r = 0; r < 2; ++r) {
    Outcome o = tle::test::collect(ranks[r]);
    ASSERT_TRUE(o.finished) << "rank " << r << " hung";
    EXPECT_EQ(o.result, tlePeerFailure) << "rank " << r << ": " << o.detail;
    long long end = 0;
    int last = 0;
    unsigned mask = 0;
    ASSERT_EQ(sscanf(o.detail.c_str(), "%lld %d %u", &end, &last, &mask), 3)
        << o.detail;
    double seconds = double(end - killed) / 1e9;
    std::printf("rank %d: launch ended %.1f ms after the kill\n", r,
                seconds * 1e3);
    EXPECT_LT(seconds, 1.0) << "rank " << r;
    EXPECT_EQ(last, tlePeerFailure) << "rank " << r;
    EXPECT_EQ(mask, 1u << 2) << o.detail;
    EXPECT_TRUE(contains(o.detail, "rank(s) 2 died")) << o.detail;
  }
  Outcome dead = tle::test::collect(ranks[2], 1000);
  EXPECT_FALSE(dead.finished);
  // No child left behind: each was reaped (collect), so none is a child now.
  EXPECT_EQ(waitpid(-1, nullptr, WNOHANG), -1);
  for (const Child &c : ranks)
    EXPECT_TRUE(tle::test::segmentsOf(c.pid).empty());
}

// Scenario (3): tleCommAbort from a second host thread stops a launch
// blocked in a barrier whose peer is another process (so the emulator does
// not call it a deadlock), with the record naming the abort. Then: a second
// abort is harmless, the communicator refuses everything but queries, its
// record and destroy. The same for a signal wait on a word the peer never
// signals, in each of its spellings.
enum class BlockedIn {
  Barrier,        ///< tle::tryBarrierSync, block group (one slot, one group)
  Session,        ///< tle::BarrierSession::trySync, block group
  SignalTyped,    ///< tle::trySignalWait, warp group
  SignalTriton,   ///< tleTritonSignalWait, block group
  SignalFlagTree, ///< tle_signal_wait, thread group
  SignalVoid,     ///< flagcxDevWaitSignal (void), block group, then
                  ///< tleCommFailed
  InterBarrier,   ///< tleTritonTeamBarrier of team INTER, block group, the
                  ///< two ranks on two simulated nodes
  WorldBarrier,   ///< the same of team WORLD
};

/// The cases whose two ranks are two simulated nodes.
bool onTwoNodes(BlockedIn in) {
  return in == BlockedIn::InterBarrier || in == BlockedIn::WorldBarrier;
}

bool isSignal(BlockedIn in) {
  return in != BlockedIn::Barrier && in != BlockedIn::Session &&
         !onTwoNodes(in);
}

/// The wait of scenario (3); returns its status.
int blockedWait(BlockedIn in, void *dc) {
  auto comm = reinterpret_cast<int64_t>(dc);
  switch (in) {
  case BlockedIn::Barrier:
    return tryBarrierSync(dc, kCoopBlock, 1, kOrderAcqRel);
  case BlockedIn::Session: {
    BarrierSession bar(dc, kCoopBlock, 1);
    return bar.trySync(kOrderAcqRel);
  }
  case BlockedIn::SignalTyped:
    return trySignalWait(dc, 5, 1, kCoopWarp);
  case BlockedIn::SignalTriton:
    return tleTritonSignalWait(comm, 5, 1, kCoopBlock, kOrderAcquire);
  case BlockedIn::SignalFlagTree:
    return tle_signal_wait(comm, 5, 1, kCoopThread, kOrderSeqCst);
  case BlockedIn::SignalVoid:
    flagcxDevWaitSignal(dc, 5, 1, 64, 0, kCoopBlock, kOrderAcquire);
    return tleCommFailed(dc);
  case BlockedIn::InterBarrier:
    return tleTritonTeamBarrier(comm, kTeamInter, kBarrierSync, kCoopBlock, 1,
                                kOrderAcqRel);
  case BlockedIn::WorldBarrier:
    return tleTritonTeamBarrier(comm, kTeamWorld, kBarrierSync, kCoopBlock, 1,
                                kOrderAcqRel);
  }
  return -1;
}

void abortBlockedLaunch(BlockedIn in) {
  tleUniqueId id;
  ASSERT_EQ(tleGetUniqueId(&id), tleSuccess);
  int release[2];
  ASSERT_EQ(pipe(release), 0);
  Child peer = tle::test::spawn([&](std::string &detail) {
    close(release[1]);
    tleConfig_t cfg = forkedConfig(10000, TLE_ON_ERROR_TRAP);
    cfg.ranksPerNode = onTwoNodes(in) ? 1 : 0;
    tleComm_t comm = nullptr;
    if (tleCommInitRank(&comm, 2, &id, 1, -1, &cfg) != tleSuccess)
      return failed(detail, std::string("init: ") + tleGetLastErrorDetail());
    char byte;
    ssize_t ignored = read(release[0], &byte, 1); // until the test is done
    (void)ignored;
    return tleCommDestroy(comm);
  });
  close(release[0]);
  tleConfig_t cfg = forkedConfig(10000, TLE_ON_ERROR_TRAP);
  cfg.ranksPerNode = onTwoNodes(in) ? 1 : 0;
  tleComm_t comm = nullptr;
  ASSERT_EQ(tleCommInitRank(&comm, 2, &id, 0, -1, &cfg), tleSuccess)
      << tleGetLastErrorDetail();
  std::atomic<int64_t> abortedAt{0};
  std::thread aborter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    abortedAt = nowNs();
    EXPECT_EQ(tleCommAbort(comm), tleSuccess);
  });
  int status = -1;
  std::atomic<int> agreeing{0};
  LaunchResult r =
      launch(&comm, 1, shape({1, 1, 1}, {64, 1, 1}), [&](int, void *dc) {
        int s = blockedWait(in, dc);
        status = s;
        agreeing += s == tleAborted;
      });
  int64_t end = nowNs();
  aborter.join();
  double ms = double(end - abortedAt) / 1e6;
  std::printf("abort latency on the emulator: %.3f ms\n", ms);
  EXPECT_EQ(r.result, tleAborted) << r.message;
  EXPECT_EQ(status, tleAborted);
  EXPECT_EQ(agreeing, 64); // every thread of every group got the status
  EXPECT_LT(ms, 100.0);
  EXPECT_EQ(r.error.result, tleAborted);
  EXPECT_TRUE(contains(r.message, "aborted")) << r.message;
  if (isSignal(in)) {
    // The record names the word and its values; any rank could signal it.
    EXPECT_EQ(r.error.slot, 5u);
    EXPECT_EQ(r.error.missingMask, 0u);
    EXPECT_TRUE(contains(r.message, "tle.signal_wait (")) << r.message;
    EXPECT_TRUE(contains(r.message, "while waiting on signal 5: it holds 0, "
                                    "waiting for >= 1"))
        << r.message;
  } else {
    EXPECT_EQ(r.error.slot, 1u);
    EXPECT_EQ(r.error.missingMask, 0b10u);
  }

  EXPECT_EQ(tleCommAbort(comm), tleSuccess); // twice: harmless
  void *dc = nullptr;
  EXPECT_EQ(tleCommGetDevComm(comm, &dc), tleAborted);
  EXPECT_TRUE(contains(tleGetLastErrorDetail(), "tleCommAbort"))
      << tleGetLastErrorDetail();
  tleMem_t mem = nullptr;
  EXPECT_EQ(tleMemAlloc(comm, 64, &mem), tleAborted);
  LaunchResult again =
      launch(&comm, 1, shape({1, 1, 1}, {1, 1, 1}), [&](int, void *) {});
  EXPECT_EQ(again.result, tleAborted) << again.message;
  EXPECT_FALSE(again.started);
  int rank = -1;
  EXPECT_EQ(tleCommRank(comm, &rank), tleSuccess);
  EXPECT_EQ(tleCommDestroy(comm), tleSuccess);
  EXPECT_EQ(tleCommAbort(comm), tleInvalidArgument);

  ssize_t ignored = write(release[1], "x", 1);
  (void)ignored;
  close(release[1]);
  Outcome o = tle::test::collect(peer);
  EXPECT_EQ(o.result, tleSuccess) << o.detail;
}

TEST(EmuAbort, AbortFromAnotherThreadStopsABlockedLaunch) {
  abortBlockedLaunch(BlockedIn::Barrier);
}

TEST(EmuAbort, AbortStopsABlockedSessionWait) {
  abortBlockedLaunch(BlockedIn::Session);
}

TEST(EmuAbort, AbortStopsABlockedSignalWait) {
  abortBlockedLaunch(BlockedIn::SignalTyped);
}

TEST(EmuAbort, AbortStopsABlockedTritonSignalWait) {
  abortBlockedLaunch(BlockedIn::SignalTriton);
}

TEST(EmuAbort, AbortStopsABlockedFlagTreeSignalWait) {
  abortBlockedLaunch(BlockedIn::SignalFlagTree);
}

TEST(EmuAbort, AbortStopsABlockedVoidSignalWait) {
  abortBlockedLaunch(BlockedIn::SignalVoid);
}

// Past one node: the rank on the other simulated node never arrives, and
// the wait is the rail's poll of a net word.
TEST(EmuAbort, AbortStopsABlockedInterBarrier) {
  abortBlockedLaunch(BlockedIn::InterBarrier);
}

TEST(EmuAbort, AbortStopsABlockedWorldBarrier) {
  abortBlockedLaunch(BlockedIn::WorldBarrier);
}

// A signal wait past its deadline under onError = return: only rank 0 of a
// 2-rank communicator runs (as in one process per rank, so the emulator's
// deadlock check stays out of it). Every thread of the block gets
// tleTimeout from tleTritonSignalWait and runs on; a later signal wait and
// a barrier give up at once; the record names the word and its values, and
// the communicator is then unusable.
TEST(EmuAbort, SignalWaitPastTheDeadlineUnderReturnReturns) {
  tleConfig_t cfg = forkedConfig(200, TLE_ON_ERROR_RETURN);
  cfg.bootstrapTimeoutMs = -1;
  std::vector<tleComm_t> comms(2);
  ASSERT_EQ(tleCommInitAll(comms.data(), 2, nullptr, &cfg), tleSuccess)
      << tleGetLastErrorDetail();
  constexpr int kThreads = 64;
  std::vector<int> status(kThreads, -1), later(kThreads, -1);
  std::atomic<int> ranToEnd{0};
  auto start = Clock::now();
  LaunchResult r = launch(
      comms.data(), 1, shape({1, 1, 1}, {kThreads, 1, 1}), [&](int, void *dc) {
        uint32_t t = linearThreadId();
        auto comm = reinterpret_cast<int64_t>(dc);
        tleTritonSignal(comm, 0, 3, 2, kCoopBlock);
        status[t] = tleTritonSignalWait(comm, 3, 5, kCoopBlock, kOrderAcquire);
        // Both give up at their first look at the fault word.
        flagcxDevWaitSignal(dc, 4, 1, 64, 0, kCoopWarp, kOrderAcquire);
        later[t] = tryBarrierSync(dc, kCoopBlock, 2, kOrderAcqRel);
        if (tleCommFailed(dc) == tleTimeout)
          ++ranToEnd;
      });
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  ASSERT_EQ(r.result, tleTimeout) << r.message;
  EXPECT_GE(seconds, 0.2);
  EXPECT_LT(seconds, 5.0);
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(status[t], tleTimeout) << "thread " << t;
    EXPECT_EQ(later[t], tleTimeout) << "thread " << t;
  }
  EXPECT_EQ(ranToEnd, kThreads);
  EXPECT_EQ(r.error.rank, 0);
  EXPECT_EQ(r.error.slot, 3u);
  EXPECT_GE(r.error.elapsedNs, 200000000u);
  EXPECT_TRUE(contains(r.message, "tle.signal_wait (tleTritonSignalWait): "
                                  "signal wait timed out after "))
      << r.message;
  EXPECT_TRUE(contains(r.message, " ms on signal 3: it holds 2, waiting for "
                                  ">= 5"))
      << r.message;
  void *dc = nullptr;
  EXPECT_EQ(tleCommGetDevComm(comms[0], &dc), tleTimeout);
  EXPECT_TRUE(contains(tleGetLastErrorDetail(), "unusable"))
      << tleGetLastErrorDetail();
  for (tleComm_t c : comms)
    EXPECT_EQ(tleCommDestroy(c), tleSuccess);
}

TEST(EmuAbort, AbortWhileNothingRunsAbortsEveryRankOfTheSet) {
  Ranks ranks(2, 8);
  ASSERT_EQ(ranks.status, tleSuccess) << tleGetLastErrorDetail();
  EXPECT_EQ(tleCommAbort(ranks.comms[0]), tleSuccess);
  for (tleComm_t c : ranks.comms) {
    void *dc = nullptr;
    EXPECT_EQ(tleCommGetDevComm(c, &dc), tleAborted);
    tleErrorInfo info;
    EXPECT_EQ(tleCommGetError(c, &info), tleSuccess); // nothing waited
  }
  // The rank's fault word, which kernels read, says so too.
  EXPECT_EQ(ranks.dev(1)->error->abort, uint32_t(kDevErrAborted));
  LaunchResult r = launch(ranks.comms.data(), 2, shape({1, 1, 1}, {1, 1, 1}),
                          [](int, void *) {});
  EXPECT_EQ(r.result, tleAborted) << r.message;
  EXPECT_EQ(tleCommAbort(nullptr), tleInvalidArgument);
}

TEST(EmuAbort, OnErrorFromTheEnvironmentIsParsedStrictly) {
  tleConfig_t cfg = TLE_CONFIG_INITIALIZER;
  cfg.onError = static_cast<tleOnError_t>(7);
  tleComm_t comm = nullptr;
  EXPECT_EQ(tleCommInitAll(&comm, 1, nullptr, &cfg), tleInvalidArgument);
  cfg.onError = TLE_ON_ERROR_DEFAULT;
  setenv("TLE_ON_ERROR", "Return", 1);
  EXPECT_EQ(tleCommInitAll(&comm, 1, nullptr, &cfg), tleInvalidArgument);
  EXPECT_TRUE(contains(tleGetLastErrorDetail(), "TLE_ON_ERROR"));
  setenv("TLE_ON_ERROR", "return", 1);
  ASSERT_EQ(tleCommInitAll(&comm, 1, nullptr, &cfg), tleSuccess);
  void *dc = nullptr;
  tleCommGetDevComm(comm, &dc);
  EXPECT_EQ(static_cast<DevComm *>(dc)->flags, kDevCommOnErrorReturn);
  tleCommDestroy(comm);
  unsetenv("TLE_ON_ERROR");
  ASSERT_EQ(tleCommInitAll(&comm, 1, nullptr, &cfg), tleSuccess);
  tleCommGetDevComm(comm, &dc);
  EXPECT_EQ(static_cast<DevComm *>(dc)->flags, 0u);
  tleCommDestroy(comm);
}

} // namespace
