//===- MemTest.cpp - Symmetric buffers within one process -------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// tleMemAllocAll from one thread and tleMemAlloc from one thread per rank:
// every rank writes into every peer's copy through SymMem::ptrs and each
// rank reads what its peers wrote. Also the failure modes of the collective
// (size mismatch, a rank that never calls) and buffer lifetimes.
//
//===----------------------------------------------------------------------===//

#include "PerRank.h"
#include "tle/detail/DevComm.h"
#include "tle/tle.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace tle::test;

tle::SymMem *handleOf(tleMem_t mem) {
  void *h = nullptr;
  EXPECT_EQ(tleMemGetHandle(mem, &h), tleSuccess);
  return static_cast<tle::SymMem *>(h);
}

/// Rank r stores 100 * r + p at word r of rank p's copy, through its own
/// mapping; then every rank checks its copy.
void exchangeAndCheck(const std::vector<tleMem_t> &mems, int n) {
  for (int r = 0; r < n; ++r) {
    tle::SymMem *h = handleOf(mems[r]);
    for (int p = 0; p < n; ++p)
      static_cast<uint32_t *>(h->ptrs[p])[r] = 100 * r + p;
  }
  for (int p = 0; p < n; ++p) {
    void *local;
    ASSERT_EQ(tleMemGetLocalPtr(mems[p], &local), tleSuccess);
    for (int r = 0; r < n; ++r)
      EXPECT_EQ(static_cast<uint32_t *>(local)[r], uint32_t(100 * r + p));
  }
}

class AllocAllTest : public testing::TestWithParam<int> {};

TEST_P(AllocAllTest, PeersWriteIntoEachOther) {
  const int n = GetParam();
  std::vector<tleComm_t> comms(n);
  ASSERT_EQ(tleCommInitAll(comms.data(), n, nullptr, nullptr), tleSuccess);
  std::vector<tleMem_t> mems(n);
  const size_t bytes = 3 * 4096 + 8;
  ASSERT_EQ(tleMemAllocAll(comms.data(), n, bytes, mems.data()), tleSuccess)
      << tleGetLastErrorDetail();
  for (int r = 0; r < n; ++r) {
    tle::SymMem *h = handleOf(mems[r]);
    void *devComm;
    ASSERT_EQ(tleCommGetDevComm(comms[r], &devComm), tleSuccess);
    EXPECT_EQ(h->magic, tle::kSymMemMagic);
    EXPECT_EQ(h->rank, r);
    EXPECT_EQ(h->size, n);
    EXPECT_EQ(h->bytes, bytes);
    EXPECT_EQ(h->error, static_cast<tle::DevComm *>(devComm)->error);
    for (int p = 0; p < n; ++p) {
      ASSERT_NE(h->ptrs[p], nullptr);
      EXPECT_EQ(reinterpret_cast<uintptr_t>(h->ptrs[p]) % 4096, 0u);
    }
    for (int p = n; p < tle::kMaxRanks; ++p)
      EXPECT_EQ(h->ptrs[p], nullptr);
    auto *bytesOf = static_cast<unsigned char *>(h->ptrs[r]);
    for (size_t i = 0; i < bytes; ++i)
      ASSERT_EQ(bytesOf[i], 0) << "not zero-filled at " << i;
  }
  exchangeAndCheck(mems, n);
  for (tleMem_t m : mems)
    EXPECT_EQ(tleMemFree(m), tleSuccess);
  for (tleComm_t c : comms)
    EXPECT_EQ(tleCommDestroy(c), tleSuccess);
}

INSTANTIATE_TEST_SUITE_P(Ranks, AllocAllTest, testing::Range(1, 9));

TEST(MemTest, OneThreadPerRank) {
  const int n = 4;
  std::vector<tleComm_t> comms(n);
  ASSERT_EQ(tleCommInitAll(comms.data(), n, nullptr, nullptr), tleSuccess);
  std::vector<tleMem_t> mems(n);
  std::vector<tleResult_t> results(n);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r)
    threads.emplace_back(
        [&, r] { results[r] = tleMemAlloc(comms[r], 256, &mems[r]); });
  for (std::thread &t : threads)
    t.join();
  for (int r = 0; r < n; ++r)
    ASSERT_EQ(results[r], tleSuccess) << r;
  exchangeAndCheck(mems, n);
  for (tleMem_t m : mems)
    EXPECT_EQ(tleMemFree(m), tleSuccess);
  for (tleComm_t c : comms)
    EXPECT_EQ(tleCommDestroy(c), tleSuccess);
}

