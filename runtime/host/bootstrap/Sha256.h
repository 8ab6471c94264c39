//===- Sha256.h - SHA-256 and HMAC-SHA-256 for the bootstrap ----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The socket bootstrap authenticates ranks with HMAC-SHA-256 (RFC 2104 over
// FIPS 180-4's SHA-256). libtle must build on GPU machines that have only
// CUDA and the system's basic libraries, so instead of a crypto library it
// carries this small implementation, checked against the published test
// vectors (unittests/host/Sha256Test.cpp). It hashes a few hundred bytes
// per handshake, so it is written for clarity, not speed.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_HOST_SHA256_H
#define TLE_HOST_SHA256_H

#include <array>
#include <cstddef>
#include <cstdint>

namespace tle {

/// SHA-256 of a message given in pieces.
class Sha256 {
public:
  static constexpr size_t kDigestBytes = 32;
  static constexpr size_t kBlockBytes = 64;
  using Digest = std::array<uint8_t, kDigestBytes>;

  Sha256();
  void update(const void *data, size_t bytes);
  /// The digest of everything passed to update; the object is spent.
  Digest finish();

  static Digest hash(const void *data, size_t bytes);

private:
  void compress(const uint8_t *block);

  uint32_t state[8];
  uint8_t pending[kBlockBytes];
  size_t pendingBytes = 0;
  uint64_t totalBytes = 0;
};

/// HMAC-SHA-256 (RFC 2104) of a message given in pieces.
class HmacSha256 {
public:
  HmacSha256(const void *key, size_t keyBytes);
  void update(const void *data, size_t bytes) { inner.update(data, bytes); }
  Sha256::Digest finish();

  static Sha256::Digest mac(const void *key, size_t keyBytes, const void *data,
                            size_t bytes);

private:
  Sha256 inner;
  uint8_t outerKey[Sha256::kBlockBytes];
};

/// Compares `bytes` bytes in time that does not depend on where they
/// differ, so a MAC check leaks nothing about the expected value.
bool equalConstantTime(const uint8_t *a, const uint8_t *b, size_t bytes);

} // namespace tle

#endif // TLE_HOST_SHA256_H
