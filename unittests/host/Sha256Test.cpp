//===- Sha256Test.cpp - SHA-256 and HMAC against the standards --*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The bootstrap's MAC is only as good as its SHA-256, so both are checked
// against the published vectors: FIPS 180-2 appendix B and the NIST
// examples for SHA-256, RFC 4231 section 4 for HMAC-SHA-256 (all seven
// cases, including keys longer than a block). Messages are also fed in
// uneven pieces, since the bootstrap hashes its transcript field by field.
//
//===----------------------------------------------------------------------===//

#include "bootstrap/Sha256.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace {

using tle::HmacSha256;
using tle::Sha256;

std::string hex(const Sha256::Digest &d, size_t bytes = 32) {
  std::string s;
  char buf[3];
  for (size_t i = 0; i < bytes; ++i) {
    snprintf(buf, sizeof(buf), "%02x", d[i]);
    s += buf;
  }
  return s;
}

std::string sha(const std::string &m) {
  return hex(Sha256::hash(m.data(), m.size()));
}

TEST(Sha256Test, FipsVectors) {
  EXPECT_EQ(sha("abc"), "ba7816bf8f01cfea414140de5dae2223"
                        "b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha(""), "e3b0c44298fc1c149afbf4c8996fb924"
                     "27ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039"
            "a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmn"
                "hijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"),
            "cf5b16a778af8380036ce59e7b049237"
            "0b249b11e8f07a51afac45037afee9d1");
  EXPECT_EQ(sha(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67"
                                            "f1809a48a497200e046d39ccc7112cd0");
}

// Padding edge cases: lengths around 55/56/64 bytes take one or two final
// blocks. Fed whole and in pieces of every size, the digest is the same.
TEST(Sha256Test, PiecesGiveTheSameDigest) {
  for (size_t len : {0, 1, 55, 56, 57, 63, 64, 65, 119, 120, 128, 1000}) {
    std::string m(len, '\0');
    for (size_t i = 0; i < len; ++i)
      m[i] = static_cast<char>(i * 7 + 3);
    std::string whole = sha(m);
    for (size_t piece = 1; piece <= 70; piece += 23) {
      Sha256 h;
      for (size_t at = 0; at < len; at += piece)
        h.update(m.data() + at, std::min(piece, len - at));
      EXPECT_EQ(hex(h.finish()), whole) << "len " << len << " piece " << piece;
    }
  }
}

std::string hmac(const std::string &key, const std::string &data,
                 size_t bytes = 32) {
  return hex(HmacSha256::mac(key.data(), key.size(), data.data(), data.size()),
             bytes);
}

TEST(Sha256Test, Rfc4231Vectors) {
  // Test case 1.
  EXPECT_EQ(hmac(std::string(20, '\x0b'), "Hi There"),
            "b0344c61d8db38535ca8afceaf0bf12b"
            "881dc200c9833da726e9376c2e32cff7");
  // 2: a key shorter than the output.
  EXPECT_EQ(hmac("Jefe", "what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c7"
            "5a003f089d2739839dec58b964ec3843");
  // 3: combined length of key and data larger than 64 bytes.
  EXPECT_EQ(hmac(std::string(20, '\xaa'), std::string(50, '\xdd')),
            "773ea91e36800e46854db8ebd09181a7"
            "2959098b3ef8c122d9635514ced565fe");
  // 4.
  std::string key4;
  for (int i = 1; i <= 25; ++i)
    key4 += static_cast<char>(i);
  EXPECT_EQ(hmac(key4, std::string(50, '\xcd')),
            "82558a389a443c0ea4cc819899f2083a"
            "85f0faa3e578f8077a2e3ff46729665b");
  // 5: output truncated to 128 bits.
  EXPECT_EQ(hmac(std::string(20, '\x0c'), "Test With Truncation", 16),
            "a3b6167473100ee06e0c796c2955552b");
  // 6 and 7: a key larger than a block is hashed first.
  EXPECT_EQ(hmac(std::string(131, '\xaa'),
                 "Test Using Larger Than Block-Size Key - Hash Key First"),
            "60e431591ee0b67f0d8a26aacbf5b77f"
            "8e0bc6213728c5140546040f0ee37f54");
  EXPECT_EQ(hmac(std::string(131, '\xaa'),
                 "This is a test using a larger than block-size key and a "
                 "larger than block-size data. The key needs to be hashed "
                 "before being used by the HMAC algorithm."),
            "9b09ffa71b942fcb27635fbcd5b0e944"
            "bfdc63644f0713938a7f51535c3a35e2");
}

TEST(Sha256Test, HmacInPieces) {
  std::string key = "Jefe", data = "what do ya want for nothing?";
  HmacSha256 h(key.data(), key.size());
  h.update(data.data(), 5);
  h.update(data.data() + 5, data.size() - 5);
  EXPECT_EQ(hex(h.finish()), hmac(key, data));
}

TEST(Sha256Test, ConstantTimeCompare) {
  uint8_t a[32] = {}, b[32] = {};
  EXPECT_TRUE(tle::equalConstantTime(a, b, 32));
  for (int i : {0, 17, 31}) {
    b[i] = 1;
    EXPECT_FALSE(tle::equalConstantTime(a, b, 32)) << i;
    b[i] = 0;
  }
}

} // namespace
