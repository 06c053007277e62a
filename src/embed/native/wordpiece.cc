// WordPieceTokenizer (wordpiece.h).
#include "embed/native/wordpiece.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "embed/native/unicode_tables.h"
#include "util/utf8.h"

namespace msp::native {
namespace {

constexpr uint32_t kCapitalSigma = 0x3A3;
constexpr uint32_t kSmallSigma = 0x3C3;
constexpr uint32_t kFinalSigma = 0x3C2;

uint8_t RangeClass(const CharRange* ranges, size_t count, uint32_t cp) {
  const CharRange* end = ranges + count;
  const CharRange* it = std::upper_bound(ranges, end, cp, [](uint32_t c, const CharRange& r) { return c < r.first; });
  if (it == ranges) return 0;
  --it;
  return cp <= it->last ? it->klass : 0;
}

CharClass ClassOf(uint32_t cp) {
  if (cp < 128) {
    if (cp == ' ' || cp == '\t' || cp == '\n' || cp == '\r') return CharClass::kSpace;
    if (cp < 32 || cp == 127) return CharClass::kControl;
    if ((cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) || (cp >= 123 && cp <= 126)) {
      return CharClass::kPunct;
    }
    return CharClass::kOther;
  }
  return static_cast<CharClass>(RangeClass(kCharRanges, kCharRangeCount, cp));
}

const CharMapping* FindMapping(const CharMapping* rows, size_t count, uint32_t cp) {
  const CharMapping* end = rows + count;
  const CharMapping* it =
      std::lower_bound(rows, end, cp, [](const CharMapping& m, uint32_t c) { return m.code_point < c; });
  return it != end && it->code_point == cp ? it : nullptr;
}

bool IsCjk(uint32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x20000 && cp <= 0x2A6DF) ||
         (cp >= 0x2A700 && cp <= 0x2B73F) || (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B820 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// str.lower() of a word, with its final sigma rule.
std::u32string Lower(const std::u32string& word) {
  std::u32string out;
  out.reserve(word.size());
  for (size_t i = 0; i < word.size(); ++i) {
    const uint32_t cp = word[i];
    if (cp < 128) {
      out.push_back(cp >= 'A' && cp <= 'Z' ? cp + 32 : cp);
      continue;
    }
    if (cp == kCapitalSigma) {
      auto sigma = [](uint32_t c) { return RangeClass(kSigmaRanges, kSigmaRangeCount, c); };
      size_t j = i;
      while (j > 0 && sigma(word[j - 1]) == 2) --j;
      bool final_sigma = j > 0 && sigma(word[j - 1]) == 1;
      if (final_sigma) {
        size_t k = i + 1;
        while (k < word.size() && sigma(word[k]) == 2) ++k;
        final_sigma = k == word.size() || sigma(word[k]) != 1;
      }
      out.push_back(final_sigma ? kFinalSigma : kSmallSigma);
      continue;
    }
    const CharMapping* m = FindMapping(kLower, kLowerCount, cp);
    if (m == nullptr) {
      out.push_back(cp);
    } else {
      for (uint32_t k = 0; k < m->length; ++k) out.push_back(kLowerPool[m->offset + k]);
    }
  }
  return out;
}

// NFD with the nonspacing marks removed.
std::u32string StripAccents(const std::u32string& word) {
  constexpr uint32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11A7;
  constexpr uint32_t kVCount = 21, kTCount = 28, kNCount = kVCount * kTCount, kSCount = 11172;
  std::u32string out;
  out.reserve(word.size());
  auto keep = [&out](uint32_t c) {
    if (ClassOf(c) != CharClass::kMark) out.push_back(c);
  };
  for (uint32_t cp : word) {
    if (cp < 128) {
      out.push_back(cp);
    } else if (cp >= kSBase && cp < kSBase + kSCount) {
      const uint32_t s = cp - kSBase;
      out.push_back(kLBase + s / kNCount);
      out.push_back(kVBase + (s % kNCount) / kTCount);
      if (s % kTCount != 0) out.push_back(kTBase + s % kTCount);
    } else if (const CharMapping* m = FindMapping(kNfd, kNfdCount, cp); m != nullptr) {
      for (uint32_t k = 0; k < m->length; ++k) keep(kNfdPool[m->offset + k]);
    } else {
      keep(cp);
    }
  }
  return out;
}

Result<std::string> ReadWhole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(path + " cannot be opened");
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) return Status::IoError(path + " cannot be read");
  return s.str();
}

bool Exists(const std::string& path) { return std::ifstream(path).good(); }

}  // namespace

