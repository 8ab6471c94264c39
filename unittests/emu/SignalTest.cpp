//===- SignalTest.cpp - Point-to-point signals on the emulator ------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Runs the signal functions of libtle's host build (the typed API of
// tle/signal.h, FlagCX's flagcxDevSignal* and the Triton entry points) on
// 2-8 emulated ranks: a token ring (ping-pong for two ranks) that hands
// data from group to group for every group kind, a producer/consumer
// pipeline with credits over four ranks, signals to oneself, reads and
// resets, a wait for a signal that never comes (a deadlock naming the
// word), a wait past the deadline, and every bad argument from call to
// record to message, with no word written. A missing group sync on either
// side of a signal or a wait shows up as a wrong value read by another
// thread of the group. Seeds are the default (TLE_EMU_SEED or the clock),
// so every run tries new schedules; failures print the seed.
//
//===----------------------------------------------------------------------===//

#include "EmuTestUtil.h"

#include "tle/signal.h"

#include <chrono>
#include <functional>
#include <string>

using namespace tle;
using namespace tle::emu;
using namespace tle::emutest;

namespace {

constexpr uint32_t kBlocks = 2, kThreads = 64, kRounds = 9;
constexpr uint32_t kAllThreads = kBlocks * kThreads;

struct RingCase {
  int ranks;
  int group; ///< kCoopThread, kCoopWarp or kCoopBlock
};

void PrintTo(const RingCase &c, std::ostream *os) {
  *os << c.ranks << " ranks, group " << c.group;
}

std::string ringName(const testing::TestParamInfo<RingCase> &info) {
  static const char *groups[] = {"thread", "warp", "block"};
  return "n" + std::to_string(info.param.ranks) + "_" +
         groups[info.param.group];
}

/// The calling thread's group on this rank (its signal word) and its rank
/// and size in that group.
void groupOf(int group, uint32_t &word, uint32_t &member, uint32_t &size) {
  uint32_t b = linearBlockId(), t = linearThreadId();
  if (group == kCoopThread)
    word = b * kThreads + t, member = 0, size = 1;
  else if (group == kCoopWarp)
    word = b * (kThreads / 32) + t / 32, member = t % 32, size = 32;
  else
    word = b, member = t, size = kThreads;
}

/// What thread `gtid` of rank `from` writes in round `k`.
int32_t payload(uint32_t k, int from, uint32_t gtid) {
  return static_cast<int32_t>((k + 1) * 100000 + from * 1000 + gtid);
}

/// Round k adds this much: 1 for an increment, more for an add.
uint64_t roundValue(uint32_t k) { return k % 3 == 0 ? 1 : k + 2; }

/// Signal and wait, in one of three spellings chosen by the round.
void signalRound(const void *dc, int peer, uint32_t word, uint32_t k,
                 int group) {
  uint64_t v = roundValue(k);
  if (k % 3 == 0)
    signalInc(dc, peer, word, static_cast<CoopKind>(group));
  else if (k % 3 == 1)
    flagcxDevSignalAdd(dc, kTeamIntra, peer, word, v, 0, group, kScopeSystem);
  else
    tleTritonSignal(reinterpret_cast<int64_t>(dc), peer,
                    static_cast<int32_t>(word), static_cast<int64_t>(v), group);
}
void waitRound(const void *dc, uint32_t word, uint64_t least, uint32_t k,
               int group) {
  if (k % 3 == 0)
    signalWait(dc, word, least, static_cast<CoopKind>(group));
  else if (k % 3 == 1)
    flagcxDevWaitSignal(dc, word, least, 64, 0, group, kOrderAcqRel);
  else
    tleTritonSignalWait(reinterpret_cast<int64_t>(dc),
                        static_cast<int32_t>(word), static_cast<int64_t>(least),
                        group, kOrderSeqCst);
}

class SignalRing : public testing::TestWithParam<RingCase> {};

// A token goes around the ring kRounds times for every group: each hop
// writes the group's data into the next rank's buffer and signals, and the
// next rank waits and reads it. For two ranks it is a ping-pong.
TEST_P(SignalRing, DataHandedOverIsSeenAfterTheWait) {
  const RingCase c = GetParam();
  Ranks ranks(c.ranks, 64, -1, kAllThreads);
  ASSERT_EQ(ranks.status, tleSuccess) << tleGetLastErrorDetail();
  SymBuffer buf(ranks, size_t(kRounds) * kAllThreads * sizeof(int32_t));
  ASSERT_EQ(buf.status, tleSuccess) << tleGetLastErrorDetail();
  std::vector<uint32_t> bad(c.ranks, 0);
  LaunchResult r = launch(
      ranks.comms.data(), c.ranks, shape({kBlocks, 1, 1}, {kThreads, 1, 1}),
      [&](int rank, void *dc) {
        uint32_t word, member, size;
        groupOf(c.group, word, member, size);
        uint32_t gtid = linearBlockId() * kThreads + linearThreadId();
        // The element of another member of the group: a group sync missing
        // on either side would let it be read before it was written.
        uint32_t other = gtid - member + (member + 1) % size;
        int next = (rank + 1) % c.ranks, prev = (rank + c.ranks - 1) % c.ranks;
        auto *mine =
            static_cast<int32_t *>(flagcxGetLocalPointerS(buf.handle(rank), 0));
        auto *theirs = static_cast<int32_t *>(
            flagcxGetIntraPointerS(buf.handle(rank), 0, next));
        uint64_t total = 0;
        for (uint32_t k = 0; k < kRounds; ++k) {
          total += roundValue(k);
          auto send = [&] {
            theirs[k * kAllThreads + gtid] = payload(k, rank, gtid);
            signalRound(dc, next, word, k, c.group);
          };
          auto receive = [&] {
            waitRound(dc, word, total, k, c.group);
            if (mine[k * kAllThreads + other] != payload(k, prev, other))
              ++bad[rank];
          };
          if (rank == 0) {
            send();
            receive();
          } else {
            receive();
            send();
          }
        }
      });
  ASSERT_EQ(r.result, tleSuccess) << r.message;
  uint32_t groups = c.group == kCoopThread ? kAllThreads
                    : c.group == kCoopWarp ? kAllThreads / 32
                                           : kBlocks;
  uint64_t total = 0;
  for (uint32_t k = 0; k < kRounds; ++k)
    total += roundValue(k);
  for (int q = 0; q < c.ranks; ++q) {
    EXPECT_EQ(bad[q], 0u) << "rank " << q << ", seed " << r.seed;
    std::vector<uint64_t> words(kAllThreads);
    ASSERT_EQ(tleCommGetSignals(ranks.comms[q], 0, kAllThreads, words.data()),
              tleSuccess);
    for (uint32_t w = 0; w < kAllThreads; ++w)
      EXPECT_EQ(words[w], w < groups ? total : 0u)
          << "rank " << q << " word " << w;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Emu, SignalRing,
    testing::Values(RingCase{2, kCoopThread}, RingCase{2, kCoopWarp},
                    RingCase{2, kCoopBlock}, RingCase{3, kCoopBlock},
                    RingCase{4, kCoopWarp}, RingCase{5, kCoopThread},
                    RingCase{8, kCoopBlock}, RingCase{8, kCoopWarp}),
    ringName);

// A pipeline of stages over four ranks: rank 0 produces chunks into rank 1's
// ring of kDepth slots, every middle rank adds 1 and passes them on, the
// last checks them. Word 0 of a rank counts the chunks its ring received,
// word 1 the chunks the next rank consumed (credits): a producer waits for
// a free slot before it overwrites one, so a credit signalled before the
// consumer's group finished reading would show as a wrong value.
TEST(Signals, ProducerConsumerPipelineWithCredits) {
  constexpr int kRanks = 4;
  constexpr uint32_t kChunks = 12, kDepth = 2;
  for (int group : {kCoopWarp, kCoopBlock}) {
    SCOPED_TRACE(group == kCoopWarp ? "warp" : "block");
    uint32_t threads = group == kCoopWarp ? 32 : kThreads;
    Ranks ranks(kRanks);
    ASSERT_EQ(ranks.status, tleSuccess) << tleGetLastErrorDetail();
    SymBuffer ring(ranks, size_t(kDepth) * threads * sizeof(int32_t));
    ASSERT_EQ(ring.status, tleSuccess) << tleGetLastErrorDetail();
    std::vector<uint32_t> bad(kRanks, 0);
    LaunchResult r =
        launch(ranks.comms.data(), kRanks, shape({1, 1, 1}, {threads, 1, 1}),
               [&](int rank, void *dc) {
                 uint32_t t = linearThreadId();
                 CoopKind g = static_cast<CoopKind>(group);
                 auto *in = static_cast<int32_t *>(
                     flagcxGetLocalPointerS(ring.handle(rank), 0));
                 int32_t *out =
                     rank + 1 < kRanks
                         ? static_cast<int32_t *>(flagcxGetIntraPointerS(
                               ring.handle(rank), 0, rank + 1))
                         : nullptr;
                 for (uint32_t c = 0; c < kChunks; ++c) {
                   uint32_t slot = (c % kDepth) * threads;
                   int32_t value = static_cast<int32_t>(c * 1000 + t);
                   if (rank > 0) {
                     signalWait(dc, 0, c + 1, g);
                     // Another member's element (see the ring test).
                     uint32_t o = (t + 1) % threads;
                     value = in[slot + o] + 1;
                     if (value != static_cast<int32_t>(c * 1000 + o + rank))
                       ++bad[rank];
                     value = static_cast<int32_t>(c * 1000 + t + rank);
                     signalInc(dc, rank - 1, 1, g);
                   }
                   if (out) {
                     if (c >= kDepth)
                       signalWait(dc, 1, c - kDepth + 1, g);
                     out[slot + t] = value;
                     signalInc(dc, rank + 1, 0, g);
                   }
                 }
               });
    ASSERT_EQ(r.result, tleSuccess) << r.message;
    for (int q = 0; q < kRanks; ++q) {
      EXPECT_EQ(bad[q], 0u) << "rank " << q << ", seed " << r.seed;
      uint64_t words[2];
      ASSERT_EQ(tleCommGetSignals(ranks.comms[q], 0, 2, words), tleSuccess);
      EXPECT_EQ(words[0], q > 0 ? kChunks : 0u) << "rank " << q;
      EXPECT_EQ(words[1], q + 1 < kRanks ? kChunks : 0u) << "rank " << q;
    }
  }
}

// A rank may signal its own words; reads see the value, a reset zeroes the
// word and later signals count from zero; a read in the caller's own loop
// yields, so the peer it waits for gets to run.
TEST(Signals, SelfSignalReadResetAndAReadLoop) {
  Ranks ranks(2);
  ASSERT_EQ(ranks.status, tleSuccess) << tleGetLastErrorDetail();
  std::vector<uint64_t> seen(8, 0);
  LaunchResult r =
      launch(ranks.comms.data(), 2, shape({1, 1, 1}, {32, 1, 1}),
             [&](int rank, void *dc) {
               uint32_t t = linearThreadId();
               signalAdd(dc, rank, 5, 7, kCoopWarp);
               signalWait(dc, 5, 7, kCoopWarp);
               uint64_t a = readSignal(dc, 5);
               uint64_t b = flagcxDevReadSignal(dc, 5, 64, 0, kOrderRelaxed);
               syncThreads();
               resetSignal(dc, 5);
               syncThreads();
               uint64_t c = static_cast<uint64_t>(tleTritonReadSignal(
                   reinterpret_cast<int64_t>(dc), 5, kOrderAcquire));
               syncThreads();
               signalInc(dc, rank, 5, kCoopWarp);
               uint64_t d = readSignal(dc, 5, kOrderSeqCst);
               if (t == 0) {
                 seen[rank * 4 + 0] = a;
                 seen[rank * 4 + 1] = b;
                 seen[rank * 4 + 2] = c;
                 seen[rank * 4 + 3] = d;
               }
               // Rank 1 polls word 6 in its own loop; rank 0 signals it after a
               // while.
               if (rank == 1 && t == 0)
                 while (readSignal(dc, 6) < 3) {
                 }
               if (rank == 0 && t == 0) {
                 for (int i = 0; i < 3; ++i)
                   signalInc(dc, 1, 6, kCoopThread);
               }
             });
  ASSERT_EQ(r.result, tleSuccess) << r.message;
  for (int q = 0; q < 2; ++q) {
    EXPECT_EQ(seen[q * 4 + 0], 7u);
    EXPECT_EQ(seen[q * 4 + 1], 7u);
    EXPECT_EQ(seen[q * 4 + 2], 0u);
    EXPECT_EQ(seen[q * 4 + 3], 1u);
  }
}

// Rank 0 signals word 2 of rank 1, which waits on word 3: no thread can
// progress, and the report names the word, the values and who could still
// have signalled it (rank 1's own threads; rank 0 has finished).
TEST(Signals, AWaitForASignalThatNeverComesIsADeadlockNamingTheWord) {
  Ranks ranks(2);
  ASSERT_EQ(ranks.status, tleSuccess) << tleGetLastErrorDetail();
  uint32_t line = 0;
  LaunchResult r = launch(ranks.comms.data(), 2, shape({1, 1, 1}, {32, 1, 1}),
                          [&](int rank, void *dc) {
                            line = __LINE__ + 4;
                            if (rank == 0)
                              signalInc(dc, 1, 2, kCoopWarp);
                            else
                              signalWait(dc, 3, 1, kCoopWarp);
                          });
  ASSERT_EQ(r.result, tleDeadlock) << r.message;
  // The warp is one line, at the line of its call.
  EXPECT_TRUE(
      contains(r.message, "\n  rank 1 block 0 waits in signal wait at "))
      << r.message;
  EXPECT_TRUE(contains(r.message, "SignalTest.cpp:" + std::to_string(line) +
                                      " on signal 3 of rank 1 for a value >= "
                                      "1 (it holds 0)\n"))
      << r.message;
  // Who could still signal is the same for every signal wait: said once.
  EXPECT_TRUE(contains(r.message, "\n  ranks that could still signal a "
                                  "waited-for word: 1\n"))
      << r.message;
  EXPECT_EQ(r.error.rank, 1);
  EXPECT_EQ(r.error.slot, 3u);
  EXPECT_EQ(r.error.missingMask, 1u << 1);
  // The record, for a caller that reads tleCommGetError after the launch.
  tleErrorInfo info{};
  EXPECT_EQ(tleCommGetError(ranks.comms[1], &info), tleDeadlock);
  EXPECT_EQ(info.slot, 3u);
  EXPECT_EQ(std::string(info.message),
            "rank 1 block 0 thread 0: deadlock in a signal wait on signal 3: "
            "it holds 0, waiting for >= 1; ranks that could still signal it: "
            "1");
  // Rank 0's signal landed on the word it named, and only there.
  uint64_t words[4];
  ASSERT_EQ(tleCommGetSignals(ranks.comms[1], 0, 4, words), tleSuccess);
  EXPECT_EQ(words[2], 1u);
  EXPECT_EQ(words[3], 0u);
}

TEST(Signals, AWaitPastTheDeadlineIsATimeoutWithTheValues) {
  // Only rank 0 of a 2-rank communicator runs here, as in one process per
  // rank: a wait with no local progress is not a deadlock, so the device
  // library's deadline ends it.
  Ranks ranks(2, 16, 200);
  ASSERT_EQ(ranks.status, tleSuccess) << tleGetLastErrorDetail();
  auto start = std::chrono::steady_clock::now();
  LaunchResult r = launch(
      ranks.comms.data(), 1, shape({1, 1, 1}, {32, 1, 1}), [&](int, void *dc) {
        flagcxDevSignalAdd(dc, kTeamIntra, 0, 3, 2, 0, kCoopBlock,
                           kScopeDevice);
        flagcxDevWaitSignal(dc, 3, 5, 64, 0, kCoopBlock, kOrderAcquire);
      });
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  ASSERT_EQ(r.result, tleTimeout) << r.message;
  EXPECT_GE(seconds, 0.2);
  EXPECT_LT(seconds, 5.0);
  EXPECT_EQ(r.error.rank, 0);
  EXPECT_EQ(r.error.slot, 3u);
  EXPECT_GE(r.error.elapsedNs, 200000000u);
  std::string message = r.error.message;
  EXPECT_TRUE(contains(message, "rank 0 block 0 thread 0: tle.signal_wait "
                                "(flagcxDevWaitSignal): signal wait timed "
                                "out after "))
      << message;
  EXPECT_TRUE(contains(message, " ms on signal 3: it holds 2, waiting for "
                                ">= 5"))
      << message;
}

struct ErrorCase {
  const char *name;
  std::function<void(void *dc)> call;
  tleResult_t result;
  /// The message after "rank 1 block 0 thread T: ".
  const char *message;
};

// Every bad argument of a signal function, through a real call on the
// emulator: the launch's status, the record, the message (written out by
// hand, docs/abi.md), and that no signal word changed.
TEST(Signals, EveryBadArgumentIsWordedAndWritesNothing) {
  constexpr uint32_t kWords = 16;
  const ErrorCase cases[] = {
      {"signal index",
       [](void *dc) {
         flagcxDevSignalInc(dc, kTeamIntra, 0, kWords, 0, kCoopBlock,
                            kScopeSystem);
       },
       tleIndexOutOfRange,
       "tle.signal (flagcxDevSignalInc): signal 16 out of range (nSignals "
       "16)"},
      {"negative signal index",
       [](void *dc) {
         tleTritonSignalWait(reinterpret_cast<int64_t>(dc), -1, 1, kCoopBlock,
                             kOrderAcquire);
       },
       tleIndexOutOfRange,
       "tle.signal_wait (tleTritonSignalWait): signal 4294967295 out of "
       "range (nSignals 16)"},
      {"read index",
       [](void *dc) { flagcxDevReadSignal(dc, 99, 64, 0, kOrderAcquire); },
       tleIndexOutOfRange,
       "tle.read_signal (flagcxDevReadSignal): signal 99 out of range "
       "(nSignals 16)"},
      {"reset index", [](void *dc) { flagcxDevResetSignal(dc, 0, kWords); },
       tleIndexOutOfRange,
       "tle.reset_signal (flagcxDevResetSignal): signal 16 out of range "
       "(nSignals 16)"},
      {"peer",
       [](void *dc) {
         flagcxDevSignalAdd(dc, kTeamIntra, 2, 0, 5, 0, kCoopWarp,
                            kScopeSystem);
       },
       tleInvalidArgument,
       "tle.signal (flagcxDevSignalAdd): peer 2 is out of range (the "
       "communicator has 2 ranks)"},
      {"negative peer",
       [](void *dc) {
         tleTritonSignal(reinterpret_cast<int64_t>(dc), -1, 0, 1, kCoopBlock);
       },
       tleInvalidArgument,
       "tle.signal (tleTritonSignal): peer -1 is out of range (the "
       "communicator has 2 ranks)"},
      {"team",
       [](void *dc) {
         flagcxDevSignalInc(dc, 3, 0, 0, 0, kCoopBlock, kScopeSystem);
       },
       tleInvalidArgument,
       "tle.signal (flagcxDevSignalInc): team kind 3 is not a team (valid: 0 "
       "intra, 1 inter, 2 world)"},
      // -1 is the library's own "no such argument" value, and used to skip
      // the check (team -1 then acted as WORLD).
      {"team -1",
       [](void *dc) {
         flagcxDevSignalInc(dc, -1, 0, 0, 0, kCoopBlock, kScopeSystem);
       },
       tleInvalidArgument,
       "tle.signal (flagcxDevSignalInc): team kind -1 is not a team (valid: "
       "0 intra, 1 inter, 2 world)"},
      {"Triton team -1",
       [](void *dc) {
         tleTritonTeamSignal(reinterpret_cast<int64_t>(dc), -1, 0, 0, 1,
                             kCoopBlock);
       },
       tleInvalidArgument,
       "tle.signal (tleTritonTeamSignal): team kind -1 is not a team (valid: "
       "0 intra, 1 inter, 2 world)"},
      {"scope -1",
       [](void *dc) {
         flagcxDevSignalAdd(dc, kTeamIntra, 0, 0, 1, 0, kCoopBlock, -1);
       },
       tleInvalidArgument,
       "tle.signal (flagcxDevSignalAdd): unknown memory scope -1 (valid: "
       "0..3)"},
      {"bits -1",
       [](void *dc) {
         flagcxDevWaitSignal(dc, 0, 1, -1, 0, kCoopBlock, kOrderAcquire);
       },
       tleInvalidArgument,
       "tle.signal_wait (flagcxDevWaitSignal): a -1-bit signal is not "
       "supported (TLE's signal words are 64-bit: pass bits = 64)"},
      // A wait or a read only observes: release used to be dropped.
      {"wait order release",
       [](void *dc) {
         flagcxDevWaitSignal(dc, 0, 1, 64, 0, kCoopBlock, kOrderRelease);
       },
       tleInvalidArgument,
       "tle.signal_wait (flagcxDevWaitSignal): memory order 2 (release) "
       "cannot be used here: a signal wait or read only observes (use "
       "relaxed, acquire, acq_rel or seq_cst)"},
      {"read order release",
       [](void *dc) { flagcxDevReadSignal(dc, 0, 64, 0, kOrderRelease); },
       tleInvalidArgument,
       "tle.read_signal (flagcxDevReadSignal): memory order 2 (release) "
       "cannot be used here: a signal wait or read only observes (use "
       "relaxed, acquire, acq_rel or seq_cst)"},
      {"context",
       [](void *dc) {
         flagcxDevWaitSignal(dc, 0, 1, 64, 4, kCoopBlock, kOrderAcquire);
       },
       tleInvalidArgument,
       "tle.signal_wait (flagcxDevWaitSignal): context id 4 is out of range "
       "(the communicator has 4 network contexts: tleConfig_t::nContexts)"},
      {"bits",
       [](void *dc) { flagcxDevReadSignal(dc, 0, 32, 0, kOrderAcquire); },
       tleInvalidArgument,
       "tle.read_signal (flagcxDevReadSignal): a 32-bit signal is not "
       "supported (TLE's signal words are 64-bit: pass bits = 64)"},
      {"scope",
       [](void *dc) {
         flagcxDevSignalAdd(dc, kTeamIntra, 0, 0, 1, 0, kCoopBlock, 4);
       },
       tleInvalidArgument,
       "tle.signal (flagcxDevSignalAdd): unknown memory scope 4 (valid: "
       "0..3)"},
      {"group",
       [](void *dc) {
         tleTritonSignal(reinterpret_cast<int64_t>(dc), 0, 0, 1, 5);
       },
       tleInvalidArgument,
       "tle.signal (tleTritonSignal): unknown cooperative group kind 5 "
       "(valid: 0..4)"},
      {"order",
       [](void *dc) { flagcxDevWaitSignal(dc, 0, 1, 64, 0, kCoopBlock, 7); },
       tleInvalidArgument,
       "tle.signal_wait (flagcxDevWaitSignal): unknown memory order 7 "
       "(valid: 0..4)"},
  };
  for (const ErrorCase &c : cases) {
    SCOPED_TRACE(c.name);
    Ranks ranks(2, 8, -1, kWords);
    ASSERT_EQ(ranks.status, tleSuccess) << tleGetLastErrorDetail();
    // Canaries past the last word where the allocation's page has room
    // (the host allocates whole pages).
    std::vector<size_t> canaries;
    for (int q = 0; q < 2; ++q) {
      uint64_t *words = ranks.dev(q)->signals;
      uintptr_t end = reinterpret_cast<uintptr_t>(words + kWords);
      size_t room = reinterpret_cast<uintptr_t>(words) % 4096 == 0
                        ? (4096 - end % 4096) % 4096 / sizeof(uint64_t)
                        : 0;
      canaries.push_back(std::min<size_t>(room, 8));
      for (size_t i = 0; i < canaries[q]; ++i)
        words[kWords + i] = 0xC0FFEE00u + i;
    }
    LaunchResult r = launch(ranks.comms.data(), 2, shape({1, 1, 1}, {32, 1, 1}),
                            [&](int rank, void *dc) {
                              if (rank == 1)
                                c.call(dc);
                            });
    EXPECT_EQ(r.result, c.result) << r.message;
    EXPECT_EQ(r.error.rank, 1);
    std::string want = std::string("rank 1 block 0 thread ") +
                       std::to_string(r.error.thread) + ": " + c.message;
    EXPECT_EQ(std::string(r.error.message), want);
    EXPECT_TRUE(contains(r.message, want)) << r.message;
    for (int q = 0; q < 2; ++q) {
      uint64_t *words = ranks.dev(q)->signals;
      for (uint32_t w = 0; w < kWords; ++w)
        EXPECT_EQ(words[w], 0u) << "rank " << q << " word " << w;
      for (size_t i = 0; i < canaries[q]; ++i)
        EXPECT_EQ(words[kWords + i], 0xC0FFEE00u + i);
    }
  }
}

} // namespace
