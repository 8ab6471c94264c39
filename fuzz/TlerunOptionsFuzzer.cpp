//===- TlerunOptionsFuzzer.cpp - Fuzzing tlerun's command line --*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// libFuzzer target for tlerun's command line (tools/tlerun/Options.cpp):
// the input is split at NUL bytes into arguments (at most 64). Besides
// crashes and sanitizer reports, what the parser accepts must be runnable
// as far as the options go: ranks, grid and block within their bounds,
// every buffer's byte count its element count times its element size
// without overflow (and the same on every rank), every --dump naming a
// buffer; a refusal must say why. Every accepted --arg is also parsed
// against each scalar type.
//
//===----------------------------------------------------------------------===//

#include "Options.h"

#include "tle/tle.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace tle::run;

namespace {

void check(bool ok, const char *what) {
  if (!ok) {
    fprintf(stderr, "broken promise: %s\n", what);
    abort();
  }
}

constexpr size_t kMaxArgs = 64;

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  // The parser also reads these; the fuzzer drives only the arguments.
  for (const char *name : {"TLE_BARRIER_TIMEOUT_MS", "TLE_EMU_SEED",
                           "TLE_DEBUG", "TLE_DEBUG_FILE"})
    unsetenv(name);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::vector<std::string> words(1, "tlerun");
  std::string current;
  for (size_t i = 0; i < size && words.size() < kMaxArgs; ++i) {
    if (data[i] == 0) {
      words.push_back(current);
      current.clear();
    } else {
      current.push_back(static_cast<char>(data[i]));
    }
  }
  if (!current.empty() && words.size() < kMaxArgs)
    words.push_back(current);
  std::vector<char *> argv;
  for (std::string &w : words)
    argv.push_back(w.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(words.size());

  (void)wantsJson(argc, argv.data());
  Options options;
  std::string error;
  ParseResult result = parseOptions(argc, argv.data(), options, error);
  if (result == ParseResult::Error) {
    check(!error.empty(), "a refusal says why");
    return 0;
  }
  if (result != ParseResult::Run)
    return 0;
  check(options.ranks >= 1 && options.ranks <= TLE_MAX_RANKS, "the rank bound");
  check(!options.kernel.empty(), "a kernel is named");
  check(options.block.total() >= 1 && options.block.total() <= kMaxBlockThreads,
        "the block bound");
  check(options.grid.total() >= 1 && options.grid.total() <= UINT32_MAX,
        "the grid bound");
  check(options.target == "host" || options.target == "cuda", "a known target");
  check(options.repeat >= 1, "at least one launch");
  if (options.barriers)
    check(*options.barriers >= 1 && *options.barriers <= kMaxBarriers,
          "the barrier slot bound");
  if (options.signals)
    check(*options.signals >= 1 && *options.signals <= kMaxSignals,
          "the signal word bound");
  for (const BufferSpec &b : options.buffers) {
    uint64_t bytes = 0;
    check(
        !__builtin_mul_overflow(b.count, uint64_t(elemSize(b.type)), &bytes) &&
            bytes == b.bytes,
        "a buffer's byte count");
    uint64_t all = 0;
    check(!__builtin_mul_overflow(b.bytes, uint64_t(options.ranks), &all),
          "a buffer on every rank fits");
  }
  for (const std::string &name : options.dumps) {
    bool found = false;
    for (const BufferSpec &b : options.buffers)
      found |= b.name == name;
    check(found, "a dump names a buffer");
  }
  for (const std::string &arg : options.args)
    for (const char *type :
         {"i1", "i8", "i16", "i32", "i64", "index", "f16", "f32", "f64"}) {
      uint64_t bits = 0;
      std::string why;
      if (!parseScalar(type, arg, bits, why))
        check(!why.empty(), "a refused --arg says why");
    }
  return 0;
}
