// The vector index file: header layout, atomic write, checked open.
#include "index/vector/vector_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <type_traits>
#include <utility>

#include "util/data_file.h"
#include "util/file_io.h"
#include "util/hash.h"

namespace msp {
namespace {

constexpr char kMagic[8] = {'M', 'S', 'P', 'V', 'E', 'C', 'I', 'X'};
constexpr uint32_t kVersion = 1;
constexpr size_t kMaxSections = 24;
constexpr uint64_t kHeaderBytes = 512;
// The identity sits between the header and the first section.
constexpr uint64_t kMaxIdentity = kVectorFileAlign - kHeaderBytes;

struct Header {
  char magic[8];
  uint32_t version;
  uint32_t header_bytes;
  uint32_t dimension;
  uint32_t flags;
  uint64_t count;
  uint64_t strings;
  int64_t applied_seq;
  uint64_t identity_bytes;
  uint64_t section_count;
  uint64_t meta_checksum;
  uint64_t vector_checksum;
  uint64_t section[2 * kMaxSections];  // offset, bytes
  uint64_t header_checksum;            // of every byte before it
};
static_assert(sizeof(Header) <= kHeaderBytes);

uint64_t HeaderChecksum(const Header& h) { return Checksum64(&h, offsetof(Header, header_checksum)); }

uint64_t AlignUp(uint64_t n) { return (n + kVectorFileAlign - 1) / kVectorFileAlign * kVectorFileAlign; }

std::string Errno(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + std::strerror(errno);
}

}  // namespace

uint64_t ChainChecksum(uint64_t seed, const std::vector<VectorFileSection>& sections) {
  uint64_t h = seed;
  for (const auto& s : sections) h = Checksum64(s.data, s.bytes, h);
  return h;
}

Status WriteVectorFile(const std::string& path, const VectorFileInfo& info, std::string_view identity,
                       const std::vector<VectorFileSection>& sections, size_t meta_sections) {
  MSP_ASSIGN_OR_RETURN(StagedVectorFile staged, StageVectorFile(path, info, identity, sections, meta_sections));
  return staged.Commit();
}

Result<StagedVectorFile> StageVectorFile(const std::string& path, const VectorFileInfo& info,
                                         std::string_view identity, const std::vector<VectorFileSection>& sections,
                                         size_t meta_sections) {
  if (sections.size() > kMaxSections || meta_sections > sections.size()) {
    return Status::Internal("vector file: too many sections");
  }
  if (identity.size() > kMaxIdentity) return Status::InvalidArgument("vector file: identity too long");
  const std::filesystem::path target(path);
  std::error_code ec;
  CreatePrivateDirectories(target.parent_path().string(), ec);
  if (ec) return Status::IoError("cannot create " + target.parent_path().string() + ": " + ec.message());

  StagedVectorFile staged;
  staged.path_ = path;
  const std::string lock_path = path + ".lock";
  staged.lock_fd_ = OwnedFd(open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, kPrivateFileMode));
  if (!staged.lock_fd_.valid()) return Status::IoError(Errno("cannot open", lock_path));
  if (flock(staged.lock_fd_.get(), LOCK_EX | LOCK_NB) != 0) {
    return Status::Unavailable("another process is saving " + path);
  }

  Header h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.version = kVersion;
  h.header_bytes = kHeaderBytes;
  h.dimension = info.dimension;
  h.flags = info.flags;
  h.count = info.count;
  h.strings = info.strings;
  h.applied_seq = info.applied_seq;
  h.identity_bytes = identity.size();
  h.section_count = sections.size();
  uint64_t at = kVectorFileAlign;
  for (size_t i = 0; i < sections.size(); ++i) {
    h.section[2 * i] = at;
    h.section[2 * i + 1] = sections[i].bytes;
    at = AlignUp(at + sections[i].bytes);
  }
  const uint64_t file_bytes = at;
  const uint64_t identity_sum = Checksum64(identity.data(), identity.size());
  h.meta_checksum = ChainChecksum(
      identity_sum, std::vector<VectorFileSection>(sections.begin(), sections.begin() + meta_sections));
  h.vector_checksum =
      ChainChecksum(0, std::vector<VectorFileSection>(sections.begin() + meta_sections, sections.end()));
  h.header_checksum = HeaderChecksum(h);

