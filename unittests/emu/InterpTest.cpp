//===- InterpTest.cpp - The entry points of Triton's interpreter ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// tleInterp* (runtime/host/emu/Interp.h) run the host device library on
// plain OS threads, one per rank, as Triton's interpreter does: barriers of
// every kind, group and order exchange data correctly, the program id is
// the block of the error record, and every failure (timeout, slot out of
// range, bad argument, bad pointer) comes back as a status with the record
// instead of ending the process, leaving the thread ready for the next call.
//
//===----------------------------------------------------------------------===//

#include "emu/Interp.h"
#include "EmuTestUtil.h"

#include <atomic>
#include <chrono>
#include <cstring>
#include <regex>
#include <string>
#include <thread>

using namespace tle;
using namespace tle::emutest;

namespace {

tleInterpProgram program(uint32_t x, uint32_t gridX) {
  return tleInterpProgram{{x, 0, 0}, {gridX, 1, 1}};
}

int64_t addr(const void *p) { return reinterpret_cast<int64_t>(p); }

tleResult_t barrier(const tleInterpProgram &p, const void *comm, int kind,
                    int group, int index, int order,
                    tleErrorInfo *error = nullptr) {
  tleErrorInfo local;
  int32_t out = -1;
  tleResult_t r = tleTritonBarrierInterp(&p, addr(comm), kind, group, index,
                                         order, &out, error ? error : &local);
  EXPECT_EQ(out, r == tleSuccess ? 0 : -1);
  return r;
}

/// Runs `body(rank)` on one OS thread per rank.
template <typename Body> void perRank(int n, Body body) {
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r)
    threads.emplace_back([&, r] { body(r); });
  for (std::thread &t : threads)
    t.join();
}

struct Case {
  int group;
  int order;
};

class InterpBarrier : public ::testing::TestWithParam<Case> {};

// Each round every rank writes its round number into its right neighbour's
// copy, barriers (sync, or arrive then wait), reads what its left neighbour
// wrote, and barriers again before the next round overwrites it.
TEST_P(InterpBarrier, NeighbourExchange) {
  constexpr int kRanks = 3, kRounds = 50;
  const Case c = GetParam();
  Ranks ranks(kRanks);
  ASSERT_EQ(ranks.status, tleSuccess) << tleGetLastErrorDetail();
  SymBuffer buf(ranks, sizeof(uint32_t));
  ASSERT_EQ(buf.status, tleSuccess) << tleGetLastErrorDetail();
  std::atomic<int> bad{0}, failed{0};
  perRank(kRanks, [&](int rank) {
    tleInterpProgram p = program(0, 1);
    const void *comm = ranks.dev(rank);
    int64_t mine = 0, theirs = 0;
    tleErrorInfo e;
    if (tleTritonLocalPointerInterp(&p, addr(buf.handle(rank)), 0, &mine, &e) !=
            tleSuccess ||
        tleTritonIntraPointerInterp(&p, addr(buf.handle(rank)), 0,
                                    (rank + 1) % kRanks, &theirs,
                                    &e) != tleSuccess) {
      ++failed;
      return;
    }
    int left = (rank + kRanks - 1) % kRanks;
    for (int round = 1; round <= kRounds; ++round) {
      *reinterpret_cast<volatile uint32_t *>(theirs) = round * 16 + rank;
      bool ok = round % 2 ? barrier(p, comm, 2, c.group, 0, c.order) == 0
                          : barrier(p, comm, 0, c.group, 0, c.order) == 0 &&
                                barrier(p, comm, 1, c.group, 0, c.order) == 0;
      if (*reinterpret_cast<volatile uint32_t *>(mine) !=
          uint32_t(round * 16 + left))
        ++bad;
      ok = ok && barrier(p, comm, 2, c.group, 0, c.order) == 0;
      if (!ok) {
        ++failed;
        return;
      }
    }
  });
  EXPECT_EQ(failed.load(), 0) << tleGetLastErrorDetail();
  EXPECT_EQ(bad.load(), 0);
}

// Release/acquire orders carry the data; the grid group runs with a grid of
// one program (the only one the interpreter can form).
INSTANTIATE_TEST_SUITE_P(Groups, InterpBarrier,
                         ::testing::Values(Case{0, 3}, Case{1, 3}, Case{2, 3},
                                           Case{2, 4}, Case{5, 3}));

TEST(InterpSlots, ProgramsUseTheirOwnSlots) {
  constexpr int kPrograms = 5;
  Ranks ranks(2, kPrograms);
  ASSERT_EQ(ranks.status, tleSuccess) << tleGetLastErrorDetail();
  std::atomic<int> failed{0};
  perRank(2, [&](int rank) {
    for (int round = 0; round < 3; ++round)
      for (uint32_t pid = 0; pid < kPrograms; ++pid)
        if (barrier(program(pid, kPrograms), ranks.dev(rank), 2, 2, pid, 3))
          ++failed;
  });
  EXPECT_EQ(failed.load(), 0) << tleGetLastErrorDetail();
  for (int r = 0; r < 2; ++r)
    for (int s = 0; s < kPrograms; ++s)
      EXPECT_EQ(ranks.dev(r)->epochs[s], 3u) << "rank " << r << " slot " << s;
}