Result<WordPieceTokenizer> WordPieceTokenizer::FromVocab(std::unordered_map<std::string, int32_t> vocab,
                                                         WordPieceOptions options,
                                                         std::vector<std::pair<std::string, int32_t>> specials) {
  WordPieceTokenizer t;
  t.vocab_ = std::move(vocab);
  t.options_ = std::move(options);
  if (specials.empty()) {
    for (const char* name : {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}) {
      auto it = t.vocab_.find(name);
      if (it != t.vocab_.end()) specials.emplace_back(name, it->second);
    }
  }
  for (auto& [name, id] : specials) {
    if (name.empty() || id < 0) return Status::InvalidArgument("a special token is empty or has a negative id");
    t.max_id_ = std::max(t.max_id_, id);
  }
  // Longest first, so that of two specials at one place the longer wins.
  std::sort(specials.begin(), specials.end(),
            [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  t.specials_ = std::move(specials);
  auto id_of = [&t](const std::string& token, int32_t* id) {
    auto it = t.vocab_.find(token);
    if (it == t.vocab_.end()) return false;
    *id = it->second;
    return true;
  };
  for (const auto& [name, id] : {std::pair<std::string, int32_t*>{"[CLS]", &t.cls_}, {"[SEP]", &t.sep_},
                                 {t.options_.unk_token, &t.unk_}}) {
    if (!id_of(name, id)) {
      return Status::InvalidArgument("the vocabulary has no " + name +
                                     " token; msp's native embedder runs BERT-family (WordPiece) models only");
    }
  }
  for (const auto& [token, id] : t.vocab_) {
    if (id < 0) return Status::InvalidArgument("the vocabulary gives '" + token + "' a negative id");
    t.max_id_ = std::max(t.max_id_, id);
  }
  return t;
}

Result<WordPieceTokenizer> WordPieceTokenizer::Load(const std::string& dir) {
  const std::string json_path = dir + "/tokenizer.json";
  const std::string vocab_path = dir + "/vocab.txt";
  WordPieceOptions options;
  std::unordered_map<std::string, int32_t> vocab;
  std::vector<std::pair<std::string, int32_t>> specials;
  if (Exists(json_path)) {
    MSP_ASSIGN_OR_RETURN(std::string text, ReadWhole(json_path));
    try {
      const nlohmann::json j = nlohmann::json::parse(text);
      const nlohmann::json& model = j.at("model");
      if (model.value("type", std::string("WordPiece")) != "WordPiece") {
        return Status::InvalidArgument(json_path + ": model type '" + model.value("type", std::string()) +
                                       "' is not WordPiece; msp's native embedder runs BERT-family models only");
      }
      options.unk_token = model.value("unk_token", options.unk_token);
      options.prefix = model.value("continuing_subword_prefix", options.prefix);
      options.max_chars_per_word = model.value("max_input_chars_per_word", options.max_chars_per_word);
      for (const auto& [token, id] : model.at("vocab").items()) vocab[token] = id.get<int32_t>();
      for (const nlohmann::json& added : j.value("added_tokens", nlohmann::json::array())) {
        if (added.value("special", false) && added.contains("content") && added.contains("id")) {
          specials.emplace_back(added["content"].get<std::string>(), added["id"].get<int32_t>());
        }
      }
      const nlohmann::json& norm = j.value("normalizer", nlohmann::json());
      if (!norm.is_null()) {
        if (norm.value("type", std::string()) != "BertNormalizer") {
          return Status::InvalidArgument(json_path + ": normalizer '" + norm.value("type", std::string()) +
                                         "' is not supported (BertNormalizer only)");
        }
        options.lower_case = norm.value("lowercase", true);
        const nlohmann::json& strip = norm.value("strip_accents", nlohmann::json());
        options.strip_accents = strip.is_boolean() ? strip.get<bool>() : options.lower_case;
        options.split_cjk = norm.value("handle_chinese_chars", true);
      }
    } catch (const nlohmann::json::exception& e) {
      return Status::InvalidArgument(json_path + " is not a WordPiece tokenizer file: " + e.what());
    }
  } else if (Exists(vocab_path)) {
    MSP_ASSIGN_OR_RETURN(std::string text, ReadWhole(vocab_path));
    int32_t id = 0;
    size_t start = 0;
    while (start < text.size()) {
      size_t end = text.find('\n', start);
      if (end == std::string::npos) end = text.size();
      size_t stop = end;
      if (stop > start && text[stop - 1] == '\r') --stop;
      vocab[text.substr(start, stop - start)] = id++;
      start = end + 1;
    }
    const std::string config_path = dir + "/tokenizer_config.json";
    if (Exists(config_path)) {
      MSP_ASSIGN_OR_RETURN(std::string config, ReadWhole(config_path));
      try {
        const nlohmann::json j = nlohmann::json::parse(config);
        options.lower_case = j.value("do_lower_case", true);
        const nlohmann::json& strip = j.value("strip_accents", nlohmann::json());
        options.strip_accents = strip.is_boolean() ? strip.get<bool>() : options.lower_case;
        options.split_cjk = j.value("tokenize_chinese_chars", true);
        if (j.contains("unk_token") && j["unk_token"].is_string()) options.unk_token = j["unk_token"];
      } catch (const nlohmann::json::exception& e) {
        return Status::InvalidArgument(config_path + " is not valid JSON: " + e.what());
      }
    }
  } else {
    return Status::InvalidArgument("no tokenizer in " + dir + ": it needs tokenizer.json or vocab.txt");
  }
  if (vocab.empty()) return Status::InvalidArgument("the vocabulary in " + dir + " is empty");
  auto t = FromVocab(std::move(vocab), std::move(options), std::move(specials));
  if (!t.ok()) return t.status().WithContext(dir);
  return t;
}

template <typename Emit>
void WordPieceTokenizer::ForEachWord(std::string_view text, Emit&& emit) const {
  std::u32string word;
  auto flush = [&]() -> bool {
    if (word.empty()) return true;
    std::u32string w = options_.lower_case ? Lower(word) : word;
    if (options_.strip_accents) w = StripAccents(w);
    word.clear();
    std::u32string part;
    for (uint32_t cp : w) {
      if (ClassOf(cp) == CharClass::kPunct) {
        if (!part.empty() && !emit(part)) return false;
        part.assign(1, cp);
        if (!emit(part)) return false;
        part.clear();
      } else {
        part.push_back(cp);
      }
    }
    return part.empty() || emit(part);
  };
  size_t i = 0;
  while (i < text.size()) {
    const uint32_t cp = NextCodePoint(text, &i);
    if (cp == 0 || cp == 0xFFFD) continue;
    const CharClass k = ClassOf(cp);
    if (k == CharClass::kControl) continue;
    if (k == CharClass::kSpace || k == CharClass::kSeparator) {
      if (!flush()) return;
    } else if (options_.split_cjk && IsCjk(cp)) {
      if (!flush()) return;
      word.push_back(cp);
      if (!flush()) return;
    } else {
      word.push_back(cp);
    }
  }
  flush();
}

std::vector<std::string> WordPieceTokenizer::BasicTokenize(std::string_view text) const {
  std::vector<std::string> words;
  if (!IsValidUtf8(text)) return words;
  ForEachWord(text, [&words](const std::u32string& w) {
    std::string s;
    for (uint32_t cp : w) AppendUtf8(cp, &s);
    words.push_back(std::move(s));
    return true;
  });
  return words;
}

void WordPieceTokenizer::WordPiece(const std::u32string& word, std::vector<int32_t>* ids) const {
  if (word.size() > options_.max_chars_per_word) {
    ids->push_back(unk_);
    return;
  }
  const size_t first = ids->size();
  std::string piece;
  size_t start = 0;
  while (start < word.size()) {
    size_t end = word.size();
    int32_t found = -1;
    while (start < end) {
      piece.clear();
      if (start > 0) piece = options_.prefix;
      for (size_t k = start; k < end; ++k) AppendUtf8(word[k], &piece);
      auto it = vocab_.find(piece);
      if (it != vocab_.end()) {
        found = it->second;
        break;
      }
      --end;
    }
    if (found < 0) {
      ids->resize(first);
      ids->push_back(unk_);
      return;
    }
    ids->push_back(found);
    start = end;
  }
}

Result<std::vector<int32_t>> WordPieceTokenizer::Encode(std::string_view text, size_t max_tokens) const {
  size_t bad = 0;
  if (!IsValidUtf8(text, &bad)) {
    return Status::InvalidArgument("text is not valid UTF-8 (byte " + std::to_string(bad) + ")");
  }
  std::vector<int32_t> ids{cls_};
  const size_t limit = max_tokens < 2 ? 1 : max_tokens - 1;  // room for [SEP]
  auto words = [&](std::string_view part) {
    ForEachWord(part, [&](const std::u32string& w) {
      WordPiece(w, &ids);
      return ids.size() < limit;
    });
  };
  // Split out the special tokens written in the text (valid UTF-8 stays
  // valid: a special token starts and ends on character boundaries).
  size_t from = 0;
  for (size_t i = 0; i < text.size() && ids.size() < limit; ++i) {
    for (const auto& [name, id] : specials_) {
      if (text.compare(i, name.size(), name) != 0) continue;
      words(text.substr(from, i - from));
      if (ids.size() < limit) ids.push_back(id);
      i += name.size() - 1;
      from = i + 1;
      break;
    }
  }
  if (ids.size() < limit && from < text.size()) words(text.substr(from));
  if (ids.size() > limit) ids.resize(limit);
  ids.push_back(sep_);
  return ids;
}

}  // namespace msp::native
