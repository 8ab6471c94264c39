//===- BootstrapGatherFuzzer.cpp - Fuzzing all-gather payloads --*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// libFuzzer target for the decoders of an authenticated collective's
// payloads, which carry every rank's blob and descriptor count in one
// frame: wire::decodeGathered (first byte: the rank count, including
// invalid ones) and wire::decodeContribution. Anything they accept must
// respect the descriptor bounds and encode back to the same bytes.
//
//===----------------------------------------------------------------------===//

#include "bootstrap/Wire.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace tle::wire;

namespace {

void check(bool ok, const char *what) {
  if (!ok) {
    fprintf(stderr, "broken promise: %s\n", what);
    abort();
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  int nRanks = data[0] % (kMaxRanks + 2); // 0 and kMaxRanks + 1 are invalid
  const uint8_t *p = data + 1;
  size_t n = size - 1;
  std::string bytes(reinterpret_cast<const char *>(p), n);

  std::vector<std::string> blobs;
  std::vector<uint32_t> counts;
  if (!decodeGathered(p, n, nRanks, blobs, counts)) {
    check(nRanks >= 1 && nRanks <= kMaxRanks, "a valid rank count");
    uint64_t total = 0, blobBytes = 0;
    for (size_t r = 0; r < blobs.size(); ++r) {
      check(counts[r] <= kMaxFdsPerRank, "a rank's descriptor bound");
      total += counts[r];
      blobBytes += blobs[r].size();
    }
    check(total <= uint64_t(kMaxRanks) * kMaxFdsPerRank,
          "a frame's descriptor bound");
    check(blobBytes <= n, "blobs lie within the payload");
    check(encodeGathered(blobs, counts) == bytes,
          "a decoded gathered message encodes back to its bytes");
  }

  std::string blob;
  uint32_t nFds;
  if (!decodeContribution(p, n, blob, nFds)) {
    check(nFds <= kMaxFdsPerRank, "a contribution's descriptor bound");
    check(encodeContribution(blob, nFds) == bytes,
          "a decoded contribution encodes back to its bytes");
  }
  return 0;
}
