// The cl100k_base tokenizer: the pre-tokenizer scanner, the byte-pair merge
// and the loader of js-tiktoken's ranks file.
#include "working/cl100k.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <queue>
#include <utility>

#include <nlohmann/json.hpp>

#include "util/owned_fd.h"

namespace msp {

const std::string_view kCl100kPattern =
    "('s|'S|'t|'T|'re|'rE|'Re|'RE|'ve|'vE|'Ve|'VE|'m|'M|'ll|'lL|'Ll|'LL|'d|'D)|"
    "[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

namespace cl100k_internal {
namespace {

struct CodePointRange {
  uint32_t first;
  uint32_t last;
};
#include "working/unicode_classes.inc"

template <size_t N>
bool InRanges(const CodePointRange (&ranges)[N], uint32_t cp) {
  const CodePointRange* end = ranges + N;
  const CodePointRange* it =
      std::upper_bound(ranges, end, cp, [](uint32_t c, const CodePointRange& r) { return c < r.first; });
  return it != ranges && cp <= (it - 1)->last;
}

CharClass ClassifyNonAscii(uint32_t cp) {
  if (InRanges(kLetterRanges, cp)) return CharClass::kLetter;
  if (InRanges(kNumberRanges, cp)) return CharClass::kNumber;
  if (InRanges(kSpaceRanges, cp)) return CharClass::kSpace;
  return CharClass::kOther;
}

struct AsciiTable {
  CharClass cls[128];
  constexpr AsciiTable() : cls() {
    for (int c = 0; c < 128; ++c) {
      if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
        cls[c] = CharClass::kLetter;
      } else if (c >= '0' && c <= '9') {
        cls[c] = CharClass::kNumber;
      } else if (c == '\r' || c == '\n') {
        cls[c] = CharClass::kNewline;
      } else if (c == ' ' || (c >= 0x09 && c <= 0x0D)) {
        cls[c] = CharClass::kSpace;
      } else {
        cls[c] = CharClass::kOther;
      }
    }
  }
};
constexpr AsciiTable kAscii;

bool IsContinuation(unsigned char b) { return (b & 0xC0) == 0x80; }

// Decodes one UTF-8 sequence at text[i]; false when it is not valid (then
// the byte stands alone).
bool Decode(std::string_view text, size_t i, size_t* len, uint32_t* cp) {
  const auto b0 = static_cast<unsigned char>(text[i]);
  const size_t left = text.size() - i;
  auto at = [&](size_t k) { return static_cast<unsigned char>(text[i + k]); };
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    if (left < 2 || !IsContinuation(at(1))) return false;
    *cp = ((b0 & 0x1Fu) << 6) | (at(1) & 0x3Fu);
    *len = 2;
    return true;
  }
  if (b0 >= 0xE0 && b0 <= 0xEF) {
    if (left < 3 || !IsContinuation(at(1)) || !IsContinuation(at(2))) return false;
    const uint32_t c = ((b0 & 0x0Fu) << 12) | ((at(1) & 0x3Fu) << 6) | (at(2) & 0x3Fu);
    if (c < 0x800 || (c >= 0xD800 && c <= 0xDFFF)) return false;
    *cp = c;
    *len = 3;
    return true;
  }
  if (b0 >= 0xF0 && b0 <= 0xF4) {
    if (left < 4 || !IsContinuation(at(1)) || !IsContinuation(at(2)) || !IsContinuation(at(3))) return false;
    const uint32_t c =
        ((b0 & 0x07u) << 18) | ((at(1) & 0x3Fu) << 12) | ((at(2) & 0x3Fu) << 6) | (at(3) & 0x3Fu);
    if (c < 0x10000 || c > 0x10FFFF) return false;
    *cp = c;
    *len = 4;
    return true;
  }
  return false;
}

char AsciiLower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c; }

// The length of the contraction after an apostrophe at text[k - 1]:
// s t m d (1) or re ve ll (2), any case; 0 when there is none.
size_t ContractionLength(std::string_view text, size_t k) {
  if (k >= text.size()) return 0;
  const char c = AsciiLower(text[k]);
  if (c == 's' || c == 't' || c == 'm' || c == 'd') return 1;
  if (k + 1 >= text.size()) return 0;
  const char c2 = AsciiLower(text[k + 1]);
  if ((c == 'r' && c2 == 'e') || (c == 'v' && c2 == 'e') || (c == 'l' && c2 == 'l')) return 2;
  return 0;
}

}  // namespace

