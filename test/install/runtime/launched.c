/*===- launched.c - One rank of a C program started by tle.launch ---------===*
 * SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
 *
 * One process per rank, as `python -m tle.launch --ranks N --no-python
 * ./launched` starts them: tleCommInitFromLauncher joins the launch's
 * communicator, and a C kernel on the emulator writes this rank's number
 * into a symmetric buffer, meets the other ranks at a barrier and reads the
 * next rank's. Prints "rank R of N: OK" when it read what that rank wrote.
 *
 *===----------------------------------------------------------------------===*/

#include "tle/device.h"
#include "tle/emu.h"
#include "tle/tle.h"

#include <stdio.h>

static void exchange(void **args) {
  const void *comm = *(void **)args[0];
  const void *mem = *(void **)args[1];
  int *seen = *(int **)args[2];
  int rank = flagcxDevCommGetIntraRank(comm);
  int size = flagcxDevCommGetIntraSize(comm);
  *(int *)flagcxGetLocalPointerS(mem, 0) = 1000 + rank;
  flagcxIntraBarrierSyncS(comm, tleCoopBlock, 0, false, tleOrderAcqRel);
  *seen = *(const int *)flagcxGetIntraPointerS(mem, 0, (rank + 1) % size);
  /* No rank may rewrite its word while a peer still reads it. */
  flagcxIntraBarrierSyncS(comm, tleCoopBlock, 0, false, tleOrderAcqRel);
}

int main(void) {
  tleComm_t comm;
  tleResult_t r = tleCommInitFromLauncher(&comm, -1, NULL);
  if (r != tleSuccess) {
    fprintf(stderr, "tleCommInitFromLauncher: %s: %s\n", tleGetErrorString(r),
            tleGetLastErrorDetail());
    return 1;
  }
  int rank = 0, size = 0;
  tleMem_t mem;
  void *devComm, *handle;
  int seen = -1, *seenPtr = &seen;
  if (tleCommRank(comm, &rank) || tleCommSize(comm, &size) ||
      tleMemAlloc(comm, sizeof(int), &mem) ||
      tleCommGetDevComm(comm, &devComm) || tleMemGetHandle(mem, &handle)) {
    fprintf(stderr, "setup: %s\n", tleGetLastErrorDetail());
    return 1;
  }
  void *argValues[3] = {&devComm, &handle, &seenPtr};
  void **args[1] = {argValues};
  const uint32_t one[3] = {1, 1, 1};
  tleErrorInfo error;
  r = tleEmuLaunch(&comm, 1, one, one, 0, 0, exchange, args, &error);
  if (r != tleSuccess) {
    fprintf(stderr, "tleEmuLaunch: %s: %s\n", tleGetErrorString(r),
            error.message);
    return 1;
  }
  int ok = seen == 1000 + (rank + 1) % size;
  printf("rank %d of %d: %s\n", rank, size, ok ? "OK" : "WRONG");
  tleMemFree(mem);
  tleCommDestroy(comm);
  return ok ? 0 : 1;
}
