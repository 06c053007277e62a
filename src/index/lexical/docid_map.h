// The lexical index's docid -> record id map (<index dir>/msp-docids), so
// that a search learns its candidates' record ids without reading each
// Xapian document's data (a B-tree lookup and a pread each: ~200 a search,
// a quarter of a short-lived search's system calls at 100,000 records).
//
// Layout: 64-byte slots; slot 0 is the header (magic, version, a hash of the
// database's UUID, the docids covered, a checksum), slot d holds docid d:
// a checksum of (docid, passage, id) seeded with the UUID's hash, the id's
// length, the id (at most kDocidMapMaxId bytes; a longer id has no slot),
// and where the document's passage lies in its record's text (0, 0: the
// document is the whole record), so that a search of a store with
// passages reads no document either. A version 1 map (no passages) is
// still read for its ids; the next write starts it over as version 2.
//
// Why slots are only ever appended: a docid's record id never changes
// within one database (a record is replaced through its id term, which
// keeps its docid and id; Xapian never reuses a docid; a reset makes a new
// database, with a new UUID, in a new folder). The writer brings the map up
// to the database's last docid after each commit, while it still holds
// Xapian's write lock: it writes the slots of the docids past the header's
// count, then the header. So when a writer opens the database the header
// never counts more docids than the database has, unless the database lost
// commits the map had seen (a power loss with unsynced commits): the
// writer then empties the map before its own commit hands those docids to
// other records (ForgetDocidMapAhead), and readers meanwhile ignore a
// header that counts more docids than their database has. Readers never trust the header's count: a slot
// counts only when its checksum matches, so a slot not written yet (a
// process killed between the commit and the map, or a writer still at
// it), torn, damaged or left from another database is simply not found,
// and the caller reads the document as before. A missing, stale or damaged
// file is therefore never an error, and the next write repairs it (a
// header that does not check, or that covers more docids than the database
// has, starts the map over).
#ifndef MSP_INDEX_LEXICAL_DOCID_MAP_H_
#define MSP_INDEX_LEXICAL_DOCID_MAP_H_

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

#include "index/vector/file_reads.h"
#include "util/owned_fd.h"

namespace Xapian {
class Database;
}

namespace msp {

inline constexpr size_t kDocidMapSlot = 64;
inline constexpr size_t kDocidMapMaxId = 47;
inline constexpr std::string_view kDocidMapFile = "msp-docids";

// Brings the map at `path` up to `db`'s last docid (see above). Best
// effort: a failure leaves the map as it was or partly written, which
// readers tell apart; it is never reported. Returns the docids written
// (for tests and measurements).
size_t CatchUpDocidMap(const std::string& path, const Xapian::Database& db) noexcept;

// Empties the map at `path` when its header counts more docids than `db`
// has (see above); the writer calls it before changing `db`. Best effort.
void ForgetDocidMapAhead(const std::string& path, const Xapian::Database& db) noexcept;

// What the map holds of one document.
struct DocidMapEntry {
  std::string id;               // empty: not held (the caller reads the document)
  bool passage_known = false;   // false in a version 1 map: read the document's
  uint32_t passage_begin = 0;   // the passage's bytes in the record's text;
  uint32_t passage_end = 0;     // both 0 for a whole record
};

// A long-lived process's copy of one map's slots in memory, shared by its
// search threads (a server's new question reads ~200 scattered slots: a
// third of a millisecond from the file, a few microseconds from here).
// It holds slot bytes as the file held them and is trusted no further: a
// lookup checks a copied slot exactly as one just read (its checksum is
// seeded with the database's UUID, so a slot of an earlier database, as
// after a reset, does not check and is read from the file again). A slot
// that checks is what the file still holds, since slots are never
// rewritten within one database. The one exception, a map ahead of a
// database that lost commits in a machine crash, is never copied: Load
// and Keep take slots only under a valid header that covers no more than
// the database has, and no process outlives such a crash.
class DocidMapCache {
 public:
  // Gives the copy a budget of `max_bytes` and copies the slots of the map
  // at `path` that its header covers, up to the budget, when the header is
  // valid for `uuid` and covers no more than `last_docid` (otherwise none:
  // a missing map, as a new store's, is copied as lookups read its slots).
  // Best effort.
  void Load(const std::string& path, std::string_view uuid, uint32_t last_docid, size_t max_bytes) noexcept;
  // Whether `docid`'s slot is copied; if so, its bytes into `out`.
  bool Get(uint32_t docid, char* out) const;
  // Copies a slot read from the file that checked, when within the budget.
  void Keep(uint32_t docid, const char* slot);
  // Whether Load gave it a budget (before that it holds and keeps nothing).
  bool active() const { return max_chunks_.load(std::memory_order_relaxed) > 0; }
  // The slots held (for tests and measurements).
  size_t held() const;

 private:
  static constexpr size_t kChunkSlots = 4096;  // 256 KB
  using Chunk = std::array<char, kChunkSlots * kDocidMapSlot>;

  mutable std::shared_mutex mu_;
  std::vector<std::unique_ptr<Chunk>> chunks_;  // chunk c: docids [c * kChunkSlots, ...)
  std::atomic<size_t> max_chunks_{0};           // 0 until Load: nothing kept
  size_t held_ = 0;
};

// Reads slots of one map: one per search thread (a Reader of the index),
// through the process's copy when it has one.
class DocidMapReader {
 public:
  explicit DocidMapReader(std::string path, DocidMapCache* cache = nullptr)
      : path_(std::move(path)), cache_(cache) {}

  // entries[i] = what the map holds of docids[i] (an empty id when it does
  // not hold it). `uuid` and `last_docid` are the database's as the caller
  // reads it. Never fails.
  void Lookup(std::string_view uuid, uint32_t last_docid, const std::vector<uint32_t>& docids,
              std::vector<DocidMapEntry>& entries);

 private:
  const std::string path_;
  DocidMapCache* const cache_;  // may be null
  OwnedFd fd_;
  FileReads reads_;
};

}  // namespace msp

#endif  // MSP_INDEX_LEXICAL_DOCID_MAP_H_