  const std::string tmp = path + ".tmp";
  staged.fd_ = OwnedFd(open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, kPrivateFileMode));
  if (!staged.fd_.valid()) return Status::IoError(Errno("cannot create", tmp));
  staged.tmp_ = tmp;  // removed by the destructor from here on, unless committed
  const int fd = staged.fd_.get();
  bool ok = WriteFileAt(fd, 0, &h, sizeof h) && WriteFileAt(fd, kHeaderBytes, identity.data(), identity.size());
  for (size_t i = 0; ok && i < sections.size(); ++i) {
    ok = WriteFileAt(fd, h.section[2 * i], sections[i].data, sections[i].bytes);
  }
  // Padded to a page: every mapping rounded up to a page stays in the file.
  ok = ok && ftruncate(fd, static_cast<off_t>(file_bytes)) == 0;
  if (!ok) return Status::IoError(Errno("cannot write", tmp));
  return staged;
}

StagedVectorFile::StagedVectorFile(StagedVectorFile&& o) noexcept
    : path_(std::move(o.path_)),
      tmp_(std::exchange(o.tmp_, std::string())),
      lock_fd_(std::move(o.lock_fd_)),
      fd_(std::move(o.fd_)) {}

// The descriptors close after the temporary file is gone (members), the lock last.
StagedVectorFile::~StagedVectorFile() {
  if (!tmp_.empty()) unlink(tmp_.c_str());
}

Status StagedVectorFile::Commit() {
  if (tmp_.empty()) return Status::Internal("vector file " + path_ + ": nothing staged");
  if (fdatasync(fd_.get()) != 0) return Status::IoError(Errno("cannot write", tmp_));
  if (rename(tmp_.c_str(), path_.c_str()) != 0) return Status::IoError(Errno("cannot rename " + tmp_ + " to", path_));
  tmp_.clear();  // in place: no longer removed
  const std::string dir = std::filesystem::path(path_).parent_path().string();
  const OwnedFd dir_fd(open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir_fd.valid() && fsync(dir_fd.get()) != 0) return Status::IoError(Errno("cannot sync", dir));
  return Status::Ok();
}

Result<VectorFile> VectorFile::Open(const std::string& path, uint32_t dimension, std::string_view identity,
                                    size_t sections) {
  VectorFile f;
  f.fd_ = OwnedFd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!f.fd_.valid()) {
    if (errno == ENOENT) return Status::NotFound("no vector index file at " + path);
    return Status::IoError(Errno("cannot open", path));
  }
  auto bad = [&](const std::string& what) { return Status::Corruption("vector index file " + path + ": " + what); };
  struct stat st {};
  if (fstat(f.fd(), &st) != 0) return Status::IoError(Errno("cannot stat", path));
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (!S_ISREG(st.st_mode)) return bad("not a regular file");
  Header h{};
  if (size < kVectorFileAlign || !ReadFileAt(f.fd(), 0, &h, sizeof h)) return bad("shorter than its header");
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0) return bad("not an msp vector index");
  if (h.version != kVersion) return bad("format version " + std::to_string(h.version) + ", expected " + std::to_string(kVersion));
  if (h.header_checksum != HeaderChecksum(h)) return bad("header checksum mismatch");
  if (h.header_bytes != kHeaderBytes || h.identity_bytes > kMaxIdentity || h.section_count != sections) {
    return bad("unexpected header layout");
  }
  if (size % kVectorFileAlign != 0) return bad("size " + std::to_string(size) + " is not a whole number of pages (torn?)");
  if (h.dimension != dimension) {
    return bad("holds " + std::to_string(h.dimension) + "-dimensional vectors; the index has " + std::to_string(dimension));
  }
  f.identity_.resize(h.identity_bytes);
  if (!ReadFileAt(f.fd(), kHeaderBytes, f.identity_.data(), h.identity_bytes)) return bad("identity unreadable");
  if (f.identity_ != identity) return bad("built for '" + f.identity_ + "', not '" + std::string(identity) + "'");
  uint64_t min_at = kVectorFileAlign;
  for (size_t i = 0; i < sections; ++i) {
    const uint64_t at = h.section[2 * i], bytes = h.section[2 * i + 1];
    if (at % kVectorFileAlign != 0 || at < min_at || bytes > size || at > size - bytes) {
      return bad("section " + std::to_string(i) + " lies outside the file (torn?)");
    }
    f.sections_.emplace_back(at, bytes);
    min_at = AlignUp(at + bytes);
  }
  f.info_ = VectorFileInfo{h.dimension, h.flags, h.count, h.strings, h.applied_seq};
  f.meta_checksum_ = h.meta_checksum;
  f.vector_checksum_ = h.vector_checksum;
  return f;
}

uint64_t VectorFile::identity_checksum() const { return Checksum64(identity_.data(), identity_.size()); }

Result<std::string> VectorFile::Read(size_t section) const {
  std::string out(bytes(section), '\0');
  if (!ReadFileAt(fd(), offset(section), out.data(), out.size())) {
    return Status::Corruption("vector index file: section " + std::to_string(section) + " unreadable");
  }
  return out;
}

}  // namespace msp
