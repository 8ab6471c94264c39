//===- DeviceHostTest.cpp - Unit tests of the device library's host build -===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Tests of the device library as the CPU emulator runs it, against the
// sequential fake of FakeEmu.h: the barrier paths that never block (every
// rank arrives, then every rank waits), epochs and inbox words after each
// round, wrap-around, the grid barrier's CTA counting, the pointer and
// rank queries, the brackets every call puts around itself for the
// emulator, and every failure: the record it leaves and the abort.
// Failures run in a forked child; all state is in shared memory so the
// parent can check what the child wrote (and did not write).
//
//===----------------------------------------------------------------------===//

#include "FakeEmu.h"

#include "tle/barrier.h"
#include "tle/device.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

using namespace tle;
using namespace tle::test;

namespace {

constexpr uint32_t kSlots = 8;
constexpr uint32_t kStride = 32;
constexpr uint32_t kCanary = 0xdeadbeefu;

/// Ranks a test node may have.
constexpr int kTestRanks = 8;

/// One rank's barrier memory, with a canary word after every array.
struct RankMem {
  uint32_t epochs[kSlots + 1];
  uint32_t gridCount[kSlots + 1];
  uint32_t inbox[kSlots * kStride + 1];
  ErrorRecord error;
  DevComm commStruct;
  SymMem memStruct;
  char buffer[64];
  DevComm &comm() { return commStruct; }
  SymMem &mem() { return memStruct; }
};

struct Node {
  int n;
  RankMem rank[kTestRanks];
};

class DeviceHost : public ::testing::Test {
public:
  void SetUp() override {
    resetFake();
    node = static_cast<Node *>(sharedAlloc(sizeof(Node)));
    build(2);
  }

  /// A node of n ranks whose epochs and inbox words all start at `epoch`.
  void build(int n, uint32_t epoch = 0) {
    std::memset(node, 0, sizeof(Node));
    node->n = n;
    for (int r = 0; r < n; ++r) {
      RankMem &m = node->rank[r];
      for (uint32_t s = 0; s < kSlots; ++s) {
        m.epochs[s] = epoch;
        for (int q = 0; q < n; ++q)
          m.inbox[s * kStride + q] = epoch;
      }
      m.epochs[kSlots] = m.gridCount[kSlots] = kCanary;
      m.inbox[kSlots * kStride] = kCanary;
      DevComm &c = m.comm();
      c.magic = kDevCommMagic;
      c.version = kDevCommVersion;
      c.rank = r;
      c.size = n;
      c.nBarriers = kSlots;
      c.inboxStride = kStride;
      c.timeoutNs = 0;
      c.epochs = m.epochs;
      c.gridCount = m.gridCount;
      c.error = &m.error;
      SymMem &s = m.mem();
      s.magic = kSymMemMagic;
      s.rank = r;
      s.size = n;
      s.bytes = sizeof(m.buffer);
      s.error = &m.error;
    }
    uint32_t *inbox[kTestRanks];
    for (int q = 0; q < n; ++q)
      inbox[q] = node->rank[q].inbox;
    for (int r = 0; r < n; ++r) {
      for (int q = 0; q < n; ++q)
        node->rank[r].mem().ptrs[q] = node->rank[q].buffer;
      fillRoutes(node->rank[r].comm(), inbox);
    }
  }

  const void *comm(int r) const { return &node->rank[r].commStruct; }
  RankMem &rank(int r) { return node->rank[r]; }

  bool canariesIntact() const {
    for (int r = 0; r < node->n; ++r) {
      const RankMem &m = node->rank[r];
      if (m.epochs[kSlots] != kCanary || m.gridCount[kSlots] != kCanary ||
          m.inbox[kSlots * kStride] != kCanary)
        return false;
    }
    return true;
  }

  /// Runs `fn(this)` in a child and expects the launch to be aborted.
  template <typename Fn> void expectAbort(Fn fn) {
    struct Arg {
      DeviceHost *self;
      Fn *fn;
    } arg{this, &fn};
    fake().aborts = 0;
    int status = runInChild(
        [](void *p) {
          Arg *a = static_cast<Arg *>(p);
          (*a->fn)(a->self);
        },
        &arg);
    EXPECT_EQ(status, kAbortExit);
    EXPECT_EQ(fake().aborts, 1u);
  }

