//===- BundleFuzzer.cpp - Fuzzing the bundle reader -------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// libFuzzer target for tlerun's bundle reader (lib/Bundle), which reads
// files users pass on the command line. Besides crashes and sanitizer
// reports, a bundle the reader accepts must keep the reader's promises:
// every kernel name a C identifier, every parameter type one a bundle may
// carry, the counts within their bounds, and writing it back out must give
// a bundle that reads to the same thing.
//
//===----------------------------------------------------------------------===//

#include "tle/Bundle/Bundle.h"

#include <cstdio>
#include <cstdlib>
#include <string>

using namespace tle::run;

namespace {

void check(bool ok, const char *what) {
  if (!ok) {
    fprintf(stderr, "broken promise: %s\n", what);
    abort();
  }
}

bool same(const Bundle &a, const Bundle &b) {
  if (a.target != b.target || a.arch != b.arch || a.format != b.format ||
      a.source != b.source || a.code != b.code ||
      a.kernels.size() != b.kernels.size())
    return false;
  for (size_t i = 0; i < a.kernels.size(); ++i) {
    const BundleKernel &x = a.kernels[i], &y = b.kernels[i];
    if (x.name != y.name || x.params != y.params ||
        x.cooperative != y.cooperative || x.barrierSlots != y.barrierSlots ||
        x.barrierOps != y.barrierOps || x.signalWords != y.signalWords)
      return false;
  }
  return true;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  Bundle bundle;
  std::string error;
  if (!parseBundle(text, bundle, error)) {
    check(!error.empty(), "a refusal says why");
    return 0;
  }
  check(bundle.kernels.size() <= kMaxBundleKernels, "the kernel bound");
  for (const BundleKernel &k : bundle.kernels) {
    check(isValidKernelName(k.name), "kernel names are C identifiers");
    check(k.params.size() <= kMaxKernelParams, "the parameter bound");
    for (const std::string &type : k.params)
      check(isValidParamType(type), "parameter types a bundle may carry");
    check(bundle.findKernel(k.name) != nullptr, "every kernel can be found");
  }
  check(bundle.code.size() <= size, "the code lies inside the input");
  std::string written;
  check(writeBundle(bundle, written, error), "an accepted bundle writes out");
  Bundle again;
  check(parseBundle(written, again, error), "a written bundle reads back");
  check(same(bundle, again), "reading back gives the same bundle");
  return 0;
}