TEST(InterpQueries, RankSizeAndPointers) {
  Ranks ranks(2);
  ASSERT_EQ(ranks.status, tleSuccess);
  SymBuffer buf(ranks, 256);
  ASSERT_EQ(buf.status, tleSuccess);
  tleInterpProgram p = program(0, 1);
  tleErrorInfo e;
  for (int r = 0; r < 2; ++r) {
    int32_t rank = -1, size = -1;
    ASSERT_EQ(tleTritonIntraRankInterp(&p, addr(ranks.dev(r)), &rank, &e),
              tleSuccess);
    ASSERT_EQ(tleTritonIntraSizeInterp(&p, addr(ranks.dev(r)), &size, &e),
              tleSuccess);
    EXPECT_EQ(rank, r);
    EXPECT_EQ(size, 2);
    const auto *m = static_cast<const SymMem *>(buf.handle(r));
    int64_t local = 0, peer = 0;
    ASSERT_EQ(tleTritonLocalPointerInterp(&p, addr(m), 16, &local, &e),
              tleSuccess);
    ASSERT_EQ(tleTritonIntraPointerInterp(&p, addr(m), 256, 1 - r, &peer, &e),
              tleSuccess);
    EXPECT_EQ(local, addr(m->ptrs[r]) + 16);
    EXPECT_EQ(peer, addr(m->ptrs[1 - r]) + 256); // one past the end is fine
  }
}

TEST(InterpFault, TimeoutReturnsTheRecordNamingTheMissingPeer) {
  Ranks ranks(2, 64, /*timeoutMs=*/300);
  ASSERT_EQ(ranks.status, tleSuccess);
  tleErrorInfo e;
  auto start = std::chrono::steady_clock::now();
  // Rank 1 never arrives: rank 0, program 3 of 4, times out.
  tleResult_t r = barrier(program(3, 4), ranks.dev(0), 2, 2, 7, 3, &e);
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  ASSERT_EQ(r, tleTimeout);
  EXPECT_EQ(e.result, tleTimeout);
  EXPECT_EQ(e.rank, 0);
  EXPECT_EQ(e.block, 3);
  EXPECT_EQ(e.thread, 0);
  EXPECT_EQ(e.slot, 7u);
  EXPECT_EQ(e.epoch, 1u);
  EXPECT_EQ(e.missingMask, 1u << 1);
  EXPECT_EQ(e.missingPeers[0], 1u << 1);
  EXPECT_GE(seconds, 0.3);
  EXPECT_LT(seconds, 5.0);
  // The deadline passes at the first poll after 300 ms, which a loaded
  // machine may run a few milliseconds late.
  EXPECT_TRUE(std::regex_match(
      e.message,
      std::regex(
          "rank 0 block 3 thread 0: tle\\.distributed_barrier "
          "\\(tleTritonBarrier\\): barrier wait timed out after 3[0-9]{2} "
          "ms on slot 7 epoch 1; missing peers: 1")))
      << e.message;
  EXPECT_EQ(std::string(tleGetLastErrorDetail()),
            std::string("tleTritonBarrierInterp: ") + e.message);
  // The record was read and cleared, as tleCommGetError does.
  tleErrorInfo after;
  EXPECT_EQ(tleCommGetError(ranks.comms[0], &after), tleSuccess);
  EXPECT_EQ(after.result, tleSuccess);
  // The thread is no longer a program: the next call runs normally.
  int32_t size = 0;
  tleInterpProgram p = program(0, 1);
  EXPECT_EQ(tleTritonIntraSizeInterp(&p, addr(ranks.dev(0)), &size, &e),
            tleSuccess);
  EXPECT_EQ(size, 2);
}