TEST(MemTest, SizeMismatchFailsEveryRankAndLeavesTheSetUsable) {
  const int n = 3;
  std::vector<tleComm_t> comms(n);
  ASSERT_EQ(tleCommInitAll(comms.data(), n, nullptr, nullptr), tleSuccess);
  std::vector<tleMem_t> mems(n);
  std::vector<tleResult_t> results(n);
  std::vector<std::string> details(n);
  auto allocAll = [&](auto bytesOf) {
    std::vector<std::thread> threads;
    for (int r = 0; r < n; ++r)
      threads.emplace_back([&, r] {
        results[r] = tleMemAlloc(comms[r], bytesOf(r), &mems[r]);
        details[r] = tleGetLastErrorDetail();
      });
    for (std::thread &t : threads)
      t.join();
  };
  allocAll([](int r) { return r == 2 ? 128 : 64; });
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(results[r], tleInvalidArgument);
    EXPECT_NE(details[r].find("rank 2 asked for 128 bytes, rank 0 for 64"),
              std::string::npos)
        << details[r];
    EXPECT_EQ(mems[r], nullptr);
  }
  // A bad size on one rank is shared with the others at once.
  allocAll([](int r) { return r == 1 ? 0 : 64; });
  EXPECT_EQ(results[1], tleInvalidArgument);
  EXPECT_EQ(details[1], "tleMemAlloc: bytes is 0");
  EXPECT_EQ(results[0], tlePeerFailure);
  EXPECT_NE(details[0].find("rank 1 failed: bytes is 0"), std::string::npos)
      << details[0];
  allocAll([](int) { return 64; });
  for (int r = 0; r < n; ++r)
    ASSERT_EQ(results[r], tleSuccess);
  exchangeAndCheck(mems, n);
  for (tleMem_t m : mems)
    EXPECT_EQ(tleMemFree(m), tleSuccess);
  for (tleComm_t c : comms)
    EXPECT_EQ(tleCommDestroy(c), tleSuccess);
}

// A NULL output on one rank is that rank's error and, through the exchange,
// every other rank's at once (not after the 30 s bootstrap deadline).
TEST(MemTest, NullOutputFailsEveryRankAtOnce) {
  const int n = 3;
  std::vector<tleComm_t> comms(n);
  ASSERT_EQ(tleCommInitAll(comms.data(), n, nullptr, nullptr), tleSuccess);
  std::vector<tleMem_t> mems(n);
  PerRank out = onEveryRank(n, [&](int r) {
    return tleMemAlloc(comms[r], 64, r == 1 ? nullptr : &mems[r]);
  });
  expectOneBadRank(out, 1, "tleMemAlloc: outMem is NULL", mems);
  for (tleComm_t c : comms)
    EXPECT_EQ(tleCommDestroy(c), tleSuccess);
}

// The bad rank does not wait for its peers either: called alone, it fails
// at once; the peers, calling later, fail at once with its reason; and the
// set is usable afterwards.
TEST(MemTest, ABadRankFailsAtOnceAndItsLatePeersWithItsReason) {
  const int n = 3;
  std::vector<tleComm_t> comms(n);
  ASSERT_EQ(tleCommInitAll(comms.data(), n, nullptr, nullptr), tleSuccess);
  auto start = std::chrono::steady_clock::now();
  tleResult_t alone = tleMemAlloc(comms[1], 64, nullptr);
  std::string aloneDetail = tleGetLastErrorDetail();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  std::vector<tleMem_t> mems(n);
  PerRank out = onRanks(
      n, {0, 2}, [&](int r) { return tleMemAlloc(comms[r], 64, &mems[r]); });
  out.result[1] = alone;
  out.detail[1] = aloneDetail;
  expectOneBadRank(out, 1, "tleMemAlloc: outMem is NULL", mems);
  PerRank again = onEveryRank(
      n, [&](int r) { return tleMemAlloc(comms[r], 64, &mems[r]); });
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(again.result[r], tleSuccess) << again.detail[r];
    EXPECT_EQ(tleMemFree(mems[r]), tleSuccess);
  }
  for (tleComm_t c : comms)
    EXPECT_EQ(tleCommDestroy(c), tleSuccess);
}

