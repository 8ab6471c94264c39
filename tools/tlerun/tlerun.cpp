//===- tlerun.cpp - Run a TLE kernel on N ranks
//----------------------------===//
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
    std::fprintf(stderr, "tlerun: %s\n", error.c_str());
    return 2;
  case ParseResult::Run:
    break;
  }
  LoadedKernel kernel;
  if (!loadKernel(options, kernel, error)) {
    std::fprintf(stderr, "tlerun: %s\n", error.c_str());
    return 1;
  }
  return runKernel(options, kernel);
}
