// The REST route table and its handlers.
#include "rest/rest_api.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "api/operations.h"
#include "codec/memory_json.h"
#include "core/idempotency.h"
#include "rest/request_json.h"
#include "rest/rest_route.h"
#include "server/http_status.h"
#include "server/metrics.h"

namespace msp {

RestApi::RestApi(MemoryLayer& engine, RestOptions options) : engine_(engine), options_(std::move(options)) {
  Options o;
  o.mission = options_.mission;
  o.tokens = options_.tokens;
  o.policy.context_trusted_sources = options_.trusted_sources;
  Result<std::unique_ptr<WorkflowMemory>> wm = WorkflowMemory::Open(engine_, o);
  if (wm.ok()) {
    workflow_ = std::move(wm).value();
  } else {
    workflow_status_ = wm.status().WithContext("mission retrieval is unavailable (tokens.counter)");
  }
}

Result<Stats> RestApi::CachedStats(const std::string& tenant, std::optional<int> clearance) {
  const auto now = std::chrono::steady_clock::now();
  const auto key = std::make_pair(tenant, clearance);
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = stats_.find(key);
    if (it != stats_.end() && now - it->second.first < std::chrono::milliseconds(options_.stats_cache_ms)) {
      return it->second.second;
    }
  }
  Namespace scope;
  scope.tenant = tenant;
  MSP_ASSIGN_OR_RETURN(Stats s, AsCaller(engine_, Caller{tenant, options_.actor, clearance})->GetStats(scope));
  std::lock_guard<std::mutex> lock(mu_);
  stats_[key] = {now, s};
  return s;
}

Result<std::unique_ptr<WorkflowMemory>> RestApi::Workflow(MemoryLayer& layer) {
  if (!workflow_) return workflow_status_;
  return workflow_->Over(layer);
}

RestReply ClearanceForbidden(const std::string& what, int clearance) {
  const std::string message = what + " covers every record of the tenant whatever its access level, but this API key "
                              "is limited to clearance " + std::to_string(clearance) +
                              ": use a key without a clearance limit";
  return RestReply::Json(403, ErrorJson("forbidden", message));
}

namespace {

using nlohmann::json;

// Largest batch of POST /v1/memories.
constexpr size_t kMaxBatch = 1000;

using Reply = RestReply;

Result<Namespace> QueryScope(const RestRequest& r) { return NamespaceFromQuery(r.query, r.tenant()); }

// --- Handlers ---

// What a src/api operation knows of a REST call: the key's caller, its
// tenant, the engine as that caller. `workflow` holds the mission interface
// once opened.
api::CallContext ContextOf(RestApi& api, const RestRequest& r, std::unique_ptr<WorkflowMemory>& workflow) {
  api::CallContext context;
  context.engine = &r.engine();
  context.workflow = [&api, &r, &workflow]() -> Result<WorkflowMemory*> {
    MSP_ASSIGN_OR_RETURN(workflow, api.Workflow(r.engine()));
    return workflow.get();
  };
  context.ns.tenant = r.tenant();
  context.caller = r.caller;
  context.trusted_sources = api.options().trusted_sources;
  return context;
}

// POST /v1/memories: memory_write (src/api) for one record; for a batch
// ({"memories": [...]}), each record as memory_write reads it, written at once.
Result<Reply> WriteMemories(RestApi& api, const RestRequest& r) {
  std::unique_ptr<WorkflowMemory> workflow;
  const api::CallContext context = ContextOf(api, r, workflow);
  // Idempotency-Key: a repeat answers the first result (201, the same body)
  // and writes nothing; the key with another body is 409.
  const bool keyed = r.call.req.has_header("Idempotency-Key");
  if (!r.body.contains("memories")) {
    json body = r.body;
    // The key comes as the header or as the body's request_id (the name the
    // CLI and MCP use); both at once must agree.
    if (keyed) {
      const std::string key = r.call.req.get_header_value("Idempotency-Key");
      if (Status s = ValidateRequestId(key); !s.ok()) {
        return Status::InvalidArgument("header Idempotency-Key: " + s.message());
      }
      if (body.is_object() && body.contains("request_id") && body["request_id"] != key) {
        return Status::InvalidArgument("header Idempotency-Key and field 'request_id' differ: send one of them");
      }
      if (body.is_object()) body["request_id"] = key;
    }
    const api::Operation& op = *api::FindOperation("memory_write");
    MSP_ASSIGN_OR_RETURN(json answer, op.Call(context, body));
    return Reply::Json(op.info().rest_status, std::move(answer));
  }
  if (r.body.size() != 1) {
    return Status::InvalidArgument("a batch body holds only 'memories' (an array of records to write)");
  }
  if (keyed) {
    return Status::InvalidArgument("header Idempotency-Key applies to the write of one record, not to a batch "
                                   "('memories'): send each record on its own with its own key");
  }
  const json& items = r.body.at("memories");
  if (!items.is_array() || items.empty() || items.size() > kMaxBatch) {
    return Status::InvalidArgument("field 'memories' must be an array of 1.." + std::to_string(kMaxBatch) +
                                   " records");
  }
  std::vector<WriteRequest> requests;
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string prefix = "memories[" + std::to_string(i) + "].";
    MSP_ASSIGN_OR_RETURN(WriteRequest w, api::DecodeWrite(context, items[i], prefix));
    if (!w.request_id.empty()) {
      return Status::InvalidArgument("field '" + prefix +
                                     "request_id': an idempotency key applies to the write of one record, not "
                                     "to a batch: send each record on its own with its own key");
    }
    requests.push_back(std::move(w));
  }
  MSP_ASSIGN_OR_RETURN(std::vector<WriteResult> results, r.engine().WriteMany(requests));
  json out = json::array();
  for (const WriteResult& w : results) out.push_back(WriteResultToJson(w));
  return Reply::Json(201, {{"results", out}});
}

