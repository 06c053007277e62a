// The lexical index on Xapian 1.4: BM25 over record text, with the visibility
// rules of MatchesQuery encoded as boolean terms and value ranges.
//
// Layout of one document (one record, or one passage of a long record; a
// record whose text holds no word to index has none, see MakeDocument):
//   data           the record id
//   "Q" id         the unique id term (replace / delete by term)
//   "X?:" value    boolean filter terms, one family per prefix below (the
//                  tenant, tags and source even when empty; the other
//                  namespace parts only when set)
//   value slot 0   created_at, 8-byte order-preserving encoding
//   value slot 1   expires_at, same encoding; only when expires_at > 0
//   value slot 2   episodes of a session: the session key (the episode's
//                  namespace, Namespace::ToString), also as term "XN:" key
//   value slot 3   episodes of a session: the step number, time encoding
//   "XV:" level    the access level, only when above 0 (so the common
//                  unrestricted case adds no term and costs no filter)
//   value slot 4   a record longer than RetrievalOptions::passage_bytes is
//                  several documents, one per passage (util/passages.h),
//                  each with the terms above and its own text terms: its
//                  byte offsets into the text, two times encoded as below
//   value slot 5   such a record's id, the collapse key: a search returns
//                  each record once, by its best passage
//   text terms     TermGenerator with the stemmer and stop words: "Z" +
//                  stem of every word that is not a stop word, no positions
//   date terms     with RetrievalOptions::date_terms, when created_at is
//                  set: "Z" + the English month name
//                  ("Zmarch") and "Z" + the year ("Z2023"), so questions that
//                  name a month or a year match what happened then
//   metadata       "last_seq": the change sequence the index reflects;
//                  "format": the document layout (kFormat, "+dates" with
//                  date terms); an index of another layout is emptied when
//                  opened and rebuilt by catch-up
//
// Stems only, no positions, stop words dropped (STEM_ALL_Z, STOP_ALL): that
// indexes about 2.4x faster than raw terms with positions plus stems
// (STEM_SOME) and keeps the index small. The query parser stems every word
// the same way (also capitalised ones: a sentence-initial capital is no sign
// of a proper noun in what agents ask). A quoted phrase therefore matches as
// the AND of its words.
//
// Stop words: the English list below when the language is english, none
// otherwise. Apply indexes `upserts` before removing `deletes`, so an id in
// both ends up removed.
//
// Times are encoded exactly (big-endian, sign bit flipped) rather than with
// sortable_serialise(), which rounds int64 through double.
//
// Sharing: several LexicalIndex objects, in one process or several, may use
// one directory. A write opens the WritableDatabase (waiting for the lock),
// applies, commits and closes, so no writer holds the lock between calls.
// Readers are pooled Xapian::Database handles, reopened before every read;
// each keeps what it read of the documents it returned (id, session, step)
// until the database's revision changes. A search takes its candidates'
// ids from the docid map beside the files (docid_map.h: msp-docids in the
// index folder, brought up to date by every write), reading a document's
// data only for a docid the map does not hold.
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <xapian.h>

#include "index/index.h"
#include "index/lexical/docid_map.h"
#include "util/data_file.h"
#include "util/hash.h"
#include "util/passages.h"
#include "util/text.h"

