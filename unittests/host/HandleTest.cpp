//===- HandleTest.cpp - Stale, foreign and random handles -------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Every tleComm_t and tleMem_t a C API function receives is checked against
// the registry of live handles. These tests pass what a buggy caller passes:
// a handle after its destroy (also once the heap has reused the object's
// address for a new one), a handle of the other type, arbitrary values, and
// the same handle from several threads while one of them destroys it. Each
// must be refused with tleInvalidArgument and a detail naming the argument,
// and must leave live handles working. Property tests draw the values from
// a seeded generator so that a failure replays.
//
//===----------------------------------------------------------------------===//

#include "tle/tle.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

std::string detail() { return tleGetLastErrorDetail(); }

bool mentions(const std::string &text, const char *what) {
  return text.find(what) != std::string::npos;
}

tleComm_t newComm() {
  tleComm_t comm = nullptr;
  EXPECT_EQ(tleCommInitAll(&comm, 1, nullptr, nullptr), tleSuccess) << detail();
  return comm;
}

tleMem_t newMem(tleComm_t comm, size_t bytes = 64) {
  tleMem_t mem = nullptr;
  EXPECT_EQ(tleMemAllocAll(&comm, 1, bytes, &mem), tleSuccess) << detail();
  return mem;
}

/// Calls every function that takes a tleComm_t with `comm` and expects
/// each to refuse it with a detail that contains `why`.
void expectCommRefused(tleComm_t comm, const char *why) {
  int i;
  void *p;
  tleBackend_t b;
  tleErrorInfo info;
  tleMem_t mem = reinterpret_cast<tleMem_t>(0x1);
  struct Call {
    const char *name;
    tleResult_t result;
  };
  std::vector<Call> calls;
  calls.push_back({"tleCommRank", tleCommRank(comm, &i)});
  std::string rankDetail = detail();
  calls.push_back({"tleCommSize", tleCommSize(comm, &i)});
  calls.push_back({"tleCommBackend", tleCommBackend(comm, &b)});
  calls.push_back({"tleCommGetDevComm", tleCommGetDevComm(comm, &p)});
  calls.push_back({"tleCommGetError", tleCommGetError(comm, &info)});
  uint32_t epoch;
  calls.push_back(
      {"tleCommGetBarrierEpochs", tleCommGetBarrierEpochs(comm, 0, 1, &epoch)});
  uint64_t word;
  calls.push_back({"tleCommGetSignals", tleCommGetSignals(comm, 0, 1, &word)});
  calls.push_back({"tleMemAlloc", tleMemAlloc(comm, 64, &mem)});
  EXPECT_EQ(mem, nullptr) << "tleMemAlloc: the output is cleared";
  calls.push_back({"tleMemAllocAll", tleMemAllocAll(&comm, 1, 64, &mem)});
  calls.push_back({"tleCommDestroy", tleCommDestroy(comm)});
  std::string destroyDetail = detail();
  for (const Call &c : calls)
    EXPECT_EQ(c.result, tleInvalidArgument) << c.name;
  EXPECT_TRUE(mentions(rankDetail, "tleCommRank: comm")) << rankDetail;
  EXPECT_TRUE(mentions(rankDetail, why)) << rankDetail;
  EXPECT_TRUE(mentions(destroyDetail, why)) << destroyDetail;
}

/// The same for every function that takes a tleMem_t.
void expectMemRefused(tleMem_t mem, const char *why) {
  void *p;
  EXPECT_EQ(tleMemGetHandle(mem, &p), tleInvalidArgument);
  EXPECT_EQ(tleMemGetLocalPtr(mem, &p), tleInvalidArgument);
  std::string d = detail();
  EXPECT_TRUE(mentions(d, "tleMemGetLocalPtr: mem")) << d;
  EXPECT_TRUE(mentions(d, why)) << d;
  EXPECT_EQ(tleMemFree(mem), tleInvalidArgument);
  EXPECT_TRUE(mentions(detail(), why)) << detail();
}

/// A live comm answers queries as its creation said.
void expectAlive(tleComm_t comm, int rank = 0, int size = 1) {
  int r = -1, s = -1;
  EXPECT_EQ(tleCommRank(comm, &r), tleSuccess) << detail();
  EXPECT_EQ(tleCommSize(comm, &s), tleSuccess) << detail();
  EXPECT_EQ(r, rank);
  EXPECT_EQ(s, size);
}

// The reproducer: the heap hands a destroyed communicator's memory
// to the next one, and destroying the stale handle used to destroy the new
// communicator instead.
TEST(HandleTest, StaleCommHandleIsRefusedAfterAddressReuse) {
  for (int round = 0; round < 16; ++round) {
    tleComm_t stale = newComm();
    ASSERT_EQ(tleCommDestroy(stale), tleSuccess);
    tleComm_t live = newComm();
    expectCommRefused(stale, "not a live communicator");
    expectAlive(live);
    EXPECT_EQ(tleCommDestroy(live), tleSuccess) << detail();
  }
}