  Node *node = nullptr;
};

// ---- queries ---------------------------------------------------------------

TEST_F(DeviceHost, RankAndSize) {
  build(4);
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(flagcxDevCommGetIntraRank(comm(r)), r);
    EXPECT_EQ(flagcxDevCommGetIntraSize(comm(r)), 4);
    int64_t c = reinterpret_cast<int64_t>(comm(r));
    EXPECT_EQ(tleTritonIntraRank(c), r);
    EXPECT_EQ(tleTritonIntraSize(c), 4);
    // FlagTree's spellings (abi.def).
    EXPECT_EQ(tle_get_device_id(c), r);
    EXPECT_EQ(tle_get_world_rank(c), r);
    EXPECT_EQ(tle_get_num_pes(c), 4);
  }
}

TEST_F(DeviceHost, Pointers) {
  build(3);
  const void *mem = &rank(1).mem();
  EXPECT_EQ(flagcxGetLocalPointerS(mem, 8), rank(1).buffer + 8);
  for (int q = 0; q < 3; ++q)
    EXPECT_EQ(flagcxGetIntraPointerS(mem, 16, q), rank(q).buffer + 16);
  // One past the end is a valid pointer, as in C++.
  EXPECT_EQ(flagcxGetIntraPointerS(mem, 64, 2), rank(2).buffer + 64);
  int64_t m = reinterpret_cast<int64_t>(mem);
  EXPECT_EQ(tleTritonLocalPointer(m, 4),
            reinterpret_cast<int64_t>(rank(1).buffer + 4));
  EXPECT_EQ(tleTritonIntraPointer(m, 4, 0),
            reinterpret_cast<int64_t>(rank(0).buffer + 4));
  EXPECT_EQ(tle_remote_pointer(m, 12, 2),
            reinterpret_cast<int64_t>(rank(2).buffer + 12));
}

// Each call tells the emulator that it enters and leaves the library, once:
// the C ABI with its name, the typed API with its caller's file and line.
TEST_F(DeviceHost, EveryCallIsBracketed) {
  build(1);
  flagcxIntraBarrierSyncS(comm(0), kCoopThread, 1, false, kOrderAcqRel);
  EXPECT_EQ(fake().callsEntered, 1u);
  EXPECT_EQ(fake().callsLeft, 1u);
  EXPECT_STREQ(fake().callName, "flagcxIntraBarrierSyncS");
  EXPECT_STREQ(fake().callFile, "");
  uint32_t line = __LINE__ + 1;
  barrierSync(comm(0), kCoopThread, 1, kOrderAcqRel);
  EXPECT_EQ(fake().callsEntered, 2u);
  EXPECT_EQ(fake().callsLeft, 2u);
  EXPECT_EQ(fake().callDepth, 0u);
  EXPECT_STREQ(fake().callName, "");
  std::string file = fake().callFile;
  EXPECT_EQ(file.substr(file.size() - std::strlen("DeviceHostTest.cpp")),
            "DeviceHostTest.cpp")
      << file;
  EXPECT_EQ(fake().callLine, line);
  // A query is a call too (its report names its line on a bad argument).
  EXPECT_EQ(flagcxDevCommGetIntraSize(comm(0)), 1);
  EXPECT_EQ(fake().callsEntered, 3u);
  EXPECT_EQ(fake().callsLeft, 3u);
  EXPECT_STREQ(fake().callName, "flagcxDevCommGetIntraSize");
}

TEST_F(DeviceHost, PointerBadPeerIsRecorded) {
  build(3);
  expectAbort(
      [](DeviceHost *t) { flagcxGetIntraPointerS(&t->rank(1).mem(), 0, 3); });
  const ErrorRecord &e = rank(1).error;
  EXPECT_EQ(e.state, 2u);
  EXPECT_EQ(e.code, kDevErrBadArgument);
  EXPECT_EQ(e.rank, 1);
  EXPECT_EQ(e.argument, kArgPeer);
  EXPECT_EQ(e.value, 3u);
  EXPECT_EQ(e.limit, 3u);
  EXPECT_EQ(e.function,
            static_cast<uint32_t>(tle::abi::Fn::flagcxGetIntraPointerS));
}