namespace msp {
namespace {

constexpr Xapian::valueno kSlotCreatedAt = 0;
constexpr Xapian::valueno kSlotExpiresAt = 1;
constexpr Xapian::valueno kSlotSession = 2;
constexpr Xapian::valueno kSlotStep = 3;
constexpr char kLastSeqKey[] = "last_seq";
constexpr char kFormatKey[] = "format";
constexpr Xapian::valueno kSlotPassage = 4;
constexpr Xapian::valueno kSlotRecord = 5;
constexpr char kFormat[] = "5";  // 2: session key and step values; 3: access level terms; 4: passages;
                                 // 5: records without a word left out
// The most documents a session-restricted search returns.
constexpr Xapian::doccount kMaxSessionHits = 100000;
constexpr int kModifiedRetries = 100;  // each retry is a cheap reopen; busy writers need several
constexpr size_t kMaxIdleReaders = 8;

// Boolean term prefixes. Every prefix ends in ':' so that no value can make
// one family's term look like another's.
constexpr std::string_view kPrefixId = "Q";
constexpr std::string_view kPrefixTenant = "XT:";
constexpr std::string_view kPrefixUser = "XU:";
constexpr std::string_view kPrefixAgent = "XA:";
constexpr std::string_view kPrefixSession = "XS:";
constexpr std::string_view kPrefixMission = "XM:";
constexpr std::string_view kPrefixOperator = "XO:";
constexpr std::string_view kPrefixKind = "XK:";
constexpr std::string_view kPrefixLayer = "XL:";
constexpr std::string_view kPrefixTag = "XG:";
constexpr std::string_view kPrefixSource = "XR:";
constexpr std::string_view kPrefixCriticality = "XC:";
constexpr std::string_view kPrefixState = "XE:";
constexpr std::string_view kPrefixSessionKey = "XN:";
constexpr std::string_view kPrefixAccessLevel = "XV:";

// Xapian (glass) terms are at most 245 bytes. Longer values keep a prefix of
// themselves plus a 64-bit hash of the whole value.
constexpr size_t kMaxTermValue = 200;
constexpr size_t kKeptValuePrefix = 160;

// An English stop-word list: function words that carry no topic. "may" is
// not one: it names a month (see the date terms).
constexpr std::string_view kEnglishStopWords[] = {
    "a",        "about",   "above",   "after",   "again",    "against", "all",     "am",
    "an",       "and",     "any",     "are",     "as",       "at",      "be",      "because",
    "been",     "before",  "being",   "below",   "between",  "both",    "but",     "by",
    "can",      "could",   "did",     "do",      "does",     "doing",   "down",    "during",
    "each",     "few",     "for",     "from",    "further",  "had",     "has",     "have",
    "having",   "he",      "her",     "here",    "hers",     "herself", "him",     "himself",
    "his",      "how",     "i",       "if",      "in",       "into",    "is",      "it",
    "its",      "itself",  "just",    "me",      "more",     "most",    "my",      "myself",
    "no",       "nor",     "not",     "now",     "of",       "off",     "on",      "once",
    "only",     "or",      "other",   "ought",   "our",      "ours",    "ourselves", "out",
    "over",     "own",     "same",    "shall",   "she",      "should",  "so",      "some",
    "such",     "than",    "that",    "the",     "their",    "theirs",  "them",    "themselves",
    "then",     "there",   "these",   "they",    "this",     "those",   "through", "to",
    "too",      "under",   "until",   "up",      "very",     "was",     "we",      "were",
    "what",     "when",    "where",   "which",   "while",    "who",     "whom",    "why",
    "will",     "with",    "would",   "you",     "your",     "yours",   "yourself", "yourselves",
    "also",                "might",   "must",    "upon",     "via",     "yet",     "s",
    "t",        "d",       "ll",      "m",       "re",       "ve",      "don",     "doesn",
};

std::string Term(std::string_view prefix, std::string_view value) {
  std::string t(prefix);
  if (value.size() <= kMaxTermValue) {
    t.append(value);
    return t;
  }
  static constexpr char kHex[] = "0123456789abcdef";
  t.append(value.substr(0, kKeptValuePrefix));
  t.push_back('#');
  const uint64_t h = Fnv1a64(value);
  for (int shift = 60; shift >= 0; shift -= 4) t.push_back(kHex[(h >> shift) & 0xf]);
  return t;
}

std::string IdTerm(std::string_view id) { return Term(kPrefixId, id); }

constexpr std::string_view kMonthNames[] = {"january", "february", "march",     "april",   "may",      "june",
                                            "july",    "august",   "september", "october", "november", "december"};

// The session key of an episode of a session; empty for other records.
std::string SessionKey(const Memory& m) {
  if (m.kind != Kind::kEpisode || m.ns.session.empty()) return {};
  return m.ns.ToString();
}

// 8 bytes, big-endian, sign bit flipped: byte order equals int64 order.
std::string EncodeTime(int64_t t) {
  const uint64_t u = static_cast<uint64_t>(t) ^ (uint64_t{1} << 63);
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[7 - i] = static_cast<char>((u >> (8 * i)) & 0xff);
  return s;
}

int64_t DecodeTime(const std::string& s) {
  if (s.size() != 8) return 0;
  uint64_t u = 0;
  for (int i = 0; i < 8; ++i) u = (u << 8) | static_cast<unsigned char>(s[i]);
  return static_cast<int64_t>(u ^ (uint64_t{1} << 63));
}

bool IsEnglish(const std::string& language) { return language == "english" || language == "en"; }

std::unique_ptr<Xapian::SimpleStopper> MakeStopper(const std::string& language) {
  if (!IsEnglish(language)) return nullptr;
  auto stopper = std::make_unique<Xapian::SimpleStopper>();
  for (std::string_view w : kEnglishStopWords) stopper->add(std::string(w));
  return stopper;
}

// `text` restricted to what MatchesQuery lets `q` see. Filters that every
// document passes are left out (a term every document holds, such as the
// one tenant or user of a single-user index; no expiring or superseded
// records), so the common case costs nothing over the text query: a filter
// term held by all 10,000 documents cost about 0.14 M instructions a search.
// Expired and superseded records are cut with AND_NOT over short lists: only
// expiring documents have a value in the expiry slot.
Xapian::Query Restrict(const Xapian::Database& db, const Xapian::Query& text, const IndexQuery& q) {
  const Xapian::doccount docs = db.get_doccount();
  std::vector<Xapian::Query> must;
  auto term = [&](std::string_view prefix, std::string_view v) {
    std::string t = Term(prefix, v);
    if (db.get_termfreq(t) != docs) must.emplace_back(std::move(t));
  };
  const Namespace& s = q.scope;
  term(kPrefixTenant, s.tenant);  // the tenant always counts
  auto part = [&](std::string_view prefix, const std::string& v) {
    if (!v.empty()) term(prefix, v);
  };
  part(kPrefixUser, s.user);
  part(kPrefixAgent, s.agent);
  part(kPrefixSession, s.session);
  part(kPrefixMission, s.mission);
  part(kPrefixOperator, s.operator_id);

  auto any_of = [&](std::string_view prefix, const auto& values, auto name) {
    if (values.empty()) return;
    std::vector<Xapian::Query> alternatives;
    for (const auto& v : values) {
      std::string t = Term(prefix, name(v));
      if (db.get_termfreq(t) == docs) return;  // every document passes
      alternatives.emplace_back(std::move(t));
    }
    must.emplace_back(Xapian::Query::OP_OR, alternatives.begin(), alternatives.end());
  };
  const SearchFilter& f = q.filter;
  any_of(kPrefixKind, f.kinds, [](Kind k) { return KindName(k); });
  any_of(kPrefixLayer, f.layers, [](Layer l) { return LayerName(l); });
  any_of(kPrefixTag, f.tags, [](const std::string& t) { return std::string_view(t); });
  any_of(kPrefixSource, f.sources, [](const std::string& t) { return std::string_view(t); });
  any_of(kPrefixCriticality, f.criticalities, [](Criticality c) { return CriticalityName(c); });

  if (f.created_from != 0) {
    must.emplace_back(Xapian::Query::OP_VALUE_GE, kSlotCreatedAt, EncodeTime(f.created_from));
  }
  if (f.created_to != 0) {  // exclusive: created_at <= created_to - 1
    if (f.created_to == INT64_MIN) return Xapian::Query::MatchNothing;
    must.emplace_back(Xapian::Query::OP_VALUE_LE, kSlotCreatedAt, EncodeTime(f.created_to - 1));
  }

  Xapian::Query out = text;
  if (!must.empty()) {
    out = Xapian::Query(Xapian::Query::OP_FILTER, out,
                        Xapian::Query(Xapian::Query::OP_AND, must.begin(), must.end()));
  }
  // Exclusions, only those some document matches.
  std::vector<Xapian::Query> must_not;
  auto exclude = [&](std::string t) {
    if (db.get_termfreq(t) > 0) must_not.emplace_back(std::move(t));
  };
  // Expired: 0 < expires_at <= now (documents that never expire have no value).
  if (q.now > 0 && db.get_value_freq(kSlotExpiresAt) > 0) {
    must_not.emplace_back(Xapian::Query::OP_VALUE_LE, kSlotExpiresAt, EncodeTime(q.now));
  }
  if (!f.include_superseded) exclude(Term(kPrefixState, RecordStateName(RecordState::kSuperseded)));
  if (f.max_access_level) {
    for (int level = std::max(*f.max_access_level + 1, 1); level <= kMaxAccessLevel; ++level) {
      exclude(Term(kPrefixAccessLevel, std::to_string(level)));
    }
  }
  if (!must_not.empty()) {
    out = Xapian::Query(Xapian::Query::OP_AND_NOT, out,
                        Xapian::Query(Xapian::Query::OP_OR, must_not.begin(), must_not.end()));
  }
  return out;
}

// True when the system error behind `e` (if any) is `err`.
bool SystemErrorIs(const Xapian::Error& e, int err) {
  const char* sys = e.get_error_string();
  return sys != nullptr && std::string_view(sys) == std::strerror(err);
}

// True when `e` says the index's files are damaged or gone (a truncated or
// garbled table, a junk revision file, a deleted folder, a file where the
// folder should be): what a rebuild from the store repairs. A failure of
// the system (a full disk, permissions, an I/O error) is not damage.
bool IsDamage(const Xapian::Error& e) {
  const std::string type = e.get_type();
  if (type == "DatabaseCorruptError" || type == "DatabaseVersionError") return true;
  if (type != "DatabaseError" && type != "DatabaseOpeningError" && type != "DatabaseNotFoundError") return false;
  const char* sys = e.get_error_string();
  if (sys == nullptr || *sys == '\0') return true;  // the data itself is wrong ("EOF reading block 0")
  return SystemErrorIs(e, ENOENT) || SystemErrorIs(e, ENOTDIR);
}

// Damage is Corruption (LexicalIndex::Reset repairs it), a full disk
// DiskFull, a writer's lock Unavailable, anything else IoError.
Status FromXapian(const std::string& dir, const char* op, const Xapian::Error& e) {
  std::string msg = "lexical index " + dir + ": " + op + ": " + e.get_type() + ": " + e.get_msg();
  if (!e.get_context().empty()) msg += " (" + e.get_context() + ")";
  if (e.get_error_string() != nullptr && *e.get_error_string() != '\0') msg += ": " + std::string(e.get_error_string());
  const std::string type = e.get_type();
  if (type == "DatabaseLockError") return Status::Unavailable(msg + "; another writer holds the lock, retry");
  if (IsDamage(e)) return Status::Corruption(msg + "; the index is damaged: it is set aside and rebuilt from the store");
  if (SystemErrorIs(e, ENOSPC) || SystemErrorIs(e, EDQUOT)) {
    return Status::DiskFull(msg + "; the disk is full: free space and retry");
  }
  return Status::IoError(msg);
}

Result<int64_t> ParseSeq(const std::string& dir, const std::string& s) {
  if (s.empty()) return int64_t{0};
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < 0) {
    return Status::Corruption("lexical index " + dir + ": bad last_seq metadata '" + s +
                              "'; the index is damaged: it is set aside and rebuilt from the store");
  }
  return v;
}

// One read handle with its own parser: Xapian objects are not thread-safe
// (not even their reference counts), so nothing here is shared.
struct Reader {
  Reader(const std::string& dir, const std::string& language) : Reader(Xapian::Database(dir), language) {
    in_memory = false;
    docid_map.emplace(dir + "/" + std::string(kDocidMapFile));
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
  std::vector<std::string> lookup_ids;
};

// Cached documents per reader, at most (then the cache starts over).
constexpr size_t kMaxCachedDocs = 100000;

class XapianLexicalIndex final : public LexicalIndex {
 public:
  XapianLexicalIndex(std::string dir, const RetrievalOptions& options, bool sync_commits, bool read_only,
                     bool in_memory)
      : dir_(std::move(dir)),
        write_flags_(Xapian::DB_CREATE_OR_OPEN | Xapian::DB_RETRY_LOCK | (sync_commits ? 0 : Xapian::DB_NO_SYNC)),
        read_only_(read_only || in_memory),
        in_memory_(in_memory),
        language_(options.language),
        date_terms_(options.date_terms),
        k1_(options.bm25_k1),
        b_(options.bm25_b),
        passage_bytes_(options.passage_bytes > 0 ? options.passage_bytes : kDefaultPassageBytes),
        format_(std::string(kFormat) + (options.date_terms ? "+dates" : "") + "+p" + std::to_string(passage_bytes_)) {}