CharClass ClassAt(std::string_view text, size_t i, size_t* len, uint32_t* cp) {
  const auto b0 = static_cast<unsigned char>(text[i]);
  if (b0 < 0x80) {
    *len = 1;
    *cp = b0;
    return kAscii.cls[b0];
  }
  if (!Decode(text, i, len, cp)) {
    *len = 1;
    *cp = 0xFFFFFFFFu;
    return CharClass::kOther;
  }
  return ClassifyNonAscii(*cp);
}

// The pieces follow the alternatives of kCl100kPattern in order; the first
// that matches at `i` wins, each as long as the pattern lets it be:
//   1 'contractions   2 [^\r\n\p{L}\p{N}]?\p{L}+   3 \p{N}{1,3}
//   4  ?[^\s\p{L}\p{N}]+[\r\n]*   5 \s*[\r\n]+   6 \s+(?!\S)   7 \s+
size_t PieceEnd(std::string_view text, size_t i) {
  const size_t n = text.size();
  size_t len0 = 0;
  uint32_t cp0 = 0;
  const CharClass c0 = ClassAt(text, i, &len0, &cp0);
  if (cp0 == '\'') {
    if (const size_t c = ContractionLength(text, i + 1)) return i + 1 + c;
  }
  auto run_of = [&](size_t k, CharClass cls) {
    size_t len = 0;
    uint32_t cp = 0;
    while (k < n && ClassAt(text, k, &len, &cp) == cls) k += len;
    return k;
  };
  const size_t j = i + len0;
  if (c0 == CharClass::kLetter) return run_of(j, CharClass::kLetter);
  size_t len1 = 0;
  uint32_t cp1 = 0;
  const bool has_next = j < n;
  const CharClass c1 = has_next ? ClassAt(text, j, &len1, &cp1) : CharClass::kOther;
  if ((c0 == CharClass::kSpace || c0 == CharClass::kOther) && has_next && c1 == CharClass::kLetter) {
    return run_of(j, CharClass::kLetter);
  }
  if (c0 == CharClass::kNumber) {
    size_t k = j;
    for (int count = 1; count < 3 && k < n; ++count) {
      size_t len = 0;
      uint32_t cp = 0;
      if (ClassAt(text, k, &len, &cp) != CharClass::kNumber) break;
      k += len;
    }
    return k;
  }
  auto punctuation_from = [&](size_t k) {
    k = run_of(k, CharClass::kOther);
    while (k < n && (text[k] == '\r' || text[k] == '\n')) ++k;
    return k;
  };
  if (c0 == CharClass::kOther) return punctuation_from(j);
  if (cp0 == ' ' && has_next && c1 == CharClass::kOther) return punctuation_from(j);
  // Whitespace (c0 is kSpace or kNewline).
  size_t k = i;
  size_t last_newline = std::string_view::npos;
  size_t last_start = i;
  while (k < n) {
    size_t len = 0;
    uint32_t cp = 0;
    const CharClass cls = ClassAt(text, k, &len, &cp);
    if (cls != CharClass::kSpace && cls != CharClass::kNewline) break;
    if (cls == CharClass::kNewline) last_newline = k;
    last_start = k;
    k += len;
  }
  if (last_newline != std::string_view::npos) return last_newline + 1;  // 5
  if (k == n) return k;                                                // 6 at the end
  if (last_start > i) return last_start;                               // 6: all but the last
  return k;                                                            // 7
}

}  // namespace cl100k_internal

namespace {

uint64_t HashBytes(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
  uint64_t h = 0x9E3779B97F4A7C15ull ^ (n * 0x100000001B3ull);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w = 0;
    std::memcpy(&w, p + i, 8);
    h = (h ^ w) * 0xFF51AFD7ED558CCDull;
    h ^= h >> 32;
  }
  uint64_t w = 0;
  std::memcpy(&w, p + i, n - i);
  h = (h ^ w) * 0xC4CEB9FE1A85EC53ull;
  h ^= h >> 29;
  h *= 0x94D049BB133111EBull;
  h ^= h >> 31;
  return h;
}

