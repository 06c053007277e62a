// API keys of the HTTP server: which tenant a request's key belongs to.
//
// Keys come from the settings server.api_keys ("KEY=TENANT" or
// "KEY=TENANT:CLEARANCE" entries) and server.api_keys_file (one
// "KEY TENANT [CLEARANCE]" a line). A key's clearance (0..kMaxAccessLevel)
// limits what it is served to records whose access_level is at or below it;
// a key without one has no limit. A request carries its key as
// `Authorization: Bearer KEY` or `X-API-Key: KEY`. Keys are never logged
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

// Whom a key speaks for.
struct ApiPrincipal {
  std::string tenant;
  // 0..kMaxAccessLevel: only records whose access_level is at most this are
  // served to the key. nullopt: no limit.
  std::optional<int> clearance;
};

// A fixed set of key -> tenant (and clearance) entries. Immutable after loading; safe to
// share between threads.
class ApiKeys {
 public:
  ApiKeys() = default;

  // Parses `entries` ("KEY=TENANT" or "KEY=TENANT:CLEARANCE") and, when
  // `file` is not empty, the file (one "KEY TENANT" or "KEY TENANT CLEARANCE"
  // a line; blank lines and lines starting with # are skipped). Errors are
  // InvalidArgument naming the entry index or the file and line, never the
  // key: a key shorter than kMinApiKeyLength or holding whitespace or
  // control characters, an empty or malformed tenant, a clearance that is
  // not an integer 0..kMaxAccessLevel, a key given twice. A missing or
  // unreadable file is NotFound / IoError.
  static Result<ApiKeys> Load(const std::vector<std::string>& entries, const std::string& file);

  // Adds one key. Same checks as Load; `where` names the entry in errors.
  Status Add(std::string key, std::string tenant, std::string_view where,
             std::optional<int> clearance = std::nullopt);

  // The tenant of `key`, or nullopt. Every stored key is compared, each in
  // time depending only on the length of `key`.
  std::optional<std::string> TenantFor(std::string_view key) const;
  // The tenant and clearance of `key`, or nullopt; compared as TenantFor.
  std::optional<ApiPrincipal> PrincipalFor(std::string_view key) const;

  bool empty() const { return keys_.empty(); }
  size_t size() const { return keys_.size(); }
  // The distinct tenants, sorted.
  std::vector<std::string> Tenants() const;

 private:
  std::vector<std::pair<std::string, ApiPrincipal>> keys_;
};

// True when `tenant` is a usable tenant name: 1..128 characters of
// [A-Za-z0-9._-].
bool IsValidTenantName(std::string_view tenant);

// The API key a request carries: the token of `Authorization: Bearer KEY`
// (scheme case-insensitive), else the `X-API-Key` header; empty if neither.
std::string RequestApiKey(const httplib::Request& req);

}  // namespace msp

#endif  // MSP_SERVER_AUTH_H_
