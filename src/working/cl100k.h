// The cl100k_base tokenizer (OpenAI's GPT-3.5 / GPT-4 vocabulary), for exact
// token counts.
//
// msp ships no vocabulary: it reads the one the npm package js-tiktoken
// ships (dist/ranks/cl100k_base.js, .cjs, or the same object as .json), which
// scripts/deps.sh installs under data/tokenizer/. That file is a JavaScript
// module whose default export is {"pat_str", "special_tokens", "bpe_ranks"}:
// bpe_ranks is text of lines "<prefix> <first rank> <token> <token> ...", each
// token the base64 of its bytes, the ranks consecutive from <first rank>.
//
// Encoding is what tiktoken does with encode_ordinary: the text is cut into
// pieces by cl100k's pre-tokenizer pattern (hand-written here as a scanner,
// with the Unicode classes \p{L}, \p{N} and \s of src/working/
// unicode_classes.inc), then each piece is merged byte-pair by byte-pair,
// always the pair of lowest rank first (leftmost on ties). Special tokens
// ("<|endoftext|>") are counted as ordinary text. Bytes that are not valid
// UTF-8 are accepted: each such byte is a piece character of its own
// (punctuation class) and encodes by its byte token.
#ifndef MSP_WORKING_CL100K_H_
#define MSP_WORKING_CL100K_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "msp/status.h"
#include "util/populated_allocator.h"

namespace msp {

// The pattern the vocabulary file must declare (its "pat_str"): a file
// built for another pre-tokenizer is refused.
extern const std::string_view kCl100kPattern;

// The pre-tokenizer alone: calls `piece` with each piece of `text`, in order
// (the pieces concatenate to `text`).
template <typename Fn>
void ForEachCl100kPiece(std::string_view text, Fn&& piece);

// Byte-pair ranks of cl100k_base. Immutable after Load; thread-safe.
class Cl100kVocabulary {
 public:
  // Reads and checks a js-tiktoken ranks file. IoError when it cannot be
  // read; Corruption (naming the file and what is wrong) when it is not a
  // cl100k ranks file.
  static Result<std::shared_ptr<const Cl100kVocabulary>> Load(const std::string& path);
  // The vocabulary of `path`, loaded once per process and shared. The
  // parse takes tens of milliseconds, so its hash table is kept beside the
  // file (TablePath) and mapped in place by the next process; a missing,
  // stale or corrupt table is parsed anew and rewritten (best effort,
  // atomically), never an error.
  static Result<std::shared_ptr<const Cl100kVocabulary>> LoadShared(const std::string& path);
  // Where the table of the vocabulary `path` is kept, in order of
  // preference: `path` + ".msp-table", then (for a vocabulary in a place
  // the user cannot write, e.g. after `cmake --install`) in the user's
  // cache directory ($XDG_CACHE_HOME or ~/.cache, under msp/).
  static std::vector<std::string> TablePaths(const std::string& path);
  // Writes this vocabulary's table for `source` (the file it was loaded
  // from) to `table`, atomically (a temporary file renamed into place).
  Status WriteTable(const std::string& source, const std::string& table) const;
  // The vocabulary of the table `table` written for `source`, mapped in
  // place; Corruption when it is missing, torn, checksum-damaged or made
  // for another file (size, inode or time of `source` differ).
  static Result<std::shared_ptr<const Cl100kVocabulary>> LoadTable(const std::string& source, const std::string& table);

  // Token count of `text` (encode_ordinary(text).size()).
  size_t Count(std::string_view text) const;
  // The token ids (ranks) of `text`.
  std::vector<uint32_t> Encode(std::string_view text) const;
  // Tokens in the vocabulary (100256 for cl100k_base).
  size_t size() const { return entries_; }
  const std::string& path() const { return path_; }