TEST_F(DeviceHost, PointerOffsetPastEndIsRecorded) {
  expectAbort([](DeviceHost *t) {
    tleTritonLocalPointer((int64_t)&t->rank(0).mem(), 65);
  });
  EXPECT_EQ(rank(0).error.code, kDevErrBadArgument);
  EXPECT_EQ(rank(0).error.argument, kArgOffset);
  EXPECT_EQ(rank(0).error.value, 65u);
  EXPECT_EQ(rank(0).error.limit, 64u);
  EXPECT_EQ(rank(0).error.function,
            static_cast<uint32_t>(tle::abi::Fn::tleTritonLocalPointer));
}

TEST_F(DeviceHost, PointerBadMagicAbortsWithoutRecord) {
  rank(0).mem().magic = 0;
  expectAbort(
      [](DeviceHost *t) { flagcxGetLocalPointerS(&t->rank(0).mem(), 0); });
  EXPECT_EQ(rank(0).error.state, 0u);
}

// ---- barrier rounds
// ----------------------------------------------------------

/// One round in which every rank arrives, then every rank waits; nothing
/// may spin. Checks the inbox words and epochs after it.
void roundArriveThenWait(Node *node, int coop, uint32_t slot, int order,
                         uint32_t expected) {
  int n = node->n;
  for (int r = 0; r < n; ++r)
    flagcxIntraBarrierArriveS(&node->rank[r].commStruct, coop, slot, false,
                              order);
  for (int r = 0; r < n; ++r)
    for (int q = 0; q < n; ++q)
      if (q != r)
        EXPECT_EQ(node->rank[r].inbox[slot * kStride + q], expected)
            << "rank " << r << " peer " << q;
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(node->rank[r].epochs[slot], expected - 1);
    flagcxIntraBarrierWaitS(&node->rank[r].commStruct, coop, slot, false,
                            order);
    EXPECT_EQ(node->rank[r].epochs[slot], expected);
  }
}

TEST_F(DeviceHost, ThreadBarrierEveryOrderAndSize) {
  for (int n = 1; n <= 4; ++n) {
    build(n);
    for (int order = kOrderRelaxed; order <= kOrderSeqCst; ++order)
      for (uint32_t slot : {0u, 5u, kSlots - 1})
        roundArriveThenWait(node, kCoopThread, slot, order,
                            node->rank[0].epochs[slot] + 1);
    EXPECT_EQ(fake().spins, 0u);
    // Other slots are untouched: a slot's words belong to it alone.
    for (int r = 0; r < n; ++r)
      EXPECT_EQ(rank(r).epochs[1], 0u);
  }
  EXPECT_TRUE(canariesIntact());
}

TEST_F(DeviceHost, SyncAfterPeersArrived) {
  build(3);
  for (uint32_t round = 1; round <= 3; ++round) {
    flagcxIntraBarrierArriveS(comm(1), kCoopThread, 2, false, kOrderRelease);
    flagcxIntraBarrierArriveS(comm(2), kCoopThread, 2, false, kOrderRelease);
    flagcxIntraBarrierSyncS(comm(0), kCoopThread, 2, false, kOrderAcqRel);
    flagcxIntraBarrierWaitS(comm(1), kCoopThread, 2, false, kOrderAcquire);
    flagcxIntraBarrierWaitS(comm(2), kCoopThread, 2, false, kOrderAcquire);
    for (int r = 0; r < 3; ++r)
      EXPECT_EQ(rank(r).epochs[2], round);
  }
  EXPECT_EQ(fake().spins, 0u);
}

TEST_F(DeviceHost, GroupKindsSyncTheirGroup) {
  build(2);
  // A one-thread block: the groups degenerate to one thread, but each kind
  // must still call its own group sync: arrive syncs the group once; wait
  // syncs the first warp (ordering the epoch reads before its advance),
  // then the group.
  roundArriveThenWait(node, kCoopBlock, 0, kOrderAcqRel, 1);
  EXPECT_EQ(fake().syncBlocks, 4u);
  EXPECT_EQ(fake().syncWarps, 2u);
  roundArriveThenWait(node, kCoopWarp, 0, kOrderAcqRel, 2);
  EXPECT_EQ(fake().syncWarps, 2u + 6u);
  // TileSpan and Lanes run as a warp.
  roundArriveThenWait(node, kCoopTileSpan, 0, kOrderAcqRel, 3);
  roundArriveThenWait(node, kCoopLanes, 0, kOrderAcqRel, 4);
  EXPECT_EQ(fake().syncWarps, 2u + 18u);
  EXPECT_EQ(fake().syncBlocks, 4u);
  roundArriveThenWait(node, kCoopThread, 0, kOrderAcqRel, 5);
  EXPECT_EQ(fake().syncWarps, 2u + 18u);
  EXPECT_EQ(fake().syncBlocks, 4u);
  EXPECT_EQ(fake().spins, 0u);
}

