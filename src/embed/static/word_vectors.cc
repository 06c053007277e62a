// The word-vector table: mapping, checking and looking up (word_vectors.h
// documents the file layout).
#include "embed/static/word_vectors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <unordered_set>

#include "util/hash.h"

namespace msp {
namespace {

constexpr char kMagic[8] = {'M', 'S', 'P', 'W', 'V', 'E', 'C', '1'};
constexpr size_t kHeaderBytes = 64;
constexpr size_t kNameAt = 24;
constexpr uint32_t kMaxTableDimension = 4096;

uint32_t ReadU32(const unsigned char* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 | static_cast<uint32_t>(p[2]) << 16 |
         static_cast<uint32_t>(p[3]) << 24;
}

void PutU32(std::string* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

}  // namespace

WordVectors::~WordVectors() {
  if (map_ != nullptr) munmap(map_, map_bytes_);
}

Result<std::shared_ptr<const WordVectors>> WordVectors::Load(const std::string& path) {
  const auto fail = [&](const std::string& what) {
    return Status::Corruption("word vectors " + path + " are not a valid msp table (" + what +
                              "); make it again with scripts/deps.sh");
  };
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::IoError("cannot open word vectors " + path + ": " + std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    const int err = errno;
    close(fd);
    return Status::IoError("cannot stat word vectors " + path + ": " + std::strerror(err));
  }
  const size_t bytes = static_cast<size_t>(st.st_size);
  if (bytes < kHeaderBytes) {
    close(fd);
    return fail("shorter than its header");
  }
  void* map = mmap(nullptr, bytes, PROT_READ, MAP_PRIVATE, fd, 0);
  const int map_err = errno;
  close(fd);
  if (map == MAP_FAILED) return Status::IoError("cannot map word vectors " + path + ": " + std::strerror(map_err));
  std::shared_ptr<WordVectors> t(new WordVectors());
  t->map_ = map;
  t->map_bytes_ = bytes;
  const auto* base = static_cast<const unsigned char*>(map);
  if (std::memcmp(base, kMagic, sizeof kMagic) != 0) return fail("no MSPWVEC1 magic");
  t->dimension_ = ReadU32(base + 8);
  t->count_ = ReadU32(base + 12);
  t->slots_ = ReadU32(base + 16);
  const uint32_t blob_bytes = ReadU32(base + 20);
  const char* name = reinterpret_cast<const char*>(base + kNameAt);
  t->name_.assign(name, strnlen(name, kHeaderBytes - kNameAt));
  if (t->dimension_ == 0 || t->dimension_ > kMaxTableDimension) return fail("dimension out of range");
  if (t->slots_ == 0 || (t->slots_ & (t->slots_ - 1)) != 0 || t->slots_ <= t->count_) {
    return fail("hash table size is not a power of two above the word count");
  }
  const size_t scales_at = kHeaderBytes;
  const size_t offsets_at = scales_at + 4 * size_t{t->count_};
  const size_t table_at = offsets_at + 4 * (size_t{t->count_} + 1);
  const size_t values_at = table_at + 4 * size_t{t->slots_};
  const size_t blob_at = values_at + size_t{t->count_} * t->dimension_;
  if (blob_at + blob_bytes != bytes) return fail("its size does not match its header");
  t->scales_ = reinterpret_cast<const float*>(base + scales_at);
  t->offsets_ = reinterpret_cast<const uint32_t*>(base + offsets_at);
  t->table_ = reinterpret_cast<const uint32_t*>(base + table_at);
  t->values_ = reinterpret_cast<const int8_t*>(base + values_at);
  t->blob_ = reinterpret_cast<const char*>(base + blob_at);
  // Every word's bytes lie in the blob, in order; every table entry names a
  // word; every scale is finite. Lookups then never leave the map.
  for (uint32_t i = 0; i < t->count_; ++i) {
    if (t->offsets_[i] >= t->offsets_[i + 1]) return fail("word " + std::to_string(i) + " is empty or out of order");
    if (!std::isfinite(t->scales_[i])) return fail("row " + std::to_string(i) + " has a non-finite scale");
  }
  if (t->offsets_[0] != 0 || t->offsets_[t->count_] != blob_bytes) return fail("word offsets do not span the blob");
  size_t filled = 0;
  for (uint32_t s = 0; s < t->slots_; ++s) {
    if (t->table_[s] == 0) continue;
    if (t->table_[s] > t->count_) return fail("hash slot " + std::to_string(s) + " names no word");
    ++filled;
  }
  if (filled != t->count_) return fail("the hash table does not hold every word once");
  return std::shared_ptr<const WordVectors>(std::move(t));
}

std::string_view WordVectors::Word(size_t index) const {
  return std::string_view(blob_ + offsets_[index], offsets_[index + 1] - offsets_[index]);
}

int64_t WordVectors::Find(std::string_view word) const {
  if (word.empty()) return -1;
  const uint32_t mask = slots_ - 1;
  for (uint32_t slot = Fnv1a32(word) & mask, probes = 0; probes < slots_; slot = (slot + 1) & mask, ++probes) {
    const uint32_t entry = table_[slot];
    if (entry == 0) return -1;
    if (Word(entry - 1) == word) return static_cast<int64_t>(entry - 1);
  }
  return -1;
}

void WordVectors::AddScaled(size_t index, float weight, float* out) const {
  const int8_t* row = values_ + index * dimension_;
  const float w = weight * scales_[index];
  for (uint32_t d = 0; d < dimension_; ++d) out[d] += w * static_cast<float>(row[d]);
}

Status WriteWordVectors(const std::string& path, const std::string& name, const std::vector<std::string>& words,
                        const std::vector<std::vector<float>>& vectors) {
  if (words.size() != vectors.size() || words.empty()) {
    return Status::InvalidArgument("word vectors: need one vector per word and at least one word");
  }
  if (name.size() >= kHeaderBytes - kNameAt) return Status::InvalidArgument("word vectors: name too long: " + name);
  const size_t dimension = vectors[0].size();
  if (dimension == 0 || dimension > kMaxTableDimension) {
    return Status::InvalidArgument("word vectors: dimension out of range");
  }
  std::unordered_set<std::string_view> seen;
  for (size_t i = 0; i < words.size(); ++i) {
    if (words[i].empty() || !seen.insert(words[i]).second) {
      return Status::InvalidArgument("word vectors: empty or repeated word at " + std::to_string(i));
    }
    if (vectors[i].size() != dimension) return Status::InvalidArgument("word vectors: rows differ in size");
  }
  uint32_t slots = 1;
  while (slots <= 2 * words.size()) slots *= 2;
  std::vector<uint32_t> table(slots, 0);
  std::string blob;
  std::string out(kMagic, sizeof kMagic);
  PutU32(&out, static_cast<uint32_t>(dimension));
  PutU32(&out, static_cast<uint32_t>(words.size()));
  PutU32(&out, slots);
  size_t blob_bytes = 0;
  for (const std::string& w : words) blob_bytes += w.size();
  PutU32(&out, static_cast<uint32_t>(blob_bytes));
  out += name;
  out.resize(kHeaderBytes, '\0');
  std::string values;
  for (size_t i = 0; i < words.size(); ++i) {
    float max_abs = 0;
    for (float v : vectors[i]) max_abs = std::max(max_abs, std::fabs(v));
    const float scale = max_abs > 0 ? max_abs / 127.0f : 1.0f;
    uint32_t bits;
    std::memcpy(&bits, &scale, 4);
    PutU32(&out, bits);
    for (float v : vectors[i]) {
      const long q = std::lround(v / scale);
      values.push_back(static_cast<char>(static_cast<int8_t>(std::clamp(q, -127L, 127L))));
    }
    uint32_t slot = Fnv1a32(words[i]) & (slots - 1);
    while (table[slot] != 0) slot = (slot + 1) & (slots - 1);
    table[slot] = static_cast<uint32_t>(i + 1);
  }
  uint32_t offset = 0;
  for (const std::string& w : words) {
    PutU32(&out, offset);
    offset += static_cast<uint32_t>(w.size());
  }
  PutU32(&out, offset);
  for (uint32_t e : table) PutU32(&out, e);
  out += values;
  for (const std::string& w : words) out += w;
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f.write(out.data(), static_cast<std::streamsize>(out.size()));
    if (!f.flush()) return Status::IoError("cannot write word vectors " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return Status::IoError("cannot rename " + tmp + " to " + path + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

}  // namespace msp
