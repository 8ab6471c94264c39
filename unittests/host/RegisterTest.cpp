//===- RegisterTest.cpp - tleMemRegister on the CPU backend -----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Memory the user allocated, registered as a symmetric buffer: within one
// process (any host memory) and across forked processes (memory from
// tleShareableAlloc, whose memory file the peers map). Every rank writes
// through its mappings of the peers' registered ranges and reads what the
// peers wrote into its own; several registrations share a communicator and
// one allocation; freeing a registration leaves the user's memory alone;
// memory that cannot be shared, a range past its allocation and sizes that
// differ fail every rank with the reason.
//
//===----------------------------------------------------------------------===//

#include "ChildProcess.h"
#include "PerRank.h"
#include "tle/detail/DevComm.h"
#include "tle/tle.h"
#include "tle/tle.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace tle::test;

tle::SymMem *symOf(tleMem_t mem) {
  void *h = nullptr;
  EXPECT_EQ(tleMemGetHandle(mem, &h), tleSuccess);
  return static_cast<tle::SymMem *>(h);
}

TEST(RegisterTest, RanksOfOneProcessShareTheirOwnMemory) {
  const int n = 3;
  const size_t bytes = 1000;
  std::vector<tleComm_t> comms(n);
  ASSERT_EQ(tleCommInitAll(comms.data(), n, nullptr, nullptr), tleSuccess);
  // Plain heap memory, not page-aligned: in one process any memory does.
  std::vector<std::vector<uint32_t>> user(n, std::vector<uint32_t>(bytes / 4));
  std::vector<tleMem_t> mems(n), second(n);
  PerRank reg = onEveryRank(n, [&](int r) {
    return tleMemRegister(comms[r], user[r].data(), bytes, &mems[r]);
  });
  for (int r = 0; r < n; ++r)
    ASSERT_EQ(reg.result[r], tleSuccess) << reg.detail[r];
  // A second registration on the same communicator, of another range.
  PerRank reg2 = onEveryRank(n, [&](int r) {
    return tleMemRegister(comms[r], user[r].data() + 100, 16, &second[r]);
  });
  for (int r = 0; r < n; ++r)
    ASSERT_EQ(reg2.result[r], tleSuccess) << reg2.detail[r];

  for (int r = 0; r < n; ++r) {
    tle::SymMem *h = symOf(mems[r]);
    EXPECT_EQ(h->magic, tle::kSymMemMagic);
    EXPECT_EQ(h->rank, r);
    EXPECT_EQ(h->size, n);
    EXPECT_EQ(h->bytes, bytes);
    void *local = nullptr;
    ASSERT_EQ(tleMemGetLocalPtr(mems[r], &local), tleSuccess);
    EXPECT_EQ(local, user[r].data());
    for (int p = 0; p < n; ++p) {
      EXPECT_EQ(h->ptrs[p], user[p].data());
      static_cast<uint32_t *>(h->ptrs[p])[r] = 100 * r + p;
    }
    EXPECT_EQ(symOf(second[r])->ptrs[(r + 1) % n],
              user[(r + 1) % n].data() + 100);
  }
  for (int p = 0; p < n; ++p)
    for (int r = 0; r < n; ++r)
      EXPECT_EQ(user[p][r], uint32_t(100 * r + p));

  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(tleMemFree(mems[r]), tleSuccess);
    EXPECT_EQ(tleMemFree(second[r]), tleSuccess);
    // The handle is gone; the memory is still the user's.
    EXPECT_EQ(tleMemFree(mems[r]), tleInvalidArgument);
    user[r][0] = 7;
  }
  for (tleComm_t c : comms)
    EXPECT_EQ(tleCommDestroy(c), tleSuccess);
}

TEST(RegisterTest, BadArgumentsFailEveryRank) {
  const int n = 2;
  std::vector<tleComm_t> comms(n);
  ASSERT_EQ(tleCommInitAll(comms.data(), n, nullptr, nullptr), tleSuccess);
  std::vector<char> buf(n * 256);
  std::vector<tleMem_t> mems(n);
  PerRank sizes = onEveryRank(n, [&](int r) {
    return tleMemRegister(comms[r], buf.data() + 256 * r, r ? 128 : 64,
                          &mems[r]);
  });
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(sizes.result[r], tleInvalidArgument);
    EXPECT_NE(sizes.detail[r].find("registration: rank 1 asked for 128 bytes, "
                                   "rank 0 for 64"),
              std::string::npos)
        << sizes.detail[r];
    EXPECT_EQ(mems[r], nullptr);
  }
  PerRank null = onEveryRank(n, [&](int r) {
    return tleMemRegister(comms[r], r ? nullptr : buf.data(), 64, &mems[r]);
  });
  EXPECT_EQ(null.result[1], tleInvalidArgument);
  EXPECT_EQ(null.detail[1], "tleMemRegister: ptr is NULL");
  EXPECT_EQ(null.result[0], tlePeerFailure);
  EXPECT_NE(null.detail[0].find("rank 1 failed: ptr is NULL"),
            std::string::npos)
      << null.detail[0];
  EXPECT_EQ(tleMemRegister(nullptr, buf.data(), 64, &mems[0]),
            tleInvalidArgument);
  for (tleComm_t c : comms)
    EXPECT_EQ(tleCommDestroy(c), tleSuccess);
}

