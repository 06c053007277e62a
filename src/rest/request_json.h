// JSON -> engine requests for the REST API: strict readers of a body's
// namespace and of the query parameters of the routes not declared in
// src/api (the declared ones decode with their operation's field table).
//
// Strict means: unknown fields, wrong JSON types, unknown enum names and
// out-of-range numbers are InvalidArgument naming the field (and listing
// what is allowed). The tenant is never read from a request: callers pass the
// API key's tenant, and the REST layer has already refused (403) a request
// naming another one.
#ifndef MSP_REST_REQUEST_JSON_H_
#define MSP_REST_REQUEST_JSON_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "msp/memory.h"
#include "codec/memory_json.h"
#include "msp/status.h"
#include "msp/types.h"

namespace msp {

// The parts of a namespace a request may name (the tenant is the API key's).
inline const std::vector<std::string> kNamespaceParts = {"user", "agent", "session", "mission", "operator"};

// The namespace of a body: its "namespace" object (user, agent, session,
// mission, operator, and tenant, which is not read) under `tenant`. A body
// without "namespace" is the whole tenant.
Result<Namespace> NamespaceFromBody(const nlohmann::json& body, const std::string& tenant,
                                    const std::string& field = "namespace");

// Query parameters of a GET: name -> every value given.
using QueryParams = std::multimap<std::string, std::string>;

// The query parameters of a request target ("/v1/memories?user=ann&kind=a,b"):
// names and values percent-decoded ('+' is a space). Only the target is read:
// a form-encoded body never becomes parameters.
QueryParams ParseQuery(std::string_view target);

// The namespace of a GET: the parameters user, agent, session, mission,
// operator under `tenant`.
Result<Namespace> NamespaceFromQuery(const QueryParams& q, const std::string& tenant);

// GET /v1/memories: the namespace parameters, kind, layer, tag, source
// (each repeatable or comma-separated), created_from, created_to,
// include_superseded, include_expired, newest_first, limit (1..1000, default
// 100), offset, as_of. (The caller checks the parameter names.)
Result<ListRequest> ListRequestFromQuery(const QueryParams& q, const std::string& tenant);

// Checks that every parameter of `q` is "tenant" or one of `known`.
Status CheckQueryNames(const QueryParams& q, const std::vector<std::string>& known);
// `names` after the namespace parameters user, agent, session, mission,
// operator.
std::vector<std::string> WithNamespaceParams(std::vector<std::string> names);

// An integer query parameter in [lo, hi]; `fallback` when absent.
Result<int64_t> IntParam(const QueryParams& q, const std::string& name, int64_t lo, int64_t hi, int64_t fallback);
// Every value of a repeatable, comma-separable parameter ("kind=a,b&kind=c").
std::vector<std::string> ListParam(const QueryParams& q, const std::string& name);
// An ISO 8601 time parameter; 0 when absent.
Result<TimeMs> TimeParam(const QueryParams& q, const std::string& name);
// Every value of a repeatable, comma-separable enum parameter.
template <typename E>
inline Result<std::vector<E>> EnumParams(const QueryParams& q, const std::string& name,
                                         std::optional<E> (*parse)(std::string_view),
                                         std::string_view (*name_of)(E)) {
  std::vector<E> out;
  for (const std::string& v : ListParam(q, name)) {
    std::optional<E> e = parse(v);
    if (!e) {
      return Status::InvalidArgument("parameter '" + name + "': unknown value '" + v + "'; allowed: " +
                                     EnumNames(name_of));
    }
    out.push_back(*e);
  }
  return out;
}

// A boolean query parameter (true/false/1/0); `fallback` when absent.
Result<bool> BoolParam(const QueryParams& q, const std::string& name, bool fallback);
// The last value of a parameter; "" when absent.
std::string StringParam(const QueryParams& q, const std::string& name);

}  // namespace msp

#endif  // MSP_REST_REQUEST_JSON_H_
