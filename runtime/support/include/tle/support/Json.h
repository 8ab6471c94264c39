//===- Json.h - The one JSON writer of TLE ----------------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Every JSON document TLE writes (tlerun's --dump lines and --json report;
// the emulator's trace should use it for its strings too) goes through this
// writer, so that escaping is done in one place. It is header-only standard
// C++ on purpose: everything that writes JSON is built on the GPU machines,
// which have neither LLVM (llvm::json) nor nlohmann-json and cannot install
// them; writing needs only RFC 8259's string escaping and numbers, while
// the unit tests check the output with nlohmann-json's parser (Debian's
// nlohmann-json3-dev, on the CPU machine) and the lit tests with Python's.
//
// Strings are written as UTF-8: control characters, '"' and '\' are
// escaped, and bytes that are not UTF-8 (a buffer name is whatever argv
// held) become U+FFFD, so the output is always valid JSON. Non-finite
// floating-point numbers, which JSON cannot express, are the strings "nan",
// "inf" and "-inf". Separators are ", " and ": ", one object per line.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_SUPPORT_JSON_H
#define TLE_SUPPORT_JSON_H

#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace tle::json {

/// Length of the UTF-8 sequence at `s[i]`, or 0 when it is not one (bad
/// lead byte, truncated, overlong, a surrogate or past U+10FFFF).
inline size_t utf8Length(std::string_view s, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = byte(i);
  size_t n = c < 0x80           ? 1
             : (c >> 5) == 0x6  ? 2
             : (c >> 4) == 0xE  ? 3
             : (c >> 3) == 0x1E ? 4
                                : 0;
  if (n == 0 || i + n > s.size())
    return 0;
  uint32_t cp = n == 1 ? c : c & (0x7F >> n);
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80)
      return 0;
    cp = cp << 6 | (byte(i + k) & 0x3F);
  }
  static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
    return 0;
  return n;
}

/// Appends `text` as a JSON string, quotes included.
inline void appendString(std::string &out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  for (size_t i = 0; i < text.size();) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      size_t n = utf8Length(text, i);
      if (n == 0) {
        out += "\\ufffd";
        ++i;
      } else {
        out.append(text.substr(i, n));
        i += n;
      }
      continue;
    }
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\r':
      out += "\\r";
      break;
    case '\t':
      out += "\\t";
      break;
    case '\b':
      out += "\\b";
      break;
    case '\f':
      out += "\\f";
      break;
    default:
      if (c < 0x20) {
        out += "\\u00";
        out += kHex[c >> 4];
        out += kHex[c & 0xF];
      } else {
        out += static_cast<char>(c);
      }
    }
    ++i;
  }
  out += '"';
}

/// Appends an integer.
template <typename Int,
          std::enable_if_t<
              std::is_integral_v<Int> && !std::is_same_v<Int, bool>, int> = 0>
void appendNumber(std::string &out, Int value) {
  char buf[24];
  auto res = std::to_chars(buf, buf + sizeof(buf), value);
  out.append(buf, res.ptr);
}

/// Appends a float or double in its shortest round-trip form.
template <typename Float,
          std::enable_if_t<std::is_floating_point_v<Float>, int> = 0>
void appendNumber(std::string &out, Float value) {
  if (!std::isfinite(value)) {
    out += std::isnan(value) ? "\"nan\"" : value > 0 ? "\"inf\"" : "\"-inf\"";
    return;
  }
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), value);
  out.append(buf, res.ptr);
}

/// Builds a document into a string: objects, arrays, keys and values in
/// order, with the separators put in by the writer.
class Writer {
public:
  explicit Writer(std::string &out) : out(out) {}

  Writer &beginObject() { return open('{'); }
  Writer &endObject() { return close('}'); }
  Writer &beginArray() { return open('['); }
  Writer &endArray() { return close(']'); }
  /// The key of the next value (inside an object).
  Writer &key(std::string_view name) {
    separate();
    appendString(out, name);
    out += ": ";
    afterKey = true;
    return *this;
  }
  Writer &value(std::string_view text) {
    separate();
    appendString(out, text);
    return *this;
  }
  Writer &value(const char *text) { return value(std::string_view(text)); }
  Writer &value(bool b) {
    separate();
    out += b ? "true" : "false";
    return *this;
  }
  template <typename Number, std::enable_if_t<std::is_arithmetic_v<Number> &&
                                                  !std::is_same_v<Number, bool>,
                                              int> = 0>
  Writer &value(Number n) {
    separate();
    appendNumber(out, n);
    return *this;
  }
  Writer &null() {
    separate();
    out += "null";
    return *this;
  }
  /// Text already in JSON form (a value the caller wrote with this header).
  Writer &raw(std::string_view json) {
    separate();
    out.append(json);
    return *this;
  }

private:
  Writer &open(char bracket) {
    separate();
    out += bracket;
    first.push_back(true);
    return *this;
  }
  Writer &close(char bracket) {
    out += bracket;
    first.pop_back();
    return *this;
  }
  /// ", " before every element but the first of its container, and nothing
  /// between a key and its value.
  void separate() {
    if (afterKey) {
      afterKey = false;
      return;
    }
    if (!first.empty()) {
      if (!first.back())
        out += ", ";
      first.back() = false;
    }
  }

  std::string &out;
  std::vector<bool> first;
  bool afterKey = false;
};

} // namespace tle::json

#endif // TLE_SUPPORT_JSON_H
