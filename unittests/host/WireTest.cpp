//===- WireTest.cpp - The bootstrap's decoders and MACs ---------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The pure half of the socket bootstrap (runtime/host/bootstrap/Wire.h): frames
// are accepted only at the step that expects their kind and only up to that
// step's bound (the size of the expected message before authentication),
// every decoder refuses truncated, padded or overlong input, and the
// handshake MAC depends on every field of the transcript and on the role.
// fuzz/ runs the same decoders on generated input.
//
//===----------------------------------------------------------------------===//

#include "bootstrap/Wire.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace {

using namespace tle::wire;

const uint8_t *bytesOf(const std::string &s) {
  return reinterpret_cast<const uint8_t *>(s.data());
}

std::string headerOnly(uint32_t kind, uint64_t bytes, uint64_t seq = 0,
                       uint32_t magic = kFrameMagic) {
  FrameHeader h = {magic, kind, seq, bytes};
  return std::string(reinterpret_cast<const char *>(&h), sizeof(h));
}

constexpr Step kAllSteps[] = {Step::RootAwaitsHello,
                              Step::RootAwaitsProof,
                              Step::PeerAwaitsChallenge,
                              Step::PeerAwaitsWelcome,
                              Step::RootAwaitsContribution,
                              Step::PeerAwaitsGathered,
                              Step::Watching};

TEST(WireTest, PartialHeaderNeedsMore) {
  std::string h = headerOnly(kHello, sizeof(HelloMessage));
  for (size_t n = 0; n < kHeaderBytes; ++n) {
    Decoded d = decodeFrame(bytesOf(h), n, Step::RootAwaitsHello);
    EXPECT_EQ(d.status, Decoded::NeedMore);
    EXPECT_EQ(d.frameBytes, kHeaderBytes);
  }
  Decoded d = decodeFrame(bytesOf(h), h.size(), Step::RootAwaitsHello);
  EXPECT_EQ(d.status, Decoded::NeedMore);
  EXPECT_EQ(d.frameBytes, kHeaderBytes + sizeof(HelloMessage));
}

// The reproducer at the decoder: a Hello announcing 2^30 bytes is
// refused from its header alone, so no reader allocates for it.
TEST(WireTest, HugeFramesAreRefusedFromTheHeader) {
  std::string h = headerOnly(kHello, uint64_t(1) << 30);
  Decoded d = decodeFrame(bytesOf(h), h.size(), Step::RootAwaitsHello);
  EXPECT_EQ(d.status, Decoded::Malformed);
  for (uint32_t kind : {kRefuse, kChallenge, kWelcome}) {
    h = headerOnly(kind, UINT64_MAX);
    EXPECT_EQ(decodeFrame(bytesOf(h), h.size(), Step::PeerAwaitsWelcome).status,
              Decoded::Malformed);
  }
}

// Before authentication a step accepts nothing larger than its expected
// message; after it, the bound is kMaxFrameBytes.
TEST(WireTest, EveryStepBoundsItsFrames) {
  EXPECT_EQ(maxFrameBytes(Step::RootAwaitsHello),
            kHeaderBytes + sizeof(HelloMessage));
  EXPECT_EQ(maxFrameBytes(Step::RootAwaitsProof), kHeaderBytes + kMacBytes);
  EXPECT_EQ(maxFrameBytes(Step::PeerAwaitsChallenge),
            kHeaderBytes + kMaxReasonBytes);
  EXPECT_EQ(maxFrameBytes(Step::RootAwaitsContribution),
            kHeaderBytes + kMaxFrameBytes);
  for (Step step : {Step::RootAwaitsHello, Step::RootAwaitsProof,
                    Step::PeerAwaitsChallenge, Step::PeerAwaitsWelcome})
    EXPECT_EQ(maxFds(step), 0u);
  EXPECT_EQ(maxFds(Step::RootAwaitsContribution), kMaxFdsPerRank);
  EXPECT_EQ(maxFds(Step::PeerAwaitsGathered), kMaxRanks * kMaxFdsPerRank);
  for (Step step : kAllSteps)
    for (uint32_t kind = 0; kind <= 9; ++kind)
      for (uint64_t bytes :
           {uint64_t(0), uint64_t(4), uint64_t(32), uint64_t(44), uint64_t(45),
            kMaxReasonBytes, kMaxReasonBytes + 1, kMaxFrameBytes,
            kMaxFrameBytes + 1, UINT64_MAX}) {
        std::string h = headerOnly(kind, bytes);
        Decoded d = decodeFrame(bytesOf(h), h.size(), step);
        if (d.status != Decoded::Malformed)
          EXPECT_LE(d.frameBytes, maxFrameBytes(step))
              << "step " << int(step) << " kind " << kind;
      }
}

