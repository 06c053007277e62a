#include "index/lexical/docid_map.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xapian.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "index/lexical/xapian_document.h"
#include "util/data_file.h"
#include "util/file_io.h"
#include "util/hash.h"

namespace msp {
namespace {

constexpr char kMagic[8] = {'M', 'S', 'P', 'D', 'O', 'C', 'I', 'D'};
constexpr uint32_t kVersion = 2;         // what CatchUpDocidMap writes: slots hold the passage
constexpr uint32_t kVersionIdsOnly = 1;  // still read (ids; passages from the documents)

struct Header {
  char magic[8];
  uint32_t version;
  uint32_t slot_bytes;
  uint64_t uuid_seed;
  uint64_t covered;  // docids 1..covered were written
  uint64_t reserved[3];
  uint64_t check;  // Checksum64 of the bytes before it
};
static_assert(sizeof(Header) == kDocidMapSlot);

// A version 2 slot. Version 1 slots have the same check and len, and the id
// in the 55 bytes after len (no passage).
struct Slot {
  uint64_t check;
  uint8_t len;  // 0: no id here
  char id[kDocidMapMaxId];
  uint32_t passage_begin;
  uint32_t passage_end;
};
static_assert(sizeof(Slot) == kDocidMapSlot);
constexpr size_t kIdOffset = offsetof(Slot, id);
constexpr size_t kVersion1MaxId = kDocidMapSlot - kIdOffset;

uint64_t UuidSeed(std::string_view uuid) { return Checksum64(uuid.data(), uuid.size(), 0x6d73702d646f6369ull); }

uint64_t HeaderCheck(const Header& h) { return Checksum64(&h, offsetof(Header, check)); }

uint64_t Version1SlotCheck(uint64_t seed, uint64_t docid, std::string_view id) {
  return Checksum64(id.data(), id.size(), Checksum64(&docid, sizeof docid, seed));
}

uint64_t SlotCheck(uint64_t seed, uint64_t docid, std::string_view id, uint32_t passage_begin,
                   uint32_t passage_end) {
  const uint64_t passage = (uint64_t{passage_begin} << 32) | passage_end;
  return Checksum64(id.data(), id.size(),
                    Checksum64(&passage, sizeof passage, Checksum64(&docid, sizeof docid, seed)));
}

// A header of either version.
bool HeaderValid(const Header& h, uint64_t seed) {
  return std::memcmp(h.magic, kMagic, sizeof kMagic) == 0 && (h.version == kVersion || h.version == kVersionIdsOnly) &&
         h.slot_bytes == kDocidMapSlot && h.uuid_seed == seed && h.check == HeaderCheck(h);
}

Header MakeHeader(uint64_t seed, uint64_t covered) {
  Header h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.version = kVersion;
  h.slot_bytes = kDocidMapSlot;
  h.uuid_seed = seed;
  h.covered = covered;
  h.check = HeaderCheck(h);
  return h;
}

}  // namespace

size_t CatchUpDocidMap(const std::string& path, const Xapian::Database& db) noexcept {
  try {
    const uint64_t last = db.get_lastdocid();
    const uint64_t seed = UuidSeed(db.get_uuid());
    OwnedFd fd(open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, kPrivateFileMode));
    if (fd.get() < 0) return 0;
    Header h{};
    uint64_t covered = 0;
    struct stat st;
    // A version 1 map starts over: its slots have no passages.
    if (fstat(fd.get(), &st) == 0 && ReadFileAt(fd.get(), 0, &h, sizeof h) && HeaderValid(h, seed) &&
        h.version == kVersion && h.covered <= last) {
      // A file cut short keeps the slots it still holds whole.
      covered = std::min<uint64_t>(h.covered, static_cast<uint64_t>(st.st_size) / kDocidMapSlot - 1);
    }
    if (covered == 0) {
      // Start over: nothing of an old or damaged map is kept.
      if (ftruncate(fd.get(), 0) != 0) return 0;
      const Header fresh = MakeHeader(seed, 0);
      if (!WriteFileAt(fd.get(), 0, &fresh, sizeof fresh)) return 0;
    }
    if (covered >= last) return 0;
    // The slots of (covered, last], a chunk at a time; docids without a
    // document (deleted, or never committed) stay zero.
    constexpr uint64_t kChunk = 4096;
    std::vector<Slot> chunk;
    size_t written = 0;
    Xapian::PostingIterator it = db.postlist_begin("");
    const Xapian::PostingIterator end = db.postlist_end("");
    it.skip_to(static_cast<Xapian::docid>(covered + 1));
    for (uint64_t first = covered + 1; first <= last; first += kChunk) {
      const uint64_t stop = std::min(last, first + kChunk - 1);
      chunk.assign(stop - first + 1, Slot{});
      for (; it != end && *it <= stop; ++it) {
        const uint64_t docid = *it;
        const Xapian::Document doc = db.get_document(*it, Xapian::DOC_ASSUME_VALID);
        const std::string id = doc.get_data();
        if (id.empty() || id.size() > kDocidMapMaxId) continue;
        const xapian_lexical::PassageSpan passage = xapian_lexical::PassageOf(doc);
        if (passage.begin < 0 || passage.end < 0 || passage.begin > UINT32_MAX || passage.end > UINT32_MAX) {
          continue;  // no slot: read from the document
        }
        Slot& s = chunk[docid - first];
        s.len = static_cast<uint8_t>(id.size());
        std::memcpy(s.id, id.data(), id.size());
        s.passage_begin = static_cast<uint32_t>(passage.begin);
        s.passage_end = static_cast<uint32_t>(passage.end);
        s.check = SlotCheck(seed, docid, id, s.passage_begin, s.passage_end);
        ++written;
      }
      if (!WriteFileAt(fd.get(), first * kDocidMapSlot, chunk.data(), chunk.size() * sizeof(Slot))) return written;
    }
    const Header done = MakeHeader(seed, last);
    WriteFileAt(fd.get(), 0, &done, sizeof done);
    return written;
  } catch (...) {
    return 0;  // a Xapian error or no memory: the map stays behind, readers fall back
  }
}

