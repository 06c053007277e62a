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

#include <cstddef>
#include <cstdint>
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

// Reads slots of one map: one per search thread (a Reader of the index).
class DocidMapReader {
 public:
  explicit DocidMapReader(std::string path) : path_(std::move(path)) {}

  // entries[i] = what the map holds of docids[i] (an empty id when it does
  // not hold it). `uuid` and `last_docid` are the database's as the caller
  // reads it. Never fails.
  void Lookup(std::string_view uuid, uint32_t last_docid, const std::vector<uint32_t>& docids,
              std::vector<DocidMapEntry>& entries);

 private:
  const std::string path_;
  OwnedFd fd_;
  FileReads reads_;
};

}  // namespace msp

#endif  // MSP_INDEX_LEXICAL_DOCID_MAP_H_