TEST(HandleTest, StaleMemHandleIsRefusedAfterAddressReuse) {
  tleComm_t comm = newComm();
  for (int round = 0; round < 16; ++round) {
    tleMem_t stale = newMem(comm);
    ASSERT_EQ(tleMemFree(stale), tleSuccess);
    tleMem_t live = newMem(comm);
    expectMemRefused(stale, "not a live symmetric buffer");
    void *p = nullptr;
    EXPECT_EQ(tleMemGetLocalPtr(live, &p), tleSuccess) << detail();
    EXPECT_NE(p, nullptr);
    EXPECT_EQ(tleMemFree(live), tleSuccess) << detail();
  }
  EXPECT_EQ(tleCommDestroy(comm), tleSuccess);
}

TEST(HandleTest, HandlesOfTheOtherTypeAreRefused) {
  tleComm_t comm = newComm();
  tleMem_t mem = newMem(comm);
  expectCommRefused(reinterpret_cast<tleComm_t>(mem), "tleMem_t");
  expectMemRefused(reinterpret_cast<tleMem_t>(comm), "tleComm_t");
  expectAlive(comm);
  void *p;
  EXPECT_EQ(tleMemGetHandle(mem, &p), tleSuccess);
  EXPECT_EQ(tleMemFree(mem), tleSuccess);
  EXPECT_EQ(tleCommDestroy(comm), tleSuccess);
}

TEST(HandleTest, DoubleDestroyAndDoubleFreeAreRefused) {
  tleComm_t comm = newComm();
  tleMem_t mem = newMem(comm);
  EXPECT_EQ(tleMemFree(mem), tleSuccess);
  EXPECT_EQ(tleMemFree(mem), tleInvalidArgument);
  EXPECT_EQ(tleCommDestroy(comm), tleSuccess);
  EXPECT_EQ(tleCommDestroy(comm), tleInvalidArgument);
  EXPECT_TRUE(mentions(detail(), "tleCommDestroy: comm")) << detail();
}

// A buffer stays usable after its communicator is destroyed (runtime.md);
// the registry must not tie the two together.
TEST(HandleTest, BufferOutlivesItsCommunicator) {
  tleComm_t comm = newComm();
  tleMem_t mem = newMem(comm);
  ASSERT_EQ(tleCommDestroy(comm), tleSuccess);
  void *p = nullptr;
  EXPECT_EQ(tleMemGetLocalPtr(mem, &p), tleSuccess) << detail();
  ASSERT_NE(p, nullptr);
  static_cast<char *>(p)[63] = 1;
  EXPECT_EQ(tleMemFree(mem), tleSuccess);
}

// Property: any value that was not returned by a creation call, or was
// already destroyed, is refused; live handles keep working throughout.
TEST(HandleTest, ArbitraryValuesAreRefused) {
  std::mt19937_64 rng(0x7e1e);
  tleComm_t comm = newComm();
  tleMem_t mem = newMem(comm);
  std::vector<uintptr_t> dead;
  for (int i = 0; i < 8; ++i) {
    tleComm_t c = newComm();
    tleMem_t m = newMem(c);
    dead.push_back(reinterpret_cast<uintptr_t>(c));
    dead.push_back(reinterpret_cast<uintptr_t>(m));
    ASSERT_EQ(tleMemFree(m), tleSuccess);
    ASSERT_EQ(tleCommDestroy(c), tleSuccess);
  }
  const uintptr_t live[] = {reinterpret_cast<uintptr_t>(comm),
                            reinterpret_cast<uintptr_t>(mem)};
  for (int i = 0; i < 20000; ++i) {
    uintptr_t v;
    switch (i % 5) {
    case 0:
      v = rng(); // anything
      break;
    case 1:
      v = rng() & 0xffff; // small integers, e.g. a rank passed by mistake
      break;
    case 2: // near a live handle: off by a few, or one bit flipped
      v = live[rng() % 2] + (rng() % 64) - 32;
      break;
    case 3:
      v = live[rng() % 2] ^ (uintptr_t(1) << (rng() % 64));
      break;
    default:
      v = dead[rng() % dead.size()];
      break;
    }
    if (v == 0 || v == live[0] || v == live[1])
      continue;
    int out = -7;
    void *p = nullptr;
    ASSERT_EQ(tleCommRank(reinterpret_cast<tleComm_t>(v), &out),
              tleInvalidArgument)
        << std::hex << v;
    ASSERT_EQ(out, -7);
    ASSERT_EQ(tleMemGetLocalPtr(reinterpret_cast<tleMem_t>(v), &p),
              tleInvalidArgument)
        << std::hex << v;
    ASSERT_EQ(p, nullptr);
    if (i % 97 == 0) {
      ASSERT_EQ(tleCommDestroy(reinterpret_cast<tleComm_t>(v)),
                tleInvalidArgument);
      ASSERT_EQ(tleMemFree(reinterpret_cast<tleMem_t>(v)), tleInvalidArgument);
    }
  }
  expectAlive(comm);
  EXPECT_EQ(tleMemFree(mem), tleSuccess);
  EXPECT_EQ(tleCommDestroy(comm), tleSuccess);
}