int Base64Value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

bool DecodeBase64(std::string_view in, std::string* out) {
  out->clear();
  if (in.empty() || in.size() % 4 != 0) return false;
  for (size_t i = 0; i < in.size(); i += 4) {
    int v[4];
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = in[i + k];
      if (c == '=' && i + 4 == in.size() && k >= 2) {
        v[k] = 0;
        ++pad;
        continue;
      }
      if (pad > 0) return false;
      v[k] = Base64Value(c);
      if (v[k] < 0) return false;
    }
    const uint32_t triple = (static_cast<uint32_t>(v[0]) << 18) | (static_cast<uint32_t>(v[1]) << 12) |
                            (static_cast<uint32_t>(v[2]) << 6) | static_cast<uint32_t>(v[3]);
    out->push_back(static_cast<char>((triple >> 16) & 0xFF));
    if (pad < 2) out->push_back(static_cast<char>((triple >> 8) & 0xFF));
    if (pad < 1) out->push_back(static_cast<char>(triple & 0xFF));
  }
  return true;
}

// Pieces up to this many bytes merge by rescanning (no allocation); longer
// ones (long whitespace or symbol runs) with a heap, O(n log n).
constexpr size_t kSmallPiece = 128;

}  // namespace

uint32_t Cl100kVocabulary::Rank(std::string_view bytes) const {
  if (bytes.size() == 1) return single_byte_[static_cast<unsigned char>(bytes[0])];
  if (bytes.size() > kMaxTokenBytes) return kNoRank;  // no token is that long
  const size_t mask = slot_count_ - 1;
  const uint64_t hash = HashBytes(bytes);
  const uint32_t key = SlotKey(bytes.size(), hash);
  for (size_t at = hash & mask;; at = (at + 1) & mask) {
    const Slot& s = slot_data_[at];
    if (s.length() == 0) return kNoRank;
    if (s.key() == key && std::memcmp(arena_data_ + s.offset, bytes.data(), bytes.size()) == 0) return s.rank();
  }
}

bool Cl100kVocabulary::Insert(uint32_t offset, uint32_t length, uint64_t hash, uint32_t rank) {
  const size_t mask = slots_.size() - 1;
  const char* bytes = arena_.data() + offset;
  for (size_t at = hash & mask;; at = (at + 1) & mask) {
    Slot& s = slots_[at];
    if (s.length() == 0) {
      s.offset = offset;
      s.packed = SlotKey(length, hash) | rank;
      return true;
    }
    if (s.key() == SlotKey(length, hash) && std::memcmp(arena_.data() + s.offset, bytes, length) == 0) return false;
  }
}

size_t Cl100kVocabulary::MergeSmall(std::string_view piece, std::vector<uint32_t>* out) const {
  // parts[k] = (start of part k, rank of parts k and k+1 merged); the last
  // entry is the end of the piece.
  struct Part {
    uint32_t start;
    uint32_t rank;
  };
  Part parts[kSmallPiece + 1];
  const size_t n = piece.size();
  size_t count = n + 1;
  for (size_t k = 0; k + 1 < n; ++k) {
    parts[k] = {static_cast<uint32_t>(k), Rank(piece.substr(k, 2))};
  }
  parts[n - 1] = {static_cast<uint32_t>(n - 1), kNoRank};
  parts[n] = {static_cast<uint32_t>(n), kNoRank};
  auto pair_rank = [&](size_t k) {
    if (k + 2 >= count) return kNoRank;
    return Rank(piece.substr(parts[k].start, parts[k + 2].start - parts[k].start));
  };
  for (;;) {
    uint32_t best = kNoRank;
    size_t at = 0;
    for (size_t k = 0; k + 1 < count; ++k) {
      if (parts[k].rank < best) {
        best = parts[k].rank;
        at = k;
      }
    }
    if (best == kNoRank) break;
    // Merge part `at` with part at+1.
    for (size_t k = at + 1; k + 1 < count; ++k) parts[k] = parts[k + 1];
    --count;
    parts[at].rank = pair_rank(at);
    if (at > 0) parts[at - 1].rank = pair_rank(at - 1);
  }
  const size_t tokens = count - 1;
  if (out != nullptr) {
    for (size_t k = 0; k < tokens; ++k) {
      out->push_back(Rank(piece.substr(parts[k].start, parts[k + 1].start - parts[k].start)));
    }
  }
  return tokens;
}

