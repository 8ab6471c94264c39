//===- JsonTest.cpp - tle/support/Json.h against a real JSON parser ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// TLE writes its JSON with its own small writer (tle/support/Json.h says why);
// these tests hold it to nlohmann-json's parser: hostile and random strings,
// bytes that are not UTF-8, numbers at their limits, nested documents.
//
//===----------------------------------------------------------------------===//

#include "tle/support/Json.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>
#include <random>

namespace {

using nlohmann::json;

std::string jsonString(std::string_view text) {
  std::string out;
  tle::json::appendString(out, text);
  return out;
}

TEST(JsonTest, HostileStringsRoundTrip) {
  std::string controls;
  for (int c = 0; c < 0x20; ++c)
    controls += static_cast<char>(c);
  for (std::string text :
       {std::string("quote\"name"), std::string("back\\slash\\"),
        std::string("new\nline\r\n"), controls, std::string("del\x7f"),
        std::string("\xc3\xbc"
                    "n"
                    "\xc3\xaf"
                    "c"
                    "\xc3\xb6"
                    "d"
                    "\xc3\xa9 \xe2\x98\x83"),
        std::string("\xf0\x9d\x84\x9e astral"), std::string("</script>"),
        std::string("\xe2\x80\xa8 line separator"), std::string()}) {
    json parsed = json::parse(jsonString(text));
    EXPECT_EQ(parsed.get<std::string>(), text);
  }
}

TEST(JsonTest, BytesThatAreNotUtf8BecomeReplacementCharacters) {
  const std::string fffd = "\xef\xbf\xbd";
  struct Case {
    std::string in, out;
  } cases[] = {
      {"a\x80z", "a" + fffd + "z"},                    // lone continuation byte
      {"\xc0\x80", fffd + fffd},                       // overlong NUL
      {"\xed\xa0\x80", fffd + fffd + fffd},            // a UTF-16 surrogate
      {"\xf4\x90\x80\x80", fffd + fffd + fffd + fffd}, // past U+10FFFF
      {"cut\xe2\x98", "cut" + fffd + fffd},            // truncated sequence
      {"\xff\xfe", fffd + fffd},                       // never valid
  };
  for (const Case &c : cases)
    EXPECT_EQ(json::parse(jsonString(c.in)).get<std::string>(), c.out);
}

TEST(JsonTest, RandomBytesAlwaysParse) {
  std::mt19937_64 random(42);
  for (int n = 0; n < 5000; ++n) {
    std::string text(random() % 24, '\0');
    for (char &c : text)
      c = static_cast<char>(random() % 4 ? random() % 0x80 : random() % 0x100);
    std::string out = jsonString(text);
    json parsed;
    ASSERT_NO_THROW(parsed = json::parse(out)) << out;
    // Valid UTF-8 comes back byte for byte.
    bool valid = true;
    for (size_t i = 0; i < text.size() && valid;) {
      size_t len = tle::json::utf8Length(text, i);
      valid = len != 0;
      i += len;
    }
    if (valid)
      EXPECT_EQ(parsed.get<std::string>(), text);
  }
}

TEST(JsonTest, NumbersRoundTrip) {
  std::string out;
  tle::json::Writer w(out);
  double tiny = std::numeric_limits<double>::denorm_min();
  w.beginArray()
      .value(std::numeric_limits<int64_t>::min())
      .value(std::numeric_limits<int64_t>::max())
      .value(std::numeric_limits<uint64_t>::max())
      .value(0.1)
      .value(tiny)
      .value(1e300)
      .value(0.1f)
      .value(std::nan(""))
      .value(-HUGE_VAL)
      .value(true)
      .null()
      .endArray();
  json parsed = json::parse(out);
  EXPECT_EQ(parsed[0].get<int64_t>(), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(parsed[1].get<int64_t>(), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(parsed[2].get<uint64_t>(), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(parsed[3].get<double>(), 0.1);
  EXPECT_EQ(parsed[4].get<double>(), tiny);
  EXPECT_EQ(parsed[5].get<double>(), 1e300);
  EXPECT_EQ(parsed[6].get<float>(), 0.1f);
  EXPECT_EQ(parsed[7], "nan");
  EXPECT_EQ(parsed[8], "-inf");
  EXPECT_EQ(parsed[9], true);
  EXPECT_TRUE(parsed[10].is_null());
}

TEST(JsonTest, NestedDocument) {
  std::string out;
  tle::json::Writer w(out);
  w.beginObject().key("a\"b").value("x\ny");
  w.key("list").beginArray().beginObject().endObject().beginArray().endArray();
  w.value(1).endArray();
  w.key("empty").beginObject().endObject().endObject();
  EXPECT_EQ(
      json::parse(out),
      json::parse(R"({"a\"b": "x\ny", "list": [{}, [], 1], "empty": {}})"));
  // The separators tlerun's --dump lines have always had.
  EXPECT_EQ(out, R"({"a\"b": "x\ny", "list": [{}, [], 1], "empty": {}})");
}

} // namespace
