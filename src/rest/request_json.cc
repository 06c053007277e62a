// Strict JSON and query-parameter readers for the REST API.
#include "rest/request_json.h"

#include <algorithm>
#include <limits>

#include "codec/json_reader.h"
#include "codec/memory_json.h"
#include "util/time.h"

namespace msp {
namespace {

using nlohmann::json;

using Reader = JsonReader;

Status ReadNamespaceParts(const Reader& r, Namespace* ns) {
  MSP_RETURN_IF_ERROR(r.String("user", &ns->user));
  MSP_RETURN_IF_ERROR(r.String("agent", &ns->agent));
  MSP_RETURN_IF_ERROR(r.String("session", &ns->session));
  MSP_RETURN_IF_ERROR(r.String("mission", &ns->mission));
  return r.String("operator", &ns->operator_id);
}

Result<Namespace> ReadNamespace(const Reader& body, const std::string& tenant, const std::string& field) {
  Namespace ns;
  ns.tenant = tenant;
  if (!body.Has(field)) return ns;
  Reader r(body.obj().at(field), body.prefix() + field + ".");
  MSP_RETURN_IF_ERROR(r.Object());
  std::vector<std::string> known = kNamespaceParts;
  known.push_back("tenant");
  MSP_RETURN_IF_ERROR(r.Known(known));
  MSP_RETURN_IF_ERROR(ReadNamespaceParts(r, &ns));
  return ns;
}

}  // namespace

Result<Namespace> NamespaceFromBody(const json& body, const std::string& tenant, const std::string& field) {
  return ReadNamespace(Reader(body, ""), tenant, field);
}

Status CheckQueryNames(const QueryParams& q, const std::vector<std::string>& known) {
  for (const auto& [name, value] : q) {
    if (name == "tenant" || std::find(known.begin(), known.end(), name) != known.end()) continue;
    std::string list = "tenant";
    for (const std::string& k : known) list += ", " + k;
    return Status::InvalidArgument("unknown parameter '" + name + "'; known parameters are " + list);
  }
  return Status::Ok();
}

std::vector<std::string> WithNamespaceParams(std::vector<std::string> names) {
  names.insert(names.begin(), kNamespaceParts.begin(), kNamespaceParts.end());
  return names;
}

QueryParams ParseQuery(std::string_view target) {
  QueryParams out;
  const size_t question = target.find('?');
  if (question == std::string_view::npos) return out;
  std::string_view rest = target.substr(question + 1);
  const size_t hash = rest.find('#');
  if (hash != std::string_view::npos) rest = rest.substr(0, hash);
  auto decode = [](std::string_view s) {
    auto hex = [](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      if (c >= 'A' && c <= 'F') return c - 'A' + 10;
      return -1;
    };
    std::string d;
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] == '+') {
        d += ' ';
      } else if (s[i] == '%' && i + 2 < s.size() && hex(s[i + 1]) >= 0 && hex(s[i + 2]) >= 0) {
        d += static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2]));
        i += 2;
      } else {
        d += s[i];
      }
    }
    return d;
  };
  while (!rest.empty()) {
    const size_t amp = rest.find('&');
    const std::string_view pair = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
    if (pair.empty()) continue;
    const size_t eq = pair.find('=');
    if (eq == std::string_view::npos) {
      out.emplace(decode(pair), "");
    } else {
      out.emplace(decode(pair.substr(0, eq)), decode(pair.substr(eq + 1)));
    }
  }
  return out;
}