size_t Cl100kVocabulary::MergeLarge(std::string_view piece, std::vector<uint32_t>* out) const {
  const size_t n = piece.size();
  // Nodes 0..n-1 are the parts (by start byte); node n is the end.
  std::vector<uint32_t> next(n + 1), prev(n + 1), rank(n + 1, kNoRank);
  std::vector<bool> alive(n + 1, true);
  for (size_t k = 0; k <= n; ++k) {
    next[k] = static_cast<uint32_t>(k + 1);
    prev[k] = static_cast<uint32_t>(k == 0 ? 0 : k - 1);
  }
  using Entry = std::pair<uint32_t, uint32_t>;  // (rank, node): min rank, then leftmost
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap;
  auto pair_rank = [&](uint32_t node) {
    const uint32_t b = next[node];
    if (b >= n) return kNoRank;
    const uint32_t c = next[b];
    return Rank(piece.substr(node, c - node));
  };
  for (uint32_t k = 0; k + 1 < n; ++k) {
    rank[k] = pair_rank(k);
    if (rank[k] != kNoRank) heap.emplace(rank[k], k);
  }
  size_t parts = n;
  while (!heap.empty()) {
    const auto [r, node] = heap.top();
    heap.pop();
    if (!alive[node] || rank[node] != r) continue;  // stale
    const uint32_t b = next[node];
    alive[b] = false;
    next[node] = next[b];
    prev[next[b]] = node;
    --parts;
    rank[node] = pair_rank(node);
    if (rank[node] != kNoRank) heap.emplace(rank[node], node);
    if (node > 0) {
      const uint32_t p = prev[node];
      rank[p] = pair_rank(p);
      if (rank[p] != kNoRank) heap.emplace(rank[p], p);
    }
  }
  if (out != nullptr) {
    for (uint32_t k = 0; k < n; k = next[k]) out->push_back(Rank(piece.substr(k, next[k] - k)));
  }
  return parts;
}

size_t Cl100kVocabulary::EncodePiece(std::string_view piece, std::vector<uint32_t>* out) const {
  const uint32_t whole = Rank(piece);
  if (whole != kNoRank) {
    if (out != nullptr) out->push_back(whole);
    return 1;
  }
  return piece.size() <= kSmallPiece ? MergeSmall(piece, out) : MergeLarge(piece, out);
}

size_t Cl100kVocabulary::Count(std::string_view text) const {
  size_t total = 0;
  ForEachCl100kPiece(text, [&](std::string_view piece) { total += EncodePiece(piece, nullptr); });
  return total;
}

std::vector<uint32_t> Cl100kVocabulary::Encode(std::string_view text) const {
  std::vector<uint32_t> out;
  ForEachCl100kPiece(text, [&](std::string_view piece) { EncodePiece(piece, &out); });
  return out;
}

namespace {

// The file, mapped read-only with its pages read in at once (it is read
// whole, and a page fault each costs a short-lived process more).
struct MappedFile {
  MappedFile() = default;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile() {
    if (addr != MAP_FAILED) munmap(addr, size);
  }
  std::string_view bytes() const {
    return addr == MAP_FAILED ? std::string_view() : std::string_view(static_cast<const char*>(addr), size);
  }
  void* addr = MAP_FAILED;
  size_t size = 0;
};

// Where the text of the JSON string member `name` of `object` lies (its
// quotes excluded), when the member is there and its only escapes are
// "\n": such a text (bpe_ranks: base64, digits, spaces, line breaks) is
// read where it lies instead of unescaped into a copy of a megabyte.
std::optional<std::pair<size_t, size_t>> PlainStringMember(std::string_view object, std::string_view name) {
  const std::string key = "\"" + std::string(name) + "\"";
  size_t at = object.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  at += key.size();
  auto skip_space = [&] {
    while (at < object.size() && std::strchr(" \t\n\r", object[at]) != nullptr && object[at] != '\0') ++at;
  };
  skip_space();
  if (at >= object.size() || object[at] != ':') return std::nullopt;
  ++at;
  skip_space();
  if (at >= object.size() || object[at] != '"') return std::nullopt;
  const size_t begin = ++at;
  for (; at < object.size(); ++at) {
    const unsigned char c = static_cast<unsigned char>(object[at]);
    if (c == '"') return std::make_pair(begin, at);
    if (c < 0x20) return std::nullopt;
    if (c == '\\') {
      if (at + 1 >= object.size() || object[at + 1] != 'n') return std::nullopt;
      ++at;
    }
  }
  return std::nullopt;
}

}  // namespace