// Property: sizes and counts outside what the API accepts are refused with
// tleInvalidArgument and leave the outputs NULL; sizes it accepts but
// cannot serve fail with tleSystemError; nothing crashes or truncates.
TEST(HandleTest, SizesAndCountsAreChecked) {
  std::mt19937_64 rng(0x5123);
  tleComm_t comm = newComm();
  for (int i = 0; i < 200; ++i) {
    // nRanks: only 1..8 exist.
    int n = static_cast<int>(rng());
    if (n >= 1 && n <= 8)
      n = -n;
    tleComm_t out[2] = {reinterpret_cast<tleComm_t>(0x1),
                        reinterpret_cast<tleComm_t>(0x1)};
    ASSERT_EQ(tleCommInitAll(out, n, nullptr, nullptr), tleInvalidArgument);
    ASSERT_TRUE(mentions(detail(), "nRanks")) << detail();
    // nBarriers: 1..2^20.
    tleConfig_t cfg = TLE_CONFIG_INITIALIZER;
    cfg.nBarriers = static_cast<uint32_t>(rng()) | (1u << 21);
    ASSERT_EQ(tleCommInitAll(out, 1, nullptr, &cfg), tleInvalidArgument);
    ASSERT_EQ(out[0], nullptr);
    ASSERT_TRUE(mentions(detail(), "nBarriers")) << detail();
    // Timeouts: -1, 0 or positive.
    cfg = TLE_CONFIG_INITIALIZER;
    cfg.timeoutMs = -2 - static_cast<int64_t>(rng() >> 2);
    ASSERT_EQ(tleCommInitAll(out, 1, nullptr, &cfg), tleInvalidArgument);
    cfg = TLE_CONFIG_INITIALIZER;
    cfg.bootstrapTimeoutMs = -2 - static_cast<int64_t>(rng() >> 2);
    ASSERT_EQ(tleCommInitAll(out, 1, nullptr, &cfg), tleInvalidArgument);
    // tleMemAllocAll: counts that no set has are refused before the
    // arrays are read (counts within 1..TLE_MAX_RANKS would read past ours).
    tleMem_t mem = reinterpret_cast<tleMem_t>(0x1);
    int wrong = i % 2 ? -static_cast<int>(rng() % 1000)
                      : TLE_MAX_RANKS + 1 + static_cast<int>(rng() % 1000);
    ASSERT_EQ(tleMemAllocAll(&comm, wrong, 64, &mem), tleInvalidArgument);
    ASSERT_TRUE(mentions(detail(), "nRanks")) << detail();
  }
  // Buffer sizes: 0 is refused; a size no machine can map fails cleanly,
  // also where rounding up to whole pages would overflow.
  tleMem_t mem = reinterpret_cast<tleMem_t>(0x1);
  EXPECT_EQ(tleMemAllocAll(&comm, 1, 0, &mem), tleInvalidArgument);
  EXPECT_EQ(mem, nullptr);
  for (size_t bytes : {SIZE_MAX, SIZE_MAX - 4094, SIZE_MAX / 2 + 1,
                       size_t(1) << 62, size_t(1) << 50}) {
    mem = reinterpret_cast<tleMem_t>(0x1);
    tleResult_t r = tleMemAllocAll(&comm, 1, bytes, &mem);
    EXPECT_TRUE(r == tleSystemError || r == tleInvalidArgument)
        << bytes << ": " << r;
    EXPECT_EQ(mem, nullptr);
    EXPECT_FALSE(detail().empty());
  }
  expectAlive(comm);
  EXPECT_EQ(tleCommDestroy(comm), tleSuccess);
}

// Threads racing on one handle: exactly one destroy succeeds, and every
// other call either sees the live communicator or refuses the handle,
// never touching freed memory.
TEST(HandleTest, ConcurrentUseAndDestroy) {
  for (int round = 0; round < 50; ++round) {
    tleComm_t comm = newComm();
    std::atomic<int> destroyed{0}, bad{0};
    std::atomic<bool> go{false};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&, t] {
        while (!go.load())
          std::this_thread::yield();
        for (int i = 0; i < 200; ++i) {
          if (t == 0 && i == 50) {
            if (tleCommDestroy(comm) == tleSuccess)
              destroyed.fetch_add(1);
            continue;
          }
          int size = -1;
          tleResult_t r = tleCommSize(comm, &size);
          if (!(r == tleSuccess && size == 1) && r != tleInvalidArgument)
            bad.fetch_add(1);
          if (t == 1 && i == 60 && tleCommDestroy(comm) == tleSuccess)
            destroyed.fetch_add(1);
        }
      });
    go.store(true);
    for (std::thread &t : threads)
      t.join();
    EXPECT_EQ(destroyed.load(), 1);
    EXPECT_EQ(bad.load(), 0);
  }
}

} // namespace
