//===- Wire.h - The bootstrap's wire format, as pure functions --*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Everything the socket bootstrap puts on or takes off the wire, without any
// I/O: the layout of a unique id, frame headers, the handshake's messages,
// the MACs that authenticate both ends, and the all-gather's payloads. Every
// decoder takes bytes and returns a parsed message or the reason they are
// malformed, never reads outside what it was given, and bounds every size
// before anyone allocates for it; that is what the fuzz targets in fuzz/
// exercise. All ranks run on one node, so integers are in native byte order.
// docs/runtime.md ("Security") describes the protocol these pieces make.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_HOST_WIRE_H
#define TLE_HOST_WIRE_H

#include "tle/detail/DevComm.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tle::wire {

constexpr uint32_t kIdMagic = 0x544c4555;    // "TLEU"
constexpr uint32_t kFrameMagic = 0x544c4542; // "TLEB"
/// Version 1 sent the secret itself in its Hello; 2 proves it with MACs.
constexpr uint32_t kVersion = 2;
constexpr size_t kSecretBytes = 16;
constexpr size_t kNonceBytes = 32;
constexpr size_t kMacBytes = 32;
constexpr size_t kAddressBytes = 96;
/// Ranks of one communicator (the device communicator's).
constexpr int kMaxRanks = ::tle::kMaxRanks;
/// File descriptors one rank may contribute to one all-gather: one memory
/// file per allocation. A frame carries every rank's, and the kernel passes
/// at most SCM_MAX_FD (253) in one message.
constexpr uint32_t kMaxFdsPerRank = 1;
static_assert(kMaxRanks * kMaxFdsPerRank <= 253,
              "one all-gather's descriptors fit in one SCM_RIGHTS message");
/// Largest frame between authenticated ranks. Collectives carry statuses,
/// error details and memory handles: kilobytes. The bound only keeps a
/// corrupt length from allocating without limit.
constexpr uint64_t kMaxFrameBytes = uint64_t(16) << 20;
/// Largest refusal or abort reason (longer ones are cut when sent).
constexpr uint64_t kMaxReasonBytes = 1024;

/// The bytes of a tleUniqueId.
struct IdLayout {
  uint32_t magic;
  uint32_t version;
  uint8_t secret[kSecretBytes];
  char address[kAddressBytes]; ///< abstract socket name, without the NUL
};

enum FrameKind : uint32_t {
  kHello = 1,        ///< peer -> 0: HelloMessage
  kWelcome = 2,      ///< 0 -> peer: admitted; payload is rank 0's MAC
  kRefuse = 3,       ///< 0 -> peer: refused; payload is the reason
  kContribution = 4, ///< peer -> 0: fd count, then this rank's blob
  kGathered = 5,     ///< 0 -> peer: every rank's blob (encodeGathered)
  kAbort = 6,        ///< 0 -> peer: the collective failed; payload is why
  kChallenge = 7,    ///< 0 -> peer: rank 0's nonce
  kProof = 8,        ///< peer -> 0: the peer's MAC
  kGoodbye = 9,      ///< either way: this end destroys its communicator
                     ///< (its close is not a death)
  kPeerGone = 10,    ///< 0 -> peer: rank (an int32 payload) died
};

struct FrameHeader {
  uint32_t magic;
  uint32_t kind;
  uint64_t seq;
  uint64_t bytes; ///< payload bytes that follow
};
constexpr size_t kHeaderBytes = sizeof(FrameHeader);
static_assert(kHeaderBytes == 24);

/// The peer's first message. The version comes first so that any version
/// can tell another one apart.
struct HelloMessage {
  uint32_t version;
  int32_t nRanks;
  int32_t rank;
  uint8_t nonce[kNonceBytes];
};
static_assert(sizeof(HelloMessage) == 12 + kNonceBytes);

/// Where in the protocol a reader is: it decides which frame kinds may come
/// next and how large each may be. Before the handshake has authenticated
/// the other end, the bound is the size of the expected message.
enum class Step {
  RootAwaitsHello,
  RootAwaitsProof,
  PeerAwaitsChallenge,
  PeerAwaitsWelcome,
  RootAwaitsContribution, ///< authenticated
  PeerAwaitsGathered,     ///< authenticated
  /// The watchdog reading what is left on a connection outside any
  /// collective (authenticated): a goodbye, a death relayed by rank 0, or
  /// a stale frame of a failed collective, which it skips.
  Watching,
};
constexpr int kNumSteps = 7;