  Result<int64_t> AppliedSeq() override {
    return Read<int64_t>("applied_seq", [&](Reader& r) -> Result<int64_t> {
      return ParseSeq(dir_, r.db.get_metadata(kLastSeqKey));
    });
  }

  Result<int64_t> DocCount() override {
    return Read<int64_t>("doc_count", [](Reader& r) -> Result<int64_t> {
      return static_cast<int64_t>(r.db.get_doccount());
    });
  }

  Status Apply(const std::vector<Memory>& upserts, const std::vector<std::string>& deletes,
               int64_t up_to_seq) override {
    return Write("apply", [&](Xapian::WritableDatabase& db) -> Status {
      MSP_ASSIGN_OR_RETURN(int64_t applied, ParseSeq(dir_, db.get_metadata(kLastSeqKey)));
      if (applied >= up_to_seq) return Status::Ok();
      Xapian::Stem stem(language_);
      auto stopper = MakeStopper(language_);
      Xapian::TermGenerator generator;
      generator.set_stemmer(stem);
      if (stopper) generator.set_stopper(stopper.get());
      generator.set_stopper_strategy(Xapian::TermGenerator::STOP_ALL);
      generator.set_stemming_strategy(Xapian::TermGenerator::STEM_ALL_Z);
      generator.set_flags(Xapian::TermGenerator::FLAG_CJK_NGRAM);
      if (!read_only_) db.begin_transaction(/*flushed=*/true);  // the in-memory backend has none
      for (const Memory& m : upserts) {
        const std::vector<TextSpan> passages = SplitPassages(m.text, passage_bytes_);
        if (passages.empty()) {
          std::optional<Xapian::Document> doc = MakeDocument(m, generator, nullptr);
          if (doc) {
            db.replace_document(IdTerm(m.id), *doc);
          } else {
            db.delete_document(IdTerm(m.id));
          }
          continue;
        }
        db.delete_document(IdTerm(m.id));
        for (const TextSpan& p : passages) {
          if (std::optional<Xapian::Document> doc = MakeDocument(m, generator, &p)) db.add_document(*doc);
        }
      }
      for (const std::string& id : deletes) db.delete_document(IdTerm(id));
      db.set_metadata(kLastSeqKey, std::to_string(up_to_seq));
      db.set_metadata(kFormatKey, format_);
      if (!read_only_) db.commit_transaction();
      return Status::Ok();
    });
  }

