/*===- emu_kernel.c - A kernel in C on the emulator, from outside TLE -----===*
 * SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
 *
 * What a C program does to run a kernel on TLE's CPU emulator: the kernel is
 * a C function taking its arguments as cuLaunchKernel passes them (an array
 * of pointers to each parameter), calls the device ABI of tle/device.h and
 * the emulator's id hooks of tle/emu.h, and tleEmuLaunch runs it on 4 ranks.
 * Each thread writes into its rank's symmetric buffer, the ranks meet at a
 * block barrier (slot = block id), and each thread reads its peer's value.
 * A second launch uses a slot past the communicator's, and must come back
 * as tleIndexOutOfRange with the device's error record, not end the
 * process.
 *
 *===----------------------------------------------------------------------===*/

#include "tle/device.h"
#include "tle/emu.h"
#include "tle/tle.h"

#include <stdio.h>
#include <string.h>

enum { kRanks = 4, kBlocks = 2, kThreads = 8, kElems = kBlocks * kThreads };

/* The kernel's parameters: args[0] points to the device communicator,
 * args[1] to the buffer's handle, args[2] to the slot offset, args[3] to
 * this rank's row of `seen`. */
static void exchange(void **args) {
  const void *comm = *(void **)args[0];
  const void *mem = *(void **)args[1];
  uint32_t slotOffset = *(uint32_t *)args[2];
  int *seen = *(int **)args[3];
  int rank = flagcxDevCommGetIntraRank(comm);
  int size = flagcxDevCommGetIntraSize(comm);
  uint32_t block = tleEmuBlockId(0);
  int i = (int)(block * kThreads + tleEmuThreadId(0));
  int *mine = (int *)flagcxGetLocalPointerS(mem, i * sizeof(int));
  *mine = 100 * rank + i;
  flagcxIntraBarrierSyncS(comm, tleCoopBlock, block + slotOffset, false,
                          tleOrderAcqRel);
  seen[i] = *(const int *)flagcxGetIntraPointerS(mem, i * sizeof(int),
                                                 (rank + 1) % size);
}

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
  tleMem_t mems[kRanks];
  if (!ok(tleCommInitAll(comms, kRanks, NULL, &config), "tleCommInitAll") ||
      !ok(tleMemAllocAll(comms, kRanks, kElems * sizeof(int), mems),
          "tleMemAllocAll"))
    return 1;
  void *devComms[kRanks], *handles[kRanks];
  int seen[kRanks][kElems];
  int *rows[kRanks];
  uint32_t slotOffset = 0;
  void *argValues[kRanks][4];
  void **args[kRanks];
  for (int r = 0; r < kRanks; ++r) {
    if (!ok(tleCommGetDevComm(comms[r], &devComms[r]), "tleCommGetDevComm") ||
        !ok(tleMemGetHandle(mems[r], &handles[r]), "tleMemGetHandle"))
      return 1;
    rows[r] = seen[r];
    argValues[r][0] = &devComms[r];
    argValues[r][1] = &handles[r];
    argValues[r][2] = &slotOffset;
    argValues[r][3] = &rows[r];
    args[r] = argValues[r];
  }
  memset(seen, 0xff, sizeof seen);
  const uint32_t grid[3] = {kBlocks, 1, 1}, block[3] = {kThreads, 1, 1};
  tleErrorInfo error;
  if (!ok(tleEmuLaunch(comms, kRanks, grid, block, 0, 0, exchange, args,
                       &error),
          "tleEmuLaunch"))
    return 1;
  int bad = 0;
  for (int r = 0; r < kRanks; ++r)
    for (int i = 0; i < kElems; ++i)
      bad += seen[r][i] != 100 * ((r + 1) % kRanks) + i;
  printf("C kernel on %d emulated ranks: %s\n", kRanks, bad ? "WRONG" : "OK");

  /* Block 1 now uses slot 2 of a communicator with 2: the launch fails
   * with the record, and the process goes on. */
  slotOffset = 1;
  tleResult_t r =
      tleEmuLaunch(comms, kRanks, grid, block, 0, 0, exchange, args, &error);
  printf("out-of-range slot: %s: %s\n", tleGetErrorString(r), error.message);
  if (r != tleIndexOutOfRange || error.result != tleIndexOutOfRange ||
      error.slot != 2)
    bad = 1;
  for (int q = 0; q < kRanks; ++q) {
    tleMemFree(mems[q]);
    tleCommDestroy(comms[q]);
  }
  return bad ? 1 : 0;
}
