/*===- host_kernel.c - A tlec-compiled kernel launched by a C program -----===*
 * SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
 *
 * The step after tlerun: a host program of one's own that launches a kernel
 * compiled by `tlec --target=host --emit=llvm` (examples/allreduce.mlir,
 * compiled to an object with clang) on the emulator. The kernel's packed
 * entry is `__tle_entry.allreduce`, not a C identifier, so C names it with
 * an asm label. Each rank's `in` holds 0..63; after the launch every
 * rank's `out[i]` must be 2 * i.
 *
 *===----------------------------------------------------------------------===*/

#include "tle/emu.h"
#include "tle/tle.h"

#include <stdio.h>

/* void __tle_entry.NAME(void **args): args[i] points at parameter i. */
extern void allreduceEntry(void **args) __asm__("__tle_entry.allreduce");

enum { kRanks = 2, kBlocks = 2, kThreads = 32, kElems = kBlocks * kThreads };

static int ok(tleResult_t r, const char *what) {
  if (r != tleSuccess)
    fprintf(stderr, "%s: %s: %s\n", what, tleGetErrorString(r),
            tleGetLastErrorDetail());
  return r == tleSuccess;
}

int main(void) {
  tleConfig_t config = TLE_CONFIG_INITIALIZER;
  config.nBarriers = kBlocks;
  tleComm_t comms[kRanks];
  tleMem_t in[kRanks], out[kRanks];
  if (!ok(tleCommInitAll(comms, kRanks, NULL, &config), "tleCommInitAll") ||
      !ok(tleMemAllocAll(comms, kRanks, kElems * sizeof(int), in), "in") ||
      !ok(tleMemAllocAll(comms, kRanks, kElems * sizeof(int), out), "out"))
    return 1;
  /* The kernel's parameters (comm, in, out) for each rank. */
  void *params[kRanks][3];
  void *argValues[kRanks][3];
  void **args[kRanks];
  for (int r = 0; r < kRanks; ++r) {
    int *local;
    if (!ok(tleCommGetDevComm(comms[r], &params[r][0]), "devComm") ||
        !ok(tleMemGetHandle(in[r], &params[r][1]), "in handle") ||
        !ok(tleMemGetHandle(out[r], &params[r][2]), "out handle") ||
        !ok(tleMemGetLocalPtr(in[r], (void **)&local), "in pointer"))
      return 1;
    for (int i = 0; i < kElems; ++i)
      local[i] = i;
    for (int p = 0; p < 3; ++p)
      argValues[r][p] = &params[r][p];
    args[r] = argValues[r];
  }
  const uint32_t grid[3] = {kBlocks, 1, 1}, block[3] = {kThreads, 1, 1};
  tleErrorInfo error;
  if (!ok(tleEmuLaunch(comms, kRanks, grid, block, 0, 0, allreduceEntry, args,
                       &error),
          "tleEmuLaunch"))
    return 1;
  int bad = 0;
  for (int r = 0; r < kRanks; ++r) {
    int *local;
    tleMemGetLocalPtr(out[r], (void **)&local);
    for (int i = 0; i < kElems; ++i)
      bad += local[i] != kRanks * i;
  }
  printf("tlec-compiled allreduce from C on %d emulated ranks: %s\n", kRanks,
         bad ? "WRONG" : "OK");
  for (int r = 0; r < kRanks; ++r) {
    tleMemFree(in[r]);
    tleMemFree(out[r]);
    tleCommDestroy(comms[r]);
  }
  return bad ? 1 : 0;
}