/// The most file descriptors that may travel with a frame at `step`
/// (none before authentication).
uint32_t maxFds(Step step);
/// The largest frame (header and payload) that `step` accepts.
uint64_t maxFrameBytes(Step step);

/// The result of decoding the frame at the start of a buffer.
struct Decoded {
  enum Status { NeedMore, Complete, Malformed } status = NeedMore;
  FrameHeader header = {};
  /// NeedMore: bytes the whole frame needs (header first, then with the
  /// payload once the header is known). Complete: the frame's bytes.
  uint64_t frameBytes = kHeaderBytes;
  const char *why = nullptr; ///< Malformed: a short reason
};

/// Decodes the frame at the start of `bytes` (the first `n` bytes received)
/// for `step`. It never asks for more than maxFrameBytes(step), so a
/// reader may allocate what NeedMore asks for.
Decoded decodeFrame(const uint8_t *bytes, size_t n, Step step);

/// A header followed by `payload`.
std::string encodeFrame(uint32_t kind, uint64_t seq,
                        const std::string &payload);

std::string encodeHello(const HelloMessage &hello);
/// Hello payloads: Complete, or Malformed with why. A Hello of another
/// version parses as far as its version (`hello.version`), with why set to
/// "version": the caller names the versions in its refusal.
const char *decodeHello(const uint8_t *bytes, size_t n, HelloMessage &hello);

using Mac = std::array<uint8_t, kMacBytes>;
using Nonce = std::array<uint8_t, kNonceBytes>;

/// Who computes a MAC: a peer proving itself to rank 0, or the reverse.
/// The role is part of the MAC, so neither can be replayed as the other.
enum class Role : uint8_t { Peer = 'P', Root = 'R' };

/// HMAC-SHA-256 keyed with the id's secret over the handshake's
/// transcript: protocol label and version, role, the id's address, both
/// nonces, nRanks and rank.
Mac handshakeMac(const IdLayout &id, Role role, const Nonce &peerNonce,
                 const Nonce &rootNonce, int32_t nRanks, int32_t rank);

/// A contribution's payload: how many descriptors travel with it, then
/// the blob.
std::string encodeContribution(const std::string &blob, uint32_t nFds);
const char *decodeContribution(const uint8_t *bytes, size_t n,
                               std::string &blob, uint32_t &nFds);

/// The all-gather's answer: for each rank its blob and how many of the
/// descriptors attached to the frame are its, in rank order.
std::string encodeGathered(const std::vector<std::string> &blobs,
                           const std::vector<uint32_t> &fdCounts);
const char *decodeGathered(const uint8_t *bytes, size_t n, int nRanks,
                           std::vector<std::string> &blobs,
                           std::vector<uint32_t> &fdCounts);

/// The first contribution of every rank to an exchange through NCCL's
/// all-gather (NcclBootstrap.cpp), in native byte order (all ranks of such
/// an exchange run the same build): who the rank is and how long its blob.
struct NcclAnnounce {
  uint64_t magic;
  int64_t rank;
  uint64_t length;
};
constexpr uint64_t kNcclAnnounceMagic = 0x544c454e43434c31; // "TLENCCL1"

/// The verdict on an all-gather of nRanks NcclAnnounce records at `bytes`
/// (n bytes), as rank `myRank` that announced `myLength` reads it.
struct NcclAnnounced {
  /// -1 when all hold; else the first place whose record is wrong (no
  /// magic, another rank's number, a length past kMaxFrameBytes, or at
  /// `myRank` another length), or nRanks when the lengths sum past
  /// kMaxFrameBytes (or n is not nRanks records).
  int bad = -1;
  /// The rank the record at `bad` claims, -1 when it is not a TLE record
  /// or the number is not a rank.
  int claimed = -1;
  std::vector<uint64_t> lengths; ///< every rank's, when bad is -1
};
NcclAnnounced checkNcclAnnounced(const uint8_t *bytes, size_t n, int nRanks,
                                 int myRank, uint64_t myLength);

/// A reason received from the other end, made safe to print: at most
/// kMaxReasonBytes, control characters replaced.
std::string printableReason(const uint8_t *bytes, size_t n);

} // namespace tle::wire

#endif // TLE_HOST_WIRE_H
