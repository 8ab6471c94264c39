//===- CommTest.cpp - Communicators of one process --------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// tleCommInitAll for 1..8 ranks: the DevComm each rank gets is laid out as
// the device library expects, inboxes are really shared, and every argument
// error is refused without side effects.
//
//===----------------------------------------------------------------------===//

#include "comm/CommInternal.h"
#include "tle/detail/DevComm.h"
#include "tle/tle.h"
#include "tle/tle.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

tleConfig_t config(uint32_t nBarriers, int64_t timeoutMs = 2500) {
  tleConfig_t c = TLE_CONFIG_INITIALIZER;
  c.nBarriers = nBarriers;
  c.timeoutMs = timeoutMs;
  return c;
}

tle::DevComm *devCommOf(tleComm_t comm) {
  void *p = nullptr;
  EXPECT_EQ(tleCommGetDevComm(comm, &p), tleSuccess);
  return static_cast<tle::DevComm *>(p);
}

class InitAllTest : public testing::TestWithParam<int> {};

TEST_P(InitAllTest, BuildsEveryRanksDevComm) {
  const int n = GetParam();
  tleConfig_t cfg = config(40);
  std::vector<tleComm_t> comms(n);
  ASSERT_EQ(tleCommInitAll(comms.data(), n, nullptr, &cfg), tleSuccess)
      << tleGetLastErrorDetail();
  std::vector<tle::DevComm *> dc(n);
  for (int r = 0; r < n; ++r) {
    int rank = -1, size = -1;
    tleBackend_t backend;
    EXPECT_EQ(tleCommRank(comms[r], &rank), tleSuccess);
    EXPECT_EQ(tleCommSize(comms[r], &size), tleSuccess);
    EXPECT_EQ(tleCommBackend(comms[r], &backend), tleSuccess);
    EXPECT_EQ(rank, r);
    EXPECT_EQ(size, n);
    EXPECT_EQ(backend, tleBackendEmulator);
    dc[r] = devCommOf(comms[r]);
    ASSERT_NE(dc[r], nullptr);
    EXPECT_EQ(dc[r]->magic, tle::kDevCommMagic);
    EXPECT_EQ(dc[r]->version, tle::kDevCommVersion);
    EXPECT_EQ(dc[r]->rank, r);
    EXPECT_EQ(dc[r]->size, n);
    EXPECT_EQ(dc[r]->nBarriers, 40u);
    EXPECT_EQ(dc[r]->inboxStride, 32u);
    EXPECT_EQ(dc[r]->timeoutNs, 2500ull * 1000000ull);
    ASSERT_NE(dc[r]->epochs, nullptr);
    ASSERT_NE(dc[r]->gridCount, nullptr);
    ASSERT_NE(dc[r]->error, nullptr);
    EXPECT_EQ(dc[r]->error->state, 0u);
    for (uint32_t s = 0; s < 40; ++s) {
      EXPECT_EQ(dc[r]->epochs[s], 0u);
      EXPECT_EQ(dc[r]->gridCount[s], 0u);
    }
    // A full route table whatever the rank count (entries past size-1
    // repeat entry 0), so a lane loads its own before knowing size.
    for (int j = n; j < tle::kMaxRanks; ++j) {
      EXPECT_EQ(dc[r]->routes[j].out, dc[r]->routes[0].out);
      EXPECT_EQ(dc[r]->routes[j].in, dc[r]->routes[0].in);
    }
  }
  // One process: every rank sees each inbox at its owner's address, and a
  // flag stored by rank q into rank p's inbox is what rank p reads.
  for (int r = 0; r < n; ++r)
    for (int p = 0; p < n; ++p) {
      ASSERT_EQ(inboxOf(*dc[r], p), inboxOf(*dc[p], p));
      inboxOf(*dc[r], p)[39 * 32 + r] = 1000 + r;
    }
  for (int p = 0; p < n; ++p)
    for (int q = 0; q < n; ++q)
      EXPECT_EQ(inboxOf(*dc[p], p)[39 * 32 + q], uint32_t(1000 + q));
  for (tleComm_t c : comms)
    EXPECT_EQ(tleCommDestroy(c), tleSuccess);
}

INSTANTIATE_TEST_SUITE_P(Ranks, InitAllTest, testing::Range(1, 9));