TEST(MemTest, MissingRankTimesOutAndBreaksTheSet) {
  tleConfig_t cfg = TLE_CONFIG_INITIALIZER;
  cfg.bootstrapTimeoutMs = 200;
  tleComm_t comms[2];
  ASSERT_EQ(tleCommInitAll(comms, 2, nullptr, &cfg), tleSuccess);
  tleMem_t mem = reinterpret_cast<tleMem_t>(0x1);
  EXPECT_EQ(tleMemAlloc(comms[0], 64, &mem), tleTimeout);
  EXPECT_EQ(mem, nullptr);
  std::string detail = tleGetLastErrorDetail();
  EXPECT_NE(detail.find("timed out after 200 ms waiting for rank(s) 1"),
            std::string::npos)
      << detail;
  EXPECT_EQ(tleMemAlloc(comms[1], 64, &mem), tlePeerFailure);
  detail = tleGetLastErrorDetail();
  EXPECT_NE(detail.find("rank 0 timed out"), std::string::npos) << detail;
  for (tleComm_t c : comms)
    EXPECT_EQ(tleCommDestroy(c), tleSuccess);
}

TEST(MemTest, PeerDestroyedWhileWaitingFailsAtOnce) {
  tleComm_t comms[2];
  ASSERT_EQ(tleCommInitAll(comms, 2, nullptr, nullptr), tleSuccess);
  tleResult_t result = tleSuccess;
  tleMem_t mem = nullptr;
  std::thread waiter([&] { result = tleMemAlloc(comms[0], 64, &mem); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(tleCommDestroy(comms[1]), tleSuccess);
  waiter.join(); // well before the 30 s default bootstrap timeout
  EXPECT_EQ(result, tlePeerFailure);
  EXPECT_EQ(tleCommDestroy(comms[0]), tleSuccess);
}

TEST(MemTest, BuffersOutliveFreeOrderAndTheirComms) {
  tleComm_t comms[2];
  ASSERT_EQ(tleCommInitAll(comms, 2, nullptr, nullptr), tleSuccess);
  tleMem_t mems[2];
  ASSERT_EQ(tleMemAllocAll(comms, 2, 4096, mems), tleSuccess);
  tle::SymMem *h1 = handleOf(mems[1]);
  for (tleComm_t c : comms)
    EXPECT_EQ(tleCommDestroy(c), tleSuccess);
  EXPECT_EQ(tleMemFree(mems[0]), tleSuccess);
  // Rank 0's copy stays alive while rank 1 still maps it.
  static_cast<char *>(h1->ptrs[0])[4095] = 1;
  EXPECT_EQ(tleMemFree(mems[1]), tleSuccess);
}

TEST(MemTest, AllocAllArgumentErrors) {
  tleComm_t a[2], b[2];
  ASSERT_EQ(tleCommInitAll(a, 2, nullptr, nullptr), tleSuccess);
  ASSERT_EQ(tleCommInitAll(b, 2, nullptr, nullptr), tleSuccess);
  tleMem_t mems[2];
  tleComm_t mixed[2] = {a[0], b[1]};
  EXPECT_EQ(tleMemAllocAll(mixed, 2, 64, mems), tleInvalidArgument);
  EXPECT_NE(std::string(tleGetLastErrorDetail()).find("same tleCommInitAll"),
            std::string::npos);
  tleComm_t swapped[2] = {a[1], a[0]};
  EXPECT_EQ(tleMemAllocAll(swapped, 2, 64, mems), tleInvalidArgument);
  EXPECT_EQ(tleMemAllocAll(a, 1, 64, mems), tleInvalidArgument);
  EXPECT_EQ(tleMemAllocAll(a, 2, 0, mems), tleInvalidArgument);
  EXPECT_EQ(tleMemAllocAll(nullptr, 2, 64, mems), tleInvalidArgument);
  EXPECT_EQ(tleMemAllocAll(a, 2, 64, nullptr), tleInvalidArgument);
  EXPECT_EQ(tleMemAlloc(nullptr, 64, mems), tleInvalidArgument);
  EXPECT_EQ(tleMemAlloc(a[0], 64, nullptr), tleInvalidArgument);
  void *p;
  EXPECT_EQ(tleMemFree(nullptr), tleInvalidArgument);
  EXPECT_EQ(tleMemGetHandle(nullptr, &p), tleInvalidArgument);
  EXPECT_EQ(tleMemGetLocalPtr(nullptr, &p), tleInvalidArgument);
  for (tleComm_t c : a)
    EXPECT_EQ(tleCommDestroy(c), tleSuccess);
  for (tleComm_t c : b)
    EXPECT_EQ(tleCommDestroy(c), tleSuccess);
}

} // namespace