// A query parameter's value as the JSON the field's type reads: an integer,
// a number or a boolean when it reads as one (a boolean also as 1, 0 or
// nothing: "?newest_first"), else the text, which the operation then refuses
// naming the field; a list from every occurrence, each split at commas.
json ParamValue(const api::FieldInfo& f, const std::vector<std::string>& values) {
  const std::string& v = values.back();
  switch (f.type) {
    case api::FieldType::kStrings:
    case api::FieldType::kEnums: {
      json out = json::array();
      for (const std::string& value : values) {
        size_t start = 0;
        while (start <= value.size()) {
          const size_t comma = std::min(value.find(',', start), value.size());
          if (comma > start) out.push_back(value.substr(start, comma - start));
          start = comma + 1;
        }
      }
      return out;
    }
    case api::FieldType::kInt: {
      const size_t digits = v.size() - (v.rfind('-', 0) == 0 ? 1 : 0);
      if (digits == 0 || digits > 18 || v.find_first_not_of("0123456789", v.size() - digits) != std::string::npos) {
        return v;
      }
      return std::stoll(v);
    }
    case api::FieldType::kNumber: {
      json n = json::parse(v, nullptr, /*allow_exceptions=*/false);
      return n.is_number() ? n : json(v);
    }
    case api::FieldType::kBool:
      if (v == "true" || v == "1" || v.empty()) return true;
      if (v == "false" || v == "0") return false;
      return v;
    default: return v;
  }
}

// A namespace part the route's path names (/v1/sessions/{session}/end) is
// the path's: set in `request`'s namespace field; a request naming another
// value for it is refused (`where`: how the message names the request's).
Status PathIntoNamespace(const api::OperationInfo& info, const RestRequest& r, json& request,
                         const std::string& where) {
  for (const api::FieldInfo& f : info.fields) {
    if (f.type != api::FieldType::kNamespace) continue;
    for (const std::string& part : kNamespaceParts) {
      if (info.rest_path.find("{" + part + "}") == std::string::npos) continue;
      const std::string& value = r.param(part);
      if (!request.contains(f.name)) request[f.name] = json::object();
      // Not an object: left for the field's decoder to refuse.
      if (!request[f.name].is_object()) continue;
      if (request[f.name].contains(part) && request[f.name][part] != value) {
        return Status::InvalidArgument(where + part + "' differs from the path's '" + value + "': leave it out");
      }
      request[f.name][part] = value;
    }
  }
  return Status::Ok();
}