// A NULL output on one rank is that rank's error and, through the exchange,
// every other rank's at once (not after the 30 s bootstrap deadline).
TEST(RegisterTest, NullOutputFailsEveryRankAtOnce) {
  const int n = 3;
  std::vector<tleComm_t> comms(n);
  ASSERT_EQ(tleCommInitAll(comms.data(), n, nullptr, nullptr), tleSuccess);
  std::vector<char> buf(n * 256);
  std::vector<tleMem_t> mems(n);
  PerRank out = onEveryRank(n, [&](int r) {
    return tleMemRegister(comms[r], buf.data() + 256 * r, 64,
                          r == 1 ? nullptr : &mems[r]);
  });
  expectOneBadRank(out, 1, "tleMemRegister: outMem is NULL", mems);
  for (tleComm_t c : comms)
    EXPECT_EQ(tleCommDestroy(c), tleSuccess);
}

TEST(RegisterTest, CxxLayerReleasesTheRegistrationNotTheMemory) {
  std::vector<tle::Comm> comms = tle::Comm::initAll(1);
  std::vector<uint32_t> user(16, 3);
  tleMem_t raw;
  {
    tle::Mem mem = tle::Mem::registerMemory(comms[0], user.data(), 64);
    raw = mem.get();
    void *local = nullptr;
    ASSERT_EQ(tleMemGetLocalPtr(raw, &local), tleSuccess);
    EXPECT_EQ(local, user.data());
  }
  EXPECT_EQ(tleMemFree(raw), tleInvalidArgument); // released by ~Mem
  user[15] = 4;
  EXPECT_THROW(tle::Mem::registerMemory(comms[0], nullptr, 64), tle::Error);
}

TEST(ShareableAllocTest, HostMemoryIsZeroedAlignedAndFreedOnce) {
  void *p = tleShareableAlloc(10000, -1, nullptr);
  ASSERT_NE(p, nullptr) << tleGetLastErrorDetail();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 4096, 0u);
  auto *bytes = static_cast<unsigned char *>(p);
  for (size_t i = 0; i < 10000; ++i)
    ASSERT_EQ(bytes[i], 0) << i;
  bytes[9999] = 1;
  tleShareableFree(p, 10000, -1, nullptr);
  // Not (any longer) one of its allocations: reported, not freed.
  tleShareableFree(p, 10000, -1, nullptr);
  EXPECT_NE(std::string(tleGetLastErrorDetail())
                .find("is not memory tleShareableAlloc returned"),
            std::string::npos)
      << tleGetLastErrorDetail();
}

TEST(ShareableAllocTest, GpuMemoryNeedsCuda) {
  if (void *p = tleShareableAlloc(64, 0, nullptr)) {
    tleShareableFree(p, 64, 0, nullptr);
    GTEST_SKIP() << "this libtle has CUDA and a GPU";
  }
  std::string detail = tleGetLastErrorDetail();
  EXPECT_EQ(detail.find("tleShareableAlloc: "), 0u) << detail;
  EXPECT_NE(detail.find("built without CUDA"), std::string::npos) << detail;
}

class RegisterProcessTest : public ProcessFixture {};

