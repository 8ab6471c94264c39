//===- ImportTest.cpp - Kernels on imported memory, on the emulator -------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A buffer TLE did not allocate, made a TLE buffer with tleMemImportAll,
// serves kernels exactly like one of tleMemAlloc: flagcxGetIntraPointerS
// reaches every rank's copy of the user's memory across a barrier, and the
// pointer functions check offsets against the imported size.
//
//===----------------------------------------------------------------------===//

#include "EmuTestUtil.h"

#include <cstdlib>
#include <cstring>

using namespace tle;
using namespace tle::emu;
using namespace tle::emutest;

namespace {

/// Page-aligned user memory for every rank of `n`, `bytes` each.
struct UserMemory {
  UserMemory(int n, size_t bytes) {
    for (int r = 0; r < n; ++r) {
      // aligned_alloc wants a size that is a multiple of the alignment
      // (glibc does not check; AddressSanitizer does).
      ptrs.push_back(aligned_alloc(4096, (bytes + 4095) / 4096 * 4096));
      memset(ptrs.back(), 0, bytes);
    }
  }
  ~UserMemory() {
    for (void *p : ptrs)
      free(p);
  }
  std::vector<void *> ptrs;
};

/// Imported handles of every rank, freed at the end.
struct Imported {
  Imported(const Ranks &ranks, UserMemory &user, size_t bytes)
      : mems(ranks.size()) {
    status = tleMemImportAll(ranks.comms.data(), ranks.size(), user.ptrs.data(),
                             bytes, mems.data());
    for (tleMem_t m : mems) {
      void *h = nullptr;
      if (status == tleSuccess)
        tleMemGetHandle(m, &h);
      handles.push_back(h);
    }
  }
  ~Imported() {
    if (status == tleSuccess)
      for (tleMem_t m : mems)
        tleMemFree(m);
  }
  tleResult_t status;
  std::vector<tleMem_t> mems;
  std::vector<void *> handles;
};

TEST(EmuImport, PeersReachTheUsersMemoryAcrossTheBarrier) {
  constexpr int kRanks = 4;
  constexpr uint32_t kRounds = 20;
  Ranks ranks(kRanks);
  ASSERT_EQ(ranks.status, tleSuccess) << tleGetLastErrorDetail();
  UserMemory user(kRanks, 2 * kRanks * sizeof(uint32_t));
  Imported buf(ranks, user, 2 * kRanks * sizeof(uint32_t));
  ASSERT_EQ(buf.status, tleSuccess) << tleGetLastErrorDetail();
  uint64_t bad = 0;
  LaunchResult r = launch(
      ranks.comms.data(), kRanks, shape({1, 1, 1}, {4, 1, 1}),
      [&](int rank, void *dc) {
        const void *mem = buf.handles[rank];
        for (uint32_t k = 0; k < kRounds; ++k) {
          // Words alternate by round: round k+2 rewrites round k's word
          // only after every peer arrived at k+1, which it does after
          // reading round k.
          uint32_t word = (k % 2) * kRanks + rank;
          if (linearThreadId() == 0)
            for (int p = 0; p < kRanks; ++p)
              __atomic_store_n(static_cast<uint32_t *>(flagcxGetIntraPointerS(
                                   mem, word * sizeof(uint32_t), p)),
                               k + 1, __ATOMIC_RELAXED);
          flagcxIntraBarrierSyncS(dc, kCoopBlock, 0, false, kOrderAcqRel);
          auto *mine = static_cast<uint32_t *>(flagcxGetLocalPointerS(mem, 0));
          for (int q = 0; q < kRanks; ++q)
            bad += __atomic_load_n(&mine[(k % 2) * kRanks + q],
                                   __ATOMIC_RELAXED) != k + 1;
        }
      });
  ASSERT_EQ(r.result, tleSuccess) << r.message;
  EXPECT_EQ(bad, 0u) << "seed " << r.seed;
  // The stores went into the user's memory itself.
  for (int p = 0; p < kRanks; ++p)
    for (int q = 0; q < kRanks; ++q)
      EXPECT_EQ(static_cast<uint32_t *>(user.ptrs[p])[kRanks + q], kRounds);
}

TEST(EmuImport, OffsetsAreCheckedAgainstTheImportedSize) {
  Ranks ranks(2);
  ASSERT_EQ(ranks.status, tleSuccess);
  UserMemory user(2, 4096);
  // Only the first 40 bytes are imported: offset 44 is past the end.
  Imported buf(ranks, user, 40);
  ASSERT_EQ(buf.status, tleSuccess) << tleGetLastErrorDetail();
  LaunchResult r = launch(ranks.comms.data(), 2, shape({1, 1, 1}, {1, 1, 1}),
                          [&](int rank, void *) {
                            if (rank == 1)
                              flagcxGetIntraPointerS(buf.handles[rank], 44, 0);
                          });
  EXPECT_EQ(r.result, tleInvalidArgument);
  std::string message = r.error.message;
  EXPECT_NE(message.find("offset 44 is past the end of a 40-byte buffer"),
            std::string::npos)
      << message;
}

} // namespace
