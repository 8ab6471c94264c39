//===- ImportTest.cpp - tleMemImport on the CPU backend ---------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Memory TLE did not allocate becomes a TLE buffer: plain heap memory of
// ranks in one process (from one thread with tleMemImportAll, and with one
// thread per rank and the addresses exchanged), and, across processes, a
// buffer allocated on another communicator imported with the peers'
// addresses its handle lists. The imported handle must name the same
// memory, freeing it must leave the memory alone, and bad arguments and
// disagreements must fail every rank with a reason.
//
//===----------------------------------------------------------------------===//

#include "ChildProcess.h"
#include "PerRank.h"
#include "tle/detail/DevComm.h"
#include "tle/tle.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
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

/// Page-aligned, zeroed heap memory per rank, freed by the test itself.
struct UserBuffers {
  UserBuffers(int n, size_t bytes) : bytes(bytes) {
    for (int r = 0; r < n; ++r) {
      ptrs.push_back(aligned_alloc(4096, bytes));
      memset(ptrs.back(), 0, bytes);
    }
  }
  ~UserBuffers() {
    for (void *p : ptrs)
      free(p);
  }
  size_t bytes;
  std::vector<void *> ptrs;
};

class Comms {
public:
  explicit Comms(int n) : comms(n) {
    EXPECT_EQ(tleCommInitAll(comms.data(), n, nullptr, nullptr), tleSuccess);
  }
  ~Comms() {
    for (tleComm_t c : comms)
      EXPECT_EQ(tleCommDestroy(c), tleSuccess);
  }
  std::vector<tleComm_t> comms;
};

TEST(ImportTest, ImportAllListsTheUsersCopiesAndFreesNothing) {
  const int n = 3;
  Comms set(n);
  UserBuffers user(n, 8192);
  std::vector<tleMem_t> mems(n);
  ASSERT_EQ(tleMemImportAll(set.comms.data(), n, user.ptrs.data(), user.bytes,
                            mems.data()),
            tleSuccess)
      << tleGetLastErrorDetail();
  for (int r = 0; r < n; ++r) {
    tle::SymMem *h = handleOf(mems[r]);
    void *dc, *local;
    ASSERT_EQ(tleCommGetDevComm(set.comms[r], &dc), tleSuccess);
    ASSERT_EQ(tleMemGetLocalPtr(mems[r], &local), tleSuccess);
    EXPECT_EQ(h->magic, tle::kSymMemMagic);
    EXPECT_EQ(h->rank, r);
    EXPECT_EQ(h->size, n);
    EXPECT_EQ(h->bytes, user.bytes);
    EXPECT_EQ(h->error, static_cast<tle::DevComm *>(dc)->error);
    EXPECT_EQ(local, user.ptrs[r]);
    for (int p = 0; p < n; ++p)
      EXPECT_EQ(h->ptrs[p], user.ptrs[p]);
    // A write through the handle is a write into the user's memory.
    static_cast<uint32_t *>(h->ptrs[(r + 1) % n])[r] = 7 + r;
  }
  for (int r = 0; r < n; ++r)
    EXPECT_EQ(static_cast<uint32_t *>(user.ptrs[(r + 1) % n])[r], 7u + r);
  for (tleMem_t m : mems)
    EXPECT_EQ(tleMemFree(m), tleSuccess);
  // Still the user's: written and read after every handle is gone (the
  // sanitizer builds would flag a use after free).
  for (void *p : user.ptrs)
    static_cast<char *>(p)[user.bytes - 1] = 1;
}

TEST(ImportTest, OneThreadPerRankExchangesTheAddresses) {
  const int n = 4;
  Comms set(n);
  UserBuffers user(n, 256);
  std::vector<tleMem_t> mems(n);
  std::vector<tleResult_t> results(n);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r)
    threads.emplace_back([&, r] {
      results[r] = tleMemImport(set.comms[r], user.ptrs[r], user.bytes, nullptr,
                                &mems[r]);
    });
  for (std::thread &t : threads)
    t.join();
  for (int r = 0; r < n; ++r) {
    ASSERT_EQ(results[r], tleSuccess) << r;
    tle::SymMem *h = handleOf(mems[r]);
    for (int p = 0; p < n; ++p)
      EXPECT_EQ(h->ptrs[p], user.ptrs[p]);
  }
  for (tleMem_t m : mems)
    EXPECT_EQ(tleMemFree(m), tleSuccess);
}