/// One rank in its own process: registers two ranges of one shareable
/// allocation (at offsets that are not page-aligned), writes into every
/// peer's copies, meets the peers (a third registration's exchange), checks
/// what they wrote, frees the registrations and still uses its memory.
tleResult_t registeringRank(int n, const tleUniqueId &id, int rank,
                            std::string &detail) {
  tleConfig_t cfg = bootstrapConfig(5000);
  tleComm_t comm;
  if (tleResult_t r = tleCommInitRank(&comm, n, &id, rank, 0, &cfg))
    return r;
  const size_t bytes = 3 * 4096;
  auto *mine = static_cast<uint32_t *>(tleShareableAlloc(bytes, -1, nullptr));
  if (!mine)
    return tleSystemError;
  uint32_t *a = mine + 5, *b = mine + 2048 + 3;
  tleMem_t ma, mb, meet;
  if (tleResult_t r = tleMemRegister(comm, a, 64 * 4, &ma))
    return r;
  if (tleResult_t r = tleMemRegister(comm, b, 32 * 4, &mb))
    return r;
  void *local;
  tleMemGetLocalPtr(ma, &local);
  tle::SymMem *ha = symOf(ma), *hb = symOf(mb);
  if (local != a || ha->ptrs[rank] != a || hb->ptrs[rank] != b ||
      ha->bytes != 64 * 4) {
    detail = "the handle does not describe the registered range";
    return tleInternalError;
  }
  for (int p = 0; p < n; ++p) {
    static_cast<uint32_t *>(ha->ptrs[p])[rank] = 1000 * p + rank;
    static_cast<uint32_t *>(hb->ptrs[p])[rank] = 2000 * p + rank;
  }
  // The exchange doubles as a barrier: every rank's stores above happen
  // before any rank returns from it.
  if (tleResult_t r = tleMemRegister(comm, mine, 4, &meet))
    return r;
  for (int q = 0; q < n; ++q)
    if (a[q] != uint32_t(1000 * rank + q) ||
        b[q] != uint32_t(2000 * rank + q)) {
      detail = "rank " + std::to_string(rank) + " read " +
               std::to_string(a[q]) + "/" + std::to_string(b[q]) +
               " from rank " + std::to_string(q);
      return tleInternalError;
    }
  for (tleMem_t m : {ma, mb, meet})
    if (tleResult_t r = tleMemFree(m))
      return r;
  a[0] = 42; // still the user's, still mapped
  if (tleResult_t r = tleCommDestroy(comm))
    return r;
  tleShareableFree(mine, bytes, -1, nullptr);
  return tleSuccess;
}

TEST_F(RegisterProcessTest, RanksMapEachOthersShareableMemory) {
  for (int n : {1, 2, 3}) {
    tleUniqueId id;
    ASSERT_EQ(tleGetUniqueId(&id), tleSuccess);
    std::vector<Child> children;
    for (int r = 0; r < n; ++r)
      children.push_back(start(
          [&, r](std::string &d) { return registeringRank(n, id, r, d); }));
    for (int r = 0; r < n; ++r) {
      Outcome o = collect(children[r]);
      ASSERT_TRUE(o.finished) << "rank " << r << " of " << n << " hung";
      EXPECT_EQ(o.result, tleSuccess)
          << "rank " << r << " of " << n << ": " << o.detail;
    }
  }
}

/// Rank 1 registers memory that no other process can map (`how`: "malloc",
/// or "past-end" for a range that runs past its shareable allocation);
/// rank 0 registers shareable memory. Reports the registration's status
/// and detail.
tleResult_t refusedRank(const tleUniqueId &id, int rank, const char *how,
                        std::string &detail) {
  tleConfig_t cfg = bootstrapConfig(5000);
  tleComm_t comm;
  if (tleResult_t r = tleCommInitRank(&comm, 2, &id, rank, 0, &cfg))
    return r;
  void *shareable = tleShareableAlloc(4096, -1, nullptr);
  void *heap = malloc(4096);
  void *ptr = shareable;
  if (rank == 1)
    ptr = std::string(how) == "malloc" ? heap
                                       : static_cast<char *>(shareable) + 4000;
  tleMem_t mem = nullptr;
  tleResult_t result = tleMemRegister(comm, ptr, 256, &mem);
  detail = tleGetLastErrorDetail();
  if (mem)
    tleMemFree(mem);
  tleCommDestroy(comm);
  free(heap);
  tleShareableFree(shareable, 4096, -1, nullptr);
  return result;
}

TEST_F(RegisterProcessTest, MemoryOtherProcessesCannotMapIsRefused) {
  struct Case {
    const char *how;
    const char *why;
  } cases[] = {
      {"malloc", "is not memory that another process can map: a rank of the "
                 "CPU backend in its own process registers only host memory "
                 "from tleShareableAlloc"},
      {"past-end", "run past the end of their shareable allocation (4096 "
                   "bytes at 0x"},
  };
  for (const Case &c : cases) {
    tleUniqueId id;
    ASSERT_EQ(tleGetUniqueId(&id), tleSuccess);
    Child r0 =
        start([&](std::string &d) { return refusedRank(id, 0, c.how, d); });
    Child r1 =
        start([&](std::string &d) { return refusedRank(id, 1, c.how, d); });
    Outcome o0 = collect(r0), o1 = collect(r1);
    ASSERT_TRUE(o0.finished && o1.finished) << c.how;
    EXPECT_EQ(o1.result, tleInvalidArgument) << c.how << ": " << o1.detail;
    EXPECT_NE(o1.detail.find(c.why), std::string::npos) << o1.detail;
    EXPECT_EQ(o0.result, tlePeerFailure) << c.how << ": " << o0.detail;
    EXPECT_NE(o0.detail.find(std::string("rank 1 failed: ") +
                             o1.detail.substr(strlen("tleMemRegister: "))),
              std::string::npos)
        << o0.detail;
  }
}

} // namespace