 private:
  Cl100kVocabulary() = default;
  static constexpr uint32_t kNoRank = 0xFFFFFFFFu;
  // The rank of the byte string `bytes`, or kNoRank.
  uint32_t Rank(std::string_view bytes) const;
  // Enters the `length` bytes at `offset` of arena_ (whose HashBytes is
  // `hash`) with `rank`; false (nothing entered) when they are there already.
  bool Insert(uint32_t offset, uint32_t length, uint64_t hash, uint32_t rank);
  // Appends the ranks of one piece (when `out` is set) and returns how many.
  size_t EncodePiece(std::string_view piece, std::vector<uint32_t>* out) const;
  size_t MergeSmall(std::string_view piece, std::vector<uint32_t>* out) const;
  size_t MergeLarge(std::string_view piece, std::vector<uint32_t>* out) const;

  // A slot's key: the length and a tag of 6 hash bits (so a probe rarely
  // compares bytes that differ); what Rank looks for among the slots.
  static uint32_t SlotKey(size_t length, uint64_t hash) {
    return static_cast<uint32_t>(length) << 24 | static_cast<uint32_t>(hash >> 58) << 18;
  }
  // 8 bytes: a process that maps the table reads it whole (its checksum),
  // so the table's size is what loading it costs.
  struct Slot {
    uint32_t offset = 0;  // into arena_
    uint32_t packed = 0;  // length (bits 24..31; 0: empty slot), tag (18..23), rank (0..17)
    uint32_t length() const { return packed >> 24; }
    uint32_t key() const { return packed & ~kMaxRank; }
    uint32_t rank() const { return packed & kMaxRank; }
  };
  static constexpr uint32_t kMaxRank = (1u << 18) - 1;  // what a slot can hold (o200k has 200,000)
  static constexpr size_t kMaxTokenBytes = 255;         // likewise
  // Both filled at once by a short-lived process's first count: their
  // pages are populated in one go (util/populated_allocator.h). The table
  // is sized once, from empty, in a fresh mapping whose zero bytes are
  // empty slots already: resizing it writes nothing.
  template <typename T>
  struct ZeroPages : PopulatedAllocator<T> {
    template <typename U>
    struct rebind {
      using other = ZeroPages<U>;
    };
    ZeroPages() = default;
    template <typename U>
    ZeroPages(const ZeroPages<U>&) {}  // NOLINT: allocators convert implicitly
    template <typename U>
    void construct(U*) noexcept {
      static_assert(std::is_trivially_copyable_v<U>, "zero bytes must be a valid value");
    }
  };
  using Arena = std::basic_string<char, std::char_traits<char>, PopulatedAllocator<char>>;
  std::string path_;
  Arena arena_;                             // every token's bytes, back to back
  std::vector<Slot, ZeroPages<Slot>> slots_;  // open addressing, power-of-two size
  size_t entries_ = 0;
  uint32_t single_byte_[256] = {};  // rank of each one-byte token
  // What Rank reads: arena_ and slots_, or a mapped table (held by mapping_).
  const char* arena_data_ = nullptr;
  size_t arena_size_ = 0;
  const Slot* slot_data_ = nullptr;
  size_t slot_count_ = 0;
  std::shared_ptr<const void> mapping_;
};

// ---- implementation of the template --------------------------------------

namespace cl100k_internal {

enum class CharClass : uint8_t { kLetter, kNumber, kNewline, kSpace, kOther };

// The code point at text[i] (1..4 bytes, in *len; an invalid byte is one
// character of class kOther) and its class.
CharClass ClassAt(std::string_view text, size_t i, size_t* len, uint32_t* cp);

// The end of the piece that starts at `i` (i < text.size()).
size_t PieceEnd(std::string_view text, size_t i);

}  // namespace cl100k_internal

template <typename Fn>
void ForEachCl100kPiece(std::string_view text, Fn&& piece) {
  size_t i = 0;
  while (i < text.size()) {
    const size_t end = cl100k_internal::PieceEnd(text, i);
    piece(text.substr(i, end - i));
    i = end;
  }
}

}  // namespace msp

#endif  // MSP_WORKING_CL100K_H_
