// UUIDv7: 48 bits of Unix ms, version and variant bits, 74 random bits.
#include "util/uuid.h"

#include <unistd.h>

#include <cctype>
#include <cstdint>
#include <mutex>
#include <random>

#include "util/hash.h"

namespace msp {
namespace {

// The canonical lowercase 8-4-4-4-12 form of 16 bytes.
std::string FormatUuid(const unsigned char (&b)[16]) {
  static const char* kHex = "0123456789abcdef";
  std::string out;
  out.reserve(36);
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out.push_back('-');
    out.push_back(kHex[b[i] >> 4]);
    out.push_back(kHex[b[i] & 0xF]);
  }
  return out;
}

}  // namespace

std::string NewUuid(TimeMs now) {
  static std::mutex mu;
  static std::mt19937_64 rng;
  static pid_t seeded_for = 0;
  uint64_t r1, r2;
  {
    std::lock_guard<std::mutex> lock(mu);
    // Seeded afresh in each process: a child of fork() inherits the
    // generator's state, and two children drawing the same numbers in the
    // same millisecond would give two records one id (the second write
    // replacing the first).
    if (const pid_t pid = getpid(); pid != seeded_for) {
      std::random_device device;
      std::seed_seq seed{device(), device(), device(), device(), static_cast<unsigned>(pid),
                         static_cast<unsigned>(now)};
      rng.seed(seed);
      seeded_for = pid;
    }
    r1 = rng();
    r2 = rng();
  }
  unsigned char b[16];
  const uint64_t ms = static_cast<uint64_t>(now) & 0xFFFFFFFFFFFFULL;
  for (int i = 0; i < 6; ++i) b[i] = static_cast<unsigned char>(ms >> (40 - 8 * i));
  b[6] = static_cast<unsigned char>(0x70 | (r1 & 0x0F));
  b[7] = static_cast<unsigned char>(r1 >> 8);
  b[8] = static_cast<unsigned char>(0x80 | ((r1 >> 16) & 0x3F));
  for (int i = 9; i < 16; ++i) b[i] = static_cast<unsigned char>(r2 >> (8 * (i - 9)));
  return FormatUuid(b);
}

std::string NameUuid(std::string_view key) {
  const uint64_t hi = Fnv1a64(key);
  const uint64_t lo = Fnv1a64(key, 0x84222325CBF29CE4ull ^ hi);
  return HashUuid(hi, lo);
}

std::string HashUuid(uint64_t hi, uint64_t lo) {
  unsigned char b[16];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<unsigned char>(hi >> (56 - 8 * i));
  for (int i = 0; i < 8; ++i) b[8 + i] = static_cast<unsigned char>(lo >> (56 - 8 * i));
  b[6] = static_cast<unsigned char>(0x80 | (b[6] & 0x0F));
  b[8] = static_cast<unsigned char>(0x80 | (b[8] & 0x3F));
  return FormatUuid(b);
}

bool IsUuid(std::string_view s) {
  if (s.size() != 36) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (s[i] != '-') return false;
    } else if (!std::isxdigit(static_cast<unsigned char>(s[i]))) {
      return false;
    }
  }
  return true;
}

}  // namespace msp
