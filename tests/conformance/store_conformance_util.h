// The records and batches the Store conformance tests share (the tests are
// in store_conformance_*.cc; the helpers are defined in store_conformance.cc).
#ifndef MSP_TESTS_CONFORMANCE_STORE_CONFORMANCE_UTIL_H_
#define MSP_TESTS_CONFORMANCE_STORE_CONFORMANCE_UTIL_H_

#include <string>
#include <vector>

#include "msp/types.h"
#include "store/store.h"

namespace msp::conformance {

// A small valid record.
Memory Rec(const std::string& id, TimeMs created_at, Kind kind = Kind::kFact, const std::string& tenant = "t1");

WriteBatch Puts(std::vector<Memory> records);
WriteBatch Deletes(std::vector<std::string> ids);
std::vector<std::string> Ids(const std::vector<Memory>& records);

// A record with every field set to something other than its default.
Memory FullRecord(const std::string& id);

using Strings = std::vector<std::string>;

}  // namespace msp::conformance

#endif  // MSP_TESTS_CONFORMANCE_STORE_CONFORMANCE_UTIL_H_