TEST(InterpFault, EveryFailureIsAStatus) {
  Ranks ranks(2, 8);
  ASSERT_EQ(ranks.status, tleSuccess);
  SymBuffer buf(ranks, 64);
  ASSERT_EQ(buf.status, tleSuccess);
  tleInterpProgram p = program(1, 2);
  tleErrorInfo e;
  EXPECT_EQ(barrier(p, ranks.dev(0), 2, 2, 8, 3, &e), tleIndexOutOfRange);
  EXPECT_STREQ(e.message,
               "rank 0 block 1 thread 0: tle.distributed_barrier "
               "(tleTritonBarrier): barrier slot 8 out of range "
               "(nBarriers 8): create the communicator with nBarriers "
               "(n_barriers) > 8, or pass an index < 8");
  // Slot 70 of a grid of 80 programs is the program id a barrier without
  // an index uses: the message names the n_barriers that grid needs.
  EXPECT_EQ(barrier(program(70, 80), ranks.dev(0), 2, 2, 70, 3, &e),
            tleIndexOutOfRange);
  EXPECT_STREQ(e.message,
               "rank 0 block 70 thread 0: tle.distributed_barrier "
               "(tleTritonBarrier): barrier slot 70 out of range "
               "(nBarriers 8): the default slot is the program id; this grid "
               "has 80 programs: pass n_barriers=80 (or more) to the "
               "communicator, or an index < 8");
  EXPECT_EQ(barrier(p, ranks.dev(0), 3, 2, 0, 3, &e), tleInvalidArgument);
  EXPECT_EQ(barrier(p, ranks.dev(0), 2, 2, 0, 9, &e), tleInvalidArgument);
  int64_t out = 0;
  EXPECT_EQ(
      tleTritonIntraPointerInterp(&p, addr(buf.handle(0)), 0, 2, &out, &e),
      tleInvalidArgument);
  EXPECT_EQ(e.rank, 0);
  EXPECT_EQ(tleTritonLocalPointerInterp(&p, addr(buf.handle(0)), 65, &out, &e),
            tleInvalidArgument);
  EXPECT_EQ(out, 0);
  // Pointers the library cannot trust: no record, a bad communicator.
  int32_t rank = 0;
  EXPECT_EQ(tleTritonIntraRankInterp(&p, 0, &rank, &e), tleInvalidComm);
  EXPECT_NE(std::string(e.message).find("without an error record"),
            std::string::npos)
      << e.message;
  uint32_t garbage[64] = {};
  EXPECT_EQ(barrier(p, garbage, 2, 2, 0, 3, &e), tleInvalidComm);
  EXPECT_EQ(tleTritonLocalPointerInterp(&p, addr(garbage), 0, &out, &e),
            tleInvalidComm);
  // A program outside its grid, and missing outputs.
  tleInterpProgram outside = program(2, 2);
  EXPECT_EQ(barrier(outside, ranks.dev(0), 2, 2, 0, 3, &e), tleInvalidArgument);
  EXPECT_EQ(tleTritonIntraRankInterp(&p, addr(ranks.dev(0)), nullptr, &e),
            tleInvalidArgument);
  EXPECT_EQ(tleTritonIntraRankInterp(&p, addr(ranks.dev(0)), &rank, nullptr),
            tleInvalidArgument);
  // Nothing above left the slots in a state the next barrier trips on.
  std::atomic<int> failed{0};
  perRank(2, [&](int r) {
    if (barrier(program(0, 1), ranks.dev(r), 2, 2, 0, 3))
      ++failed;
  });
  EXPECT_EQ(failed.load(), 0) << tleGetLastErrorDetail();
}

// Reproducer (issue 32, item 11): a destroyed communicator's DevComm and a
// freed buffer's handle were accepted (the magic word survives free()), and
// the call ran on freed memory. Only live objects' pointers are passed on.
TEST(InterpFault, StalePointersAreRefused) {
  tleComm_t comm;
  ASSERT_EQ(tleCommInitAll(&comm, 1, nullptr, nullptr), tleSuccess);
  tleMem_t mem;
  ASSERT_EQ(tleMemAllocAll(&comm, 1, 64, &mem), tleSuccess);
  void *dc = nullptr, *handle = nullptr;
  ASSERT_EQ(tleCommGetDevComm(comm, &dc), tleSuccess);
  ASSERT_EQ(tleMemGetHandle(mem, &handle), tleSuccess);
  tleInterpProgram p = program(0, 1);
  tleErrorInfo e;
  int64_t out = 0;
  int32_t rank = -1;
  ASSERT_EQ(tleTritonLocalPointerInterp(&p, addr(handle), 0, &out, &e),
            tleSuccess);
  ASSERT_EQ(tleTritonIntraRankInterp(&p, addr(dc), &rank, &e), tleSuccess);
  ASSERT_EQ(tleMemFree(mem), tleSuccess);
  EXPECT_EQ(tleTritonLocalPointerInterp(&p, addr(handle), 0, &out, &e),
            tleInvalidComm);
  EXPECT_NE(std::string(e.message).find(
                "is neither the DevComm of a live communicator nor the "
                "handle of a live symmetric buffer"),
            std::string::npos)
      << e.message;
  ASSERT_EQ(tleCommDestroy(comm), tleSuccess);
  rank = -1;
  EXPECT_EQ(tleTritonIntraRankInterp(&p, addr(dc), &rank, &e), tleInvalidComm)
      << "rank " << rank;
  EXPECT_EQ(rank, -1);
}

} // namespace
