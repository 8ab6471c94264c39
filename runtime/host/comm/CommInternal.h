//===- CommInternal.h - What other parts of TLE read from a comm ----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A narrow window into a tleComm_t for the CPU emulator (runtime/host/emu):
// the rank, size, the DevComm as kernels see it and the host address of its
// error record, without exposing the communicator's internals.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_HOST_COMMINTERNAL_H
#define TLE_HOST_COMMINTERNAL_H

#include "tle/detail/DevComm.h"
#include "tle/detail/Export.h"
#include "tle/tle.h"

namespace tle {

/// A communicator's facts, as getCommInfo reports them.
struct CommInfo {
  int rank = 0;
  int size = 0;
  DevComm *devComm = nullptr;       ///< the kernel's comm argument
  ErrorRecord *errorHost = nullptr; ///< host address of devComm->error
  tleBackend_t backend = tleBackendEmulator;
  bool multiProcess = false; ///< made by tleCommInitRank
  /// Identifies the tleCommInitAll set the comm belongs to (equal for all
  /// its ranks); null for tleCommInitRank.
  const void *group = nullptr;
};

/// Fills `out` for `comm`; tleInvalidArgument for a null or dead comm.
TLE_API tleResult_t getCommInfo(tleComm_t comm, CommInfo &out);

} // namespace tle

#endif // TLE_HOST_COMMINTERNAL_H
