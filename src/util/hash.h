// FNV-1a hashes (xor each byte, then multiply) of byte strings. Their values
// are stored (word-vector tables, name UUIDs, index terms, lock keys), so
// they must never change; data/embeddings/convert.mjs computes Fnv1a32 too.
#ifndef MSP_UTIL_HASH_H_
#define MSP_UTIL_HASH_H_

#include <cstdint>
#include <string_view>

namespace msp {

inline constexpr uint32_t kFnv1a32OffsetBasis = 2166136261u;
inline constexpr uint32_t kFnv1a32Prime = 16777619u;
inline constexpr uint64_t kFnv1a64OffsetBasis = 14695981039346656037ull;
inline constexpr uint64_t kFnv1a64Prime = 1099511628211ull;

namespace hash_internal {

template <typename H>
constexpr H Fnv1a(std::string_view bytes, H seed, H prime) {
  H h = seed;
  for (char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= prime;
  }
  return h;
}

}  // namespace hash_internal

// 32-bit FNV-1a of `bytes`, continuing from `seed` (a previous hash chains).
constexpr uint32_t Fnv1a32(std::string_view bytes, uint32_t seed = kFnv1a32OffsetBasis) {
  return hash_internal::Fnv1a(bytes, seed, kFnv1a32Prime);
}

// 64-bit FNV-1a of `bytes`, continuing from `seed` (a previous hash chains).
constexpr uint64_t Fnv1a64(std::string_view bytes, uint64_t seed = kFnv1a64OffsetBasis) {
  return hash_internal::Fnv1a(bytes, seed, kFnv1a64Prime);
}

static_assert(Fnv1a32("") == kFnv1a32OffsetBasis && Fnv1a32("a") == 0xe40c292cu);
static_assert(Fnv1a64("") == kFnv1a64OffsetBasis && Fnv1a64("a") == 0xaf63dc4c8601ec8cull);

}  // namespace msp

#endif  // MSP_UTIL_HASH_H_
