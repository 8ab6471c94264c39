//===- Mutation.h - Test-only switch for mutation testing -------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The device library carries a fixed list of deliberate bugs ("mutants",
// numbered, listed with what must catch each in docs/testing.md), each
// behind `TLE_MUTANT(n)` at its one site. scripts/mutate.py builds and runs
// the tests with each of them switched on, and fails if any mutant survives:
// a test that cannot fail when the barrier is wrong is found that way.
//
// Without TLE_MUTATION (every product build) TLE_MUTANT(n) is the constant
// `false`: each site compiles to the original code, at no cost. With
// -DTLE_MUTATION=n it is true for mutant n only (a compile-time choice, for
// the PTX and LLVM IR checks). With -DTLE_MUTATION_RUNTIME the mutant is
// chosen when the program runs, by `tleTestMutation()`, which the test
// binary defines (unittests/mutation): one build of the CPU tests then
// serves every mutant.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_IMPL_MUTATION_H
#define TLE_IMPL_MUTATION_H

#if defined(TLE_MUTATION_RUNTIME) && !defined(__CUDACC__)
extern "C" int tleTestMutation(void);
#define TLE_MUTANT(n) (tleTestMutation() == (n))
#elif defined(TLE_MUTATION)
#define TLE_MUTANT(n) (TLE_MUTATION == (n))
#else
#define TLE_MUTANT(n) false
#endif

#endif // TLE_IMPL_MUTATION_H