// The assembly (runtime/host/comm/Assembly.cpp) on two nodes of two ranks:
// each rank's counters lie right after its signal words (one symmetric
// block: the device library finds a peer's at signalPeers[p] + nSignals),
// the world shares one EmuNet whose tables hold every world rank's signal
// words and its own net barrier words, and the node's ranks map each
// other's words.
TEST(CommTest, AssemblyOnTwoNodes) {
  tleConfig_t cfg = config(4);
  cfg.nSignals = 3;
  cfg.ranksPerNode = 2;
  tleComm_t comms[4] = {};
  ASSERT_EQ(tleCommInitAll(comms, 4, nullptr, &cfg), tleSuccess);
  tle::DevComm *d[4];
  for (int w = 0; w < 4; ++w)
    d[w] = devCommOf(comms[w]);
  const auto *net = static_cast<const tle::EmuNet *>(d[0]->net);
  ASSERT_NE(net, nullptr);
  EXPECT_EQ(net->worldSize, 4u);
  // Every network context (4 by default) has its 3 signal words.
  EXPECT_EQ(net->nSignalWords, 4 * 3u);
  for (int w = 0; w < 4; ++w) {
    EXPECT_EQ(d[w]->netKind, uint32_t(tle::kNetEmu));
    EXPECT_EQ(d[w]->nContexts, 4u);
    EXPECT_EQ(d[w]->nSignals, 3u);
    EXPECT_EQ(d[w]->nSignalWords, 4 * 3u);
    EXPECT_EQ(d[w]->nNetWords, 4 * 3u + 2 * 4u);
    EXPECT_EQ(d[w]->net, d[0]->net) << w;
    EXPECT_EQ(d[w]->node, w / 2);
    EXPECT_EQ(d[w]->nCounters, 3u);
    EXPECT_EQ(d[w]->counters, d[w]->signals + d[w]->nSignalWords) << w;
    EXPECT_EQ(net->signals[w], d[w]->signals) << w;
    ASSERT_NE(net->barrier[w], nullptr);
    for (int k = 0; k < 2 * 4; ++k)
      EXPECT_EQ(net->barrier[w][k], 0u);
    for (int q = 0; q < w; ++q)
      EXPECT_NE(net->barrier[w], net->barrier[q]);
    for (int p = 0; p < 2; ++p)
      EXPECT_EQ(d[w]->signalPeers[p], d[(w / 2) * 2 + p]->signals) << w;
  }
  for (tleComm_t c : comms)
    EXPECT_EQ(tleCommDestroy(c), tleSuccess);
}

TEST(CommTest, CommInfoForTheEmulator) {
  tleConfig_t cfg = config(4);
  tleComm_t comms[2];
  ASSERT_EQ(tleCommInitAll(comms, 2, nullptr, &cfg), tleSuccess);
  tle::CommInfo a, b;
  ASSERT_EQ(tle::getCommInfo(comms[0], a), tleSuccess);
  ASSERT_EQ(tle::getCommInfo(comms[1], b), tleSuccess);
  EXPECT_EQ(a.rank, 0);
  EXPECT_EQ(b.rank, 1);
  EXPECT_EQ(a.size, 2);
  EXPECT_EQ(a.devComm, devCommOf(comms[0]));
  EXPECT_EQ(a.errorHost, a.devComm->error); // host == device on the CPU
  EXPECT_EQ(a.backend, tleBackendEmulator);
  EXPECT_FALSE(a.multiProcess);
  EXPECT_NE(a.group, nullptr);
  EXPECT_EQ(a.group, b.group);
  tle::CommInfo none;
  EXPECT_EQ(tle::getCommInfo(nullptr, none), tleInvalidArgument);
  for (tleComm_t c : comms)
    EXPECT_EQ(tleCommDestroy(c), tleSuccess);
}

TEST(CommTest, DestroyOrderDoesNotMatter) {
  tleComm_t comms[3];
  ASSERT_EQ(tleCommInitAll(comms, 3, nullptr, nullptr), tleSuccess);
  tle::DevComm *dc2 = devCommOf(comms[2]);
  EXPECT_EQ(tleCommDestroy(comms[0]), tleSuccess);
  // Rank 0's inbox stays mapped for the ranks still alive.
  inboxOf(*dc2, 0)[0] = 1;
  EXPECT_EQ(tleCommDestroy(comms[2]), tleSuccess);
  EXPECT_EQ(tleCommDestroy(comms[1]), tleSuccess);
}

