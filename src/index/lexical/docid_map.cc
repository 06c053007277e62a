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
#include <mutex>
#include <shared_mutex>

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

namespace {

// What `slot` holds of `docid` into `e`, when it checks under `seed` (a
// slot of a version 1 map when not `with_passages`).
bool DecodeSlot(const char* slot, uint64_t seed, uint32_t docid, bool with_passages, DocidMapEntry& e) {
  uint64_t check;
  std::memcpy(&check, slot + offsetof(Slot, check), sizeof check);
  const auto len = static_cast<uint8_t>(slot[offsetof(Slot, len)]);
  if (len == 0 || len > (with_passages ? kDocidMapMaxId : kVersion1MaxId)) return false;
  const std::string_view id(slot + kIdOffset, len);
  if (!with_passages) {
    if (check != Version1SlotCheck(seed, docid, id)) return false;
    e.id = id;
    return true;
  }
  uint32_t begin, end;
  std::memcpy(&begin, slot + offsetof(Slot, passage_begin), sizeof begin);
  std::memcpy(&end, slot + offsetof(Slot, passage_end), sizeof end);
  if (check != SlotCheck(seed, docid, id, begin, end)) return false;
  e.id = id;
  e.passage_known = true;
  e.passage_begin = begin;
  e.passage_end = end;
  return true;
}

}  // namespace

void DocidMapCache::Load(const std::string& path, std::string_view uuid, uint32_t last_docid,
                         size_t max_bytes) noexcept {
  try {
    // The budget first: a map not there yet (a new store) or not to be
    // trusted now is copied slot by slot as lookups read it.
    const size_t budget = max_bytes / sizeof(Chunk);
    {
      std::unique_lock<std::shared_mutex> lock(mu_);
      if (budget > max_chunks_.load()) max_chunks_.store(budget);
    }
    OwnedFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
    struct stat st;
    Header h{};
    if (fd.get() < 0 || fstat(fd.get(), &st) != 0 || !ReadFileAt(fd.get(), 0, &h, sizeof h) ||
        !HeaderValid(h, UuidSeed(uuid)) || h.covered > last_docid) {
      return;
    }
    const uint64_t slots = std::min<uint64_t>(h.covered + 1, static_cast<uint64_t>(st.st_size) / kDocidMapSlot);
    const size_t chunks = std::min<size_t>(budget, (slots + kChunkSlots - 1) / kChunkSlots);
    // Read without the lock (searches go on), then put in what is missing.
    std::vector<std::unique_ptr<Chunk>> read(chunks);
    size_t held = 0;
    for (size_t c = 0; c < chunks; ++c) {
      read[c] = std::make_unique<Chunk>();
      const uint64_t first = uint64_t{c} * kChunkSlots;
      const size_t n = static_cast<size_t>(std::min<uint64_t>(kChunkSlots, slots - first));
      if (!ReadFileAt(fd.get(), first * kDocidMapSlot, read[c]->data(), n * kDocidMapSlot)) return;
      for (size_t i = c == 0 ? 1 : 0; i < n; ++i) held += (*read[c])[i * kDocidMapSlot + offsetof(Slot, len)] != 0;
    }
    std::unique_lock<std::shared_mutex> lock(mu_);
    if (chunks_.size() < chunks) chunks_.resize(chunks);
    for (size_t c = 0; c < chunks; ++c) {
      if (!chunks_[c]) chunks_[c] = std::move(read[c]);
    }
    held_ += held;
  } catch (...) {
    // No memory: searches read the file as before.
  }
}

bool DocidMapCache::Get(uint32_t docid, char* out) const {
  const size_t c = docid / kChunkSlots;
  std::shared_lock<std::shared_mutex> lock(mu_);
  if (c >= chunks_.size() || !chunks_[c]) return false;
  const char* slot = chunks_[c]->data() + size_t{docid % kChunkSlots} * kDocidMapSlot;
  if (slot[offsetof(Slot, len)] == 0) return false;
  std::memcpy(out, slot, kDocidMapSlot);
  return true;
}

void DocidMapCache::Keep(uint32_t docid, const char* slot) {
  const size_t c = docid / kChunkSlots;
  if (c >= max_chunks_.load(std::memory_order_relaxed)) return;
  std::unique_lock<std::shared_mutex> lock(mu_);
  if (c >= chunks_.size()) chunks_.resize(c + 1);
  if (!chunks_[c]) chunks_[c] = std::make_unique<Chunk>();
  char* to = chunks_[c]->data() + size_t{docid % kChunkSlots} * kDocidMapSlot;
  if (to[offsetof(Slot, len)] == 0) ++held_;
  std::memcpy(to, slot, kDocidMapSlot);
}

size_t DocidMapCache::held() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return held_;
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
  // The header always comes from the file; a slot from the process's copy
  // when it has one, else from the file.
  Header h{};
  reads_.Add(0, &h, sizeof h);
  std::vector<std::array<char, kDocidMapSlot>> got(docids.size());
  DocidMapCache* const cache = cache_ != nullptr && cache_->active() ? cache_ : nullptr;
  enum : char { kNotAsked, kFromFile, kCopied };
  std::vector<char> source(docids.size(), kNotAsked);
  for (size_t i = 0; i < docids.size(); ++i) {
    if (docids[i] == 0 || docids[i] >= slots) continue;
    if (cache != nullptr && cache->Get(docids[i], got[i].data())) {
      source[i] = kCopied;
      continue;
    }
    reads_.Add(uint64_t{docids[i]} * kDocidMapSlot, got[i].data(), kDocidMapSlot);
    source[i] = kFromFile;
  }
  if (!reads_.Run(fd_.get())) return;
  const uint64_t seed = UuidSeed(uuid);
  // A header that covers more docids than the database has belongs to a
  // database that lost commits (or to another one): trust none of it.
  if (!HeaderValid(h, seed) || h.covered > last_docid) return;
  const bool with_passages = h.version == kVersion;
  // A copied slot that does not check (one of an earlier database, or not
  // written when copied) is read from the file after all.
  std::vector<size_t> again;
  for (size_t i = 0; i < docids.size(); ++i) {
    if (source[i] == kNotAsked) continue;
    if (DecodeSlot(got[i].data(), seed, docids[i], with_passages, entries[i])) {
      if (source[i] == kFromFile && cache != nullptr) cache->Keep(docids[i], got[i].data());
    } else if (source[i] == kCopied) {
      reads_.Add(uint64_t{docids[i]} * kDocidMapSlot, got[i].data(), kDocidMapSlot);
      again.push_back(i);
    }
  }
  if (again.empty() || !reads_.Run(fd_.get())) return;
  for (size_t i : again) {
    if (DecodeSlot(got[i].data(), seed, docids[i], with_passages, entries[i])) cache->Keep(docids[i], got[i].data());
  }
}

}  // namespace msp