Result<std::shared_ptr<const Cl100kVocabulary>> Cl100kVocabulary::Load(const std::string& path) {
  MappedFile file;
  {
    OwnedFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    struct stat st;
    if (!fd.valid() || fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
      return Status::IoError("cannot read the cl100k vocabulary file " + path);
    }
    file.size = static_cast<size_t>(st.st_size);
    if (file.size > 0) file.addr = mmap(nullptr, file.size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd.get(), 0);
    if (file.size > 0 && file.addr == MAP_FAILED) {
      return Status::IoError("cannot read the cl100k vocabulary file " + path + ": " + std::strerror(errno));
    }
  }
  const std::string_view text = file.bytes();
  auto corrupt = [&](const std::string& what) {
    return Status::Corruption(path + " is not a cl100k_base ranks file of js-tiktoken: " + what);
  };
  // "export default {...};", "module.exports = {...};" or a bare JSON object.
  const size_t open = text.find('{');
  const size_t close = text.rfind('}');
  if (open == std::string::npos || close == std::string::npos || close < open) {
    return corrupt("no JSON object in it");
  }
  const std::string_view object = text.substr(open, close - open + 1);
  // bpe_ranks is read where it lies when it can be (its line breaks then
  // still escaped), the rest of the object parsed without it.
  std::string_view bpe;
  std::string_view line_break = "\n";
  std::string unescaped;
  nlohmann::json j;
  if (const auto plain = PlainStringMember(object, "bpe_ranks")) {
    std::string rest(object.substr(0, plain->first));
    rest.append(object.substr(plain->second));
    j = nlohmann::json::parse(rest, nullptr, /*allow_exceptions=*/false);
    bpe = object.substr(plain->first, plain->second - plain->first);
    line_break = "\\n";
  } else {
    j = nlohmann::json::parse(object, nullptr, /*allow_exceptions=*/false);
  }
  if (j.is_discarded() || !j.is_object()) return corrupt("its object is not valid JSON");
  const auto pat = j.find("pat_str");
  if (pat == j.end() || !pat->is_string()) return corrupt("no \"pat_str\"");
  if (pat->get<std::string>() != kCl100kPattern) {
    return corrupt("its pre-tokenizer pattern (\"pat_str\") is not cl100k_base's");
  }
  const auto ranks = j.find("bpe_ranks");
  if (ranks == j.end() || !ranks->is_string()) return corrupt("no \"bpe_ranks\" text");
  if (bpe.data() == nullptr) {
    unescaped = ranks->get<std::string>();
    bpe = unescaped;
  }

  std::shared_ptr<Cl100kVocabulary> v(new Cl100kVocabulary());
  v->path_ = path;
  std::fill(std::begin(v->single_byte_), std::end(v->single_byte_), kNoRank);
  // Count the tokens first to size the table (load factor <= 0.8: 1 MB of
  // slots for cl100k's 100,256 tokens, a 1.7 MB table that every process
  // reads whole). At 0.5 (2.7 MB) Russian prose counts ~20% faster, its
  // pieces missing along shorter probe runs, but a search process that
  // loads the table saves 3% instead of 8% (bench/README.md).
  size_t tokens = 0;
  for (char c : bpe) tokens += c == ' ' ? 1 : 0;
  size_t slots = 1024;
  while (5 * (tokens + 2) > 4 * slots) slots *= 2;
  v->slots_.resize(slots);  // a fresh mapping: zero bytes, empty slots
  v->arena_.reserve(bpe.size());  // decoded tokens are shorter than their base64: never moves
  // Tokens enter the table kAhead tokens after they are decoded, their
  // slot prefetched meanwhile: each lands at a random place of 1 MB.
  struct Decoded {
    uint64_t hash;
    uint32_t offset, length, rank;
    std::string_view word;
  };
  constexpr size_t kAhead = 8;
  Decoded ahead[kAhead];
  size_t queued = 0;  // ahead[queued % kAhead] is the next free one once kAhead are queued
  auto enter = [&](const Decoded& d) { return v->Insert(d.offset, d.length, d.hash, d.rank); };
  std::string bytes;
  size_t line_start = 0;
  size_t line_no = 0;
  while (line_start < bpe.size()) {
    size_t line_end = bpe.find(line_break, line_start);
    if (line_end == std::string::npos) line_end = bpe.size();
    const std::string_view line(bpe.data() + line_start, line_end - line_start);
    line_start = line_end + line_break.size();
    ++line_no;
    if (line.empty()) continue;
    size_t field = 0;
    uint64_t rank = 0;
    size_t pos = 0;
    while (pos <= line.size()) {
      size_t sp = line.find(' ', pos);
      if (sp == std::string_view::npos) sp = line.size();
      const std::string_view word = line.substr(pos, sp - pos);
      pos = sp + 1;
      if (field == 0) {
        ++field;
        continue;  // a prefix js-tiktoken ignores
      }
      if (field == 1) {
        if (word.empty() || word.size() > 9 || !std::all_of(word.begin(), word.end(), [](char c) {
              return c >= '0' && c <= '9';
            })) {
          return corrupt("line " + std::to_string(line_no) + " has no first rank");
        }
        rank = std::stoull(std::string(word));
        ++field;
        continue;
      }
      if (word.empty()) continue;
      if (!DecodeBase64(word, &bytes) || bytes.empty() || bytes.size() > 0xFFFF) {
        return corrupt("token '" + std::string(word.substr(0, 40)) + "' is not base64");
      }
      if (rank > kMaxRank) return corrupt("rank out of range");
      if (bytes.size() == 1) {
        uint32_t& single = v->single_byte_[static_cast<unsigned char>(bytes[0])];
        if (single != kNoRank) return corrupt("token '" + std::string(word) + "' appears twice");
        single = static_cast<uint32_t>(rank);
      } else {
        if (5 * (v->entries_ + 2) > 4 * v->slots_.size()) return corrupt("more tokens than expected");
        if (bytes.size() > kMaxTokenBytes) {
          return corrupt("token '" + std::string(word.substr(0, 40)) + "' is longer than " +
                         std::to_string(kMaxTokenBytes) + " bytes");
        }
        Decoded d{HashBytes(bytes), static_cast<uint32_t>(v->arena_.size()), static_cast<uint32_t>(bytes.size()),
                  static_cast<uint32_t>(rank), word};
        v->arena_.append(bytes);
        __builtin_prefetch(&v->slots_[d.hash & (v->slots_.size() - 1)], 1);
        Decoded& slot = ahead[queued++ % kAhead];
        if (queued > kAhead && !enter(slot)) return corrupt("token '" + std::string(slot.word) + "' appears twice");
        slot = d;
      }
      ++v->entries_;
      ++rank;
    }
  }
  for (size_t i = queued > kAhead ? queued - kAhead : 0; i < queued; ++i) {
    if (!enter(ahead[i % kAhead])) return corrupt("token '" + std::string(ahead[i % kAhead].word) + "' appears twice");
  }
  for (uint32_t r : v->single_byte_) {
    if (r == kNoRank) return corrupt("a single byte has no token");
  }
  if (v->entries_ < 1000) return corrupt("only " + std::to_string(v->entries_) + " tokens");
  v->arena_data_ = v->arena_.data();
  v->arena_size_ = v->arena_.size();
  v->slot_data_ = v->slots_.data();
  v->slot_count_ = v->slots_.size();
  return std::shared_ptr<const Cl100kVocabulary>(std::move(v));
}

