// Tests for AppendJsonString(Content): byte for byte what DumpJson writes for the
// same string, on hard strings, every single byte, invalid UTF-8 and random
// mixes; and the escapes JSON.stringify writes, spelled out.
#include "codec/json_text.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "codec/memory_json.h"

namespace msp {
namespace {

using nlohmann::json;

std::string Written(std::string_view s) {
  std::string out = "x";  // appends, never replaces
  AppendJsonString(out, s);
  return out.substr(1);
}

std::string Dumped(std::string_view s) { return DumpJson(json(std::string(s))); }

TEST(JsonText, EscapesAsJsonStringify) {
  EXPECT_EQ(Written(""), R"("")");
  EXPECT_EQ(Written("plain text"), R"("plain text")");
  EXPECT_EQ(Written("a\"b\\c/d"), R"("a\"b\\c/d")");
  EXPECT_EQ(Written("\b\f\n\r\t"), R"("\b\f\n\r\t")");
  EXPECT_EQ(Written(std::string("\0\x01\x1f\x0b", 4)), R"("\u0000\u0001\u001f\u000b")");
  // DEL, U+2028, U+2029 and non-BMP characters pass through as UTF-8.
  EXPECT_EQ(Written("\x7f \u2028 \u2029 \U0001F600"), "\"\x7f \u2028 \u2029 \U0001F600\"");
}

TEST(JsonText, SameBytesAsDumpJsonOnHardStrings) {
  const std::vector<std::string> corpus = {
      "",
      "quote \" backslash \\ slash /",
      std::string("nul \0 inside", 12),
      "\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b"
      "\x1c\x1d\x1e\x1f",
      "del \x7f",
      "line sep \u2028 para sep \u2029",
      "emoji \U0001F600\U0001F9EA and \u00e9\u00df\u4e16\u754c",
      "\u0080\u07ff\u0800\uffff\U00010000\U0010FFFF",
      // Escapes on every side of an 8-byte word.
      "1234567\"", "\"1234567", "12345678\\", "1234567\n12345678", "abcdefghijklmnop\tqrstuvwxyz0123456\x1f",
      // Invalid UTF-8: lone continuation, overlong, surrogate, above U+10FFFF,
      // truncated at the end and in the middle, a stray high byte.
      "bad \x80 byte", "overlong \xc0\x80", "surrogate \xed\xa0\x80", "too big \xf4\x90\x80\x80",
      "cut \xf0\x9f\x98", "cut \xe2\x82 then text", "\xff", "\xfe\xff mixed \"quote\" \x01",
      "ok \u00e9 then bad \xc3 then ok \u00e9",
  };
  for (const std::string& s : corpus) {
    EXPECT_EQ(Written(s), Dumped(s)) << "for " << json(s).dump(-1, ' ', true, json::error_handler_t::replace);
  }
}

TEST(JsonText, SameBytesAsDumpJsonForEveryByteAndRandomMixes) {
  for (int b = 0; b < 256; ++b) {
    const std::string s(1, static_cast<char>(b));
    EXPECT_EQ(Written(s), Dumped(s)) << "byte " << b;
    const std::string padded = "0123456" + s + "89abcdef" + s;
    EXPECT_EQ(Written(padded), Dumped(padded)) << "byte " << b;
  }
  // Random strings from pieces that stress the escaper and the UTF-8 check.
  const std::vector<std::string> pieces = {"a", "bcdefgh", "\"", "\\", "\n", "\x01", "\x7f", "\u00e9", "\u2028",
                                           "\U0001F600", "\x80", "\xc3", "\xed\xa0\x80", "\xf0\x9f", " "};
  std::mt19937 rng(17);
  for (int round = 0; round < 3000; ++round) {
    std::string s;
    const size_t n = rng() % 24;
    for (size_t i = 0; i < n; ++i) s += pieces[rng() % pieces.size()];
    ASSERT_EQ(Written(s), Dumped(s)) << "round " << round;
    std::string content;
    AppendJsonStringContent(content, s);
    ASSERT_EQ("\"" + content + "\"", Dumped(s)) << "round " << round;
  }
}

}  // namespace
}  // namespace msp