TEST_F(DeviceHost, NonWorkerThreadsTouchNothing) {
  build(2);
  // Thread 40 of a 64-thread block is neither a worker nor rank 0 of the
  // block group: it checks the communicator (every thread does, so that the
  // loads can be hoisted out of a loop) and syncs, and writes nothing.
  fake().blockDim[0] = 64;
  fake().threadIdx[0] = 40;
  flagcxIntraBarrierSyncS(comm(0), kCoopBlock, 0, false, kOrderAcqRel);
  EXPECT_EQ(fake().syncBlocks, 2u);
  EXPECT_EQ(fake().syncWarps, 0u);
  EXPECT_EQ(rank(0).epochs[0], 0u);
  EXPECT_EQ(rank(1).inbox[0], 0u);
  EXPECT_EQ(rank(0).inbox[1], 0u);
}

TEST_F(DeviceHost, EveryThreadRejectsABadCommunicator) {
  build(2);
  // Thread 40 is not a worker, but a corrupt communicator stops it too,
  // before its group sync (no thread may wait there for one that aborted).
  fake().blockDim[0] = 64;
  fake().threadIdx[0] = 40;
  rank(0).comm().size = kMaxRanks + 1;
  expectAbort([](DeviceHost *t) {
    flagcxIntraBarrierSyncS(t->comm(0), kCoopBlock, 0, false, kOrderAcqRel);
  });
  EXPECT_EQ(fake().syncBlocks, 0u);
  EXPECT_EQ(rank(0).error.code, kDevErrBadComm);
}

TEST_F(DeviceHost, EpochsWrapAround) {
  build(3, 0xfffffff0u);
  for (int i = 0; i < 40; ++i)
    roundArriveThenWait(node, kCoopThread, 3, kOrderAcqRel,
                        0xfffffff0u + i + 1);
  EXPECT_EQ(rank(0).epochs[3], 0xfffffff0u + 40);
  EXPECT_EQ(fake().spins, 0u);
}

TEST_F(DeviceHost, WaitSeesAPeerAheadAcrossTheWrap) {
  // In lockstep rounds a peer's word always equals the target, which even a
  // comparison that is not wrap-safe accepts. Here rank 1 completes round
  // 0xffffffff and arrives for the next one, epoch 0, before rank 0 waits
  // for 0xffffffff: rank 0's inbox then holds 0, which is at or past
  // 0xffffffff only in wrap-safe arithmetic. The fake ends a spinning child
  // with kSpinLimitExit.
  build(2, 0xfffffffeu);
  int status = runInChild(
      [](void *p) {
        DeviceHost *t = static_cast<DeviceHost *>(p);
        flagcxIntraBarrierArriveS(t->comm(0), kCoopThread, 3, false,
                                  kOrderRelease);
        flagcxIntraBarrierSyncS(t->comm(1), kCoopThread, 3, false,
                                kOrderAcqRel);
        flagcxIntraBarrierArriveS(t->comm(1), kCoopThread, 3, false,
                                  kOrderRelease);
        flagcxIntraBarrierWaitS(t->comm(0), kCoopThread, 3, false,
                                kOrderAcquire);
      },
      this);
  EXPECT_EQ(status, 0) << "rank 0 did not see rank 1 past the wrap";
  EXPECT_EQ(rank(0).inbox[3 * kStride + 1], 0u);
  EXPECT_EQ(rank(0).epochs[3], 0xffffffffu);
  EXPECT_EQ(rank(1).epochs[3], 0xffffffffu);
}

TEST_F(DeviceHost, UnifiedBarrierIntra) {
  build(2);
  for (int r = 0; r < 2; ++r)
    flagcxDevBarrierArrive(comm(r), kTeamIntra, 1, 7, kCoopThread,
                           kOrderRelease, kScopeSystem);
  for (int r = 0; r < 2; ++r)
    flagcxDevBarrierWait(comm(r), kTeamIntra, 1, 7, kCoopThread, kOrderAcquire,
                         kScopeDevice);
  EXPECT_EQ(rank(0).epochs[1], 1u);
  EXPECT_EQ(rank(1).epochs[1], 1u);
  EXPECT_EQ(fake().spins, 0u);
}

