//===- tlerun.cpp - Run a TLE kernel on N ranks ---------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Entry point of tlerun: parse the command line, obtain the kernel (bundle or
// in-process compilation), and hand it to the runtime core.
//
//===----------------------------------------------------------------------===//

#include "Kernel.h"
#include "Runner.h"

#include "tle/tle.h"

#include <cstdio>

using namespace tle::run;

int main(int argc, char **argv) {
  Options options;
  std::string error;
  Report report(wantsJson(argc, argv));
  switch (parseOptions(argc, argv, options, error)) {
  case ParseResult::Help:
    std::fputs(usageText(), stdout);
    return 0;
  case ParseResult::Version:
    std::printf("tlerun (TLE) %d.%d\n  bundle format %d, compiler %s\n",
                TLE_VERSION_MAJOR, TLE_VERSION_MINOR, kBundleVersion,
                haveCompiler() ? "built in" : "not built");
    return 0;
  case ParseResult::Error:
    report.error("usage", error);
    return report.finish(2);
  case ParseResult::Run:
    break;
  }
  LoadedKernel kernel;
  if (!loadKernel(options, kernel, error)) {
    report.error("load", error);
    return report.finish(1);
  }
  return report.finish(runKernel(options, kernel, report));
}
