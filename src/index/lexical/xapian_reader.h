// Internal to index/lexical/: one read handle of the lexical index (a
// Xapian database, its query parser, the docid map) and what it keeps of
// the documents its searches returned.
#ifndef MSP_INDEX_LEXICAL_XAPIAN_READER_H_
#define MSP_INDEX_LEXICAL_XAPIAN_READER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <xapian.h>

#include "index/index.h"
#include "index/lexical/docid_map.h"
#include "index/lexical/xapian_document.h"

namespace msp::xapian_lexical {

// One read handle with its own parser: Xapian objects are not thread-safe
// (not even their reference counts), so nothing here is shared.
struct Reader {
  // `docids` (may be null): the process's copy of the docid map.
  Reader(const std::string& dir, const std::string& language, DocidMapCache* docids)
      : Reader(Xapian::Database(dir), dir, language, docids) {}
  // Over `database`, opened from `dir` (the one the index opened to check
  // its format, kept for the first read rather than opened twice).
  Reader(const Xapian::Database& database, const std::string& dir, const std::string& language,
         DocidMapCache* docids)
      : Reader(database, language) {
    in_memory = false;
    docid_map.emplace(dir + "/" + std::string(kDocidMapFile), docids);
  }
  // Over an open database (the in-memory one of a read-only index).
  Reader(const Xapian::Database& database, const std::string& language)
      : db(database), in_memory(true), stem(language), stopper(MakeStopper(language)) {
    parser.set_stemmer(stem);
    if (stopper) parser.set_stopper(stopper.get());
    // STEM_ALL with "Z" as the default prefix produces exactly the terms
    // STEM_ALL_Z indexing does, CJK n-grams included (STEM_ALL_Z in the
    // parser would leave those unprefixed).
    parser.set_stemming_strategy(Xapian::QueryParser::STEM_ALL);
    parser.add_prefix("", "Z");
    parser.set_default_op(Xapian::Query::OP_OR);
  }
  Xapian::Database db;
  bool in_memory = false;   // no revisions: nothing is cached
  uint64_t generation = 0;  // XapianLexicalIndex::generation_ when opened
  Xapian::Stem stem;
  std::unique_ptr<Xapian::SimpleStopper> stopper;
  Xapian::QueryParser parser;
  // What searches read of the documents they return (id, session, step),
  // by docid, for one revision of the database: every commit may replace
  // a document under its docid, so a new revision empties it.
  struct CachedDoc {
    std::string id;
    bool position_read = false;  // position holds the document's values
    EpisodePosition position;
    size_t passage_begin = 0, passage_end = 0;
  };
  Xapian::rev cached_revision = 0;
  std::unordered_map<Xapian::docid, CachedDoc> docs;
  // The docid -> id map beside the files (none in memory), and scratch.
  std::optional<DocidMapReader> docid_map;
  std::vector<uint32_t> lookup_docids;
  std::vector<DocidMapEntry> lookup_ids;
};

// Cached documents per reader, at most (then the cache starts over).
inline constexpr size_t kMaxCachedDocs = 100000;

// The ids and passages of the documents of `mset` not cached yet, from the
// docid map in one batch of reads, into r.docs (a version 1 map has no
// passages: those are read from the documents when `any_passages`);
// ReadDoc reads the document of any the map lacks.
void MapIds(Reader& r, const Xapian::MSet& mset, bool any_passages);

// What a search reads of the document at `it` (id, passage, and its
// session and step when `with_position`), cached by docid for the
// reader's revision.
const Reader::CachedDoc& ReadDoc(Reader& r, const Xapian::MSetIterator& it, bool with_position);

}  // namespace msp::xapian_lexical

#endif  // MSP_INDEX_LEXICAL_XAPIAN_READER_H_