void ForgetDocidMapAhead(const std::string& path, const Xapian::Database& db) noexcept {
  try {
    OwnedFd fd(open(path.c_str(), O_RDWR | O_CLOEXEC));
    if (fd.get() < 0) return;
    Header h{};
    if (ReadFileAt(fd.get(), 0, &h, sizeof h) && HeaderValid(h, UuidSeed(db.get_uuid())) &&
        h.covered > db.get_lastdocid()) {
      if (ftruncate(fd.get(), 0) != 0) return;
    }
  } catch (...) {
  }
}

void DocidMapReader::Lookup(std::string_view uuid, uint32_t last_docid, const std::vector<uint32_t>& docids,
                            std::vector<DocidMapEntry>& entries) {
  entries.assign(docids.size(), DocidMapEntry{});
  if (docids.empty()) return;
  if (fd_.get() < 0) {
    fd_ = OwnedFd(open(path_.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd_.get() < 0) return;
  }
  struct stat st;
  if (fstat(fd_.get(), &st) != 0) return;
  const uint64_t slots = static_cast<uint64_t>(st.st_size) / kDocidMapSlot;
  if (slots == 0) return;
  Header h{};
  reads_.Add(0, &h, sizeof h);
  std::vector<std::array<char, kDocidMapSlot>> got(docids.size());
  std::vector<char> asked(docids.size(), 0);
  for (size_t i = 0; i < docids.size(); ++i) {
    if (docids[i] == 0 || docids[i] >= slots) continue;
    reads_.Add(uint64_t{docids[i]} * kDocidMapSlot, got[i].data(), kDocidMapSlot);
    asked[i] = 1;
  }
  if (!reads_.Run(fd_.get())) return;
  const uint64_t seed = UuidSeed(uuid);
  // A header that covers more docids than the database has belongs to a
  // database that lost commits (or to another one): trust none of it.
  if (!HeaderValid(h, seed) || h.covered > last_docid) return;
  const bool with_passages = h.version == kVersion;
  for (size_t i = 0; i < docids.size(); ++i) {
    if (!asked[i]) continue;
    const char* slot = got[i].data();
    uint64_t check;
    std::memcpy(&check, slot + offsetof(Slot, check), sizeof check);
    const auto len = static_cast<uint8_t>(slot[offsetof(Slot, len)]);
    if (len == 0 || len > (with_passages ? kDocidMapMaxId : kVersion1MaxId)) continue;
    const std::string_view id(slot + kIdOffset, len);
    DocidMapEntry& e = entries[i];
    if (!with_passages) {
      if (check == Version1SlotCheck(seed, docids[i], id)) e.id = id;
      continue;
    }
    uint32_t begin, end;
    std::memcpy(&begin, slot + offsetof(Slot, passage_begin), sizeof begin);
    std::memcpy(&end, slot + offsetof(Slot, passage_end), sizeof end);
    if (check != SlotCheck(seed, docids[i], id, begin, end)) continue;
    e.id = id;
    e.passage_known = true;
    e.passage_begin = begin;
    e.passage_end = end;
  }
}

}  // namespace msp
