//===- FaultTest.cpp - Failing barriers end launches with a clear error --===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Fault injection on the emulator: a slot index out of range, a corrupt
// communicator, a rank that skips a barrier (deadlock, reported at once), a
// peer that never arrives in another process (timeout), and a process that
// dies before the barrier. Each must end the launch with the specified
// status and a message naming rank, slot, epoch and the missing peers,
// never hang, and leave no shared-memory segment behind.
//
//===----------------------------------------------------------------------===//

#include "EmuTestUtil.h"

#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>

using namespace tle;
using namespace tle::emu;
using namespace tle::emutest;

namespace {

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

TEST(EmuFault, IndexOutOfRangeIsReportedAndTouchesNothing) {
  constexpr uint32_t kSlots = 8;
  Ranks ranks(3, kSlots);
  ASSERT_EQ(ranks.status, tleSuccess) << tleGetLastErrorDetail();
  // The inbox words of every slot, plus one slot's worth of canaries past
  // the end. The host allocates inboxes page-aligned in whole pages, so the
  // rest of the last page is the inbox's own memory; canaries go there
  // only if the inbox starts on a page.
  std::vector<std::vector<uint32_t>> before;
  std::vector<size_t> canaryWords;
  for (int q = 0; q < 3; ++q) {
    DevComm *dc = ranks.dev(q);
    uint32_t *inbox = inboxOf(*dc, q);
    size_t words = size_t(kSlots) * dc->inboxStride;
    uintptr_t end = reinterpret_cast<uintptr_t>(inbox + words);
    size_t room = reinterpret_cast<uintptr_t>(inbox) % 4096 == 0
                      ? (4096 - end % 4096) % 4096 / sizeof(uint32_t)
                      : 0;
    size_t canaries = std::min<size_t>(room, dc->inboxStride);
    for (size_t i = 0; i < canaries; ++i)
      inbox[words + i] = 0xC0FFEE00u + i;
    canaryWords.push_back(canaries);
    before.emplace_back(inbox, inbox + words);
  }
  LaunchResult r = launch(ranks.comms.data(), 3, shape({2, 1, 1}, {32, 1, 1}),
                          [&](int rank, void *dc) {
                            uint32_t slot = rank == 1 ? kSlots : 0;
                            flagcxIntraBarrierSyncS(dc, kCoopBlock, slot, false,
                                                    kOrderAcqRel);
                          });
  ASSERT_EQ(r.result, tleIndexOutOfRange) << r.message;
  EXPECT_EQ(r.error.rank, 1);
  EXPECT_EQ(r.error.slot, kSlots);
  EXPECT_EQ(r.error.nBarriers, kSlots);
  EXPECT_TRUE(contains(r.message, "slot 8 out of range (nBarriers 8)"))
      << r.message;
  EXPECT_TRUE(contains(r.message, "TLE_EMU_SEED=")) << r.message;
  EXPECT_TRUE(contains(tleGetLastErrorDetail(), "slot 8")) << r.message;
  for (int q = 0; q < 3; ++q) {
    DevComm *dc = ranks.dev(q);
    uint32_t *inbox = inboxOf(*dc, q);
    size_t words = before[q].size();
    // Ranks 0 and 2 may have signalled slot 0; nothing else changed.
    for (size_t i = dc->inboxStride; i < words; ++i)
      EXPECT_EQ(inbox[i], before[q][i]) << "rank " << q << " word " << i;
    for (size_t i = 0; i < canaryWords[q]; ++i)
      EXPECT_EQ(inbox[words + i], 0xC0FFEE00u + i);
    EXPECT_EQ(dc->epochs[kSlots - 1], 0u);
  }
}

TEST(EmuFault, CorruptCommIsRejected) {
  Ranks ranks(2);
  ASSERT_EQ(ranks.status, tleSuccess) << tleGetLastErrorDetail();
  ranks.dev(0)->magic = 0xBAD0BAD0u;
  LaunchResult r = launch(
      ranks.comms.data(), 2, shape({1, 1, 1}, {4, 1, 1}), [&](int, void *dc) {
        flagcxIntraBarrierSyncS(dc, kCoopThread, linearThreadId(), false,
                                kOrderSeqCst);
      });
  ranks.dev(0)->magic = kDevCommMagic;
  EXPECT_EQ(r.result, tleInvalidComm) << r.message;
  EXPECT_TRUE(contains(r.message, "rank 0")) << r.message;
  // A kernel handed a null comm fails the same way.
  r = launch(
      ranks.comms.data(), 2, shape({1, 1, 1}, {1, 1, 1}), [&](int, void *) {
        flagcxIntraBarrierSyncS(nullptr, kCoopThread, 0, false, kOrderAcqRel);
      });
  EXPECT_EQ(r.result, tleInvalidComm) << r.message;
}

TEST(EmuFault, SkippedBarrierIsADeadlockNamingTheMissingRank) {
  Ranks ranks(3);
  ASSERT_EQ(ranks.status, tleSuccess) << tleGetLastErrorDetail();
  auto start = std::chrono::steady_clock::now();
  LaunchResult r = launch(
      ranks.comms.data(), 3, shape({2, 1, 1}, {64, 1, 1}),
      [&](int rank, void *dc) {
        uint32_t slot = 3 + linearBlockId();
        flagcxIntraBarrierSyncS(dc, kCoopBlock, slot, false, kOrderAcqRel);
        // Rank 2's block 1 skips the second barrier.
        if (rank == 2 && linearBlockId() == 1)
          return;
        flagcxIntraBarrierSyncS(dc, kCoopBlock, slot, false, kOrderAcqRel);
      });
  double seconds = secondsSince(start);
  ASSERT_EQ(r.result, tleDeadlock) << r.message;
  EXPECT_LT(seconds, 1.0);
  // Each waiting block is one line: which of its lanes poll and which wait
  // at the barrier's internal block sync is the library's business.
  EXPECT_TRUE(contains(r.message,
                       "\n  rank 0 block 1 waits in barrier wait on slot 4 "
                       "for epoch 2; missing peers: 2\n"))
      << r.message;
  EXPECT_TRUE(contains(r.message,
                       "\n  rank 1 block 1 waits in barrier wait on slot 4 "
                       "for epoch 2; missing peers: 2\n"))
      << r.message;
  EXPECT_FALSE(contains(r.message, "block sync")) << r.message;
  EXPECT_FALSE(contains(r.message, "block 1 thread")) << r.message;
  EXPECT_TRUE(contains(r.message, "replay with TLE_EMU_SEED=")) << r.message;
  EXPECT_FALSE(contains(r.message, "rank 2 block")) << r.message;
  EXPECT_EQ(r.error.result, tleDeadlock);
  EXPECT_EQ(r.error.slot, 4u);
  EXPECT_EQ(r.error.epoch, 2u);
  EXPECT_EQ(r.error.missingMask, 1u << 2);
  // The report is the thread's error detail too.
  EXPECT_EQ(std::string(tleGetLastErrorDetail()), r.message);
  // And the waiter's rank has it in its device error record.
  tleErrorInfo info{};
  EXPECT_EQ(tleCommGetError(ranks.comms[0], &info), tleDeadlock);
  EXPECT_EQ(info.slot, 4u);
  EXPECT_EQ(info.missingMask, 1u << 2);
}

TEST(EmuFault, DeadlockReportOfAHugeLaunchIsShort) {
  // 8 ranks x 64 blocks x 256 threads where rank 7 never arrives: the
  // report groups the waiters instead of listing 100k threads.
  Ranks ranks(8);
  ASSERT_EQ(ranks.status, tleSuccess) << tleGetLastErrorDetail();
  LaunchResult r =
      launch(ranks.comms.data(), 8, shape({64, 1, 1}, {256, 1, 1}),
             [&](int rank, void *dc) {
               if (rank != 7)
                 flagcxIntraBarrierSyncS(dc, kCoopBlock, linearBlockId(), false,
                                         kOrderAcqRel);
             });
  ASSERT_EQ(r.result, tleDeadlock) << r.message;
  EXPECT_LT(r.message.size(), 8000u);
  EXPECT_TRUE(contains(r.message, "missing peers: 7")) << r.message;
  EXPECT_TRUE(contains(r.message, "more groups")) << r.message;
  EXPECT_TRUE(contains(r.message, "not started")) << r.message;
}

TEST(EmuFault, TimeoutWhenAPeerNeverArrives) {
  // Only rank 0 of a 2-rank communicator runs here, as in one process per
  // rank: a wait with no local progress is not a deadlock, so the device
  // library's deadline ends it.
  Ranks ranks(2, 16, 200);
  ASSERT_EQ(ranks.status, tleSuccess) << tleGetLastErrorDetail();
  auto start = std::chrono::steady_clock::now();
  LaunchResult r = launch(
      ranks.comms.data(), 1, shape({1, 1, 1}, {32, 1, 1}), [&](int, void *dc) {
        flagcxIntraBarrierSyncS(dc, kCoopWarp, 6, false, kOrderAcqRel);
      });
  double seconds = secondsSince(start);
  ASSERT_EQ(r.result, tleTimeout) << r.message;
  EXPECT_GE(seconds, 0.2);
  EXPECT_LT(seconds, 5.0);
  EXPECT_EQ(r.error.rank, 0);
  EXPECT_EQ(r.error.slot, 6u);
  EXPECT_EQ(r.error.epoch, 1u);
  EXPECT_EQ(r.error.missingMask, 1u << 1);
  EXPECT_GE(r.error.elapsedNs, 200000000u);
  EXPECT_TRUE(contains(r.message, "timed out")) << r.message;
  EXPECT_TRUE(contains(r.message, "missing peers: 1")) << r.message;
}

/// Names in /dev/shm that the host runtime created for process `pid`.
std::vector<std::string> shmSegmentsOf(pid_t pid) {
  std::vector<std::string> found;
  std::string prefix = "tle-" + std::to_string(pid) + "-";
  if (DIR *dir = opendir("/dev/shm")) {
    while (dirent *e = readdir(dir))
      if (std::strncmp(e->d_name, prefix.c_str(), prefix.size()) == 0)
        found.push_back(e->d_name);
    closedir(dir);
  }
  return found;
}

/// One rank of a multi-process communicator, in a forked child: joins,
/// then either dies at once or runs `rounds` barrier rounds with data.
/// The exit status is the launch's tleResult_t (100 + code for setup
/// failures, 99 for wrong data).
[[noreturn]] void childRank(const tleUniqueId &id, int rank, bool die,
                            uint32_t rounds, int64_t timeoutMs) {
  tleConfig_t config = TLE_CONFIG_INITIALIZER;
  config.timeoutMs = timeoutMs;
  config.bootstrapTimeoutMs = 10000;
  tleComm_t comm = nullptr;
  tleResult_t s = tleCommInitRank(&comm, 2, &id, rank, -1, &config);
  if (s != tleSuccess)
    _exit(100 + s);
  tleMem_t mem = nullptr;
  if (tleMemAlloc(comm, 2 * sizeof(uint32_t), &mem) != tleSuccess)
    _exit(120);
  if (die)
    _exit(0);
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
  if (r.result == tleSuccess && bad)
    _exit(99);
  tleMemFree(mem);
  tleCommDestroy(comm);
  _exit(r.result);
}

struct ChildStatus {
  int code = -1;
  double seconds = 0;
};

ChildStatus waitChild(pid_t pid) {
  auto start = std::chrono::steady_clock::now();
  int status = 0;
  waitpid(pid, &status, 0);
  ChildStatus s;
  s.seconds = secondsSince(start);
  s.code = WIFEXITED(status) ? WEXITSTATUS(status) : 200 + WTERMSIG(status);
  return s;
}

TEST(EmuFault, MultiProcessBarrierCompletes) {
  // The control for the test below: two processes, one rank each, 50
  // rounds with data through the shared-memory inboxes.
  tleUniqueId id;
  ASSERT_EQ(tleGetUniqueId(&id), tleSuccess) << tleGetLastErrorDetail();
  pid_t a = fork();
  if (a == 0)
    childRank(id, 0, false, 50, 5000);
  pid_t b = fork();
  if (b == 0)
    childRank(id, 1, false, 50, 5000);
  ChildStatus sa = waitChild(a), sb = waitChild(b);
  EXPECT_EQ(sa.code, tleSuccess);
  EXPECT_EQ(sb.code, tleSuccess);
  EXPECT_TRUE(shmSegmentsOf(a).empty());
  EXPECT_TRUE(shmSegmentsOf(b).empty());
}

TEST(EmuFault, DeadProcessFailsThePeerWithinTheTimeout) {
  tleUniqueId id;
  ASSERT_EQ(tleGetUniqueId(&id), tleSuccess) << tleGetLastErrorDetail();
  pid_t a = fork();
  if (a == 0)
    childRank(id, 0, false, 5, 500);
  pid_t b = fork();
  if (b == 0)
    childRank(id, 1, /*die=*/true, 0, 500);
  ChildStatus sa = waitChild(a), sb = waitChild(b);
  EXPECT_EQ(sb.code, 0);
  EXPECT_TRUE(sa.code == tleTimeout || sa.code == tlePeerFailure)
      << "exit code " << sa.code;
  EXPECT_LT(sa.seconds, 5.0);
  EXPECT_TRUE(shmSegmentsOf(a).empty());
  EXPECT_TRUE(shmSegmentsOf(b).empty());
}

} // namespace