  Status Clear() override {
    return Write("clear", [&](Xapian::WritableDatabase& db) -> Status {
      std::vector<Xapian::docid> ids;
      for (auto it = db.postlist_begin(""); it != db.postlist_end(""); ++it) ids.push_back(*it);
      if (!read_only_) db.begin_transaction(/*flushed=*/true);  // the in-memory backend has none
      for (Xapian::docid id : ids) db.delete_document(id);
      db.set_metadata(kLastSeqKey, "0");
      if (!read_only_) db.commit_transaction();
      return Status::Ok();
    });
  }

  Status Reset() override {
    std::lock_guard<std::mutex> lock(write_mu_);
    {
      std::lock_guard<std::mutex> pool(pool_mu_);
      idle_.clear();  // readers of the old files; those in use are dropped when released
      ++generation_;
    }
    if (read_only_) return ToMemoryLocked(/*copy_files=*/false);
    namespace fs = std::filesystem;
    const std::string aside = dir_ + ".set-aside";
    std::error_code ec;
    fs::remove_all(aside, ec);  // the one set aside before
    if (ec) return Status::IoError("lexical index " + dir_ + ": cannot remove " + aside + ": " + ec.message());
    if (fs::symlink_status(dir_, ec).type() != fs::file_type::not_found) {
      fs::rename(dir_, aside, ec);
      if (ec) return Status::IoError("lexical index " + dir_ + ": cannot move it aside to " + aside + ": " + ec.message());
    }
    CreatePrivateDirectories(dir_, ec);
    if (ec) return Status::IoError("lexical index " + dir_ + ": cannot create directory: " + ec.message());
    try {
      Xapian::WritableDatabase db(dir_, write_flags_);
      db.set_metadata(kFormatKey, format_);
      db.commit();
      db.close();
    } catch (const Xapian::Error& e) {
      return FromXapian(dir_, "reset", e);
    }
    return Status::Ok();
  }

  Result<std::vector<IndexHit>> Search(const IndexQuery& q) override {
    MSP_ASSIGN_OR_RETURN(auto found, Find(q, /*with_position=*/false));
    std::vector<IndexHit> hits;
    hits.reserve(found.size());
    for (auto& h : found) hits.push_back(std::move(h.hit));
    return hits;
  }

  Result<std::vector<LexicalHit>> SearchEpisodes(const IndexQuery& q) override {
    return Find(q, /*with_position=*/true);
  }

  // Creates the database if `dir` holds none yet; empties one of an older
  // format (catch-up then rebuilds it). Damaged files (or a file where the
  // folder should be) are left for the first use to report as Corruption,
  // which Reset() repairs: opening never fails on them.
  Status Init() {
    if (in_memory_) {
      std::lock_guard<std::mutex> lock(write_mu_);
      return ToMemoryLocked(/*copy_files=*/false);
    }
    if (read_only_) return InitReadOnly();
    std::error_code ec;
    CreatePrivateDirectories(dir_, ec);
    if (ec) return Status::Ok();  // something else is in the way: see above
    for (int attempt = 0;; ++attempt) {
      try {
        Xapian::Database probe(dir_);
        if (probe.get_doccount() == 0 || probe.get_metadata(kFormatKey) == format_) return Status::Ok();
        probe.close();
        MSP_RETURN_IF_ERROR(Clear());
        return Write("format", [this](Xapian::WritableDatabase& db) {
          db.set_metadata(kFormatKey, format_);
          return Status::Ok();
        });
      } catch (const Xapian::DatabaseOpeningError&) {
        break;  // no database yet (or another process is creating it): create it
      } catch (const Xapian::DatabaseModifiedError& e) {
        // Other processes committed twice while we read: read again.
        if (attempt >= kModifiedRetries) return FromXapian(dir_, "open", e);
      } catch (const Xapian::Error& e) {
        if (IsDamage(e)) return Status::Ok();
        return FromXapian(dir_, "open", e);
      }
    }
    const Status created = Write("create", [this](Xapian::WritableDatabase& db) {
      if (db.get_doccount() == 0) db.set_metadata(kFormatKey, format_);
      return Status::Ok();
    });
    return created.code() == StatusCode::kCorruption ? Status::Ok() : created;
  }