TEST(ImportTest, DisagreementsFailEveryRank) {
  const int n = 2;
  Comms set(n);
  UserBuffers user(n, 4096);
  std::vector<tleMem_t> mems(n);
  std::vector<tleResult_t> results(n);
  std::vector<std::string> details(n);
  auto importAll = [&](auto bytesOf, auto peersOf) {
    std::vector<std::thread> threads;
    for (int r = 0; r < n; ++r)
      threads.emplace_back([&, r] {
        mems[r] = reinterpret_cast<tleMem_t>(0x1);
        results[r] = tleMemImport(set.comms[r], user.ptrs[r], bytesOf(r),
                                  peersOf(r), &mems[r]);
        details[r] = tleGetLastErrorDetail();
      });
    for (std::thread &t : threads)
      t.join();
  };
  auto none = [](int) -> void *const * { return nullptr; };
  importAll([](int r) { return r == 1 ? 2048 : 4096; }, none);
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(results[r], tleInvalidArgument);
    EXPECT_NE(details[r].find("every rank must import the same size"),
              std::string::npos)
        << details[r];
    EXPECT_EQ(mems[r], nullptr);
  }
  // A rank whose own arguments are wrong tells the others at once.
  std::vector<void *> swapped = {user.ptrs[1], user.ptrs[0]};
  importAll([](int) { return 4096; },
            [&](int r) { return r == 0 ? swapped.data() : nullptr; });
  EXPECT_EQ(results[0], tleInvalidArgument);
  EXPECT_NE(details[0].find("peerPtrs[0]"), std::string::npos) << details[0];
  EXPECT_EQ(results[1], tlePeerFailure);
  EXPECT_NE(details[1].find("rank 0 failed: peerPtrs[0]"), std::string::npos)
      << details[1];
  // An address that is not mapped: the rank given it fails, and so does
  // the other, in the same collective.
  std::vector<void *> wild = {user.ptrs[0], reinterpret_cast<void *>(0x1000)};
  importAll([](int) { return 4096; },
            [&](int r) { return r == 0 ? wild.data() : nullptr; });
  EXPECT_EQ(results[0], tleInvalidArgument);
  EXPECT_NE(details[0].find("rank 0 cannot use rank 1's copy"),
            std::string::npos)
      << details[0];
  EXPECT_NE(details[0].find("not all mapped"), std::string::npos) << details[0];
  EXPECT_EQ(results[1], tlePeerFailure);
  for (int r = 0; r < n; ++r)
    EXPECT_EQ(mems[r], nullptr);
  // The set is still usable.
  importAll([](int) { return 4096; }, none);
  for (int r = 0; r < n; ++r)
    ASSERT_EQ(results[r], tleSuccess) << details[r];
  for (tleMem_t m : mems)
    EXPECT_EQ(tleMemFree(m), tleSuccess);
}

// A NULL output on one rank is that rank's error and, through the exchange,
// every other rank's at once (not after the 30 s bootstrap deadline).
TEST(ImportTest, NullOutputFailsEveryRankAtOnce) {
  const int n = 3;
  Comms set(n);
  UserBuffers user(n, 64);
  std::vector<tleMem_t> mems(n);
  PerRank out = onEveryRank(n, [&](int r) {
    return tleMemImport(set.comms[r], user.ptrs[r], user.bytes, nullptr,
                        r == 1 ? nullptr : &mems[r]);
  });
  expectOneBadRank(out, 1, "tleMemImport: outMem is NULL", mems);
}

TEST(ImportTest, ArgumentErrors) {
  Comms set(2);
  UserBuffers user(2, 64);
  tleMem_t mems[2];
  EXPECT_EQ(tleMemImportAll(set.comms.data(), 2, nullptr, 64, mems),
            tleInvalidArgument);
  EXPECT_EQ(tleMemImportAll(set.comms.data(), 2, user.ptrs.data(), 0, mems),
            tleInvalidArgument);
  EXPECT_EQ(std::string(tleGetLastErrorDetail()),
            "tleMemImportAll: bytes is 0");
  std::vector<void *> holes = {user.ptrs[0], nullptr};
  EXPECT_EQ(tleMemImportAll(set.comms.data(), 2, holes.data(), 64, mems),
            tleInvalidArgument);
  tleComm_t swapped[2] = {set.comms[1], set.comms[0]};
  EXPECT_EQ(tleMemImportAll(swapped, 2, user.ptrs.data(), 64, mems),
            tleInvalidArgument);
  EXPECT_EQ(tleMemImport(nullptr, user.ptrs[0], 64, nullptr, mems),
            tleInvalidArgument);
  // 64 bytes past an unmapped page: refused before any handle exists.
  std::vector<void *> wild = {user.ptrs[0], reinterpret_cast<void *>(0x1000)};
  EXPECT_EQ(tleMemImportAll(set.comms.data(), 2, wild.data(), 64, mems),
            tleInvalidArgument);
  EXPECT_EQ(mems[0], nullptr);
  EXPECT_EQ(mems[1], nullptr);
}

class ImportProcessTest : public ProcessFixture {};