TEST_F(DeviceHost, TritonBarrier) {
  build(2);
  for (int r = 0; r < 2; ++r)
    EXPECT_EQ(tleTritonBarrier(reinterpret_cast<int64_t>(comm(r)), 0,
                               kCoopBlock, 4, kOrderRelease),
              0);
  for (int r = 0; r < 2; ++r)
    EXPECT_EQ(tleTritonBarrier(reinterpret_cast<int64_t>(comm(r)), 1,
                               kCoopBlock, 4, kOrderAcquire),
              0);
  EXPECT_EQ(rank(1).epochs[4], 1u);
  EXPECT_EQ(fake().spins, 0u);
}

// ---- grid barrier
// ------------------------------------------------------------

void setBlock(uint32_t b) { fake().blockIdx[0] = b; }

TEST_F(DeviceHost, GridBarrierCountsEveryBlock) {
  for (int n : {1, 2, 4}) {
    build(n, 0xfffffffeu);
    resetFake();
    fake().gridDim[0] = 3;
    for (uint32_t round = 1; round <= 4; ++round) {
      uint32_t expected = 0xfffffffeu + round;
      for (int r = 0; r < n; ++r)
        for (uint32_t b = 0; b < 3; ++b) {
          setBlock(b);
          tleIntraGridBarrierArriveS(comm(r), 6, false, kOrderAcqRel);
          // Only the last block of the rank publishes it.
          uint32_t published = rank(r).inbox[6 * kStride + r];
          EXPECT_EQ(published == expected, b == 2) << "block " << b;
        }
      for (int r = 0; r < n; ++r) {
        EXPECT_EQ(rank(r).gridCount[6], 0u);
        EXPECT_EQ(rank(r).epochs[6], expected);
        for (int q = 0; q < n; ++q)
          EXPECT_EQ(rank(r).inbox[6 * kStride + q], expected);
      }
      for (int r = 0; r < n; ++r)
        for (uint32_t b = 0; b < 3; ++b) {
          setBlock(b);
          tleIntraGridBarrierWaitS(comm(r), 6, false, kOrderAcquire);
        }
    }
    EXPECT_EQ(fake().spins, 0u);
    EXPECT_TRUE(canariesIntact());
  }
}

TEST_F(DeviceHost, GridWaitBeforeEveryBlockArrivedSpins) {
  build(2);
  fake().gridDim[0] = 2;
  int status = runInChild(
      [](void *p) {
        DeviceHost *t = static_cast<DeviceHost *>(p);
        for (int r = 0; r < 2; ++r)
          tleIntraGridBarrierArriveS(t->comm(r), 0, false, kOrderAcqRel);
        tleIntraGridBarrierWaitS(t->comm(0), 0, false, kOrderAcqRel);
      },
      this);
  EXPECT_EQ(status, kSpinLimitExit);
  EXPECT_STREQ(fake().lastWhat, "grid barrier wait");
  EXPECT_EQ(fake().lastWait.rank, 0);
  EXPECT_EQ(fake().lastWait.epoch, 1u);
  // Block 1 of either rank never arrived: both entries are missing,
  // including this rank's own.
  EXPECT_EQ(fake().lastWait.missing.words[0], 0x3u);
}

TEST_F(DeviceHost, TritonGridBarrier) {
  build(2);
  fake().gridDim[0] = 2;
  for (int kind : {0, 1})
    for (int r = 0; r < 2; ++r)
      for (uint32_t b = 0; b < 2; ++b) {
        setBlock(b);
        EXPECT_EQ(tleTritonBarrier(reinterpret_cast<int64_t>(comm(r)), kind,
                                   kCoopGrid, 2, kOrderAcqRel),
                  0);
      }
  EXPECT_EQ(rank(0).epochs[2], 1u);
  EXPECT_EQ(fake().spins, 0u);
}

// ---- failures
// ----------------------------------------------------------------