 private:
  // Init of a read-only index: the files as they are when they hold an
  // index of this format (damage is left for the first use to report);
  // otherwise an empty index in memory.
  Status InitReadOnly() {
    try {
      Xapian::Database probe(dir_);
      if (probe.get_doccount() == 0 || probe.get_metadata(kFormatKey) == format_) return Status::Ok();
    } catch (const Xapian::Error& e) {
      if (IsDamage(e) && std::filesystem::exists(dir_)) return Status::Ok();
    }
    std::lock_guard<std::mutex> lock(write_mu_);
    return ToMemoryLocked(/*copy_files=*/false);
  }

  // A read-only index moves into memory: a new in-memory database, holding
  // a copy of the files' documents and change number when `copy_files`
  // and they can be read (empty otherwise: the caller's catch-up replays
  // everything). A no-op once in memory, unless !copy_files (Reset), which
  // starts it empty again. REQUIRES: write_mu_ held.
  Status ToMemoryLocked(bool copy_files) {
    {
      std::lock_guard<std::mutex> lock(memory_mu_);
      if (memory_ && copy_files) return Status::Ok();
    }
    try {
      Xapian::WritableDatabase memory(std::string(), Xapian::DB_BACKEND_INMEMORY);
      memory.set_metadata(kFormatKey, format_);
      if (copy_files) {
        try {
          Xapian::Database files(dir_);
          if (files.get_metadata(kFormatKey) == format_) {
            for (auto it = files.postlist_begin(""); it != files.postlist_end(""); ++it) {
              memory.replace_document(*it, files.get_document(*it));
            }
            memory.set_metadata(kLastSeqKey, files.get_metadata(kLastSeqKey));
          }
        } catch (const Xapian::Error&) {
          memory = Xapian::WritableDatabase(std::string(), Xapian::DB_BACKEND_INMEMORY);  // unreadable: start empty
          memory.set_metadata(kFormatKey, format_);
        }
      }
      memory.commit();
      std::lock_guard<std::mutex> lock(memory_mu_);
      memory_ = std::move(memory);
    } catch (const Xapian::Error& e) {
      return FromXapian(dir_, "copy into memory", e);
    }
    return Status::Ok();
  }

  // The ids of the documents of `mset` not cached yet, from the docid map
  // in one batch of reads, into r.docs (with their passage when
  // `any_passages`); ReadDoc reads the document of any the map lacks.
  static void MapIds(Reader& r, const Xapian::MSet& mset, bool any_passages) {
    if (!r.docid_map) return;
    r.lookup_docids.clear();
    for (auto it = mset.begin(); it != mset.end(); ++it) {
      if (!r.docs.contains(*it)) r.lookup_docids.push_back(*it);
    }
    if (r.lookup_docids.empty()) return;
    r.docid_map->Lookup(r.db.get_uuid(), r.db.get_lastdocid(), r.lookup_docids, r.lookup_ids);
    for (size_t i = 0; i < r.lookup_docids.size(); ++i) {
      if (r.lookup_ids[i].empty()) continue;
      Reader::CachedDoc d;
      d.id = std::move(r.lookup_ids[i]);
      if (any_passages) {
        ReadPassage(r.db.get_document(r.lookup_docids[i], Xapian::DOC_ASSUME_VALID), d);
      }
      r.docs.emplace(r.lookup_docids[i], std::move(d));
    }
  }

  static void ReadPassage(const Xapian::Document& doc, Reader::CachedDoc& d) {
    const std::string passage = doc.get_value(kSlotPassage);
    if (passage.size() == 16) {
      d.passage_begin = static_cast<size_t>(DecodeTime(passage.substr(0, 8)));
      d.passage_end = static_cast<size_t>(DecodeTime(passage.substr(8)));
    }
  }

  // What a search reads of the document at `it` (id, passage, and its
  // session and step when `with_position`), cached by docid for the
  // reader's revision.
  static const Reader::CachedDoc& ReadDoc(Reader& r, const Xapian::MSetIterator& it, bool with_position) {
    auto [at, inserted] = r.docs.try_emplace(*it);
    Reader::CachedDoc& d = at->second;
    if (!inserted && (d.position_read || !with_position)) return d;
    try {
      const Xapian::Document doc = r.db.get_document(*it, Xapian::DOC_ASSUME_VALID);
      if (inserted) {
        d.id = doc.get_data();
        ReadPassage(doc, d);
      }
      if (with_position) {
        d.position.session = doc.get_value(kSlotSession);
        if (!d.position.session.empty()) d.position.step = DecodeTime(doc.get_value(kSlotStep));
        d.position_read = true;
      }
    } catch (...) {
      r.docs.erase(at);  // never keep a half-read entry
      throw;
    }
    return d;
  }

