//===- barrier.cpp - A barrier kernel on the emulator, from outside TLE ---===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Each thread writes its rank into a symmetric buffer, all ranks meet at a
// block-scoped device barrier (flagcxIntraBarrierSyncS from tle/device.h,
// slot = block id), and each thread then reads its peer's value: only a
// barrier that works makes every read see the peer's write.
//
//===----------------------------------------------------------------------===//

#include "tle/device.h"
#include "tle/emu.h"
#include "tle/tle.h"

#include <cstdio>
#include <vector>

extern "C" int checkCApi(void);

namespace {
constexpr int kRanks = 4, kBlocks = 2, kThreads = 8;
constexpr int kElems = kBlocks * kThreads;

bool ok(tleResult_t r, const char *what) {
  if (r != tleSuccess)
    std::fprintf(stderr, "%s: %s: %s\n", what, tleGetErrorString(r),
                 tleGetLastErrorDetail());
  return r == tleSuccess;
}
} // namespace

int main() {
  if (checkCApi() != 0)
    return 1;
  tleConfig_t config = TLE_CONFIG_INITIALIZER;
  config.nBarriers = kBlocks;
  tleComm_t comms[kRanks];
  if (!ok(tleCommInitAll(comms, kRanks, nullptr, &config), "tleCommInitAll"))
    return 1;
  tleMem_t mems[kRanks];
  if (!ok(tleMemAllocAll(comms, kRanks, kElems * sizeof(int), mems),
          "tleMemAllocAll"))
    return 1;
  std::vector<void *> handles(kRanks);
  std::vector<int> seen(kRanks * kElems, -1);
  for (int r = 0; r < kRanks; ++r)
    tleMemGetHandle(mems[r], &handles[r]);

  tle::emu::LaunchOptions options;
  options.grid = {kBlocks, 1, 1};
  options.block = {kThreads, 1, 1};
  tle::emu::LaunchResult result =
      tle::emu::launch(comms, kRanks, options, [&](int rank, void *devComm) {
        uint32_t block = tle::emu::linearBlockId();
        int i = static_cast<int>(block * kThreads + tle::emu::linearThreadId());
        auto *mine = static_cast<int *>(
            flagcxGetLocalPointerS(handles[rank], i * sizeof(int)));
        *mine = 100 * rank + i;
        flagcxIntraBarrierSyncS(devComm, tle::kCoopBlock, block, false,
                                tle::kOrderAcqRel);
        int peer = (rank + 1) % kRanks;
        seen[rank * kElems + i] = *static_cast<int *>(
            flagcxGetIntraPointerS(handles[rank], i * sizeof(int), peer));
      });
  if (!ok(result.result, "tle::emu::launch")) {
    std::fprintf(stderr, "%s\n", result.message.c_str());
    return 1;
  }
  int bad = 0;
  for (int r = 0; r < kRanks; ++r)
    for (int i = 0; i < kElems; ++i)
      bad += seen[r * kElems + i] != 100 * ((r + 1) % kRanks) + i;
  for (int r = 0; r < kRanks; ++r) {
    tleMemFree(mems[r]);
    tleCommDestroy(comms[r]);
  }
  std::printf("barrier on %d emulated ranks: %s (seed %llu)\n", kRanks,
              bad ? "WRONG" : "OK",
              static_cast<unsigned long long>(result.seed));
  return bad ? 1 : 0;
}