// The request of an operation whose route has no body (GET, DELETE): a
// field named in the path ("{id}") from it, the namespace's parts from the
// parameters user, agent, session, mission, operator or from the path where
// it names one ("{session}"; tenant: the key's,
// checked before), every other field from the parameter of its name, or of
// its alias (a field in a group too: ?kinds=fact for filters.kinds), typed
// by the field (ParamValue). The route allows only those (CheckQueryNames).
Result<json> RequestFromTarget(const api::OperationInfo& info, const RestRequest& r) {
  json request = json::object();
  for (const api::FieldInfo& f : info.fields) {
    if (info.InPath(f)) {
      request[f.name] = r.param(f.name);
      continue;
    }
    if (f.type == api::FieldType::kNamespace) {
      for (const std::string& part : kNamespaceParts) {
        if (auto it = r.query.find(part); it != r.query.end()) request[f.name][part] = it->second;
      }
      continue;
    }
    if (f.type == api::FieldType::kObject || f.type == api::FieldType::kProvenance ||
        f.type == api::FieldType::kAlternatives) {
      return Status::Internal("parameter '" + f.name + "': a " + f.TypeText() + " is not read from parameters");
    }
    std::vector<std::string> values;
    for (const std::string& name : {f.name, f.param_alias}) {
      if (name.empty()) continue;
      auto [begin, end] = r.query.equal_range(name);
      for (auto it = begin; it != end; ++it) values.push_back(it->second);
    }
    if (values.empty()) continue;
    json value = ParamValue(f, values);
    if (f.group.empty()) {
      request[f.name] = std::move(value);
    } else {
      request[f.group][f.name] = std::move(value);
    }
  }
  MSP_RETURN_IF_ERROR(PathIntoNamespace(info, r, request, "parameter '"));
  return request;
}

// The route of a src/api operation: the body (or the target) decoded by the
// operation's field table, as the key's caller.
Result<Reply> CallOperation(RestApi& api, const RestRequest& r, const api::Operation& op) {
  std::unique_ptr<WorkflowMemory> workflow;
  json request = r.body;
  if (!op.info().HasBody()) {
    MSP_ASSIGN_OR_RETURN(request, RequestFromTarget(op.info(), r));
  } else if (request.is_object()) {
    // POST /v1/tasks/{task_id}/comments, PUT /v1/principles/{principle_id}:
    // the path names the field; a body naming another value is refused.
    for (const api::FieldInfo& f : op.info().fields) {
      if (!op.info().InPath(f)) continue;
      if (request.contains(f.name) && request[f.name] != r.param(f.name)) {
        return Status::InvalidArgument("field '" + f.name + "' differs from the path's '" + r.param(f.name) +
                                       "': leave it out of the body");
      }
      request[f.name] = r.param(f.name);
    }
    MSP_RETURN_IF_ERROR(PathIntoNamespace(op.info(), r, request, "field 'namespace."));
  }
  auto failed = [&op](const Status& s) {
    return s.code() == StatusCode::kInvalidArgument ? Status::InvalidArgument(api::RestMessage(op.info(), s.message()))
                                                     : s;
  };
  if (op.info().rest_status_of) {  // the status depends on the answer: the tree
    Result<json> answer = op.Call(ContextOf(api, r, workflow), request);
    if (!answer.ok()) return failed(answer.status());
    const int status = op.info().rest_status_of(*answer);  // before the answer moves out
    return Reply::Json(status, std::move(answer).value());
  }
  // The answer as text (Operation::CallText: search writes it without a tree).
  Result<std::string> answer = op.CallText(ContextOf(api, r, workflow), request);
  if (!answer.ok()) return failed(answer.status());
  return Reply::Text(op.info().rest_status, std::move(answer).value(), "application/json");
}

