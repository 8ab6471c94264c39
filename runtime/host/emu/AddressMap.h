//===- AddressMap.h - Flat table of per-word state by address ---*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The emulator keeps state per memory word that threads synchronize on: the
// race checker a word's release clock, the scheduler the threads parked on
// it. Both are looked up on every atomic access, so the table is an open-
// addressing one (linear probing, a power-of-two capacity, Fibonacci
// hashing of the word's address): a lookup reads one slot of one array.
// std::unordered_map's bucket array, node and 64-bit division cost a
// 72-rank launch two cache misses per poll (most of the checker's time in
// its loads, by stack samples). Entries are never erased: a user resets
// the value instead (an empty clock, an empty list), which keeps lookups
// free of tombstones; a launch touches a bounded set of words, and clear()
// drops them all. Iteration order is the table's and must not decide a
// schedule.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_HOST_EMU_ADDRESSMAP_H
#define TLE_HOST_EMU_ADDRESSMAP_H

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace tle::emu::detail {

template <typename V> class AddressMap {
public:
  AddressMap() = default;
  // `table` points into `slots`: a copy would share it.
  AddressMap(const AddressMap &) = delete;
  AddressMap &operator=(const AddressMap &) = delete;

  /// The value of `addr`, or null if it was never inserted.
  const V *find(const void *addr) const {
    auto key = reinterpret_cast<uintptr_t>(addr);
    if (!capacity)
      return nullptr;
    for (size_t i = home(key);; i = (i + 1) & mask()) {
      const Slot &s = table[i];
      if (s.key == key)
        return &s.value;
      if (s.key == 0)
        return nullptr;
    }
  }
  V *find(const void *addr) {
    return const_cast<V *>(std::as_const(*this).find(addr));
  }
  /// The value of `addr`, value-initialized when new. The reference lasts
  /// until the next insert.
  V &operator[](const void *addr) {
    auto key = reinterpret_cast<uintptr_t>(addr);
    if ((used + 1) * 2 > capacity)
      grow();
    for (size_t i = home(key);; i = (i + 1) & mask()) {
      Slot &s = table[i];
      if (s.key == key)
        return s.value;
      if (s.key == 0) {
        s.key = key;
        ++used;
        return s.value;
      }
    }
  }
  void clear() {
    slots.clear();
    table = nullptr;
    capacity = used = 0;
  }

private:
  /// Address 0 is never a word of the launch: it marks a free slot.
  struct Slot {
    uintptr_t key = 0;
    V value{};
  };
  size_t mask() const { return capacity - 1; }
  size_t home(uintptr_t key) const {
    // Words are 4- or 8-byte aligned: the low bits carry no information.
    return static_cast<size_t>(((key >> 2) * 0x9E3779B97F4A7C15ull) >>
                               (64 - bits)) &
           mask();
  }
  void grow() {
    std::vector<Slot> old = std::move(slots);
    bits = old.empty() ? 6 : bits + 1;
    capacity = size_t(1) << bits;
    slots.assign(capacity, Slot{});
    table = slots.data();
    used = 0;
    for (Slot &s : old)
      if (s.key != 0)
        (*this)[reinterpret_cast<const void *>(s.key)] = std::move(s.value);
  }

  std::vector<Slot> slots;
  /// slots.data() and slots.size(), kept apart: the size of a vector of
  /// 48-byte slots is a multiply per probe, in every atomic access.
  Slot *table = nullptr;
  size_t capacity = 0;
  size_t used = 0;
  unsigned bits = 0;
};

} // namespace tle::emu::detail

#endif // TLE_HOST_EMU_ADDRESSMAP_H
