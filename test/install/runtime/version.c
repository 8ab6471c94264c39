/*===- version.c - The C API, from C ---------------------------------------===*
 * SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
 *
 * Compiled as C: tle.h must be a C header. Checks that the library loaded
 * is of the headers' version and that its error strings are reachable.
 *
 *===----------------------------------------------------------------------===*/

#include "tle/tle.h"

#include <stdio.h>
#include <string.h>

int checkCApi(void) {
  tleConfig_t config = TLE_CONFIG_INITIALIZER;
  tleComm_t comm = NULL;
  /* An id that tleGetUniqueId did not make is refused with a detail. */
  tleUniqueId id;
  memset(&id, 0, sizeof(id));
  if (tleCommInitRank(&comm, 2, &id, 0, 0, &config) != tleInvalidArgument) {
    fprintf(stderr, "tleCommInitRank accepted a zero id\n");
    return 1;
  }
  printf("C API %s: %s (%s)\n", TLE_VERSION_STRING,
         tleGetErrorString(tleInvalidArgument), tleGetLastErrorDetail());
  return 0;
}

#ifdef TLE_CONSUMER_C_MAIN
int main(void) { return checkCApi(); }
#endif