namespace {

// The prebuilt table's file: this header, the slots, the arena.
struct TableHeader {
  char magic[8];
  uint64_t source_size;
  uint64_t source_inode;
  int64_t source_mtime_ns;
  uint64_t entries;
  uint64_t slot_count;
  uint64_t arena_size;
  uint64_t checksum;  // TableChecksum of the slots and of the arena, combined
  uint32_t single_byte[256];
};
constexpr char kTableMagic[8] = {'M', 'S', 'P', 'C', 'L', 'T', '3', '\0'};

// The table's checksum: four independent lanes of 8 bytes (a quarter of
// HashBytes' serial chain; the table is 1.7 MB and mapped by every
// process), then the tail and the length.
uint64_t TableChecksum(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
  uint64_t lane[4] = {0x9E3779B97F4A7C15ull, 0xC2B2AE3D27D4EB4Full, 0x165667B19E3779F9ull, 0x27D4EB2F165667C5ull};
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    for (int k = 0; k < 4; ++k) {
      uint64_t w;
      std::memcpy(&w, p + i + 8 * k, 8);
      lane[k] = (lane[k] ^ w) * 0xFF51AFD7ED558CCDull;
      lane[k] ^= lane[k] >> 32;
    }
  }
  uint64_t h = HashBytes(s.substr(i)) ^ (n * 0x100000001B3ull);
  for (uint64_t l : lane) h = (h ^ l) * 0xC4CEB9FE1A85EC53ull, h ^= h >> 29;
  return h;
}

