//===- Switch.cpp - Which mutant a mutant test binary runs ----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The test binaries of the mutation job are built with TLE_MUTATION_RUNTIME
// (tle/impl/Mutation.h): every TLE_MUTANT(n) site asks tleTestMutation()
// whether mutant n is on. This is the one definition: the TLE_MUTATION
// environment variable, read once (0 or unset: no mutant, the library as
// shipped). scripts/mutate.py sets it.
//
//===----------------------------------------------------------------------===//

#include <cstdio>
#include <cstdlib>

extern "C" int tleTestMutation(void) {
  static const int mutation = [] {
    const char *env = std::getenv("TLE_MUTATION");
    int n = env ? std::atoi(env) : 0;
    if (n != 0)
      std::fprintf(stderr, "tle: running mutant %d (TLE_MUTATION)\n", n);
    return n;
  }();
  return mutation;
}