  // LexicalHit::query_match of the best hit of `mset`: the share of the
  // query terms' idf that it holds.
  static double QueryMatch(const Xapian::Database& db, const Xapian::Enquire& enquire, const Xapian::MSet& mset,
                           const std::vector<std::string>& query_terms) {
    const double n = db.get_doccount();
    const std::vector<std::string> in_best(enquire.get_matching_terms_begin(mset.begin()),
                                           enquire.get_matching_terms_end(mset.begin()));
    double total = 0.0, matched = 0.0;
    for (const std::string& t : query_terms) {
      const double df = db.get_termfreq(t);
      const double weight = std::log(1.0 + (n - df + 0.5) / (df + 0.5));
      total += weight;
      if (std::find(in_best.begin(), in_best.end(), t) != in_best.end()) matched += weight;
    }
    return total > 0 ? matched / total : 0.0;
  }

  // The search behind Search and SearchEpisodes (see IndexQuery::sessions).
  Result<std::vector<LexicalHit>> Find(const IndexQuery& q, bool with_position) {
    if (q.limit <= 0) return std::vector<LexicalHit>{};
    return Read<std::vector<LexicalHit>>("search", [&](Reader& r) -> Result<std::vector<LexicalHit>> {
      Xapian::Query text = ParseText(r, q.text);
      std::vector<LexicalHit> hits;
      if (text.empty()) return hits;
      // With session_terms: the query's distinct terms, sorted, and their idf.
      const bool with_terms = with_position && q.session_terms && !q.sessions.empty();
      std::vector<std::string> terms;
      std::vector<double> idf;
      if (with_terms) {
        terms.assign(text.get_unique_terms_begin(), text.get_unique_terms_end());
        std::sort(terms.begin(), terms.end());
        terms.erase(std::unique(terms.begin(), terms.end()), terms.end());
        const double n = r.db.get_doccount();
        for (const std::string& t : terms) {
          const double df = r.db.get_termfreq(t);
          idf.push_back(std::log(1.0 + (n - df + 0.5) / (df + 0.5)));
        }
      }
      // The query's terms, for LexicalHit::query_match.
      std::vector<std::string> query_terms;
      if (q.sessions.empty()) query_terms.assign(text.get_unique_terms_begin(), text.get_unique_terms_end());
      Xapian::doccount limit = static_cast<Xapian::doccount>(q.limit);
      if (!q.sessions.empty()) {
        std::vector<Xapian::Query> keys;
        for (const std::string& k : q.sessions) keys.emplace_back(Term(kPrefixSessionKey, k));
        Xapian::Query in_sessions(Xapian::Query::OP_OR, keys.begin(), keys.end());
        text = q.session_terms ? Xapian::Query(Xapian::Query::OP_FILTER, text, in_sessions)
                               : Xapian::Query(Xapian::Query::OP_AND_MAYBE,
                                               Xapian::Query(Xapian::Query::OP_SCALE_WEIGHT, in_sessions, 0.0), text);
        limit = std::max(limit, kMaxSessionHits);
      }
      Xapian::Enquire enquire(r.db);
      enquire.set_query(Restrict(r.db, text, q));
      enquire.set_weighting_scheme(Xapian::BM25Weight(k1_, /*k2=*/0.0, /*k3=*/1.0, b_, /*min_normlen=*/0.5));
      if (with_terms) {  // every match, in docid order: no ranking needed
        enquire.set_weighting_scheme(Xapian::BoolWeight());
        enquire.set_docid_order(Xapian::Enquire::ASCENDING);
      }
      // Each record once, by its best passage: the first hit of each
      // record is kept. Records of several passages are the only documents
      // with a record key, so an index without any pays nothing; with some,
      // a ranked search reads twice `limit` documents, and more while
      // duplicates leave fewer than `limit` records (Xapian's collapse
      // key does the same but cost ~10x the search on LoCoMo).
      const bool any_passages = r.db.get_value_freq(kSlotRecord) > 0;
      const bool passages = !with_terms && any_passages;
      const size_t want = q.sessions.empty() ? limit : SIZE_MAX;
      Xapian::doccount fetch = passages && q.sessions.empty() ? 2 * limit : limit;
      Xapian::MSet mset;
      double query_match = 0.0;
      for (;;) {
        mset = enquire.get_mset(0, fetch);
        hits.clear();
        hits.reserve(mset.size());
        if (q.sessions.empty() && !mset.empty()) query_match = QueryMatch(r.db, enquire, mset, query_terms);
        const Xapian::rev revision = r.in_memory ? 0 : r.db.get_revision();
        if (r.in_memory || revision != r.cached_revision || r.docs.size() > kMaxCachedDocs) {
          r.docs.clear();
          r.cached_revision = revision;
        }
        MapIds(r, mset, any_passages);
        std::unordered_set<std::string_view> seen;  // views of r.docs' ids, stable while this runs
        for (auto it = mset.begin(); it != mset.end() && hits.size() < want; ++it) {
          const Reader::CachedDoc& d = ReadDoc(r, it, with_position);
          if (passages && d.passage_end > 0 && !seen.insert(d.id).second) continue;
          hits.push_back(LexicalHit{IndexHit{d.id, it.get_weight()}, with_position ? d.position : EpisodePosition{},
                                    d.passage_begin, d.passage_end, query_match, {}});
        }
        if (!passages || hits.size() >= want || mset.size() < fetch) break;
        fetch *= 4;
      }
      if (with_terms) {
        // Each term's posting list, skipped along the hits' ascending docids
        // (cheaper than reading each hit's term list).
        std::vector<Xapian::docid> docids;
        docids.reserve(mset.size());
        for (auto it = mset.begin(); it != mset.end(); ++it) docids.push_back(*it);
        for (size_t i = 0; i < terms.size(); ++i) {
          Xapian::PostingIterator p = r.db.postlist_begin(terms[i]);
          const Xapian::PostingIterator end = r.db.postlist_end(terms[i]);
          for (size_t h = 0; h < docids.size() && p != end; ++h) {
            p.skip_to(docids[h]);
            if (p != end && *p == docids[h]) {
              hits[h].terms.push_back(TermMatch{static_cast<uint32_t>(i), p.get_wdf(), idf[i]});
            }
          }
        }
      }
      return hits;
    });
  }

