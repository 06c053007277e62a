// FNV-1a hashes (xor each byte, then multiply) of byte strings, a 128-bit
// hash and a file checksum. Their values are stored (word-vector tables,
// name UUIDs, mission record ids, index terms, lock keys, vector files), so
// they must never change; data/embeddings/convert.mjs computes Fnv1a32 too.
#ifndef MSP_UTIL_HASH_H_
#define MSP_UTIL_HASH_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <utility>

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

namespace hash_internal {

// The splitmix64 finaliser.
inline uint64_t Mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

}  // namespace hash_internal

// A 128-bit hash of `s` as {high, low} 64-bit halves: an FNV-1a lane and a
// splitmix64 lane, each finished with the other. The mission records' ids
// are made from it (mission/records.h, MissionRecordId), so its values must
// never change.
inline std::pair<uint64_t, uint64_t> Hash128(std::string_view s) {
  using hash_internal::Mix64;
  uint64_t a = 0xCBF29CE484222325ULL;
  uint64_t b = 0x84222325CBF29CE4ULL ^ s.size();
  for (unsigned char c : s) {
    a = (a ^ c) * 0x100000001B3ULL;
    b = Mix64(b ^ (c + 0x9E3779B97F4A7C15ULL));
  }
  return {Mix64(a ^ Mix64(b)), Mix64(b ^ (a * 0x9E3779B97F4A7C15ULL))};
}

// A 64-bit checksum of `n` bytes, chained from `seed`, for telling a torn or
// garbled file from a good one (not a defence against a chosen collision).
// Four lanes of 8-byte words (multiply, rotate), so it runs at several GB/s.
// Stored in files (the vector index's): its values must never change.
inline uint64_t Checksum64(const void* data, size_t n, uint64_t seed = 0) {
  constexpr uint64_t kA = 0x9E3779B185EBCA87ull;
  constexpr uint64_t kB = 0xC2B2AE3D27D4EB4Full;
  auto rotl = [](uint64_t x, int r) { return (x << r) | (x >> (64 - r)); };
  auto mix = [&](uint64_t h, uint64_t w) { return rotl(h + w * kB, 31) * kA; };
  auto word = [](const unsigned char* p) {
    uint64_t w;
    std::memcpy(&w, p, sizeof w);
    return w;
  };
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t lane[4] = {seed + kA + kB, seed + kB, seed, seed - kA};
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    for (int l = 0; l < 4; ++l) lane[l] = mix(lane[l], word(p + i + 8 * l));
  }
  uint64_t h = rotl(lane[0], 1) + rotl(lane[1], 7) + rotl(lane[2], 12) + rotl(lane[3], 18);
  for (; i + 8 <= n; i += 8) h = mix(h, word(p + i)) ^ rotl(h, 27);
  uint64_t tail = 0;
  if (i < n) std::memcpy(&tail, p + i, n - i);
  h = mix(h, tail) ^ static_cast<uint64_t>(n);
  h ^= h >> 33;
  h *= kB;
  h ^= h >> 29;
  return h;
}

}  // namespace msp

#endif  // MSP_UTIL_HASH_H_