// Every line's record lands in the caller's tenant: the tenant is set (the
// line was already refused if it named another one). Lines that do not parse
// are passed on unchanged, so the engine's error names them.
std::string WithTenant(const std::string& body, const std::string& tenant) {
  std::istringstream in(body);
  std::string out;
  for (std::string line; std::getline(in, line);) {
    Result<json> obj = ParseJsonObject(line, "record");
    if (obj.ok() && (!obj->contains("namespace") || (*obj)["namespace"].is_object())) {
      (*obj)["namespace"]["tenant"] = tenant;
      out += DumpJson(*obj);
    } else {
      out += line;
    }
    out += '\n';
  }
  return out;
}

Result<Reply> Import(RestApi& api, const RestRequest& r) {
  std::istringstream in(WithTenant(r.call.req.body, r.tenant()));
  MSP_ASSIGN_OR_RETURN(ImportReport report, r.engine().Import(in, api.actor()));
  return Reply::Json(200, ImportReportToJson(report));
}

Result<Reply> Export(RestApi&, const RestRequest& r) {
  MSP_ASSIGN_OR_RETURN(Namespace scope, QueryScope(r));
  std::ostringstream out;
  MSP_ASSIGN_OR_RETURN(int64_t lines, r.engine().Export(scope, out));
  (void)lines;
  return Reply::Text(200, out.str(), "application/x-ndjson");
}

Result<Reply> OpenApi(RestApi&, const RestRequest&) {
  return Reply::Text(200, std::string(OpenApiDocument()), "application/json");
}

// THE route table.
const std::vector<RestRoute>& Routes() {
  const std::vector<std::string> ns_tenant = {"namespace.tenant"};
  static const std::vector<RestRoute> routes = [&ns_tenant] {
    std::vector<RestRoute> table = {
      {"GET", "/openapi.json", BodyKind::kNone, {}, {}, &OpenApi},
      {"POST", "/v1/memories", BodyKind::kJson, {"namespace.tenant", "memories[].namespace.tenant"}, {},
       &WriteMemories},
      {"POST", "/v1/import", BodyKind::kJsonl, {}, {}, &Import},
      {"GET", "/v1/export", BodyKind::kNone, {}, WithNamespaceParams({}), &Export},
    };
    // src/api's operations (docs/operations.md): a POST route decodes its
    // body, a GET or DELETE route its parameters, with the operation's field
    // table. (POST /v1/memories, memory_write's, is WriteMemories above: it
    // also takes a batch and the Idempotency-Key header.)
    for (const api::Operation* op : api::Operations()) {
      const api::OperationInfo& info = op->info();
      const bool routed = std::any_of(table.begin(), table.end(), [&](const RestRoute& route) {
        return info.rest_method == route.method && info.rest_path == route.path;
      });
      if (routed) continue;
      if (info.HasBody()) {
        // POST and PUT take a JSON body. An operation with no required field
        // may be posted without one (POST /v1/sessions/{session}/end).
        const bool needs_body = std::any_of(info.fields.begin(), info.fields.end(),
                                            [](const api::FieldInfo& f) { return f.required; });
        table.push_back({info.rest_method.c_str(), info.rest_path.c_str(),
                         needs_body ? BodyKind::kJson : BodyKind::kOptionalJson, ns_tenant, {}, nullptr, op});
        continue;
      }
      // GET /v1/memories, GET /v1/memories/{id}, GET .../history, DELETE
      // /v1/memories/{id}: the fields not in the path are parameters.
      std::vector<std::string> params;
      for (const api::FieldInfo& f : info.fields) {
        if (f.type == api::FieldType::kNamespace || info.InPath(f)) {
          continue;
        }
        params.push_back(f.name);
        if (!f.param_alias.empty()) params.push_back(f.param_alias);
      }
      table.push_back({info.rest_method.c_str(), info.rest_path.c_str(), BodyKind::kNone, {},
                       WithNamespaceParams(std::move(params)), nullptr, op});
    }
    for (RestRoute& route : MissionRoutes()) table.push_back(std::move(route));
    return table;
  }();
  return routes;
}

// --- The generic part: tenant checks, body parsing, answers ---

