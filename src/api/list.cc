// The declaration of memory_list: the records of a namespace, filtered and
// paged, without ranking (msp list, GET /v1/memories, MCP memory_list). The
// caller's tenant and clearance are the engine's to apply (context.engine is
// AsCaller's layer): records above the caller's clearance are left out.
#include "api/declare.h"
#include "api/filters.h"
#include "api/operations.h"
#include "api/record_json.h"

namespace msp::api {
namespace {

using nlohmann::json;
using ListField = Fields<ListRequest>;

Status CheckList(const ListRequest& r) { return CheckFilter(r.filter); }

Result<json> HandleList(const CallContext& context, ListRequest& r) {
  MSP_ASSIGN_OR_RETURN(std::vector<Memory> records, context.engine->List(r));
  json out = json::array();
  for (const Memory& m : records) out.push_back(RecordJson(context, m));
  return json{{"memories", std::move(out)}, {"limit", r.limit}, {"offset", r.offset}};
}

}  // namespace

std::unique_ptr<Operation> ListOperation() {
  Declaration<ListRequest> d;
  d.info = {
      .name = "memory_list",
      .title = "List records",
      .summary = "The records of a namespace that match the filters, oldest first (newest first with "
                 "newest_first), a page at a time (limit, offset): no ranking, no query. Expired and superseded "
                 "records are left out unless asked for; records above the caller's clearance always are.",
      .cli_verb = "list",
      .rest_method = "GET",
      .rest_path = "/v1/memories",
      .mcp_tool = "memory_list",
      .mcp_profile = "core",
      .read_only = true,
      .idempotent = true,
      .example = {{"filters", {{"kinds", {"fact"}}, {"tags", {"preference"}}}}, {"limit", 2}, {"newest_first", true}},
      .answer = "{memories: [record with trust], limit, offset}",
      .answer_schema = {{"type", "object"},
                        {"properties",
                         {{"memories", {{"type", "array"}, {"items", RecordSchema()}, {"description", "The page."}}},
                          {"limit", {{"type", "integer"}, {"description", "The page size asked for."}}},
                          {"offset", {{"type", "integer"}, {"description", "Records skipped before the page."}}}}},
                        {"required", {"memories", "limit", "offset"}}},
  };
  d.fields = {
      ListField::Scope({.name = "namespace",
                        .doc = "Where to list: tenant (the caller's), user, agent, session, mission, operator; "
                               "parts left out are the face's (MCP: the session's)."},
                       [](ListRequest& r) -> auto& { return r.scope; }),
  };
  std::vector<Field<ListRequest>> filters =
      FilterFields<ListRequest>([](ListRequest& r) -> auto& { return r.filter; }, /*aliases=*/true);
  d.fields.insert(d.fields.end(), filters.begin(), filters.end());
  d.fields.push_back(ListField::Bool({.name = "include_expired", .doc = "Also records past their time to live."},
                                     [](ListRequest& r) -> auto& { return r.include_expired; }));
  d.fields.push_back(ListField::Time(
      {.name = "as_of",
       .doc = "What held then (ISO 8601): from valid_at, else created_at, until invalid_at or the supersede; "
              "superseded records included."},
      [](ListRequest& r) -> auto& { return r.as_of; }));
  d.fields.push_back(ListField::Bool({.name = "newest_first", .doc = "Newest first (default: oldest first)."},
                                     [](ListRequest& r) -> auto& { return r.newest_first; }));
  d.fields.push_back(ListField::Int({.name = "limit", .doc = "Records in the page."}, 1, 1000,
                                    [](ListRequest& r) -> auto& { return r.limit; }));
  d.fields.push_back(ListField::Int({.name = "offset", .doc = "Records to skip before the page."}, 0, 1000000000,
                                    [](ListRequest& r) -> auto& { return r.offset; }));
  d.check = &CheckList;
  d.handle = &HandleList;
  return Declare(std::move(d));
}

}  // namespace msp::api