TEST_F(DeviceHost, WaitWithoutPeerSpinsWithWaitInfo) {
  build(3);
  int status = runInChild(
      [](void *p) {
        DeviceHost *t = static_cast<DeviceHost *>(p);
        flagcxIntraBarrierArriveS(t->comm(1), kCoopThread, 2, false,
                                  kOrderRelease);
        flagcxIntraBarrierSyncS(t->comm(0), kCoopThread, 2, false,
                                kOrderAcqRel);
      },
      this);
  EXPECT_EQ(status, kSpinLimitExit);
  EXPECT_EQ(fake().lastWait.rank, 0);
  EXPECT_EQ(fake().lastWait.slot, 2u);
  EXPECT_EQ(fake().lastWait.epoch, 1u);
  EXPECT_EQ(fake().lastWait.missing.words[0], 1u << 2);
  EXPECT_EQ(fake().lastWait.comm, comm(0));
  EXPECT_STREQ(fake().lastWhat, "barrier wait");
  // timeoutNs == 0 waits forever: no record however long it spun.
  EXPECT_EQ(rank(0).error.state, 0u);
}

TEST_F(DeviceHost, TimeoutIsRecorded) {
  build(3);
  for (int r = 0; r < 3; ++r)
    rank(r).comm().timeoutNs = 50000;
  fake().clockStep = 1000;
  expectAbort([](DeviceHost *t) {
    flagcxIntraBarrierArriveS(t->comm(2), kCoopThread, 5, false, kOrderRelease);
    flagcxIntraBarrierWaitS(t->comm(0), kCoopThread, 5, false, kOrderAcquire);
  });
  const ErrorRecord &e = rank(0).error;
  EXPECT_EQ(e.state, 2u);
  EXPECT_EQ(e.code, kDevErrTimeout);
  EXPECT_EQ(e.rank, 0);
  EXPECT_EQ(e.slot, 5u);
  EXPECT_EQ(e.epoch, 1u);
  EXPECT_EQ(e.missing.words[0], 1u << 1);
  EXPECT_GT(e.elapsedNs, 50000u);
  EXPECT_LT(e.elapsedNs, 60000u);
  EXPECT_EQ(e.nBarriers, kSlots);
}

TEST_F(DeviceHost, IndexOutOfRangeIsRecordedAndTouchesNothing) {
  auto calls = {
      +[](DeviceHost *t) {
        flagcxIntraBarrierArriveS(t->comm(1), kCoopBlock, kSlots, false,
                                  kOrderRelease);
      },
      +[](DeviceHost *t) {
        flagcxIntraBarrierWaitS(t->comm(1), kCoopWarp, kSlots + 100, false,
                                kOrderAcquire);
      },
      +[](DeviceHost *t) {
        tleIntraGridBarrierSyncS(t->comm(1), kSlots, false, kOrderAcqRel);
      },
      +[](DeviceHost *t) {
        tleTritonBarrier(reinterpret_cast<int64_t>(t->comm(1)), 2, 2, -1, 3);
      },
  };
  uint32_t expectedSlot[] = {kSlots, kSlots + 100, kSlots, 0xffffffffu};
  int i = 0;
  for (auto call : calls) {
    resetFake();
    std::memset(&rank(1).error, 0, sizeof(ErrorRecord));
    expectAbort(call);
    const ErrorRecord &e = rank(1).error;
    EXPECT_EQ(e.state, 2u);
    EXPECT_EQ(e.code, kDevErrIndexOutOfRange);
    EXPECT_EQ(e.rank, 1);
    EXPECT_EQ(e.slot, expectedSlot[i++]);
    EXPECT_EQ(e.nBarriers, kSlots);
    EXPECT_TRUE(canariesIntact());
  }
}

TEST_F(DeviceHost, BadCommAbortsWithoutRecord) {
  expectAbort([](DeviceHost *) {
    flagcxIntraBarrierSyncS(nullptr, kCoopThread, 0, false, kOrderAcqRel);
  });
  rank(0).comm().magic = 0x12345678;
  expectAbort([](DeviceHost *t) { flagcxDevCommGetIntraRank(t->comm(0)); });
  rank(0).comm().magic = kDevCommMagic;
  rank(0).comm().version = kDevCommVersion + 1;
  expectAbort([](DeviceHost *t) {
    flagcxIntraBarrierArriveS(t->comm(0), kCoopThread, 0, false, 0);
  });
  EXPECT_EQ(rank(0).error.state, 0u);
  EXPECT_EQ(rank(0).epochs[0], 0u);
  EXPECT_EQ(rank(1).inbox[0], 0u);
}

