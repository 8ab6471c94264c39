//===- Runner.h - tlerun's runtime core -------------------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Creates the communicators and buffers, launches the kernel the requested
// number of times, and prints the dumps, the summary and failures. Needs only
// the TLE runtime (and CUDA for --target cuda), never LLVM.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_TOOLS_TLERUN_RUNNER_H
#define TLE_TOOLS_TLERUN_RUNNER_H

#include "Kernel.h"
#include "Options.h"
#include "Report.h"

namespace tle::run {

/// Runs `kernel` as `options` say, telling `report` what happens; returns
/// the process exit status.
int runKernel(const Options &options, const LoadedKernel &kernel,
              Report &report);

} // namespace tle::run

#endif // TLE_TOOLS_TLERUN_RUNNER_H