// Every value at `path` ("memories[].namespace.tenant") inside `j`.
void Collect(const json& j, std::string_view path, const std::string& shown, std::vector<std::pair<std::string, const json*>>* out) {
  const size_t dot = path.find('.');
  std::string_view head = path.substr(0, dot);
  const std::string_view rest = dot == std::string_view::npos ? std::string_view() : path.substr(dot + 1);
  const bool each = head.size() > 2 && head.substr(head.size() - 2) == "[]";
  if (each) head.remove_suffix(2);
  if (!j.is_object() || !j.contains(std::string(head))) return;
  const json& v = j.at(std::string(head));
  const std::string name = shown + std::string(head);
  if (each) {
    if (!v.is_array()) return;
    for (size_t i = 0; i < v.size(); ++i) {
      const std::string item = name + "[" + std::to_string(i) + "]";
      if (rest.empty()) {
        out->emplace_back(item, &v[i]);
      } else {
        Collect(v[i], rest, item + ".", out);
      }
    }
    return;
  }
  if (rest.empty()) {
    out->emplace_back(name, &v);
  } else {
    Collect(v, rest, name + ".", out);
  }
}

// nullopt when every tenant the request names is the caller's; else the
// 403 (or 400 for a tenant that is not a string) to answer.
std::optional<std::pair<int, json>> TenantProblem(const RestRoute& route, const RestRequest& r) {
  auto forbidden = [&](const std::string& where, const std::string& named) {
    return std::make_pair(403, ErrorJson("forbidden", where + " names tenant '" + named +
                                                          "', but this API key belongs to tenant '" + r.tenant() +
                                                          "': a key reads and writes only its own tenant (leave "
                                                          "the tenant out)"));
  };
  auto [begin, end] = r.query.equal_range("tenant");
  for (auto it = begin; it != end; ++it) {
    if (it->second != r.tenant()) return forbidden("parameter 'tenant'", it->second);
  }
  if (route.body == BodyKind::kJsonl) {
    std::istringstream in(r.call.req.body);
    int line_no = 0;
    for (std::string line; std::getline(in, line);) {
      ++line_no;
      Result<json> obj = ParseJsonObject(line, "record");
      if (!obj.ok() || !obj->contains("namespace") || !(*obj)["namespace"].is_object()) continue;
      const json& ns = (*obj)["namespace"];
      if (!ns.contains("tenant")) continue;
      const std::string where = "line " + std::to_string(line_no) + ": field 'namespace.tenant'";
      if (!ns["tenant"].is_string()) {
        return std::make_pair(400, ErrorJson("invalid_argument", where + " must be a string"));
      }
      if (ns["tenant"].get<std::string>() != r.tenant()) return forbidden(where, ns["tenant"].get<std::string>());
    }
    return std::nullopt;
  }
  for (const std::string& path : route.tenant_fields) {
    std::vector<std::pair<std::string, const json*>> found;
    Collect(r.body, path, "", &found);
    for (const auto& [name, value] : found) {
      if (value->is_null()) continue;
      if (!value->is_string()) {
        return std::make_pair(400, ErrorJson("invalid_argument", "field '" + name + "' must be a string"));
      }
      if (value->get<std::string>() != r.tenant()) return forbidden("field '" + name + "'", value->get<std::string>());
    }
  }
  return std::nullopt;
}

void Serve(const RestRoute& route, RestApi& api, const HttpCall& call, httplib::Response& res) {
  // Parameters come from the target only: cpp-httplib would also read a
  // form-encoded body (curl -d without a Content-Type) as parameters.
  RestRequest r{call, ParseQuery(call.req.target), json::object(), Caller{call.tenant, api.actor(), call.clearance},
                nullptr};
  r.layer = AsCaller(api.engine(), r.caller);
  if (Status s = CheckQueryNames(r.query, route.params); !s.ok()) return SendStatusError(res, s);
  if (route.body == BodyKind::kJson || route.body == BodyKind::kOptionalJson) {
    const bool blank = call.req.body.find_first_not_of(" \t\r\n") == std::string::npos;
    if (blank && route.body == BodyKind::kJson) {
      return SendStatusError(res, Status::InvalidArgument("the request needs a JSON object body"));
    }
    if (!blank) {
      Result<json> body = ParseJsonObject(call.req.body, "the body");
      if (!body.ok()) return SendStatusError(res, body.status());
      r.body = std::move(body).value();
    }
  }
  if (auto problem = TenantProblem(route, r)) return SendJson(res, problem->first, problem->second);
  Result<Reply> reply = route.operation ? CallOperation(api, r, *route.operation) : route.handler(api, r);
  if (!reply.ok()) return SendStatusError(res, reply.status());
  if (!reply->content_type.empty()) {
    res.status = reply->status;
    res.set_content(reply->text, reply->content_type);
    return;
  }
  SendJson(res, reply->status, reply->body);
}

