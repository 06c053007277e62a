// The lexical index on Xapian 1.4: BM25 over record text, with the visibility
// rules of MatchesQuery encoded as boolean terms and value ranges.
//
// The documents' layout is in xapian_document.h, the query a search builds
// in xapian_query.h, the read handles and what they cache in
// xapian_reader.h, Xapian's errors as a Status in xapian_status.h; this file
// holds the index itself: writing, opening, resetting, searching.
//
// Apply indexes `upserts` before removing `deletes`, so an id in both ends
// up removed.
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
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_set>
#include <utility>
#include <vector>

#include <xapian.h>

#include "index/index.h"
#include "index/lexical/docid_map.h"
#include "index/lexical/xapian_document.h"
#include "index/lexical/xapian_query.h"
#include "index/lexical/xapian_reader.h"
#include "index/lexical/xapian_status.h"
#include "util/data_file.h"
#include "util/passages.h"

namespace msp::xapian_lexical {
namespace {

// The most documents a session-restricted search returns.
constexpr Xapian::doccount kMaxSessionHits = 100000;
constexpr int kModifiedRetries = 100;  // each retry is a cheap reopen; busy writers need several
constexpr size_t kMaxIdleReaders = 8;

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

  void Warm(size_t max_bytes) override {
    if (in_memory_) return;
    (void)Read<int>("warm", [&](Reader& r) -> Result<int> {
      if (r.in_memory) return 0;  // a read-only index moved into memory: no map
      docid_cache_.Load(dir_ + "/" + std::string(kDocidMapFile), r.db.get_uuid(), r.db.get_lastdocid(), max_bytes);
      return 0;
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
          std::optional<Xapian::Document> doc = MakeDocument(m, generator, nullptr, date_terms_);
          if (doc) {
            db.replace_document(IdTerm(m.id), *doc);
          } else {
            db.delete_document(IdTerm(m.id));
          }
          continue;
        }
        db.delete_document(IdTerm(m.id));
        for (const TextSpan& p : passages) {
          if (std::optional<Xapian::Document> doc = MakeDocument(m, generator, &p, date_terms_))
            db.add_document(*doc);
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
    MSP_ASSIGN_OR_RETURN(auto found, Find(q, /*with_position=*/false, nullptr));
    std::vector<IndexHit> hits;
    hits.reserve(found.size());
    for (auto& h : found) hits.push_back(std::move(h.hit));
    return hits;
  }

  Result<std::vector<LexicalHit>> SearchEpisodes(const IndexQuery& q, LexicalRest* rest) override {
    return Find(q, /*with_position=*/true, rest);
  }

  // Creates the database if `dir` holds none yet; empties one of an older
  // format (catch-up then rebuilds it). Damaged files (or a file where the
  // folder should be) are left for the first use to report as Corruption,
  // which Reset() repairs: opening never fails on them. The files of a
  // creation that was killed (nothing in them) are set aside at once.
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
        if (probe.get_doccount() == 0 || probe.get_metadata(kFormatKey) == format_) {
          // The first read's reader: a short-lived process opens the
          // database once (reads reopen it first in any case).
          auto reader = std::make_unique<Reader>(probe, dir_, language_, &docid_cache_);
          std::lock_guard<std::mutex> lock(pool_mu_);
          reader->generation = generation_;
          idle_.push_back(std::move(reader));
          return Status::Ok();
        }
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
    if (created.code() != StatusCode::kCorruption) return created;
    // A process killed while creating the index (before Xapian's version
    // file was in place) leaves files that hold no database and never held
    // a document: started over now rather than reported at the first use.
    // Damage to an index that held documents is still left for that use.
    if (InterruptedCreation()) (void)Reset();  // if it fails, the first use reports the damage
    return Status::Ok();
  }

 private:
  // Whether dir_ holds what an interrupted creation leaves: no version file
  // (iamglass) and every table file empty.
  bool InterruptedCreation() const {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (fs::exists(dir_ + "/iamglass", ec) || ec) return false;
    // Stepped with error codes: Init must not throw on a directory it
    // cannot read (that is left for the first use, as other damage).
    for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
      if (it->path().extension() != ".glass") continue;
      std::error_code size_ec;
      if (it->file_size(size_ec) != 0 || size_ec) return false;
    }
    return !ec;
  }

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

  // The search behind Search and SearchEpisodes (see IndexQuery::sessions);
  // `rest` as SearchEpisodes'.
  Result<std::vector<LexicalHit>> Find(const IndexQuery& q, bool with_position, LexicalRest* rest) {
    if (rest != nullptr) *rest = LexicalRest{};
    if (q.limit <= 0) return std::vector<LexicalHit>{};
    return Read<std::vector<LexicalHit>>("search", [&](Reader& r) -> Result<std::vector<LexicalHit>> {
      // An index without episodes of sessions has no positions to read
      // (which would read each uncached hit's document).
      const bool sessions = r.db.get_value_freq(kSlotSession) > 0;
      const bool positions = with_position && sessions;
      if (rest != nullptr) *rest = LexicalRest{.complete = true, .max_score = 0.0, .sessions = sessions};
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
        auto it = mset.begin();
        double last_weight = 0.0;  // of the last document looked at
        for (; it != mset.end() && hits.size() < want; ++it) {
          const Reader::CachedDoc& d = ReadDoc(r, it, positions);
          last_weight = it.get_weight();
          if (passages && d.passage_end > 0 && !seen.insert(d.id).second) continue;
          hits.push_back(LexicalHit{IndexHit{d.id, last_weight}, positions ? d.position : EpisodePosition{},
                                    d.passage_begin, d.passage_end, query_match, {}});
        }
        // Documents past the last one looked at (ranked, so none weighs
        // more) are left out, unless the mset held every match.
        if (rest != nullptr && q.sessions.empty()) {
          rest->complete = it == mset.end() && mset.size() < fetch;
          rest->max_score = rest->complete ? 0.0 : last_weight;
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
    auto reader = std::make_unique<Reader>(dir_, language_, &docid_cache_);
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
  DocidMapCache docid_cache_;  // the readers' copy of the docid map, once Warm
  std::mutex pool_mu_;
  std::vector<std::unique_ptr<Reader>> idle_;  // guarded by pool_mu_
  uint64_t generation_ = 0;                     // Reset()s so far; guarded by pool_mu_
};

}  // namespace
}  // namespace msp::xapian_lexical

namespace msp {

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
  auto index = std::make_unique<xapian_lexical::XapianLexicalIndex>(dir, options, sync_commits, read_only, in_memory);
  MSP_RETURN_IF_ERROR(index->Init());
  return std::unique_ptr<LexicalIndex>(std::move(index));
}

}  // namespace msp