struct SourceStamp {
  uint64_t size, inode;
  int64_t mtime_ns;
};

std::optional<SourceStamp> StampOf(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  return SourceStamp{static_cast<uint64_t>(st.st_size), static_cast<uint64_t>(st.st_ino),
                     static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
}

}  // namespace

std::vector<std::string> Cl100kVocabulary::TablePaths(const std::string& path) {
  std::vector<std::string> out{path + ".msp-table"};
  std::string cache;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && xdg[0] == '/') {
    cache = xdg;
  } else if (const char* home = std::getenv("HOME"); home != nullptr && home[0] == '/') {
    cache = std::string(home) + "/.cache";
  }
  if (!cache.empty()) {
    char name[64];
    std::snprintf(name, sizeof(name), "/msp/cl100k-%016llx.msp-table",
                  static_cast<unsigned long long>(HashBytes(path)));
    out.push_back(cache + name);
  }
  return out;
}

Status Cl100kVocabulary::WriteTable(const std::string& source, const std::string& table) const {
  const std::optional<SourceStamp> stamp = StampOf(source);
  if (!stamp) return Status::IoError("cannot stat " + source);
  TableHeader h{};
  std::memcpy(h.magic, kTableMagic, sizeof(h.magic));
  h.source_size = stamp->size;
  h.source_inode = stamp->inode;
  h.source_mtime_ns = stamp->mtime_ns;
  h.entries = entries_;
  h.slot_count = slot_count_;
  h.arena_size = arena_size_;
  const std::string_view slots(reinterpret_cast<const char*>(slot_data_), slot_count_ * sizeof(Slot));
  const std::string_view arena(arena_data_, arena_size_);
  h.checksum = TableChecksum(slots) ^ (TableChecksum(arena) * 0x9E3779B97F4A7C15ull);
  std::memcpy(h.single_byte, single_byte_, sizeof(h.single_byte));
  const std::string tmp = table + ".tmp." + std::to_string(::getpid());
  OwnedFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!fd.valid()) return Status::IoError("cannot create " + tmp + ": " + std::strerror(errno));
  auto write_all = [&](std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = ::write(fd.get(), bytes.data(), bytes.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      bytes.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  };
  const bool ok = write_all(std::string_view(reinterpret_cast<const char*>(&h), sizeof(h))) && write_all(slots) &&
                  write_all(arena) && ::fsync(fd.get()) == 0;
  if (!ok || ::rename(tmp.c_str(), table.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return Status::IoError("cannot write " + table + ": " + std::strerror(err));
  }
  return Status::Ok();
}

Result<std::shared_ptr<const Cl100kVocabulary>> Cl100kVocabulary::LoadTable(const std::string& source,
                                                                           const std::string& table) {
  auto corrupt = [&](const std::string& what) { return Status::Corruption(table + ": " + what); };
  const std::optional<SourceStamp> stamp = StampOf(source);
  if (!stamp) return Status::IoError("cannot stat " + source);
  auto file = std::make_shared<MappedFile>();
  {
    OwnedFd fd(::open(table.c_str(), O_RDONLY | O_CLOEXEC));
    struct stat st;
    if (!fd.valid() || fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return corrupt("cannot be read");
    if (static_cast<size_t>(st.st_size) < sizeof(TableHeader)) return corrupt("shorter than its header");
    file->size = static_cast<size_t>(st.st_size);
    file->addr = mmap(nullptr, file->size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd.get(), 0);
    if (file->addr == MAP_FAILED) return corrupt("cannot be mapped");
  }
  const std::string_view bytes = file->bytes();
  TableHeader h;
  std::memcpy(&h, bytes.data(), sizeof(h));
  if (std::memcmp(h.magic, kTableMagic, sizeof(h.magic)) != 0) return corrupt("not a cl100k table");
  if (h.source_size != stamp->size || h.source_inode != stamp->inode || h.source_mtime_ns != stamp->mtime_ns) {
    return corrupt("made for another vocabulary file");
  }
  if (h.slot_count == 0 || (h.slot_count & (h.slot_count - 1)) != 0 || h.slot_count > (1u << 24) ||
      h.arena_size > (1u << 30) || h.entries < 1000 || 5 * h.entries > 4 * h.slot_count ||
      bytes.size() != sizeof(TableHeader) + h.slot_count * sizeof(Slot) + h.arena_size) {
    return corrupt("torn or of another layout");
  }
  const std::string_view slots = bytes.substr(sizeof(TableHeader), h.slot_count * sizeof(Slot));
  const std::string_view arena = bytes.substr(sizeof(TableHeader) + slots.size());
  if ((TableChecksum(slots) ^ (TableChecksum(arena) * 0x9E3779B97F4A7C15ull)) != h.checksum) return corrupt("checksum differs");
  std::shared_ptr<Cl100kVocabulary> v(new Cl100kVocabulary());
  v->path_ = source;
  v->entries_ = h.entries;
  std::memcpy(v->single_byte_, h.single_byte, sizeof(v->single_byte_));
  for (uint32_t r : v->single_byte_) {
    if (r == kNoRank) return corrupt("a single byte has no token");
  }
  v->slot_data_ = reinterpret_cast<const Slot*>(slots.data());
  v->slot_count_ = h.slot_count;
  v->arena_data_ = arena.data();
  v->arena_size_ = arena.size();
  // No slot reads outside the arena (one pass without branches: the
  // offsets and lengths are 32-bit, their sum cannot wrap in 64 bits).
  uint64_t beyond = 0;
  for (size_t i = 0; i < v->slot_count_; ++i) {
    const Slot& s = v->slot_data_[i];
    beyond |= static_cast<uint64_t>(s.offset) + s.length() > v->arena_size_;
  }
  if (beyond != 0) return corrupt("a slot points outside the arena");
  v->mapping_ = std::move(file);
  return std::shared_ptr<const Cl100kVocabulary>(std::move(v));
}

Result<std::shared_ptr<const Cl100kVocabulary>> Cl100kVocabulary::LoadShared(const std::string& path) {
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<const Cl100kVocabulary>>* cache =
      new std::map<std::string, std::shared_ptr<const Cl100kVocabulary>>();
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache->find(path);
  if (it != cache->end()) return it->second;
  const std::vector<std::string> tables = TablePaths(path);
  for (const std::string& table : tables) {
    Result<std::shared_ptr<const Cl100kVocabulary>> mapped = LoadTable(path, table);
    if (mapped.ok()) {
      (*cache)[path] = *mapped;
      return std::move(mapped).value();
    }
  }
  MSP_ASSIGN_OR_RETURN(std::shared_ptr<const Cl100kVocabulary> v, Load(path));
  // Best effort: where no table can be written, the next process parses again.
  for (const std::string& table : tables) {
    if (table != tables.front()) {  // the cache directory and its msp/
      const std::string dir = table.substr(0, table.rfind('/'));
      ::mkdir(dir.substr(0, dir.rfind('/')).c_str(), 0700);
      ::mkdir(dir.c_str(), 0700);
    }
    if (v->WriteTable(path, table).ok()) break;
  }
  (*cache)[path] = v;
  return v;
}

}  // namespace msp