// Prometheus gauges of the caller's tenant as its key's clearance sees it
// (no audit count with a clearance), from a cached GetStats.
std::string RecordMetrics(RestApi& api, const std::string& tenant, std::optional<int> clearance) {
  Result<Stats> stats = api.CachedStats(tenant, clearance);
  if (!stats.ok()) return "# msp record counts unavailable: " + stats.status().ToString() + "\n";
  const Stats& s = *stats;
  const std::string t = "tenant=\"" + EscapeLabel(tenant) + "\"";
  std::ostringstream out;
  out << "# HELP msp_records Records of the tenant, by kind (expired and superseded included).\n"
      << "# TYPE msp_records gauge\n";
  for (const auto& [kind, n] : s.by_kind) out << "msp_records{" << t << ",kind=\"" << EscapeLabel(kind) << "\"} " << n << "\n";
  out << "# HELP msp_records_by_layer Records of the tenant, by memory layer (expired and superseded included).\n"
      << "# TYPE msp_records_by_layer gauge\n";
  for (const auto& [layer, n] : s.by_layer) {
    out << "msp_records_by_layer{" << t << ",layer=\"" << EscapeLabel(layer) << "\"} " << n << "\n";
  }
  out << "# HELP msp_records_active Records of the tenant that are active and not expired.\n"
      << "# TYPE msp_records_active gauge\n"
      << "msp_records_active{" << t << "} " << s.active << "\n"
      << "# HELP msp_records_expired Records of the tenant past their expiry.\n"
      << "# TYPE msp_records_expired gauge\n"
      << "msp_records_expired{" << t << "} " << s.expired << "\n";
  if (!clearance) {
    out << "# HELP msp_audit_events Audit events of the tenant.\n"
        << "# TYPE msp_audit_events gauge\n"
        << "msp_audit_events{" << t << "} " << s.audit_events << "\n";
  }
  out << "# HELP msp_index_lag Changes of the store not yet applied to a derived index.\n"
      << "# TYPE msp_index_lag gauge\n"
      << "msp_index_lag{index=\"lexical\"} " << (s.last_seq - s.lexical_applied_seq) << "\n"
      << "msp_index_lag{index=\"vector\"} " << (s.last_seq - s.vector_applied_seq) << "\n"
      << "# HELP msp_index_rebuilds_total Derived indexes found damaged and rebuilt from the store since the "
         "server started.\n"
      << "# TYPE msp_index_rebuilds_total counter\n"
      << "msp_index_rebuilds_total{index=\"lexical\"} " << s.lexical_rebuilds << "\n"
      << "msp_index_rebuilds_total{index=\"vector\"} " << s.vector_rebuilds << "\n";
  return out.str();
}

}  // namespace

void MountRestApi(HttpServer& server, MemoryLayer& engine, const RestOptions& options) {
  auto api = std::make_shared<RestApi>(engine, options);
  for (const RestRoute& route : Routes()) {
    server.Handle({route.method, route.path,
                   [api, &route](const HttpCall& call, httplib::Response& res) { Serve(route, *api, call, res); },
                   true});
  }
  MountEventStream(server, engine, options);
  server.SetMetricsSource(
      [api](const std::string& tenant, std::optional<int> clearance) { return RecordMetrics(*api, tenant, clearance); });
  server.SetHealthSource([&engine] { return engine.CheckStore(); });
}

}  // namespace msp