// Reproducer (issue 32, item 12): checking that a huge range is mapped
// allocated one byte per page before the refusal (1 GiB for 2^42 bytes,
// 4 GiB for 2^44). In a child whose address space has 64 MiB to spare, a
// 2^44-byte import of a 4 KiB buffer is refused as unmapped, in O(1)
// memory.
TEST_F(ImportProcessTest, HugeSizeIsRefusedWithoutAllocating) {
  Child child = start([](std::string &detail) {
    capAddressSpace(64);
    tleComm_t comm;
    if (tleResult_t r = tleCommInitAll(&comm, 1, nullptr, nullptr))
      return r;
    void *buf = aligned_alloc(4096, 4096);
    tleMem_t mem = nullptr;
    tleResult_t r = tleMemImportAll(&comm, 1, &buf, size_t(1) << 44, &mem);
    detail = tleGetLastErrorDetail();
    if (r == tleInvalidArgument &&
        detail.find("are not all mapped in this process") == std::string::npos)
      r = tleInternalError;
    tleCommDestroy(comm);
    free(buf);
    return r;
  });
  Outcome o = collect(child);
  ASSERT_TRUE(o.finished);
  EXPECT_EQ(o.result, tleInvalidArgument) << o.detail;
}

/// One rank of a two-process run: allocates a buffer on communicator A,
/// imports it into communicator B with the addresses A's handle lists
/// (peerPtrs), writes through B's handle into the peer's copy, meets, and
/// reads through A's what the peer wrote. Then frees B's handle and checks
/// that A's memory is still there; and checks that B refuses addresses
/// the peers reported themselves (peerPtrs NULL), which the emulator
/// cannot check across processes.
tleResult_t importRank(const tleUniqueId &idA, const tleUniqueId &idB, int rank,
                       std::string &detail) {
  tleConfig_t cfg = bootstrapConfig(10000);
  tleComm_t a, b;
  if (tleResult_t r = tleCommInitRank(&a, 2, &idA, rank, 0, &cfg))
    return r;
  if (tleResult_t r = tleCommInitRank(&b, 2, &idB, rank, 0, &cfg))
    return r;
  tleMem_t mine, meet;
  if (tleResult_t r = tleMemAlloc(a, 4096, &mine))
    return r;
  void *h;
  tleMemGetHandle(mine, &h);
  auto *symA = static_cast<tle::SymMem *>(h);
  tleMem_t imported;
  if (tleResult_t r =
          tleMemImport(b, symA->ptrs[rank], 4096, symA->ptrs, &imported))
    return r;
  tleMemGetHandle(imported, &h);
  auto *symB = static_cast<tle::SymMem *>(h);
  int peer = 1 - rank;
  if (symB->ptrs[peer] != symA->ptrs[peer] || symB->size != 2) {
    detail = "the imported handle does not list A's addresses";
    return tleInternalError;
  }
  static_cast<uint32_t *>(symB->ptrs[peer])[rank] = 500 + rank;
  // The allocation's exchange doubles as a barrier on B.
  if (tleResult_t r = tleMemAlloc(b, 8, &meet))
    return r;
  if (tleResult_t r = tleMemFree(imported))
    return r;
  uint32_t got = static_cast<uint32_t *>(symA->ptrs[rank])[peer];
  if (got != uint32_t(500 + peer)) {
    detail = "rank " + std::to_string(rank) + " read " + std::to_string(got);
    return tleInternalError;
  }
  tleResult_t refused =
      tleMemImport(b, symA->ptrs[rank], 4096, nullptr, &imported);
  std::string why = tleGetLastErrorDetail();
  if (refused != tleInvalidArgument ||
      why.find("pass peerPtrs") == std::string::npos) {
    detail = "peer-reported addresses across processes: " + why;
    return tleInternalError;
  }
  tleMemFree(meet);
  tleMemFree(mine);
  tleCommDestroy(b);
  return tleCommDestroy(a);
}

TEST_F(ImportProcessTest, BufferOfAnotherCommWithCallersPeerPointers) {
  tleUniqueId idA, idB;
  ASSERT_EQ(tleGetUniqueId(&idA), tleSuccess);
  ASSERT_EQ(tleGetUniqueId(&idB), tleSuccess);
  std::vector<Child> children;
  for (int r = 0; r < 2; ++r)
    children.push_back(start([&, r](std::string &detail) {
      return importRank(idA, idB, r, detail);
    }));
  for (int r = 0; r < 2; ++r) {
    Outcome o = collect(children[r], 20000);
    EXPECT_TRUE(o.finished) << "rank " << r << " hung";
    EXPECT_EQ(o.result, tleSuccess) << "rank " << r << ": " << o.detail;
  }
}

} // namespace
