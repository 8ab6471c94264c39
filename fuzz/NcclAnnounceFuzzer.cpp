//===- NcclAnnounceFuzzer.cpp - Fuzzing NCCL exchange announcements -------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// libFuzzer target for wire::checkNcclAnnounced, which judges what an
// exchange through NCCL's all-gather returned as every rank's (magic,
// rank, length) before anything is sized by it. The first two bytes pick
// the rank count (0 and kMaxRanks + 1 included) and the reader's rank; the
// rest is the all-gather's output. What it accepts must be nRanks records
// in rank order whose lengths it reports and whose sum is bounded; what it
// refuses must name a place that exists.
//
//===----------------------------------------------------------------------===//

#include "bootstrap/Wire.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

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
  if (size < 2)
    return 0;
  int nRanks = data[0] % (kMaxRanks + 2);
  int myRank = nRanks ? data[1] % nRanks : 0;
  const uint8_t *p = data + 2;
  size_t n = size - 2;
  // The reader's own length is what its record says, when it has one, so
  // that well-formed inputs reach the acceptance path.
  uint64_t myLength = 0;
  size_t at = size_t(myRank) * sizeof(NcclAnnounce);
  if (n >= at + sizeof(NcclAnnounce))
    memcpy(&myLength, p + at + offsetof(NcclAnnounce, length),
           sizeof(myLength));
  NcclAnnounced got = checkNcclAnnounced(p, n, nRanks, myRank, myLength);
  if (got.bad >= 0) {
    check(got.bad <= nRanks, "a refusal names a place or the whole");
    check(got.claimed >= -1 && got.claimed < nRanks,
          "a claimed rank is a rank or none");
    check(got.lengths.empty(), "a refusal reports no lengths");
    return 0;
  }
  check(nRanks >= 1 && n == size_t(nRanks) * sizeof(NcclAnnounce),
        "accepted input is nRanks records");
  check(got.lengths.size() == size_t(nRanks), "one length per rank");
  uint64_t total = 0;
  for (int r = 0; r < nRanks; ++r) {
    NcclAnnounce a;
    memcpy(&a, p + size_t(r) * sizeof(a), sizeof(a));
    check(a.magic == kNcclAnnounceMagic && a.rank == r,
          "accepted records are TLE's, in rank order");
    check(got.lengths[r] == a.length, "the lengths are the records'");
    total += a.length;
  }
  check(total <= kMaxFrameBytes, "the lengths' sum is bounded");
  check(got.lengths[myRank] == myLength, "the reader's own length holds");
  return 0;
}