TEST(CommTest, InvalidArgumentsAreRefused) {
  tleComm_t comms[9];
  for (tleComm_t &c : comms)
    c = reinterpret_cast<tleComm_t>(0x1);
  auto expectInvalid = [&](int n, const tleConfig_t *cfg, const char *what) {
    EXPECT_EQ(tleCommInitAll(comms, n, nullptr, cfg), tleInvalidArgument)
        << what;
    EXPECT_NE(std::string(tleGetLastErrorDetail()).find(what),
              std::string::npos)
        << tleGetLastErrorDetail();
  };
  expectInvalid(0, nullptr, "nRanks 0");
  expectInvalid(TLE_MAX_RANKS + 1, nullptr, "nRanks 129");
  expectInvalid(-1, nullptr, "nRanks -1");
  tleConfig_t cfg = config(0);
  expectInvalid(2, &cfg, "nBarriers 0");
  cfg = config((1u << 20) + 1);
  expectInvalid(2, &cfg, "nBarriers");
  cfg = config(8);
  cfg.size = 8;
  expectInvalid(2, &cfg, "config.size");
  cfg = config(8);
  cfg.version = 9900;
  expectInvalid(2, &cfg, "config.version");
  cfg = config(8);
  cfg.backend = static_cast<tleBackend_t>(7);
  expectInvalid(2, &cfg, "config.backend");
  cfg = config(8, -2);
  expectInvalid(2, &cfg, "config.timeoutMs");
  cfg = config(8);
  cfg.bootstrapTimeoutMs = -7;
  expectInvalid(2, &cfg, "config.bootstrapTimeoutMs");
  // Refused after checking nRanks: nothing was created.
  for (int r = 0; r < 2; ++r)
    EXPECT_EQ(comms[r], nullptr);
  EXPECT_EQ(tleCommInitAll(nullptr, 2, nullptr, nullptr), tleInvalidArgument);

  tleUniqueId id;
  ASSERT_EQ(tleGetUniqueId(&id), tleSuccess);
  tleComm_t one = reinterpret_cast<tleComm_t>(0x1);
  EXPECT_EQ(tleCommInitRank(&one, 2, &id, 2, 0, nullptr), tleInvalidArgument);
  EXPECT_EQ(one, nullptr);
  EXPECT_EQ(tleCommInitRank(&one, 2, &id, -1, 0, nullptr), tleInvalidArgument);
  EXPECT_EQ(tleCommInitRank(&one, TLE_MAX_RANKS + 1, &id, 0, 0, nullptr),
            tleInvalidArgument);
  EXPECT_EQ(tleCommInitRank(&one, 2, nullptr, 0, 0, nullptr),
            tleInvalidArgument);
  EXPECT_EQ(tleCommInitRank(nullptr, 2, &id, 0, 0, nullptr),
            tleInvalidArgument);
  tleUniqueId garbage = {};
  EXPECT_EQ(tleCommInitRank(&one, 2, &garbage, 1, 0, nullptr),
            tleInvalidArgument);
  EXPECT_NE(std::string(tleGetLastErrorDetail()).find("tleGetUniqueId"),
            std::string::npos);
  EXPECT_EQ(tleGetUniqueId(nullptr), tleInvalidArgument);
}

TEST(CommTest, NullHandlesAreRefused) {
  int i;
  void *p;
  tleBackend_t b;
  tleErrorInfo info;
  EXPECT_EQ(tleCommDestroy(nullptr), tleInvalidArgument);
  EXPECT_EQ(tleCommRank(nullptr, &i), tleInvalidArgument);
  EXPECT_EQ(tleCommSize(nullptr, &i), tleInvalidArgument);
  EXPECT_EQ(tleCommBackend(nullptr, &b), tleInvalidArgument);
  EXPECT_EQ(tleCommGetDevComm(nullptr, &p), tleInvalidArgument);
  EXPECT_EQ(tleCommGetError(nullptr, &info), tleInvalidArgument);
  EXPECT_EQ(std::string(tleGetLastErrorDetail()),
            "tleCommGetError: comm is NULL");
  tleComm_t comm;
  ASSERT_EQ(tleCommInitAll(&comm, 1, nullptr, nullptr), tleSuccess);
  EXPECT_EQ(tleCommRank(comm, nullptr), tleInvalidArgument);
  EXPECT_EQ(tleCommGetDevComm(comm, nullptr), tleInvalidArgument);
  EXPECT_EQ(tleCommGetError(comm, nullptr), tleInvalidArgument);
  EXPECT_EQ(tleCommDestroy(comm), tleSuccess);
}

TEST(CommTest, CudaBackendWithoutCuda) {
  tleConfig_t cfg = config(4);
  cfg.backend = tleBackendCuda;
  tleComm_t comms[2] = {};
  tleResult_t r = tleCommInitAll(comms, 2, nullptr, &cfg);
  if (r != tleNotSupported) {
    for (tleComm_t c : comms)
      if (c)
        tleCommDestroy(c);
    GTEST_SKIP() << "this libtle has a CUDA backend";
  }
  EXPECT_NE(std::string(tleGetLastErrorDetail()).find("without CUDA"),
            std::string::npos);
  EXPECT_EQ(comms[0], nullptr);
}

TEST(CommTest, CppLayer) {
  std::vector<tle::Comm> comms = tle::Comm::initAll(3);
  ASSERT_EQ(comms.size(), 3u);
  EXPECT_EQ(comms[2].rank(), 2);
  EXPECT_EQ(comms[2].size(), 3);
  EXPECT_EQ(static_cast<tle::DevComm *>(comms[1].devComm())->rank, 1);
  EXPECT_EQ(comms[0].takeError().result, tleSuccess);
  std::vector<tle::Mem> mems = tle::Mem::allocAll(comms, 64);
  auto *h = static_cast<tle::SymMem *>(mems[1].handle());
  EXPECT_EQ(h->ptrs[1], mems[1].localPtr());
  try {
    tle::Comm::initAll(0);
    FAIL() << "no exception";
  } catch (const tle::Error &e) {
    EXPECT_EQ(e.result(), tleInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("nRanks 0"), std::string::npos);
  }
  tle::Comm moved = std::move(comms[0]);
  EXPECT_FALSE(comms[0]);
  EXPECT_TRUE(moved);
}

} // namespace
