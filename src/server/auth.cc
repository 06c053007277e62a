// API keys: loading, validation and constant-time lookup.
#include "server/auth.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include <httplib.h>

namespace msp {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v'; }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

// Compares `given` with `stored` in time that depends only on given.size().
bool ConstantTimeEquals(std::string_view given, std::string_view stored) {
  unsigned char diff = given.size() == stored.size() ? 0 : 1;
  if (stored.empty()) return false;
  for (size_t i = 0; i < given.size(); ++i) {
    diff |= static_cast<unsigned char>(given[i] ^ stored[i % stored.size()]);
  }
  return diff == 0;
}

}  // namespace

bool IsValidTenantName(std::string_view tenant) {
  if (tenant.empty() || tenant.size() > 128) return false;
  return std::all_of(tenant.begin(), tenant.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
           c == '-';
  });
}

Status ApiKeys::Add(std::string key, std::string tenant, std::string_view where) {
  const std::string at(where);
  if (key.size() < kMinApiKeyLength) {
    return Status::InvalidArgument(at + ": the API key is shorter than " + std::to_string(kMinApiKeyLength) +
                                   " characters");
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
  for (const auto& [k, t] : keys_) {
    if (k == key) return Status::InvalidArgument(at + ": this API key is already given (for tenant " + t + ")");
  }
  keys_.emplace_back(std::move(key), std::move(tenant));
  return Status::Ok();
}

Result<ApiKeys> ApiKeys::Load(const std::vector<std::string>& entries, const std::string& file) {
  ApiKeys keys;
  for (size_t i = 0; i < entries.size(); ++i) {
    const std::string where = "server.api_keys entry " + std::to_string(i + 1);
    const std::string_view entry = Trim(entries[i]);
    const size_t eq = entry.rfind('=');
    if (eq == std::string_view::npos) {
      return Status::InvalidArgument(where + ": expected KEY=TENANT");
    }
    MSP_RETURN_IF_ERROR(
        keys.Add(std::string(Trim(entry.substr(0, eq))), std::string(Trim(entry.substr(eq + 1))), where));
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
    const std::string_view l = Trim(line);
    if (l.empty() || l.front() == '#') continue;
    size_t sep = 0;
    while (sep < l.size() && !IsSpace(l[sep])) ++sep;
    if (sep == l.size()) return Status::InvalidArgument(where + ": expected KEY TENANT");
    MSP_RETURN_IF_ERROR(keys.Add(std::string(l.substr(0, sep)), std::string(Trim(l.substr(sep))), where));
  }
  if (in.bad()) return Status::IoError("reading server.api_keys_file '" + file + "' failed");
  return keys;
}

std::optional<std::string> ApiKeys::TenantFor(std::string_view key) const {
  const std::pair<std::string, std::string>* found = nullptr;
  for (const auto& entry : keys_) {
    // No early exit: every key is compared whatever matched before.
    if (ConstantTimeEquals(key, entry.first)) found = &entry;
  }
  if (key.empty() || found == nullptr) return std::nullopt;
  return found->second;
}

std::vector<std::string> ApiKeys::Tenants() const {
  std::set<std::string> tenants;
  for (const auto& entry : keys_) tenants.insert(entry.second);
  return {tenants.begin(), tenants.end()};
}

std::string RequestApiKey(const httplib::Request& req) {
  const std::string auth = req.get_header_value("Authorization");
  if (auth.size() > 7) {
    std::string scheme = auth.substr(0, 7);
    std::transform(scheme.begin(), scheme.end(), scheme.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (scheme == "bearer ") return std::string(Trim(std::string_view(auth).substr(7)));
  }
  return std::string(Trim(req.get_header_value("X-API-Key")));
}

}  // namespace msp
