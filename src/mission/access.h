// Reading mission records through MemoryLayer under an asker's clearance:
// the few store calls (and the list filter match) the decision, principle,
// operator and correction operations share. Internal.
#ifndef MSP_MISSION_ACCESS_H_
#define MSP_MISSION_ACCESS_H_

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "msp/memory.h"
#include "msp/status.h"
#include "msp/types.h"

namespace msp {

// The record `id` visible in `scope`, or nullopt when there is none (other
// errors pass through).
Result<std::optional<Memory>> FindRecord(MemoryLayer& engine, const Namespace& scope, const std::string& id);

// The record `id` of kind `kind` visible in `scope` at `clearance` (nullopt:
// no limit). NotFound "no <what> <id> ..." when missing, of another kind or
// above the clearance (existence is not revealed).
Result<Memory> GetVisible(MemoryLayer& engine, const Namespace& scope, const std::string& id, Kind kind,
                          std::optional<int> clearance, const std::string& what);

// Every record of `kind` in `scope` (all pages), oldest first, at or below
// `clearance` (nullopt: no limit), with superseded ones when asked, only
// those carrying `tag` when it is non-empty.
Result<std::vector<Memory>> ListAll(MemoryLayer& engine, const Namespace& scope, Kind kind,
                                    std::optional<int> clearance, bool include_superseded,
                                    const std::string& tag = "");

// True when `wanted` is empty (the filter is off) or holds `v`: how a list
// filter's fields (components, statuses ...) match a record.
template <typename T>
bool AnyOf(const std::vector<T>& wanted, const T& v) {
  return wanted.empty() || std::find(wanted.begin(), wanted.end(), v) != wanted.end();
}

}  // namespace msp

#endif  // MSP_MISSION_ACCESS_H_