TEST_F(DeviceHost, CorruptSizeIsRecordedAsBadComm) {
  rank(0).comm().size = kMaxRanks + 1;
  expectAbort([](DeviceHost *t) {
    flagcxIntraBarrierArriveS(t->comm(0), kCoopThread, 0, false, 0);
  });
  EXPECT_EQ(rank(0).error.code, kDevErrBadComm);
  EXPECT_EQ(rank(0).error.aux, uint32_t(kMaxRanks + 1));
}

TEST_F(DeviceHost, BadArgumentsAreRecorded) {
  // The argument ids and values are written out by hand (docs/abi.md), not
  // taken from the enums under test.
  struct Case {
    void (*call)(DeviceHost *);
    uint32_t argument;
    uint64_t value;
    tle::abi::Fn fn;
  } cases[] = {
      {[](DeviceHost *t) {
         flagcxIntraBarrierArriveS(t->comm(0), 5, 0, false, kOrderRelease);
       },
       1, 5, tle::abi::Fn::flagcxIntraBarrierArriveS},
      {[](DeviceHost *t) {
         flagcxIntraBarrierWaitS(t->comm(0), kCoopBlock, 0, false, 9);
       },
       2, 9, tle::abi::Fn::flagcxIntraBarrierWaitS},
      {[](DeviceHost *t) {
         flagcxDevBarrierSync(t->comm(0), 3, 0, 0, kCoopBlock, kOrderAcqRel,
                              kScopeSystem);
       },
       3, 3, tle::abi::Fn::flagcxDevBarrierSync},
      {[](DeviceHost *t) {
         flagcxDevBarrierArrive(t->comm(0), kTeamIntra, 0, 0, kCoopBlock,
                                kOrderAcqRel, 4);
       },
       4, 4, tle::abi::Fn::flagcxDevBarrierArrive},
      {[](DeviceHost *t) {
         tleIntraGridBarrierArriveS(t->comm(0), 0, false, -1);
       },
       2, static_cast<uint64_t>(-1), tle::abi::Fn::tleIntraGridBarrierArriveS},
      {[](DeviceHost *t) {
         tleTritonBarrier(reinterpret_cast<int64_t>(t->comm(0)), 3, 2, 0, 3);
       },
       7, 3, tle::abi::Fn::tleTritonBarrier},
      {[](DeviceHost *t) {
         tleTritonBarrier(reinterpret_cast<int64_t>(t->comm(0)), 2, 6, 0, 3);
       },
       1, 6, tle::abi::Fn::tleTritonBarrier},
  };
  for (const Case &c : cases) {
    resetFake();
    std::memset(&rank(0).error, 0, sizeof(ErrorRecord));
    expectAbort(c.call);
    EXPECT_EQ(rank(0).error.state, 2u);
    EXPECT_EQ(rank(0).error.code, kDevErrBadArgument);
    EXPECT_EQ(rank(0).error.argument, c.argument);
    EXPECT_EQ(rank(0).error.value, c.value);
    EXPECT_EQ(rank(0).error.function, static_cast<uint32_t>(c.fn));
  }
  EXPECT_EQ(rank(0).epochs[0], 0u);
  EXPECT_EQ(rank(1).inbox[0], 0u);
}

TEST_F(DeviceHost, OnlyTheFirstFailureIsRecorded) {
  rank(0).error.state = 2;
  rank(0).error.code = kDevErrTimeout;
  rank(0).error.slot = 3;
  expectAbort([](DeviceHost *t) {
    flagcxIntraBarrierArriveS(t->comm(0), kCoopThread, kSlots, false, 0);
  });
  EXPECT_EQ(rank(0).error.code, kDevErrTimeout);
  EXPECT_EQ(rank(0).error.slot, 3u);
}

TEST_F(DeviceHost, MultimemFallsBackToUnicast) {
  build(2);
  for (int r = 0; r < 2; ++r)
    flagcxIntraBarrierArriveS(comm(r), kCoopThread, 0, true, kOrderRelease);
  for (int r = 0; r < 2; ++r)
    flagcxIntraBarrierWaitS(comm(r), kCoopThread, 0, true, kOrderAcquire);
  EXPECT_EQ(rank(0).inbox[1], 1u);
  EXPECT_EQ(rank(1).inbox[0], 1u);
  EXPECT_EQ(rank(0).epochs[0], 1u);
}

} // namespace
