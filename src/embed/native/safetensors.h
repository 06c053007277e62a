// SafeTensorsFile: a model's weights in the safetensors format, memory-mapped
// and read in place.
//
// The format: an 8-byte little-endian header length n, n bytes of JSON
// ({"name": {"dtype": "F32", "shape": [...], "data_offsets": [begin, end]},
// "__metadata__": {...}}), then the data, offsets relative to its start.
// Open checks every entry against the file (dtype known, shape's element
// count times the dtype's size equals end - begin, begin <= end <= the data's
// size, no overflow), so a truncated or lying file is an error, never a read
// outside the mapping. F32 tensors are used where they lie (4-byte aligned);
// F16 and BF16 ones are converted to F32 copies on first use.
// Not thread-safe while tensors are being fetched (the model fetches them
// all when it loads); the pointers it returns stay valid until it is
// destroyed.
#ifndef MSP_EMBED_NATIVE_SAFETENSORS_H_
#define MSP_EMBED_NATIVE_SAFETENSORS_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "msp/status.h"

namespace msp::native {

class SafeTensorsFile {
 public:
  // Maps `path` and checks its header. NotFound when the file is not there,
  // Corruption (naming the file and the entry) when it is not a well-formed
  // safetensors file.
  static Result<std::unique_ptr<SafeTensorsFile>> Open(const std::string& path);
  // The same checks on bytes in memory (`name` for messages).
  // REQUIRES: data[0, size) outlives the result.
  static Result<std::unique_ptr<SafeTensorsFile>> FromBytes(const void* data, size_t size, const std::string& name);
  ~SafeTensorsFile();
  SafeTensorsFile(const SafeTensorsFile&) = delete;
  SafeTensorsFile& operator=(const SafeTensorsFile&) = delete;

  bool Has(const std::string& name) const { return entries_.count(name) != 0; }
  // Every tensor's name and shape, in no particular order.
  std::vector<std::pair<std::string, std::vector<int64_t>>> Tensors() const;
  // The tensor `name` as F32 values, which must have exactly `shape`.
  // InvalidArgument naming the tensor when it is missing, of another shape,
  // or of a dtype other than F32, F16, BF16.
  Result<const float*> Float32(const std::string& name, const std::vector<int64_t>& shape);

  // Drops the whole pages of [p, p + bytes) from the process's memory when
  // they lie in the mapping (they are read from the file again if used):
  // for tensors the model has copied (int8 weights). Else nothing.
  void Release(const void* p, size_t bytes) const;

  const std::string& path() const { return path_; }
  size_t file_bytes() const { return size_; }
  // Bytes of F32 copies made for F16/BF16 tensors.
  size_t converted_bytes() const { return converted_bytes_; }

 private:
  struct Entry {
    std::string dtype;
    std::vector<int64_t> shape;
    uint64_t begin = 0;
    uint64_t end = 0;
  };
  SafeTensorsFile() = default;
  // Parses and checks the header of bytes_[0, size_).
  Status Index(const uint8_t* bytes);

  std::string path_;
  void* map_ = nullptr;
  size_t size_ = 0;
  const uint8_t* data_ = nullptr;  // start of the data section
  std::unordered_map<std::string, Entry> entries_;
  std::unordered_map<std::string, std::vector<float>> converted_;
  size_t converted_bytes_ = 0;
};

}  // namespace msp::native

#endif  // MSP_EMBED_NATIVE_SAFETENSORS_H_
