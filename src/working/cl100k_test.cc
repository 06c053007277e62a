// The cl100k_base tokenizer against js-tiktoken itself: a fixed corpus
// (English, Cyrillic, CJK, emoji, code, whitespace runs, long pieces) and a
// seeded random one are encoded by data/tokenizer/encode.mjs in Node at test
// time and by msp, and every token id must agree. Plus the pre-tokenizer on
// small cases, the loader's errors and the counter factory.
#include "working/cl100k.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/test_util.h"
#include "working/tokens.h"

namespace msp {
namespace {

using nlohmann::json;

std::shared_ptr<const Cl100kVocabulary> Vocabulary() {
  Result<std::string> path = FindCl100kVocabulary("");
  EXPECT_TRUE(path.ok()) << path.status().ToString()
                         << "\n(the tokenizer tests need the vocabulary: run scripts/deps.sh)";
  if (!path.ok()) return nullptr;
  Result<std::shared_ptr<const Cl100kVocabulary>> v = Cl100kVocabulary::LoadShared(*path);
  EXPECT_TRUE(v.ok()) << v.status().ToString();
  return v.ok() ? *v : nullptr;
}

std::vector<std::string> Pieces(std::string_view text) {
  std::vector<std::string> out;
  ForEachCl100kPiece(text, [&](std::string_view p) { out.emplace_back(p); });
  return out;
}

std::string Repeat(std::string_view s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

std::vector<std::string> FixedCorpus() {
  return {
      "",
      "hello world",
      "Hello, World! How's it going? I'm fine, they'll see; we'd've.",
      "THE QUICK BROWN FOX'S TAIL — IT'S 'QUOTED' AND 'RE-QUOTED'",
      "Привет, мир! Как дела? Это тест токенизатора на русском языке.",
      "Україна: їжак, ґанок, є, ї — літери українського алфавіту.",
      "東京は日本の首都です。今日は良い天気ですね。",
      "中文分词测试：我们今天去公园散步，好吗？",
      "한국어 텍스트도 포함합니다.",
      "emoji: 😀👍🏽🎉 family 👨‍👩‍👧‍👦 flags 🇺🇦🇯🇵",
      "int main() {\n  std::vector<int> v = {1, 2, 3};\n  return v.size() > 2 ? 0 : 1;\n}\n",
      "def f(x):\n\tif x:\n\t\treturn x ** 2  # square\n\treturn None\n",
      "{\"key\": \"value\", \"list\": [1, 2.5, -3e10], \"nested\": {\"a\": null}}",
      "    leading spaces and trailing spaces    ",
      "tabs\t\tand\t \tmixed \t whitespace\t",
      "line1\nline2\r\nline3\n\n\nline4\r\r\n  \n  indented",
      "   \n   ",
      "\n",
      " ",
      "  ",
      "a  b   c    d",
      "numbers 1 12 123 1234 12345 123456 3.14159 1,000,000 ٣٤٥ ²³ Ⅻ",
      "mixed123abc456def 0x7FFF 1e-9",
      "aGVsbG8gd29ybGQgdGhpcyBpcyBiYXNlNjQ=/+aGVsbG8gd29ybGQ",
      "550e8400-e29b-41d4-a716-446655440000",
      "https://example.com/path?query=1&other=two#fragment",
      "!!!??? ... --- === +++ *** ### @@@ $$$ %%% ^^^ &&& ((( )))",
      " !!! \n!!!\n\n ?",
      "'s 'S 't 're 'RE 'Ve 'm 'LL 'd 'x ' '",
      "don't won't can't shouldn't I'd've",
      "non\u00a0breaking\u3000ideographic\u2028line\u2029para\u202fnarrow",
      "caf\u00e9 cafe\u0301 na\u00efve r\u00e9sum\u00e9",
      "ह‍िन्दी पाठ",
      "مرحبا بالعالم",
      "Ελληνικά γράμματα",
      "<|endoftext|> special tokens count as text <|fim_prefix|>",
      "\u00ff\u0100\u07ff\u0800\uffff",
      "\U0001F600\U0010FFFF\U00010000",
      Repeat(" ", 300),
      Repeat("\n", 200),
      Repeat(" \n", 150),
      Repeat("=", 500),
      Repeat("ab", 400),
      Repeat("xyz ", 100),
      Repeat("Всё", 120),
      Repeat("漢", 200),
      Repeat("😀", 100),
      Repeat("a1", 200),
      Repeat("-_", 300) + "\n\n",
  };
}

// Random texts drawn from a palette of the characters the pre-tokenizer
// treats differently.
std::vector<std::string> RandomCorpus() {
  const std::vector<std::string> palette = {
      "a", "b", "Z", "q", "e", "th", "ing", " ", " ", "  ", "\t", "\n", "\r\n", "\r", "'", "'s", "'ll",
      "0", "7", "42", "999", ".", ",", "!", "?", "-", "_", "(", ")", "{", "}", "\"", "/", "\\",
      "й", "ж", "Ї", "中", "日", "한", "😀", "👍🏽", "\u0301", "\u00a0", "\u3000", "\u2028", "²", "٣",
      "€", "—", "…", "ß", "ﬁ", "\u200d", "\ufeff", "\u0085"};
  std::mt19937 rng(20240611);
  std::uniform_int_distribution<size_t> pick(0, palette.size() - 1);
  std::uniform_int_distribution<int> length(1, 60);
  std::vector<std::string> out;
  for (int i = 0; i < 400; ++i) {
    std::string s;
    const int n = length(rng);
    for (int k = 0; k < n; ++k) s += palette[pick(rng)];
    out.push_back(std::move(s));
  }
  return out;
}

// Runs data/tokenizer/encode.mjs on `texts`; the ids of each.
std::vector<std::vector<uint32_t>> NodeEncode(const std::vector<std::string>& texts) {
  testing::TempDir dir("cl100k");
  const std::string in_path = dir.path() + "/in.json";
  const std::string out_path = dir.path() + "/out.json";
  {
    std::ofstream in(in_path);
    in << json(texts).dump();
  }
  const std::string cmd = "node '" + std::string(MSP_SOURCE_DIR) + "/data/tokenizer/encode.mjs' < '" + in_path +
                          "' > '" + out_path + "'";
  const int rc = std::system(cmd.c_str());
  EXPECT_EQ(rc, 0) << cmd << "\n(needs node and `npm ci` in data/tokenizer: scripts/deps.sh)";
  std::ifstream out(out_path);
  std::stringstream buf;
  buf << out.rdbuf();
  const json j = json::parse(buf.str(), nullptr, false);
  std::vector<std::vector<uint32_t>> ids;
  if (j.is_discarded() || !j.is_array()) {
    ADD_FAILURE() << "node printed no JSON array: " << buf.str().substr(0, 200);
    return ids;
  }
  for (const json& row : j) ids.push_back(row.get<std::vector<uint32_t>>());
  return ids;
}

void ExpectAgreement(const std::vector<std::string>& corpus) {
  auto v = Vocabulary();
  ASSERT_NE(v, nullptr);
  const std::vector<std::vector<uint32_t>> expected = NodeEncode(corpus);
  ASSERT_EQ(expected.size(), corpus.size());
  size_t total = 0;
  for (size_t i = 0; i < corpus.size(); ++i) {
    EXPECT_EQ(v->Encode(corpus[i]), expected[i]) << "text " << i << ": " << json(corpus[i]).dump();
    EXPECT_EQ(v->Count(corpus[i]), expected[i].size()) << "text " << i;
    total += expected[i].size();
  }
  EXPECT_GT(total, corpus.size());
}

TEST(Cl100kTest, AgreesWithJsTiktokenOnFixedCorpus) { ExpectAgreement(FixedCorpus()); }

TEST(Cl100kTest, AgreesWithJsTiktokenOnRandomCorpus) { ExpectAgreement(RandomCorpus()); }

TEST(Cl100kTest, AgreesOnTheWholeCorpusAsOneText) {
  std::string all;
  for (const std::string& s : FixedCorpus()) all += s + "\n";
  for (const std::string& s : RandomCorpus()) all += s;
  ExpectAgreement({all});
}

TEST(Cl100kTest, PreTokenizerPieces) {
  EXPECT_EQ(Pieces("Hello world"), (std::vector<std::string>{"Hello", " world"}));
  EXPECT_EQ(Pieces("it's"), (std::vector<std::string>{"it", "'s"}));
  EXPECT_EQ(Pieces("12345"), (std::vector<std::string>{"123", "45"}));
  EXPECT_EQ(Pieces("a  b"), (std::vector<std::string>{"a", " ", " b"}));
  EXPECT_EQ(Pieces("x \n\n y"), (std::vector<std::string>{"x", " \n\n", " y"}));
  EXPECT_EQ(Pieces("end   "), (std::vector<std::string>{"end", "   "}));
  EXPECT_EQ(Pieces(" ?!\n\nz"), (std::vector<std::string>{" ?!\n\n", "z"}));
  EXPECT_EQ(Pieces("(abc"), (std::vector<std::string>{"(abc"}));
  EXPECT_EQ(Pieces("Привет мир"), (std::vector<std::string>{"Привет", " мир"}));
  // Invalid UTF-8 bytes stand alone, as punctuation, and are never lost.
  const std::string bad = "a\xff\xfe b";
  EXPECT_EQ(Pieces(bad), (std::vector<std::string>{"a", "\xff\xfe", " b"}));
}

TEST(Cl100kTest, InvalidUtf8IsCountedByBytes) {
  auto v = Vocabulary();
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->Count(std::string("\xff")), 1u);
  EXPECT_GE(v->Count(std::string("ab\xc3(\xe2\x82 z")), 4u);
  EXPECT_EQ(v->Count(""), 0u);
  EXPECT_EQ(v->size(), 100256u);
}

TEST(Cl100kTest, LoaderRefusesOtherFiles) {
  testing::TempDir dir("cl100k-bad");
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir.path() + "/" + name) << text;
    return dir.path() + "/" + name;
  };
  EXPECT_EQ(Cl100kVocabulary::Load(dir.path() + "/missing.js").status().code(), StatusCode::kIoError);
  EXPECT_EQ(Cl100kVocabulary::Load(write("a.js", "export default 42;")).status().code(), StatusCode::kCorruption);
  const auto other = Cl100kVocabulary::Load(write("b.js", R"(export default {"pat_str":"\\s+","bpe_ranks":"! 0 IQ=="};)"));
  EXPECT_EQ(other.status().code(), StatusCode::kCorruption);
  EXPECT_NE(other.status().message().find("pat_str"), std::string::npos) << other.status().ToString();
  json bad;
  bad["pat_str"] = std::string(kCl100kPattern);
  bad["bpe_ranks"] = "! 0 IQ== not*base64";
  const auto b64 = Cl100kVocabulary::Load(write("c.json", bad.dump()));
  EXPECT_EQ(b64.status().code(), StatusCode::kCorruption);
  EXPECT_NE(b64.status().message().find("base64"), std::string::npos) << b64.status().ToString();
  bad["bpe_ranks"] = "! 0 IQ== Ig==";
  const auto few = Cl100kVocabulary::Load(write("d.json", bad.dump()));
  EXPECT_EQ(few.status().code(), StatusCode::kCorruption) << "a vocabulary without every byte is refused";
  bad["bpe_ranks"] = "! 0 IQ== IQ==";
  const auto twice = Cl100kVocabulary::Load(write("e.json", bad.dump()));
  EXPECT_NE(twice.status().message().find("appears twice"), std::string::npos) << twice.status().ToString();
}

