// API keys of the HTTP server: which tenant a request's key belongs to.
//
// Keys come from the settings server.api_keys ("KEY=TENANT" entries) and
// server.api_keys_file (one "KEY TENANT" a line). A request carries its key
// as `Authorization: Bearer KEY` or `X-API-Key: KEY`. Keys are never logged
// or echoed in error messages (entries are named by position), and lookups
// compare in time that does not depend on how much of a stored key matches.
#ifndef MSP_SERVER_AUTH_H_
#define MSP_SERVER_AUTH_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "msp/status.h"

namespace httplib {
struct Request;
}

namespace msp {

// Shortest key accepted: shorter keys are guessable.
constexpr size_t kMinApiKeyLength = 16;

// A fixed set of key -> tenant entries. Immutable after loading; safe to
// share between threads.
class ApiKeys {
 public:
  ApiKeys() = default;

  // Parses `entries` ("KEY=TENANT") and, when `file` is not empty, the file
  // (one "KEY TENANT" a line; blank lines and lines starting with # are
  // skipped). Errors are InvalidArgument naming the entry index or the file
  // and line, never the key: a key shorter than kMinApiKeyLength or holding
  // whitespace or control characters, an empty or malformed tenant, a key
  // given twice. A missing or unreadable file is NotFound / IoError.
  static Result<ApiKeys> Load(const std::vector<std::string>& entries, const std::string& file);

  // Adds one key. Same checks as Load; `where` names the entry in errors.
  Status Add(std::string key, std::string tenant, std::string_view where);

  // The tenant of `key`, or nullopt. Every stored key is compared, each in
  // time depending only on the length of `key`.
  std::optional<std::string> TenantFor(std::string_view key) const;

  bool empty() const { return keys_.empty(); }
  size_t size() const { return keys_.size(); }
  // The distinct tenants, sorted.
  std::vector<std::string> Tenants() const;

 private:
  std::vector<std::pair<std::string, std::string>> keys_;  // key, tenant
};

// True when `tenant` is a usable tenant name: 1..128 characters of
// [A-Za-z0-9._-].
bool IsValidTenantName(std::string_view tenant);

// The API key a request carries: the token of `Authorization: Bearer KEY`
// (scheme case-insensitive), else the `X-API-Key` header; empty if neither.
std::string RequestApiKey(const httplib::Request& req);

}  // namespace msp

#endif  // MSP_SERVER_AUTH_H_
