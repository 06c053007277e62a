// Record ids: UUID version 7 (time-ordered, random tail), and name-based
// version 8 ids for records that must have one id per name.
#ifndef MSP_UTIL_UUID_H_
#define MSP_UTIL_UUID_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "msp/types.h"

namespace msp {

// A new UUIDv7 for time `now`, lowercase canonical form. Thread-safe.
std::string NewUuid(TimeMs now);
// A deterministic UUID (version 8) for `key`: the same key always gives the
// same id, so a record keyed by a name (a core-memory block, one version of
// a procedure, a turn's journal) is found and replaced by id. Built from two
// 64-bit FNV-1a hashes of the key; these ids are stored, so the function
// never changes.
std::string NameUuid(std::string_view key);
// The version 8 UUID whose bits are the 128-bit hash {hi, lo} (big-endian)
// with the version and variant bits set: how NameUuid and the mission
// records' ids (Hash128) are formatted. Stored, so it never changes.
std::string HashUuid(uint64_t hi, uint64_t lo);
// True for a canonical lowercase or uppercase 8-4-4-4-12 hex UUID.
bool IsUuid(std::string_view s);

}  // namespace msp

#endif  // MSP_UTIL_UUID_H_
