// SafeTensorsFile (safetensors.h).
#include "embed/native/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>

#include <nlohmann/json.hpp>

namespace msp::native {
namespace {

constexpr uint64_t kMaxHeaderBytes = 100u << 20;  // the format's own limit

size_t DtypeBytes(const std::string& dtype) {
  if (dtype == "F64" || dtype == "I64" || dtype == "U64") return 8;
  if (dtype == "F32" || dtype == "I32" || dtype == "U32") return 4;
  if (dtype == "F16" || dtype == "BF16" || dtype == "I16" || dtype == "U16") return 2;
  if (dtype == "I8" || dtype == "U8" || dtype == "BOOL" || dtype == "F8_E4M3" || dtype == "F8_E5M2") return 1;
  return 0;
}

float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1Fu;
  uint32_t man = h & 0x3FFu;
  uint32_t bits;
  if (exp == 0x1F) {
    bits = sign | 0x7F800000u | (man << 13);
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (man << 13);
  } else if (man == 0) {
    bits = sign;
  } else {  // subnormal: normalise
    exp = 113;
    while ((man & 0x400u) == 0) {
      man <<= 1;
      --exp;
    }
    bits = sign | (exp << 23) | ((man & 0x3FFu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

std::string ShapeText(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

}  // namespace

SafeTensorsFile::~SafeTensorsFile() {
  if (map_ != nullptr) munmap(map_, size_);
}

Result<std::unique_ptr<SafeTensorsFile>> SafeTensorsFile::Open(const std::string& path) {
  std::unique_ptr<SafeTensorsFile> f(new SafeTensorsFile());
  f->path_ = path;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) return Status::NotFound(path + " does not exist");
    return Status::IoError(path + " cannot be opened: " + std::strerror(err));
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::InvalidArgument(path + " is not a regular file");
  }
  f->size_ = static_cast<size_t>(st.st_size);
  if (f->size_ < 8) {
    ::close(fd);
    return Status::Corruption(path + " is not a valid safetensors file: it has " + std::to_string(f->size_) +
                              " bytes, fewer than the 8 of the header length");
  }
  void* map = mmap(nullptr, f->size_, PROT_READ, MAP_PRIVATE, fd, 0);
  const int map_err = errno;
  ::close(fd);
  if (map == MAP_FAILED) return Status::IoError(path + " cannot be mapped: " + std::strerror(map_err));
  f->map_ = map;
  MSP_RETURN_IF_ERROR(f->Index(static_cast<const uint8_t*>(map)));
  return f;
}

Result<std::unique_ptr<SafeTensorsFile>> SafeTensorsFile::FromBytes(const void* data, size_t size,
                                                                    const std::string& name) {
  std::unique_ptr<SafeTensorsFile> f(new SafeTensorsFile());
  f->path_ = name;
  f->size_ = size;
  if (size < 8) {
    return Status::Corruption(name + " is not a valid safetensors file: it has " + std::to_string(size) +
                              " bytes, fewer than the 8 of the header length");
  }
  MSP_RETURN_IF_ERROR(f->Index(static_cast<const uint8_t*>(data)));
  return f;
}

std::vector<std::pair<std::string, std::vector<int64_t>>> SafeTensorsFile::Tensors() const {
  std::vector<std::pair<std::string, std::vector<int64_t>>> out;
  for (const auto& [name, e] : entries_) out.emplace_back(name, e.shape);
  return out;
}

Status SafeTensorsFile::Index(const uint8_t* bytes) {
  const std::string& path = path_;
  auto corrupt = [&path](const std::string& what) {
    return Status::Corruption(path + " is not a valid safetensors file: " + what);
  };
  uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | bytes[i];
  if (header_len > kMaxHeaderBytes || header_len > size_ - 8) {
    return corrupt("its header length " + std::to_string(header_len) + " exceeds the file (" +
                   std::to_string(size_) + " bytes) or the format's 100 MB limit");
  }
  data_ = bytes + 8 + header_len;
  const uint64_t data_size = size_ - 8 - header_len;
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(reinterpret_cast<const char*>(bytes + 8),
                                   reinterpret_cast<const char*>(bytes + 8 + header_len));
  } catch (const nlohmann::json::exception& e) {
    return corrupt(std::string("its header is not JSON: ") + e.what());
  }
  if (!header.is_object()) return corrupt("its header is not a JSON object");
  for (auto it = header.begin(); it != header.end(); ++it) {
    const std::string& name = it.key();
    const nlohmann::json& value = it.value();
    if (name == "__metadata__") continue;
    auto bad = [&](const std::string& what) { return corrupt("tensor '" + name + "': " + what); };
    if (!value.is_object()) return bad("its entry is not an object");
    const auto dtype = value.find("dtype");
    const auto shape = value.find("shape");
    const auto offsets = value.find("data_offsets");
    if (dtype == value.end() || !dtype->is_string()) return bad("no dtype");
    if (shape == value.end() || !shape->is_array()) return bad("no shape");
    if (offsets == value.end() || !offsets->is_array() || offsets->size() != 2 ||
        !(*offsets)[0].is_number_unsigned() || !(*offsets)[1].is_number_unsigned()) {
      return bad("data_offsets is not two unsigned integers");
    }
    Entry e;
    e.dtype = dtype->get<std::string>();
    const size_t elem = DtypeBytes(e.dtype);
    if (elem == 0) return bad("unknown dtype '" + e.dtype + "'");
    uint64_t count = 1;
    for (const auto& d : *shape) {
      if (!d.is_number_unsigned()) return bad("its shape has an entry that is not a non-negative integer");
      const uint64_t n = d.get<uint64_t>();
      if (n != 0 && count > std::numeric_limits<uint64_t>::max() / 16 / n) return bad("its shape overflows");
      count *= n;
      e.shape.push_back(static_cast<int64_t>(n));
    }
    e.begin = (*offsets)[0].get<uint64_t>();
    e.end = (*offsets)[1].get<uint64_t>();
    if (e.begin > e.end || e.end > data_size) {
      return bad("data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) +
                 ") lie outside the data (" + std::to_string(data_size) + " bytes; is the file truncated?)");
    }
    if (e.end - e.begin != count * elem) {
      return bad("data_offsets hold " + std::to_string(e.end - e.begin) + " bytes, but " + e.dtype + " " +
                 ShapeText(e.shape) + " needs " + std::to_string(count * elem));
    }
    entries_.emplace(name, std::move(e));
  }
  return Status::Ok();
}

Result<const float*> SafeTensorsFile::Float32(const std::string& name, const std::vector<int64_t>& shape) {
  auto it = entries_.find(name);
  if (it == entries_.end()) {
    return Status::InvalidArgument(path_ + " has no tensor '" + name + "' (is it a BERT model?)");
  }
  const Entry& e = it->second;
  if (e.shape != shape) {
    return Status::InvalidArgument(path_ + ": tensor '" + name + "' has shape " + ShapeText(e.shape) +
                                   ", but config.json makes it " + ShapeText(shape));
  }
  const uint8_t* p = data_ + e.begin;
  const size_t count = (e.end - e.begin) / DtypeBytes(e.dtype);
  if (e.dtype == "F32") {
    if (reinterpret_cast<uintptr_t>(p) % alignof(float) == 0) return reinterpret_cast<const float*>(p);
  } else if (e.dtype != "F16" && e.dtype != "BF16") {
    return Status::InvalidArgument(path_ + ": tensor '" + name + "' is " + e.dtype +
                                   "; the native embedder reads F32, F16 and BF16 weights");
  }
  auto [slot, inserted] = converted_.try_emplace(name);
  if (inserted) {
    slot->second.resize(count);
    float* out = slot->second.data();
    for (size_t i = 0; i < count; ++i) {
      if (e.dtype == "F32") {
        std::memcpy(out + i, p + 4 * i, 4);
      } else {
        const uint16_t h = static_cast<uint16_t>(p[2 * i] | (p[2 * i + 1] << 8));
        if (e.dtype == "F16") {
          out[i] = HalfToFloat(h);
        } else {
          const uint32_t bits = static_cast<uint32_t>(h) << 16;
          std::memcpy(out + i, &bits, 4);
        }
      }
    }
    converted_bytes_ += count * sizeof(float);
  }
  return static_cast<const float*>(slot->second.data());
}

void SafeTensorsFile::Release(const void* p, size_t bytes) const {
  if (map_ == nullptr) return;
  const uintptr_t base = reinterpret_cast<uintptr_t>(map_);
  const uintptr_t begin = reinterpret_cast<uintptr_t>(p);
  if (begin < base || begin + bytes > base + size_) return;
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t from = (begin + page - 1) / page * page;
  const uintptr_t to = (begin + bytes) / page * page;
  if (to > from) madvise(reinterpret_cast<void*>(from), to - from, MADV_DONTNEED);
}

}  // namespace msp::native