  // The document of `m`, or of its `passage` when not null (see the layout);
  // none when the text holds no word to index. Such a record (a retrieval
  // log, an event without text) can match no query, and left out it
  // cannot move the statistics every search reads: the document count, the
  // mean length and the date terms' frequencies behind BM25 and the
  // calibrated scores. So a search's scores depend on what is stored, not
  // on the searches before it, whose logs are such records.
  std::optional<Xapian::Document> MakeDocument(const Memory& m, Xapian::TermGenerator& generator,
                                               const TextSpan* passage) const {
    Xapian::Document doc;
    doc.set_data(m.id);
    doc.add_boolean_term(IdTerm(m.id));
    doc.add_boolean_term(Term(kPrefixTenant, m.ns.tenant));
    // Empty namespace parts need no term: a query filters only on parts it sets.
    auto part = [&](std::string_view prefix, const std::string& v) {
      if (!v.empty()) doc.add_boolean_term(Term(prefix, v));
    };
    part(kPrefixUser, m.ns.user);
    part(kPrefixAgent, m.ns.agent);
    part(kPrefixSession, m.ns.session);
    part(kPrefixMission, m.ns.mission);
    part(kPrefixOperator, m.ns.operator_id);
    doc.add_boolean_term(Term(kPrefixKind, KindName(m.kind)));
    doc.add_boolean_term(Term(kPrefixLayer, LayerName(m.layer)));
    for (const std::string& tag : m.tags) doc.add_boolean_term(Term(kPrefixTag, tag));
    doc.add_boolean_term(Term(kPrefixSource, m.source));
    doc.add_boolean_term(Term(kPrefixCriticality, CriticalityName(m.criticality)));
    doc.add_boolean_term(Term(kPrefixState, RecordStateName(m.state)));
    if (m.access_level > 0) {
      doc.add_boolean_term(Term(kPrefixAccessLevel, std::to_string(m.access_level)));
    }
    doc.add_value(kSlotCreatedAt, EncodeTime(m.created_at));
    if (m.expires_at > 0) doc.add_value(kSlotExpiresAt, EncodeTime(m.expires_at));
    const std::string session = SessionKey(m);
    if (!session.empty()) {
      doc.add_boolean_term(Term(kPrefixSessionKey, session));
      doc.add_value(kSlotSession, session);
      doc.add_value(kSlotStep, EncodeTime(m.step_number));
    }
    const Xapian::termcount boolean_terms = doc.termlist_count();
    generator.set_document(doc);
    if (passage != nullptr) {
      doc.add_value(kSlotPassage, EncodeTime(static_cast<int64_t>(passage->begin)) +
                                      EncodeTime(static_cast<int64_t>(passage->end)));
      doc.add_value(kSlotRecord, m.id);
      generator.index_text_without_positions(
          Xapian::Utf8Iterator(m.text.data() + passage->begin, passage->end - passage->begin));
    } else {
      generator.index_text_without_positions(m.text);
    }
    if (doc.termlist_count() == boolean_terms) return std::nullopt;  // no word
    if (date_terms_ && m.created_at > 0) {
      using namespace std::chrono;
      const year_month_day date{floor<days>(sys_time<milliseconds>(milliseconds(m.created_at)))};
      doc.add_term("Z" + std::string(kMonthNames[static_cast<unsigned>(date.month()) - 1]));
      doc.add_term("Z" + std::to_string(static_cast<int>(date.year())));
    }
    return doc;
  }

  // The user's text as a query. Never fails: on a syntax error the text is
  // stripped of punctuation and parsed as plain words. Returns an empty query
  // when nothing but stop words (or nothing at all) is left.
  Xapian::Query ParseText(Reader& r, const std::string& text) const {
    constexpr unsigned kFlags = Xapian::QueryParser::FLAG_DEFAULT | Xapian::QueryParser::FLAG_CJK_NGRAM;
    Xapian::Query query;
    try {
      query = r.parser.parse_query(text, kFlags);
    } catch (const Xapian::QueryParserError&) {
      std::string plain = text;
      for (char& c : plain) {
        const auto u = static_cast<unsigned char>(c);
        if (u < 0x80 && !((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))) c = ' ';
      }
      try {
        query = r.parser.parse_query(plain, Xapian::QueryParser::FLAG_CJK_NGRAM);
      } catch (const Xapian::QueryParserError&) {
        return Xapian::Query();
      }
    }
    if (query.empty() || !r.stopper) return query;
    // QueryParser puts stop words back when the query has nothing else; we
    // want no hits then.
    for (auto t = query.get_unique_terms_begin(); t != query.get_unique_terms_end(); ++t) {
      const std::string term = *t;
      bool all_stop = true;
      bool any_word = false;
      for (auto w = r.parser.unstem_begin(term); w != r.parser.unstem_end(term); ++w) {
        any_word = true;
        if (!(*r.stopper)(AsciiLower(*w))) all_stop = false;
      }
      if (!any_word) all_stop = (*r.stopper)(term);
      if (!all_stop) return query;
    }
    return Xapian::Query();
  }

