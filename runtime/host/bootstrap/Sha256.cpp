//===- Sha256.cpp - SHA-256 and HMAC-SHA-256 --------------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// FIPS 180-4 section 6.2 (SHA-256) and RFC 2104 (HMAC), written from the
// specifications. Message words are big-endian regardless of the host.
//
//===----------------------------------------------------------------------===//

#include "bootstrap/Sha256.h"

#include <algorithm>
#include <cstring>

namespace tle {
namespace {

// FIPS 180-4 4.2.2: the first 32 bits of the fractional parts of the cube
// roots of the first 64 primes.
constexpr uint32_t kRound[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
    0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
    0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
    0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
    0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

// FIPS 180-4 5.3.3: the first 32 bits of the fractional parts of the square
// roots of the first 8 primes.
constexpr uint32_t kInitial[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372,
                                  0xa54ff53a, 0x510e527f, 0x9b05688c,
                                  0x1f83d9ab, 0x5be0cd19};

constexpr uint32_t rotr(uint32_t x, int n) {
  return (x >> n) | (x << (32 - n));
}

uint32_t loadBigEndian(const uint8_t *p) {
  return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 |
         uint32_t(p[3]);
}

void storeBigEndian(uint8_t *p, uint32_t v) {
  p[0] = uint8_t(v >> 24);
  p[1] = uint8_t(v >> 16);
  p[2] = uint8_t(v >> 8);
  p[3] = uint8_t(v);
}

} // namespace

Sha256::Sha256() { memcpy(state, kInitial, sizeof(state)); }

void Sha256::compress(const uint8_t *block) {
  uint32_t w[64];
  for (int t = 0; t < 16; ++t)
    w[t] = loadBigEndian(block + 4 * t);
  for (int t = 16; t < 64; ++t) {
    uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
    uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
    w[t] = w[t - 16] + s0 + w[t - 7] + s1;
  }
  uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
  uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
  for (int t = 0; t < 64; ++t) {
    uint32_t s1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
    uint32_t ch = (e & f) ^ (~e & g);
    uint32_t t1 = h + s1 + ch + kRound[t] + w[t];
    uint32_t s0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
    uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
    uint32_t t2 = s0 + maj;
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  state[0] += a;
  state[1] += b;
  state[2] += c;
  state[3] += d;
  state[4] += e;
  state[5] += f;
  state[6] += g;
  state[7] += h;
}

void Sha256::update(const void *data, size_t bytes) {
  const uint8_t *p = static_cast<const uint8_t *>(data);
  totalBytes += bytes;
  while (bytes > 0) {
    size_t take = std::min(bytes, kBlockBytes - pendingBytes);
    memcpy(pending + pendingBytes, p, take);
    pendingBytes += take;
    p += take;
    bytes -= take;
    if (pendingBytes == kBlockBytes) {
      compress(pending);
      pendingBytes = 0;
    }
  }
}

Sha256::Digest Sha256::finish() {
  // FIPS 180-4 5.1.1: a 1 bit, zeros up to 56 mod 64 bytes, then the
  // message length in bits as a big-endian 64-bit number.
  uint64_t bits = totalBytes * 8;
  uint8_t pad[kBlockBytes + 8] = {0x80};
  size_t padBytes = (pendingBytes < 56 ? 56 : 120) - pendingBytes;
  for (int i = 0; i < 8; ++i)
    pad[padBytes + i] = uint8_t(bits >> (56 - 8 * i));
  update(pad, padBytes + 8);
  Digest out;
  for (int i = 0; i < 8; ++i)
    storeBigEndian(out.data() + 4 * i, state[i]);
  return out;
}

Sha256::Digest Sha256::hash(const void *data, size_t bytes) {
  Sha256 h;
  h.update(data, bytes);
  return h.finish();
}

HmacSha256::HmacSha256(const void *key, size_t keyBytes) {
  // RFC 2104: a key longer than a block is replaced by its hash; the key
  // is zero-padded to a block and XORed with ipad (0x36) and opad (0x5c).
  uint8_t block[Sha256::kBlockBytes] = {};
  if (keyBytes > Sha256::kBlockBytes) {
    Sha256::Digest d = Sha256::hash(key, keyBytes);
    memcpy(block, d.data(), d.size());
  } else if (keyBytes > 0) {
    memcpy(block, key, keyBytes);
  }
  uint8_t innerKey[Sha256::kBlockBytes];
  for (size_t i = 0; i < Sha256::kBlockBytes; ++i) {
    innerKey[i] = block[i] ^ 0x36;
    outerKey[i] = block[i] ^ 0x5c;
  }
  inner.update(innerKey, sizeof(innerKey));
}

Sha256::Digest HmacSha256::finish() {
  Sha256::Digest innerDigest = inner.finish();
  Sha256 outer;
  outer.update(outerKey, sizeof(outerKey));
  outer.update(innerDigest.data(), innerDigest.size());
  return outer.finish();
}

Sha256::Digest HmacSha256::mac(const void *key, size_t keyBytes,
                               const void *data, size_t bytes) {
  HmacSha256 h(key, keyBytes);
  h.update(data, bytes);
  return h.finish();
}

bool equalConstantTime(const uint8_t *a, const uint8_t *b, size_t bytes) {
  // volatile keeps the compiler from turning the loop into an early exit.
  volatile uint8_t diff = 0;
  for (size_t i = 0; i < bytes; ++i)
    diff = diff | (a[i] ^ b[i]);
  return diff == 0;
}

} // namespace tle
