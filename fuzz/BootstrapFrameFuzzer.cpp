//===- BootstrapFrameFuzzer.cpp - Fuzzing bootstrap frames ------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// libFuzzer target for the frame decoder every bootstrap reader goes
// through (wire::decodeFrame) and the payload decoders behind it. The first
// input byte picks the protocol step (and a rank count for gathered
// payloads); the rest is a byte stream as a socket would deliver it,
// decoded frame by frame. Besides not crashing (ASan,
// UBSan), the decoders must keep their promises: a reader is never asked
// to hold more than the step's bound, a complete frame lies within the
// input, and whatever a payload decoder accepts encodes back to the same
// bytes.
//
//===----------------------------------------------------------------------===//

#include "bootstrap/Wire.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace tle::wire;

namespace {

/// Stops the run with `what` when a promise is broken (assert() would be
/// compiled out in the Release build).
void check(bool ok, const char *what) {
  if (!ok) {
    fprintf(stderr, "broken promise: %s\n", what);
    abort();
  }
}

void checkPayload(const FrameHeader &h, const uint8_t *p, size_t n,
                  int nRanks) {
  switch (h.kind) {
  case kHello: {
    HelloMessage hello;
    if (!decodeHello(p, n, hello))
      check(encodeHello(hello) ==
                std::string(reinterpret_cast<const char *>(p), n),
            "a decoded Hello encodes back to its bytes");
    break;
  }
  case kContribution: {
    std::string blob;
    uint32_t nFds;
    if (!decodeContribution(p, n, blob, nFds)) {
      check(nFds <= kMaxFdsPerRank, "a contribution's descriptor bound");
      check(encodeContribution(blob, nFds) ==
                std::string(reinterpret_cast<const char *>(p), n),
            "a decoded contribution encodes back to its bytes");
    }
    break;
  }
  case kGathered: {
    std::vector<std::string> blobs;
    std::vector<uint32_t> counts;
    if (!decodeGathered(p, n, nRanks, blobs, counts)) {
      check(blobs.size() == static_cast<size_t>(nRanks) &&
                counts.size() == blobs.size(),
            "one blob and count per rank");
      check(encodeGathered(blobs, counts) ==
                std::string(reinterpret_cast<const char *>(p), n),
            "a decoded gathered message encodes back to its bytes");
    }
    break;
  }
  case kRefuse:
  case kAbort: {
    std::string reason = printableReason(p, n);
    check(reason.size() <= kMaxReasonBytes, "a reason's bound");
    for (char c : reason)
      check(c >= 0x20 && c < 0x7f, "a reason is printable");
    break;
  }
  default:
    break;
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  // First byte: the step in the low nibble, the rank count in the high.
  Step step = static_cast<Step>((data[0] & 0xf) % kNumSteps);
  int nRanks = 1 + (data[0] >> 4) % kMaxRanks;
  const uint8_t *stream = data + 1;
  size_t n = size - 1;
  size_t at = 0;
  while (at <= n) {
    Decoded d = decodeFrame(stream + at, n - at, step);
    if (d.status == Decoded::Malformed) {
      check(d.why && *d.why, "a malformed frame says why");
      break;
    }
    check(d.frameBytes >= kHeaderBytes && d.frameBytes <= maxFrameBytes(step),
          "a frame within the step's bound");
    if (d.status == Decoded::NeedMore) {
      check(d.frameBytes > n - at, "more is needed only when it is missing");
      break;
    }
    check(d.frameBytes <= n - at, "a complete frame lies within the input");
    check(d.frameBytes == kHeaderBytes + d.header.bytes,
          "a frame is its header and payload");
    checkPayload(d.header, stream + at + kHeaderBytes, d.header.bytes, nRanks);
    at += d.frameBytes;
  }
  return 0;
}