// The ranks text is read where it lies in the file when its only escapes
// are line breaks; with any other escape it is parsed as JSON: the same
// vocabulary either way.
TEST(Cl100kTest, EscapedRanksLoadAsThePlainOnes) {
  auto v = Vocabulary();
  ASSERT_NE(v, nullptr);
  std::ifstream in(v->path(), std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string plain = "\"bpe_ranks\":\"!";
  const size_t at = text.find(plain);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, plain.size(), "\"bpe_ranks\":\"\\u0021");  // the same '!', escaped
  testing::TempDir dir("cl100k-escaped");
  const std::string path = dir.path() + "/escaped.js";
  std::ofstream(path, std::ios::binary) << text;
  auto escaped = Cl100kVocabulary::Load(path);
  ASSERT_TRUE(escaped.ok()) << escaped.status().ToString();
  EXPECT_EQ((*escaped)->size(), v->size());
  for (const std::string& t : FixedCorpus()) EXPECT_EQ((*escaped)->Encode(t), v->Encode(t)) << t;
}

// The prebuilt table: LoadShared parses a vocabulary once and leaves its
// table beside it; the table maps to the same vocabulary; a table that is
// torn, damaged or made for another file is refused (LoadShared then
// parses again), and a vocabulary file that changed is not read through
// its old table.
TEST(Cl100kTest, PrebuiltTableIsTheSameVocabularyAndRefusedWhenDamaged) {
  auto v = Vocabulary();
  ASSERT_NE(v, nullptr);
  testing::TempDir dir("cl100k-table");
  const std::string path = dir.path() + "/cl100k_base.js";
  {
    std::ifstream in(v->path(), std::ios::binary);
    std::ofstream(path, std::ios::binary) << in.rdbuf();
  }
  const std::string table = Cl100kVocabulary::TablePaths(path).front();
  EXPECT_EQ(table, path + ".msp-table");
  EXPECT_FALSE(Cl100kVocabulary::LoadTable(path, table).ok()) << "no table yet";
  auto shared = Cl100kVocabulary::LoadShared(path);  // parses and writes the table
  ASSERT_TRUE(shared.ok()) << shared.status().ToString();
  auto mapped = Cl100kVocabulary::LoadTable(path, table);
  ASSERT_TRUE(mapped.ok()) << mapped.status().ToString();
  EXPECT_EQ((*mapped)->size(), v->size());
  for (const std::string& t : FixedCorpus()) EXPECT_EQ((*mapped)->Encode(t), v->Encode(t)) << t;
  for (const std::string& t : RandomCorpus()) EXPECT_EQ((*mapped)->Count(t), v->Count(t)) << t;

  std::string bytes;
  {
    std::ifstream in(table, std::ios::binary);
    bytes.assign((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  ASSERT_GT(bytes.size(), 4096u);
  auto refused = [&](const std::string& damaged) {
    std::ofstream(table, std::ios::binary | std::ios::trunc) << damaged;
    return Cl100kVocabulary::LoadTable(path, table).status().code() == StatusCode::kCorruption;
  };
  EXPECT_TRUE(refused(bytes.substr(0, bytes.size() / 2))) << "torn";
  EXPECT_TRUE(refused(bytes.substr(0, 100))) << "shorter than its header";
  std::string flipped = bytes;
  flipped[bytes.size() - 10] ^= 1;  // in the arena
  EXPECT_TRUE(refused(flipped)) << "a damaged arena";
  flipped = bytes;
  flipped[bytes.size() / 3] ^= 0x40;  // in the slots
  EXPECT_TRUE(refused(flipped)) << "a damaged slot";
  flipped = bytes;
  flipped[0] = 'X';
  EXPECT_TRUE(refused(flipped)) << "another magic";
  EXPECT_FALSE(refused(bytes)) << "the intact table maps again";

  // The vocabulary file replaced: its table no longer belongs to it.
  const std::string other = dir.path() + "/other.js";
  {
    std::ifstream in(path, std::ios::binary);
    std::ofstream(other, std::ios::binary) << in.rdbuf();
  }
  ASSERT_EQ(std::rename(other.c_str(), path.c_str()), 0);
  EXPECT_EQ(Cl100kVocabulary::LoadTable(path, table).status().code(), StatusCode::kCorruption);
}

TEST(Cl100kTest, CounterFactory) {
  ASSERT_NE(Vocabulary(), nullptr);
  auto exact = MakeTokenCounter("cl100k");
  ASSERT_OK(exact.status());
  EXPECT_EQ((*exact)->name(), "cl100k");
  EXPECT_EQ((*exact)->Count("hello world"), 2u);
  EXPECT_EQ(DefaultTokenCounter()->name(), "cl100k");

  TokenOptions o;
  o.counter = "estimate";
  auto est = MakeTokenCounter(o);
  ASSERT_OK(est.status());
  EXPECT_EQ((*est)->name(), "estimate");

  o.counter = "auto";
  o.vocabulary_path = "/nonexistent/cl100k_base.js";
  auto missing = MakeTokenCounter(o);
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("/nonexistent/cl100k_base.js"), std::string::npos);

  o.counter = "words";
  o.vocabulary_path.clear();
  EXPECT_TRUE(MakeTokenCounter(o).status().IsInvalidArgument());
  EXPECT_TRUE(MakeTokenCounter("words").status().IsInvalidArgument());
}

}  // namespace
}  // namespace msp
