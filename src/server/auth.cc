// API keys: loading, validation and constant-time lookup.
#include "server/auth.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include <httplib.h>

#include "msp/types.h"
#include "util/text.h"

namespace msp {
namespace {

// Compares `given` with `stored` in time that depends only on given.size().
bool ConstantTimeEquals(std::string_view given, std::string_view stored) {
  unsigned char diff = given.size() == stored.size() ? 0 : 1;
  if (stored.empty()) return false;
  for (size_t i = 0; i < given.size(); ++i) {
    diff |= static_cast<unsigned char>(given[i] ^ stored[i % stored.size()]);
  }
  return diff == 0;
}

// A clearance column: an integer 0..kMaxAccessLevel.
static_assert(kMaxAccessLevel <= 9, "ParseClearance reads one digit");
Result<int> ParseClearance(std::string_view text, const std::string& where) {
  if (text.size() != 1 || text[0] < '0' || text[0] - '0' > kMaxAccessLevel) {
    return Status::InvalidArgument(where + ": the clearance must be an integer 0.." + std::to_string(kMaxAccessLevel) +
                                   ", got '" + std::string(text) + "'");
  }
  return text[0] - '0';
}

}  // namespace

bool IsValidTenantName(std::string_view tenant) {
  if (tenant.empty() || tenant.size() > 128) return false;
  return std::all_of(tenant.begin(), tenant.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
           c == '-';
  });
}

Status ApiKeys::Add(std::string key, std::string tenant, std::string_view where, std::optional<int> clearance) {
  const std::string at(where);
  if (key.size() < kMinApiKeyLength) {
    return Status::InvalidArgument(at + ": the API key has " + std::to_string(key.size()) +
                                   " characters; a key needs at least " + std::to_string(kMinApiKeyLength) +
                                   " (make one with `openssl rand -hex 16`, 32 characters)");
  }
  for (char c : key) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u == 0x7F) {
      return Status::InvalidArgument(at + ": the API key holds whitespace or a control character");
    }
  }
  if (!IsValidTenantName(tenant)) {
    return Status::InvalidArgument(at + ": tenant must be 1..128 characters of A-Z a-z 0-9 . _ -");
  }
  if (clearance && (*clearance < 0 || *clearance > kMaxAccessLevel)) {
    return Status::InvalidArgument(at + ": the clearance must be 0.." + std::to_string(kMaxAccessLevel));
  }
  for (const auto& [k, p] : keys_) {
    if (k == key) return Status::InvalidArgument(at + ": this API key is already given (for tenant " + p.tenant + ")");
  }
  keys_.emplace_back(std::move(key), ApiPrincipal{std::move(tenant), clearance});
  return Status::Ok();
}

Result<ApiKeys> ApiKeys::Load(const std::vector<std::string>& entries, const std::string& file) {
  ApiKeys keys;
  for (size_t i = 0; i < entries.size(); ++i) {
    const std::string where = "server.api_keys entry " + std::to_string(i + 1);
    const std::string_view entry = TrimAsciiSpace(entries[i]);
    const size_t eq = entry.rfind('=');
    if (eq == std::string_view::npos) {
      return Status::InvalidArgument(where + ": expected KEY=TENANT or KEY=TENANT:CLEARANCE");
    }
    std::string_view tenant = TrimAsciiSpace(entry.substr(eq + 1));
    std::optional<int> clearance;
    if (const size_t colon = tenant.find(':'); colon != std::string_view::npos) {
      MSP_ASSIGN_OR_RETURN(clearance, ParseClearance(TrimAsciiSpace(tenant.substr(colon + 1)), where));
      tenant = TrimAsciiSpace(tenant.substr(0, colon));
    }
    MSP_RETURN_IF_ERROR(
        keys.Add(std::string(TrimAsciiSpace(entry.substr(0, eq))), std::string(tenant), where, clearance));
  }
  if (file.empty()) return keys;
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) {
    return Status::NotFound("server.api_keys_file '" + file + "' does not exist");
  }
  std::ifstream in(file);
  if (!in) return Status::IoError("cannot read server.api_keys_file '" + file + "': " + std::strerror(errno));
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    const std::string where = file + " line " + std::to_string(line_no);
    const std::string_view l = TrimAsciiSpace(line);
    if (l.empty() || l.front() == '#') continue;
    size_t sep = 0;
    while (sep < l.size() && !IsAsciiSpace(l[sep])) ++sep;
    if (sep == l.size()) return Status::InvalidArgument(where + ": expected KEY TENANT [CLEARANCE]");
    std::string_view tenant = TrimAsciiSpace(l.substr(sep));
    std::optional<int> clearance;
    size_t end = 0;
    while (end < tenant.size() && !IsAsciiSpace(tenant[end])) ++end;
    if (end < tenant.size()) {
      MSP_ASSIGN_OR_RETURN(clearance, ParseClearance(TrimAsciiSpace(tenant.substr(end)), where));
      tenant = tenant.substr(0, end);
    }
    MSP_RETURN_IF_ERROR(keys.Add(std::string(l.substr(0, sep)), std::string(tenant), where, clearance));
  }
  if (in.bad()) return Status::IoError("reading server.api_keys_file '" + file + "' failed");
  return keys;
}

std::optional<ApiPrincipal> ApiKeys::PrincipalFor(std::string_view key) const {
  const std::pair<std::string, ApiPrincipal>* found = nullptr;
  for (const auto& entry : keys_) {
    // No early exit: every key is compared whatever matched before.
    if (ConstantTimeEquals(key, entry.first)) found = &entry;
  }
  if (key.empty() || found == nullptr) return std::nullopt;
  return found->second;
}

std::optional<std::string> ApiKeys::TenantFor(std::string_view key) const {
  std::optional<ApiPrincipal> p = PrincipalFor(key);
  if (!p) return std::nullopt;
  return p->tenant;
}

std::vector<std::string> ApiKeys::Tenants() const {
  std::set<std::string> tenants;
  for (const auto& entry : keys_) tenants.insert(entry.second.tenant);
  return {tenants.begin(), tenants.end()};
}

std::string RequestApiKey(const httplib::Request& req) {
  const std::string auth = req.get_header_value("Authorization");
  if (auth.size() > 7) {
    if (AsciiLower(std::string_view(auth).substr(0, 7)) == "bearer ") {
      return std::string(TrimAsciiSpace(std::string_view(auth).substr(7)));
    }
  }
  return std::string(TrimAsciiSpace(req.get_header_value("X-API-Key")));
}

}  // namespace msp