std::vector<std::string> ListParam(const QueryParams& q, const std::string& name) {
  std::vector<std::string> out;
  auto [begin, end] = q.equal_range(name);
  for (auto it = begin; it != end; ++it) {
    size_t start = 0;
    const std::string& v = it->second;
    while (start <= v.size()) {
      const size_t comma = v.find(',', start);
      const std::string item = v.substr(start, (comma == std::string::npos ? v.size() : comma) - start);
      if (!item.empty()) out.push_back(item);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  return out;
}

Result<TimeMs> TimeParam(const QueryParams& q, const std::string& name) {
  const std::string v = StringParam(q, name);
  if (v.empty()) return TimeMs{0};
  Result<TimeMs> t = ParseIso8601(v);
  if (!t.ok()) return Status::InvalidArgument("parameter '" + name + "': " + t.status().message());
  return t;
}

std::string StringParam(const QueryParams& q, const std::string& name) {
  auto [begin, end] = q.equal_range(name);
  std::string out;
  for (auto it = begin; it != end; ++it) out = it->second;
  return out;
}

Result<int64_t> IntParam(const QueryParams& q, const std::string& name, int64_t lo, int64_t hi, int64_t fallback) {
  if (q.find(name) == q.end()) return fallback;
  const std::string v = StringParam(q, name);
  int64_t n = 0;
  size_t i = 0;
  const bool negative = !v.empty() && v[0] == '-';
  if (negative) i = 1;
  bool ok = i < v.size() && v.size() - i <= 18;
  for (; ok && i < v.size(); ++i) {
    if (v[i] < '0' || v[i] > '9') ok = false;
    else n = n * 10 + (v[i] - '0');
  }
  if (negative) n = -n;
  if (!ok || n < lo || n > hi) {
    return Status::InvalidArgument("parameter '" + name + "' must be an integer between " + std::to_string(lo) +
                                   " and " + std::to_string(hi) + ", got '" + v + "'");
  }
  return n;
}

Result<bool> BoolParam(const QueryParams& q, const std::string& name, bool fallback) {
  if (q.find(name) == q.end()) return fallback;
  const std::string v = StringParam(q, name);
  if (v == "true" || v == "1" || v.empty()) return true;
  if (v == "false" || v == "0") return false;
  return Status::InvalidArgument("parameter '" + name + "' must be true or false, got '" + v + "'");
}

Result<Namespace> NamespaceFromQuery(const QueryParams& q, const std::string& tenant) {
  Namespace ns;
  ns.tenant = tenant;
  ns.user = StringParam(q, "user");
  ns.agent = StringParam(q, "agent");
  ns.session = StringParam(q, "session");
  ns.mission = StringParam(q, "mission");
  ns.operator_id = StringParam(q, "operator");
  return ns;
}

Result<ListRequest> ListRequestFromQuery(const QueryParams& q, const std::string& tenant) {
  ListRequest l;
  MSP_ASSIGN_OR_RETURN(l.scope, NamespaceFromQuery(q, tenant));
  MSP_ASSIGN_OR_RETURN(l.filter.kinds, EnumParams(q, "kind", ParseKind, KindName));
  MSP_ASSIGN_OR_RETURN(l.filter.layers, EnumParams(q, "layer", ParseLayer, LayerName));
  l.filter.tags = ListParam(q, "tag");
  l.filter.sources = ListParam(q, "source");
  MSP_ASSIGN_OR_RETURN(l.filter.created_from, TimeParam(q, "created_from"));
  MSP_ASSIGN_OR_RETURN(l.filter.created_to, TimeParam(q, "created_to"));
  MSP_ASSIGN_OR_RETURN(l.filter.include_superseded, BoolParam(q, "include_superseded", false));
  MSP_ASSIGN_OR_RETURN(l.include_expired, BoolParam(q, "include_expired", false));
  MSP_ASSIGN_OR_RETURN(l.newest_first, BoolParam(q, "newest_first", false));
  MSP_ASSIGN_OR_RETURN(l.as_of, TimeParam(q, "as_of"));
  MSP_ASSIGN_OR_RETURN(int64_t limit, IntParam(q, "limit", 1, 1000, 100));
  MSP_ASSIGN_OR_RETURN(int64_t offset, IntParam(q, "offset", 0, 1000000000, 0));
  l.limit = static_cast<int>(limit);
  l.offset = static_cast<int>(offset);
  return l;
}

}  // namespace msp
