// Tests for AppendJsonString(Content): byte for byte what nlohmann's dump writes
// for the same string, on hard strings, every single byte, invalid UTF-8 and
// random mixes; and the escapes JSON.stringify writes, spelled out. And for
// AppendJson (DumpJson's compact form): the same bytes as nlohmann's dump for
// numbers of every shape, empty and nested containers and random trees.
#include "codec/json_text.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
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

// nlohmann's own serializer, as DumpJson called it before AppendJson.
std::string NlohmannDump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }
std::string Dumped(std::string_view s) { return NlohmannDump(json(std::string(s))); }

std::string Appended(const json& j) {
  std::string out = "x";  // appends, never replaces
  AppendJson(out, j);
  return out.substr(1);
}

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

TEST(JsonText, AppendJsonWritesNumbersAsNlohmann) {
  const std::vector<json> numbers = {
      json(0), json(-1), json(42), json(std::numeric_limits<int64_t>::min()),
      json(std::numeric_limits<int64_t>::max()), json(std::numeric_limits<uint64_t>::max()), json(uint64_t{0}),
      json(0.0), json(-0.0), json(1.0), json(-1.5), json(0.1), json(1e15), json(1e16), json(1e21), json(1e-5),
      json(1e-7), json(123456789.125), json(5e-324), json(std::numeric_limits<double>::max()),
      json(std::numeric_limits<double>::lowest()), json(0.5080679568337324),
      json(std::numeric_limits<double>::quiet_NaN()), json(std::numeric_limits<double>::infinity()),
      json(-std::numeric_limits<double>::infinity()),
  };
  for (const json& n : numbers) EXPECT_EQ(Appended(n), NlohmannDump(n)) << NlohmannDump(n);
  // NaN and the infinities as null, as nlohmann writes them.
  EXPECT_EQ(Appended(json(std::nan(""))), "null");
  EXPECT_EQ(Appended(json(1.0)), "1.0");
  std::mt19937_64 rng(5);
  for (int i = 0; i < 20000; ++i) {
    uint64_t bits = rng();
    double d;
    std::memcpy(&d, &bits, sizeof d);
    const double scaled = static_cast<double>(static_cast<int64_t>(rng())) / static_cast<double>(1 + rng() % 100000);
    ASSERT_EQ(Appended(json(d)), NlohmannDump(json(d))) << i;
    ASSERT_EQ(Appended(json(scaled)), NlohmannDump(json(scaled))) << i;
    ASSERT_EQ(Appended(json(static_cast<int64_t>(bits))), NlohmannDump(json(static_cast<int64_t>(bits)))) << i;
  }
}

TEST(JsonText, AppendJsonWritesContainersAsNlohmann) {
  const std::vector<json> values = {
      json(nullptr), json(true), json(false), json::object(), json::array(), json::array({json::object()}),
      json{{"b", 1}, {"a", json::array({1, 2.5, "x", nullptr, false})}, {"", json::object()}},
      json{{"bad \xff key", "bad \xc3 value"}, {"quote\"key", "line\u2028sep"}},
      json::parse(R"({"hits":[{"memory":{"id":"0193","tags":["a","b"],"body":{}},"score":0.25,"explain":[]}],
                      "sessions":[],"n":3})"),
      json::binary({1, 2, 3}),
  };
  for (const json& v : values) EXPECT_EQ(Appended(v), NlohmannDump(v)) << NlohmannDump(v);
  EXPECT_EQ(DumpJson(values[6]), NlohmannDump(values[6]));
  EXPECT_EQ(Appended(values[6]), R"({"":{},"a":[1,2.5,"x",null,false],"b":1})");
}

// Random trees of every value type, the strings from the pieces above.
json RandomValue(std::mt19937& rng, int depth) {
  static const std::vector<std::string> pieces = {"a", "bcdefgh", "\"", "\\", "\n", "\x01", "\u00e9", "\u2028",
                                                  "\U0001F600", "\x80", "\xc3", " "};
  auto text = [&] {
    std::string s;
    for (size_t i = rng() % 6; i > 0; --i) s += pieces[rng() % pieces.size()];
    return s;
  };
  switch (depth > 3 ? rng() % 6 : rng() % 8) {
    case 0: return json(nullptr);
    case 1: return json(rng() % 2 == 0);
    case 2: return json(static_cast<int64_t>(rng()) - (1LL << 31));
    case 3: return json(static_cast<double>(static_cast<int32_t>(rng())) / (1 + rng() % 1000));
    case 4: return json(text());
    case 5: return json(static_cast<uint64_t>(rng()) << 32);
    case 6: {
      json a = json::array();
      for (size_t i = rng() % 5; i > 0; --i) a.push_back(RandomValue(rng, depth + 1));
      return a;
    }
    default: {
      json o = json::object();
      for (size_t i = rng() % 5; i > 0; --i) o[text()] = RandomValue(rng, depth + 1);
      return o;
    }
  }
}

TEST(JsonText, AppendJsonWritesRandomTreesAsNlohmann) {
  std::mt19937 rng(29);
  for (int round = 0; round < 3000; ++round) {
    const json v = RandomValue(rng, 0);
    ASSERT_EQ(Appended(v), NlohmannDump(v)) << "round " << round;
    ASSERT_EQ(DumpJson(v), NlohmannDump(v)) << "round " << round;
  }
}

}  // namespace
}  // namespace msp
