//===- AddressMapTest.cpp - The emulator's table of per-word state --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// AddressMap (runtime/host/emu/AddressMap.h) holds the race checker's
// release clocks and the scheduler's watchers by word address. These tests
// drive it past several growths with addresses laid out as a launch lays
// out its flags (one word apart, and one stride apart, so that the hash's
// low bits collide), and check that every value stays where it was put.
//
//===----------------------------------------------------------------------===//

#include "emu/AddressMap.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

using tle::emu::detail::AddressMap;

namespace {
const void *word(uintptr_t base, uintptr_t i, uintptr_t stride) {
  return reinterpret_cast<const void *>(base + i * stride);
}
} // namespace

// Every value survives the growths (64 slots at first, doubled at half
// full), and a word never inserted is not found.
TEST(AddressMap, ValuesSurviveGrowthAtEveryStride) {
  for (uintptr_t stride : {4u, 8u, 128u, 4096u, 131072u}) {
    AddressMap<uint64_t> map;
    constexpr uintptr_t kBase = 0x7f0000001000;
    constexpr uintptr_t kWords = 5000;
    for (uintptr_t i = 0; i < kWords; ++i)
      map[word(kBase, i, stride)] = i * 3 + 1;
    for (uintptr_t i = 0; i < kWords; ++i) {
      const uint64_t *v = map.find(word(kBase, i, stride));
      ASSERT_NE(v, nullptr) << "stride " << stride << " word " << i;
      EXPECT_EQ(*v, i * 3 + 1) << "stride " << stride << " word " << i;
    }
    EXPECT_EQ(map.find(word(kBase, kWords, stride)), nullptr);
    EXPECT_EQ(map.find(word(kBase - stride, 0, stride)), nullptr);
  }
}

// operator[] of a word already there returns its value, not a new one; a
// new one is value-initialized; clear() forgets every word.
TEST(AddressMap, LookupKeepsTheValueAndClearForgets) {
  AddressMap<std::vector<int>> map;
  const void *a = word(0x1000, 0, 8), *b = word(0x1000, 1, 8);
  EXPECT_EQ(map.find(a), nullptr);
  map[a].push_back(7);
  map[a].push_back(8);
  EXPECT_TRUE(map[b].empty());
  ASSERT_NE(map.find(a), nullptr);
  EXPECT_EQ(*map.find(a), (std::vector<int>{7, 8}));
  map.clear();
  EXPECT_EQ(map.find(a), nullptr);
  EXPECT_EQ(map.find(b), nullptr);
  EXPECT_TRUE(map[a].empty());
}
