// The file a vector index is persisted to (<data_dir>/vector/index.msv), so
// that a process maps it instead of rebuilding the index from every record.
//
// Layout: a 512-byte header, then the sections, each starting at a multiple
// of 4096 bytes and the file padded to one (so every section can be mapped
// copy-on-write, and a mapping rounded up to a page stays inside the file).
// The header holds the dimension, the record count, the change sequence the
// contents reflect, the caller's identity string (what the index was built
// from), every section's offset and size, two checksums (Checksum64, chained
// section by section: one over the identity and the metadata sections, one
// over the vector sections) and a checksum of the header itself.
//
// Writing is atomic: a temporary file beside the target, fsynced, renamed
// over it, the folder fsynced; a lock file keeps two processes from writing
// the same temporary file (the second skips its save). A reader therefore
// sees an old file or a new one, never a torn one, unless the file was
// damaged from outside: then the checks below fail and the caller rebuilds.
#ifndef MSP_INDEX_VECTOR_VECTOR_FILE_H_
#define MSP_INDEX_VECTOR_VECTOR_FILE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "msp/status.h"
#include "util/owned_fd.h"

namespace msp {

inline constexpr uint64_t kVectorFileAlign = 4096;

struct VectorFileSection {
  const void* data = nullptr;
  uint64_t bytes = 0;
};

// What the header says besides the sections.
struct VectorFileInfo {
  uint32_t dimension = 0;
  uint32_t flags = 0;        // the writer's (e.g. "holds float16 copies")
  uint64_t count = 0;        // records
  uint64_t strings = 0;      // interned strings
  int64_t applied_seq = 0;
};

// Writes the file atomically (see above). `sections` in order: the first
// `meta_sections` are covered by the metadata checksum (after the
// identity), the rest by the vector checksum. Unavailable when another
// process holds the lock (a save of the same file is under way).
Status WriteVectorFile(const std::string& path, const VectorFileInfo& info, std::string_view identity,
                       const std::vector<VectorFileSection>& sections, size_t meta_sections);

// WriteVectorFile in two steps, so that a caller can stop holding the
// sections' memory steady once they are written: StageVectorFile writes the
// temporary file (holding the save lock), Commit() syncs it, renames it
// over the target and syncs the folder. Destroyed uncommitted, it removes
// the temporary file and lets the lock go. Move-only.
class StagedVectorFile {
 public:
  StagedVectorFile(StagedVectorFile&& o) noexcept;
  StagedVectorFile& operator=(StagedVectorFile&&) = delete;
  StagedVectorFile(const StagedVectorFile&) = delete;
  ~StagedVectorFile();
  Status Commit();

 private:
  friend Result<StagedVectorFile> StageVectorFile(const std::string&, const VectorFileInfo&, std::string_view,
                                                  const std::vector<VectorFileSection>&, size_t);
  StagedVectorFile() = default;
  std::string path_;
  std::string tmp_;  // removed by the destructor unless committed
  OwnedFd lock_fd_;  // the save lock, let go when closed (after fd_)
  OwnedFd fd_;       // the temporary file
};
Result<StagedVectorFile> StageVectorFile(const std::string& path, const VectorFileInfo& info,
                                         std::string_view identity, const std::vector<VectorFileSection>& sections,
                                         size_t meta_sections);

// An opened file whose header passed every check: magic, version, header
// checksum, the dimension and identity the caller expects, the number of
// sections, and each section inside the file and page-aligned. The
// sections' contents are not read: the caller maps them and checks them
// against meta_checksum / vector_checksum with ChainChecksum.
class VectorFile {
 public:
  // NotFound when there is no file; Corruption naming what is wrong
  // otherwise (the caller then rebuilds).
  static Result<VectorFile> Open(const std::string& path, uint32_t dimension, std::string_view identity,
                                 size_t sections);
  VectorFile(VectorFile&& o) noexcept = default;
  VectorFile& operator=(VectorFile&&) = delete;
  VectorFile(const VectorFile&) = delete;

  int fd() const { return fd_.get(); }
  const VectorFileInfo& info() const { return info_; }
  uint64_t offset(size_t section) const { return sections_[section].first; }
  uint64_t bytes(size_t section) const { return sections_[section].second; }
  uint64_t meta_checksum() const { return meta_checksum_; }
  uint64_t vector_checksum() const { return vector_checksum_; }
  // The identity's checksum, the seed of the metadata chain.
  uint64_t identity_checksum() const;
  // Reads a whole section (for small ones that are parsed, not mapped).
  Result<std::string> Read(size_t section) const;

 private:
  VectorFile() = default;
  OwnedFd fd_;
  VectorFileInfo info_;
  std::string identity_;
  std::vector<std::pair<uint64_t, uint64_t>> sections_;  // (offset, bytes)
  uint64_t meta_checksum_ = 0;
  uint64_t vector_checksum_ = 0;
};

// The checksum of `sections` chained from `seed` (each section's checksum
// seeds the next), as WriteVectorFile computes them.
uint64_t ChainChecksum(uint64_t seed, const std::vector<VectorFileSection>& sections);

}  // namespace msp

#endif  // MSP_INDEX_VECTOR_VECTOR_FILE_H_