TEST(WireTest, KindsOutsideTheirStepAreRefused) {
  struct Case {
    Step step;
    uint32_t kind;
    uint64_t bytes;
    bool ok;
  } cases[] = {
      {Step::RootAwaitsHello, kHello, sizeof(HelloMessage), true},
      {Step::RootAwaitsHello, kProof, kMacBytes, false},
      {Step::RootAwaitsHello, kContribution, 8, false},
      {Step::RootAwaitsProof, kProof, kMacBytes, true},
      {Step::RootAwaitsProof, kProof, kMacBytes - 1, false},
      {Step::RootAwaitsProof, kHello, sizeof(HelloMessage), false},
      {Step::PeerAwaitsChallenge, kChallenge, kNonceBytes, true},
      {Step::PeerAwaitsChallenge, kRefuse, 17, true},
      {Step::PeerAwaitsChallenge, kWelcome, kMacBytes, false},
      {Step::PeerAwaitsWelcome, kWelcome, kMacBytes, true},
      {Step::PeerAwaitsWelcome, kGathered, 8, false},
      {Step::RootAwaitsContribution, kContribution, 4, true},
      {Step::RootAwaitsContribution, kContribution, 3, false},
      {Step::RootAwaitsContribution, kHello, sizeof(HelloMessage), false},
      {Step::PeerAwaitsGathered, kGathered, 0, true},
      {Step::PeerAwaitsGathered, kAbort, 20, true},
      {Step::PeerAwaitsGathered, kRefuse, 20, false},
  };
  for (const Case &c : cases) {
    std::string h = headerOnly(c.kind, c.bytes);
    Decoded d = decodeFrame(bytesOf(h), h.size(), c.step);
    EXPECT_EQ(d.status != Decoded::Malformed, c.ok)
        << "step " << int(c.step) << " kind " << c.kind << " bytes " << c.bytes;
  }
}

TEST(WireTest, MagicAndHandshakeSequenceAreChecked) {
  std::string h = headerOnly(kHello, sizeof(HelloMessage), 0, 0x12345678);
  EXPECT_EQ(decodeFrame(bytesOf(h), h.size(), Step::RootAwaitsHello).status,
            Decoded::Malformed);
  h = headerOnly(kHello, sizeof(HelloMessage), 7);
  EXPECT_EQ(decodeFrame(bytesOf(h), h.size(), Step::RootAwaitsHello).status,
            Decoded::Malformed);
  // Collectives are numbered.
  h = headerOnly(kContribution, 4, 7);
  EXPECT_EQ(
      decodeFrame(bytesOf(h), h.size(), Step::RootAwaitsContribution).status,
      Decoded::NeedMore);
}

TEST(WireTest, CompleteFrames) {
  std::string f = encodeFrame(kChallenge, 0, std::string(kNonceBytes, 'n'));
  Decoded d = decodeFrame(bytesOf(f), f.size(), Step::PeerAwaitsChallenge);
  ASSERT_EQ(d.status, Decoded::Complete);
  EXPECT_EQ(d.frameBytes, f.size());
  EXPECT_EQ(d.header.kind, kChallenge);
  // Bytes after the frame belong to the next one.
  f += "trailing";
  d = decodeFrame(bytesOf(f), f.size(), Step::PeerAwaitsChallenge);
  ASSERT_EQ(d.status, Decoded::Complete);
  EXPECT_EQ(d.frameBytes, kHeaderBytes + kNonceBytes);
}

TEST(WireTest, Hello) {
  HelloMessage in = {kVersion, 4, 3, {}};
  for (size_t i = 0; i < kNonceBytes; ++i)
    in.nonce[i] = static_cast<uint8_t>(i);
  std::string s = encodeHello(in);
  HelloMessage out;
  ASSERT_EQ(decodeHello(bytesOf(s), s.size(), out), nullptr);
  EXPECT_EQ(memcmp(&in, &out, sizeof(in)), 0);
  // Another version is named, whatever its size.
  uint32_t v1 = 1;
  std::string old(reinterpret_cast<const char *>(&v1), 4);
  old += std::string(24, 's');
  ASSERT_NE(decodeHello(bytesOf(old), old.size(), out), nullptr);
  EXPECT_STREQ(decodeHello(bytesOf(old), old.size(), out), "version");
  EXPECT_EQ(out.version, 1u);
  EXPECT_NE(decodeHello(bytesOf(s), 3, out), nullptr);
  EXPECT_NE(decodeHello(bytesOf(s), s.size() - 1, out), nullptr);
  EXPECT_STRNE(decodeHello(bytesOf(s), s.size() - 1, out), "version");
}

