//===- Wire.cpp - Encoding and decoding bootstrap messages ------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The pure half of the socket bootstrap (see Wire.h). The table of steps is
// the one place that says which frame may arrive when and how large it may
// be; the readers in SocketBootstrap.cpp allocate only what decodeFrame
// allows.
//
//===----------------------------------------------------------------------===//

#include "bootstrap/Wire.h"
#include "bootstrap/Sha256.h"

#include <algorithm>
#include <cstring>

namespace tle::wire {
namespace {

/// One frame kind a step accepts, with its payload bounds.
struct Rule {
  uint32_t kind;
  uint64_t minBytes;
  uint64_t maxBytes;
};

struct StepRules {
  Rule rules[5];
  int nRules;
  uint32_t maxFds;
  bool handshake; ///< before authentication: sequence numbers are 0
};

constexpr uint32_t kMaxGatheredFds = kMaxRanks * kMaxFdsPerRank;

// Before authentication every bound is the expected message's size; a
// Hello may be shorter because another version's Hello is answered by
// naming the versions, and only its first word is read for that.
constexpr StepRules kSteps[kNumSteps] = {
    /*RootAwaitsHello*/ {{{kHello, 4, sizeof(HelloMessage)}}, 1, 0, true},
    /*RootAwaitsProof*/ {{{kProof, kMacBytes, kMacBytes}}, 1, 0, true},
    /*PeerAwaitsChallenge*/
    {{{kChallenge, kNonceBytes, kNonceBytes}, {kRefuse, 0, kMaxReasonBytes}},
     2,
     0,
     true},
    /*PeerAwaitsWelcome*/
    {{{kWelcome, kMacBytes, kMacBytes}, {kRefuse, 0, kMaxReasonBytes}},
     2,
     0,
     true},
    /*RootAwaitsContribution*/
    {{{kContribution, sizeof(uint32_t), kMaxFrameBytes}, {kGoodbye, 0, 0}},
     2,
     kMaxFdsPerRank,
     false},
    /*PeerAwaitsGathered*/
    {{{kGathered, 0, kMaxFrameBytes},
      {kAbort, 0, kMaxReasonBytes},
      {kGoodbye, 0, 0},
      {kPeerGone, sizeof(int32_t), sizeof(int32_t)}},
     4,
     kMaxGatheredFds,
     false},
    /*Watching*/
    {{{kGoodbye, 0, 0},
      {kPeerGone, sizeof(int32_t), sizeof(int32_t)},
      {kAbort, 0, kMaxReasonBytes},
      {kContribution, sizeof(uint32_t), kMaxFrameBytes},
      {kGathered, 0, kMaxFrameBytes}},
     5,
     kMaxGatheredFds,
     false},
};

const StepRules &rulesOf(Step step) { return kSteps[static_cast<int>(step)]; }

template <typename T> void put(std::string &s, const T &v) {
  s.append(reinterpret_cast<const char *>(&v), sizeof(v));
}

template <typename T>
bool get(const uint8_t *bytes, size_t n, size_t &at, T &v) {
  if (at > n || n - at < sizeof(v))
    return false;
  memcpy(&v, bytes + at, sizeof(v));
  at += sizeof(v);
  return true;
}

} // namespace

uint32_t maxFds(Step step) { return rulesOf(step).maxFds; }

uint64_t maxFrameBytes(Step step) {
  const StepRules &s = rulesOf(step);
  uint64_t most = 0;
  for (int i = 0; i < s.nRules; ++i)
    most = std::max(most, s.rules[i].maxBytes);
  return kHeaderBytes + most;
}

Decoded decodeFrame(const uint8_t *bytes, size_t n, Step step) {
  Decoded d;
  if (n < kHeaderBytes)
    return d;
  memcpy(&d.header, bytes, sizeof(d.header));
  auto malformed = [&](const char *why) {
    d.status = Decoded::Malformed;
    d.why = why;
    return d;
  };
  if (d.header.magic != kFrameMagic)
    return malformed("not a TLE bootstrap frame");
  const StepRules &s = rulesOf(step);
  const Rule *rule = nullptr;
  for (int i = 0; i < s.nRules; ++i)
    if (s.rules[i].kind == d.header.kind)
      rule = &s.rules[i];
  if (!rule)
    return malformed("a frame of a kind not expected at this step");
  if (d.header.bytes < rule->minBytes || d.header.bytes > rule->maxBytes)
    return malformed("a frame larger or smaller than its kind allows");
  if (s.handshake && d.header.seq != 0)
    return malformed("a handshake frame with a sequence number");
  d.frameBytes = kHeaderBytes + d.header.bytes;
  if (n >= d.frameBytes)
    d.status = Decoded::Complete;
  return d;
}

std::string encodeFrame(uint32_t kind, uint64_t seq,
                        const std::string &payload) {
  FrameHeader h = {kFrameMagic, kind, seq, payload.size()};
  std::string s;
  s.reserve(kHeaderBytes + payload.size());
  put(s, h);
  s += payload;
  return s;
}

std::string encodeHello(const HelloMessage &hello) {
  std::string s;
  put(s, hello);
  return s;
}

const char *decodeHello(const uint8_t *bytes, size_t n, HelloMessage &hello) {
  hello = {};
  size_t at = 0;
  if (!get(bytes, n, at, hello.version))
    return "a Hello without a version";
  if (hello.version != kVersion)
    return "version";
  if (n != sizeof(HelloMessage))
    return "a Hello of the wrong size";
  memcpy(&hello, bytes, sizeof(hello));
  return nullptr;
}

Mac handshakeMac(const IdLayout &id, Role role, const Nonce &peerNonce,
                 const Nonce &rootNonce, int32_t nRanks, int32_t rank) {
  static const char kLabel[] = "TLE bootstrap handshake";
  HmacSha256 h(id.secret, sizeof(id.secret));
  h.update(kLabel, sizeof(kLabel));
  h.update(&kVersion, sizeof(kVersion));
  h.update(&role, sizeof(role));
  h.update(id.address, sizeof(id.address));
  h.update(peerNonce.data(), peerNonce.size());
  h.update(rootNonce.data(), rootNonce.size());
  h.update(&nRanks, sizeof(nRanks));
  h.update(&rank, sizeof(rank));
  return h.finish();
}

std::string encodeContribution(const std::string &blob, uint32_t nFds) {
  std::string s;
  put(s, nFds);
  s += blob;
  return s;
}

const char *decodeContribution(const uint8_t *bytes, size_t n,
                               std::string &blob, uint32_t &nFds) {
  size_t at = 0;
  if (!get(bytes, n, at, nFds))
    return "a contribution without its descriptor count";
  if (nFds > kMaxFdsPerRank)
    return "a contribution with too many descriptors";
  blob.assign(reinterpret_cast<const char *>(bytes) + at, n - at);
  return nullptr;
}

std::string encodeGathered(const std::vector<std::string> &blobs,
                           const std::vector<uint32_t> &fdCounts) {
  std::string s;
  for (size_t r = 0; r < blobs.size(); ++r) {
    put(s, uint64_t(blobs[r].size()));
    put(s, fdCounts[r]);
    s += blobs[r];
  }
  return s;
}

const char *decodeGathered(const uint8_t *bytes, size_t n, int nRanks,
                           std::vector<std::string> &blobs,
                           std::vector<uint32_t> &fdCounts) {
  if (nRanks < 1 || nRanks > kMaxRanks)
    return "a rank count out of range";
  blobs.assign(nRanks, std::string());
  fdCounts.assign(nRanks, 0);
  size_t at = 0;
  for (int r = 0; r < nRanks; ++r) {
    uint64_t blobBytes;
    if (!get(bytes, n, at, blobBytes) || !get(bytes, n, at, fdCounts[r]))
      return "a gathered message cut short";
    if (fdCounts[r] > kMaxFdsPerRank)
      return "a gathered message with too many descriptors";
    if (blobBytes > n - at)
      return "a gathered blob longer than its message";
    blobs[r].assign(reinterpret_cast<const char *>(bytes) + at, blobBytes);
    at += blobBytes;
  }
  if (at != n)
    return "a gathered message with trailing bytes";
  return nullptr;
}

std::string printableReason(const uint8_t *bytes, size_t n) {
  std::string s(reinterpret_cast<const char *>(bytes),
                std::min<size_t>(n, kMaxReasonBytes));
  for (char &c : s)
    if (static_cast<unsigned char>(c) < 0x20 ||
        static_cast<unsigned char>(c) >= 0x7f)
      c = '?';
  return s;
}

NcclAnnounced checkNcclAnnounced(const uint8_t *bytes, size_t n, int nRanks,
                                 int myRank, uint64_t myLength) {
  NcclAnnounced out;
  if (nRanks < 1 || n != size_t(nRanks) * sizeof(NcclAnnounce)) {
    out.bad = nRanks < 1 ? 0 : nRanks;
    return out;
  }
  uint64_t total = 0;
  for (int p = 0; p < nRanks; ++p) {
    NcclAnnounce a;
    memcpy(&a, bytes + size_t(p) * sizeof(a), sizeof(a));
    bool ours = a.magic == kNcclAnnounceMagic;
    if (!ours || a.rank != p || a.length > kMaxFrameBytes ||
        (p == myRank && a.length != myLength)) {
      out.bad = p;
      out.claimed = ours && a.rank >= 0 && a.rank < nRanks
                        ? static_cast<int>(a.rank)
                        : -1;
      out.lengths.clear();
      return out;
    }
    total += a.length;
    out.lengths.push_back(a.length);
  }
  if (total > kMaxFrameBytes) {
    out.bad = nRanks;
    out.lengths.clear();
  }
  return out;
}

} // namespace tle::wire