  // Runs `fn` on a pooled reader, reopened first; retries when a writer
  // moved the database on under it.
  template <typename T, typename Fn>
  Result<T> Read(const char* op, Fn&& fn) {
    if (read_only_) {
      std::lock_guard<std::mutex> lock(memory_mu_);
      if (memory_) {
        try {
          Reader reader(*memory_, language_);
          return fn(reader);
        } catch (const Xapian::Error& e) {
          return FromXapian(dir_, op, e);
        } catch (const std::exception& e) {
          return Status::Internal("lexical index " + dir_ + " (in memory): " + op + ": " + e.what());
        }
      }
    }
    std::unique_ptr<Reader> reader;
    Result<T> result = Status::Internal("unreached");
    try {
      for (int attempt = 0;; ++attempt) {
        try {
          // Opening can meet a revision that concurrent commits just
          // discarded, as reading can: both are retried.
          if (!reader) reader = AcquireReader();
          reader->db.reopen();
          result = fn(*reader);
          break;
        } catch (const Xapian::DatabaseModifiedError& e) {
          if (attempt >= kModifiedRetries) {
            result = FromXapian(dir_, op, e);
            break;
          }
        }
      }
    } catch (const Xapian::Error& e) {
      return FromXapian(dir_, op, e);  // drop the reader: it may be broken
    } catch (const std::exception& e) {
      return Status::Internal("lexical index " + dir_ + ": " + op + ": " + e.what());
    }
    ReleaseReader(std::move(reader));
    return result;
  }

  std::unique_ptr<Reader> AcquireReader() {
    {
      std::lock_guard<std::mutex> lock(pool_mu_);
      if (!idle_.empty()) {
        auto r = std::move(idle_.back());
        idle_.pop_back();
        return r;
      }
    }
    uint64_t generation = 0;
    {
      std::lock_guard<std::mutex> lock(pool_mu_);
      generation = generation_;
    }
    auto reader = std::make_unique<Reader>(dir_, language_);
    reader->generation = generation;
    return reader;
  }

  void ReleaseReader(std::unique_ptr<Reader> r) {
    std::lock_guard<std::mutex> lock(pool_mu_);
    if (r && r->generation == generation_ && idle_.size() < kMaxIdleReaders) idle_.push_back(std::move(r));
  }

  // Opens the writer (waiting for another process's), runs `fn`, commits
  // and closes. On error an open transaction is cancelled by the close.
  template <typename Fn>
  Status Write(const char* op, Fn&& fn) {
    std::lock_guard<std::mutex> lock(write_mu_);
    if (read_only_) {
      MSP_RETURN_IF_ERROR(ToMemoryLocked(/*copy_files=*/true));
      std::lock_guard<std::mutex> memory_lock(memory_mu_);
      try {
        Status s = fn(*memory_);
        if (s.ok()) memory_->commit();
        return s;
      } catch (const Xapian::Error& e) {
        return FromXapian(dir_, op, e);
      } catch (const std::exception& e) {
        return Status::Internal("lexical index " + dir_ + " (in memory): " + op + ": " + e.what());
      }
    }
    try {
      Xapian::WritableDatabase db(dir_, write_flags_);
      const std::string docid_map = dir_ + "/" + std::string(kDocidMapFile);
      ForgetDocidMapAhead(docid_map, db);
      Status s = fn(db);
      if (s.ok()) {
        db.commit();
        CatchUpDocidMap(docid_map, db);  // still under the write lock
      }
      db.close();
      return s;
    } catch (const Xapian::Error& e) {
      return FromXapian(dir_, op, e);
    } catch (const std::exception& e) {
      return Status::Internal("lexical index " + dir_ + ": " + op + ": " + e.what());
    }
  }

  const std::string dir_;
  const int write_flags_;  // for each WritableDatabase: DB_NO_SYNC unless commits are synced
  const bool read_only_;  // see OpenLexicalIndex (also set when in_memory_)
  const bool in_memory_;  // never reads or writes dir_
  const std::string language_;
  const bool date_terms_;
  const double k1_;  // BM25 parameters (RetrievalOptions::bm25_k1, bm25_b)
  const double b_;
  const size_t passage_bytes_;  // RetrievalOptions::passage_bytes, or the default
  const std::string format_;
  std::mutex write_mu_;  // one writer per object; Xapian's lock orders processes
  // A read-only index once it has been written to: every read and write
  // of it holds memory_mu_ (Xapian objects are not thread-safe).
  std::mutex memory_mu_;
  std::optional<Xapian::WritableDatabase> memory_;  // guarded by memory_mu_
  std::mutex pool_mu_;
  std::vector<std::unique_ptr<Reader>> idle_;  // guarded by pool_mu_
  uint64_t generation_ = 0;                     // Reset()s so far; guarded by pool_mu_
};

}  // namespace

Result<std::unique_ptr<LexicalIndex>> OpenLexicalIndex(const std::string& dir, const RetrievalOptions& options,
                                                       bool sync_commits, bool read_only, bool in_memory) {
  if (dir.empty()) return Status::InvalidArgument("lexical index directory is empty");
  try {
    Xapian::Stem check(options.language);
  } catch (const Xapian::Error&) {
    return Status::InvalidArgument("unknown retrieval language '" + options.language +
                                   "'; use one of: " + Xapian::Stem::get_available_languages());
  }
  if (!(options.bm25_k1 >= 0) || !(options.bm25_b >= 0 && options.bm25_b <= 1)) {
    return Status::InvalidArgument("retrieval.bm25_k1 must be >= 0 and retrieval.bm25_b between 0 and 1");
  }
  auto index = std::make_unique<XapianLexicalIndex>(dir, options, sync_commits, read_only, in_memory);
  MSP_RETURN_IF_ERROR(index->Init());
  return std::unique_ptr<LexicalIndex>(std::move(index));
}

}  // namespace msp