TEST(WireTest, MacCoversTheWholeTranscript) {
  IdLayout id = {};
  id.magic = kIdMagic;
  id.version = kVersion;
  memset(id.secret, 0x42, sizeof(id.secret));
  strcpy(id.address, "tle-1-abc");
  Nonce a, b;
  a.fill(1);
  b.fill(2);
  Mac base = handshakeMac(id, Role::Peer, a, b, 4, 1);
  EXPECT_EQ(base, handshakeMac(id, Role::Peer, a, b, 4, 1));
  EXPECT_NE(base, handshakeMac(id, Role::Root, a, b, 4, 1));
  EXPECT_NE(base, handshakeMac(id, Role::Peer, b, a, 4, 1));
  EXPECT_NE(base, handshakeMac(id, Role::Peer, a, b, 5, 1));
  EXPECT_NE(base, handshakeMac(id, Role::Peer, a, b, 4, 2));
  Nonce a2 = a;
  a2[31] ^= 1;
  EXPECT_NE(base, handshakeMac(id, Role::Peer, a2, b, 4, 1));
  IdLayout other = id;
  other.secret[15] ^= 1;
  EXPECT_NE(base, handshakeMac(other, Role::Peer, a, b, 4, 1));
  other = id;
  other.address[4] = '2';
  EXPECT_NE(base, handshakeMac(other, Role::Peer, a, b, 4, 1));
}

TEST(WireTest, Contribution) {
  std::string s = encodeContribution("blob", 1);
  std::string blob;
  uint32_t n = 9;
  ASSERT_EQ(decodeContribution(bytesOf(s), s.size(), blob, n), nullptr);
  EXPECT_EQ(blob, "blob");
  EXPECT_EQ(n, 1u);
  EXPECT_NE(decodeContribution(bytesOf(s), 3, blob, n), nullptr);
  s = encodeContribution("", kMaxFdsPerRank + 1);
  EXPECT_NE(decodeContribution(bytesOf(s), s.size(), blob, n), nullptr);
}

TEST(WireTest, Gathered) {
  std::vector<std::string> blobs = {"a", "", std::string(300, 'c')};
  std::vector<uint32_t> counts = {1, 0, 1};
  std::string s = encodeGathered(blobs, counts);
  std::vector<std::string> outBlobs;
  std::vector<uint32_t> outCounts;
  ASSERT_EQ(decodeGathered(bytesOf(s), s.size(), 3, outBlobs, outCounts),
            nullptr);
  EXPECT_EQ(outBlobs, blobs);
  EXPECT_EQ(outCounts, counts);
  // Every truncation, a trailing byte, another rank count.
  for (size_t n = 0; n < s.size(); ++n)
    EXPECT_NE(decodeGathered(bytesOf(s), n, 3, outBlobs, outCounts), nullptr)
        << n;
  std::string longer = s + "x";
  EXPECT_NE(
      decodeGathered(bytesOf(longer), longer.size(), 3, outBlobs, outCounts),
      nullptr);
  EXPECT_NE(decodeGathered(bytesOf(s), s.size(), 2, outBlobs, outCounts),
            nullptr);
  EXPECT_NE(decodeGathered(bytesOf(s), s.size(), 0, outBlobs, outCounts),
            nullptr);
  EXPECT_NE(decodeGathered(bytesOf(s), s.size(), 9, outBlobs, outCounts),
            nullptr);
  // A blob length that would overflow the cursor.
  std::string bad;
  uint64_t huge = UINT64_MAX - 4;
  uint32_t zero = 0;
  bad.append(reinterpret_cast<const char *>(&huge), 8);
  bad.append(reinterpret_cast<const char *>(&zero), 4);
  bad += "abcdef";
  EXPECT_NE(decodeGathered(bytesOf(bad), bad.size(), 1, outBlobs, outCounts),
            nullptr);
  // Too many descriptors for one rank.
  s = encodeGathered({"a"}, {kMaxFdsPerRank + 1});
  EXPECT_NE(decodeGathered(bytesOf(s), s.size(), 1, outBlobs, outCounts),
            nullptr);
}

TEST(WireTest, ReasonsArePrintable) {
  std::string raw = "bad\nline\x1b[31m\x80";
  EXPECT_EQ(printableReason(bytesOf(raw), raw.size()), "bad?line?[31m?");
  std::string longer(5000, 'x');
  EXPECT_EQ(printableReason(bytesOf(longer), longer.size()).size(),
            kMaxReasonBytes);
}

} // namespace
