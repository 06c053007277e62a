// Helpers shared by the fuzz targets (fuzz/CMakeLists.txt): the input as a
// string_view, and the JSON text of a target that takes JSON.
#ifndef MSP_FUZZ_FUZZ_UTIL_H_
#define MSP_FUZZ_FUZZ_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace msp::fuzz {

inline std::string_view Text(const uint8_t* data, size_t size) {
  return std::string_view(reinterpret_cast<const char*>(data), size);
}

}  // namespace msp::fuzz

#endif  // MSP_FUZZ_FUZZ_UTIL_H_
