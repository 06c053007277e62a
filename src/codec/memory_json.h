// JSON for msp's value types: the one place that maps records, hits, audit
// events and reports to and from JSON, for `--json` output, JSONL
// import/export, and the REST and MCP faces.
//
// Internal header: nlohmann::json types are allowed here, never in
// include/msp/. Nothing here throws: library exceptions are caught and
// returned as InvalidArgument naming the field at fault.
//
// The record format (one object; also one line of JSONL):
//   id, namespace{tenant,user,agent,session,mission,operator}, layer, kind,
//   text, body (an object), tags, source, sensitivity, criticality,
//   confidence, created_at, updated_at, expires_at, valid_at, invalid_at
//   (ISO 8601 UTC strings, or null when unset), access_count, last_accessed,
//   provenance [{type,ref,detail}], state, supersedes, superseded_by,
//   step_number, and with embeddings: embedder_id, embedding.
#ifndef MSP_CODEC_MEMORY_JSON_H_
#define MSP_CODEC_MEMORY_JSON_H_

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "msp/status.h"
#include "msp/types.h"

namespace msp {

// "a, b, c": the canonical names of an enum, found by walking its values
// until `name` (KindName, LayerName, ...) answers "unknown".
template <typename E>
std::string EnumNames(std::string_view (*name)(E)) {
  std::string out;
  for (int i = 0; i < 64; ++i) {
    const std::string_view n = name(static_cast<E>(i));
    if (n == "unknown") break;
    if (!out.empty()) out += ", ";
    out += n;
  }
  return out;
}

// Nesting deeper than this in any parsed JSON text is rejected.
constexpr int kMaxJsonDepth = 64;

// Parses `text` as one JSON object. Errors are InvalidArgument messages that
// start with `what` ("--body", "line 3") and give the byte position of a
// syntax error or of invalid UTF-8; a valid JSON value that is not an object,
// and an object (at any depth) that repeats a key, are rejected too.
Result<nlohmann::json> ParseJsonObject(std::string_view text, std::string_view what);

// Serialises `j` compactly (indent < 0) or pretty-printed. Never throws:
// invalid UTF-8 in strings is replaced by U+FFFD.
std::string DumpJson(const nlohmann::json& j, int indent = -1);

// {"tenant":..,"user":..,"agent":..,"session":..,"mission":..,"operator":..};
// every part is present (empty when unset).
nlohmann::json NamespaceToJson(const Namespace& ns);
// Strict inverse of NamespaceToJson. Missing parts are empty; a missing
// tenant is "default"; an empty tenant is an error. `field` prefixes errors.
Result<Namespace> NamespaceFromJson(const nlohmann::json& j, std::string_view field = "namespace");

// Every field of `m` under its canonical name (see the file comment); seq is
// never written. embedder_id and embedding only when `with_embedding`.
// body_json is written as an object ("" counts as {}); a body_json that is
// not a JSON object (which the engine never stores) is written as a string.
nlohmann::json MemoryToJson(const Memory& m, bool with_embedding = false);

// Strict inverse of MemoryToJson. `text` is required; every other missing
// field takes its default (layer: DefaultLayer(kind)). Errors name the field:
// unknown fields, wrong JSON types (with the expected type), unknown enum
// names (listing the allowed ones), invalid UTF-8, bad timestamps, ids that
// are not UUIDs, confidence outside [0, 1], negative counts. body_json is the
// compact serialisation of `body` (keys sorted). seq stays 0.
// MemoryFromJson(MemoryToJson(m)) == m for any m with seq 0, a body_json in
// that compact form and (unless with_embedding) no embedding.
Result<Memory> MemoryFromJson(const nlohmann::json& j);

// ParseJsonObject then MemoryFromJson; errors are prefixed with `what`.
Result<Memory> MemoryFromJsonText(std::string_view text, std::string_view what);

// {"memory": {...}, "score": 0.83, "explain": [{signal, rank, raw, contribution}]}; a hit
// that shows part of its record (SearchHit::passage) has that part as the
// memory's text and "passage": {"begin", "end", "text_bytes"} (byte offsets
// into the whole text, and its length).
nlohmann::json SearchHitToJson(const SearchHit& hit, bool with_embedding = false);

// Answers written straight to text: byte for byte what DumpJson writes for
// MemoryToJson(m) (no embedding) and SearchHitToJson(hit), without building
// the tree (a search answer's ten records, each of 24 members, were built,
// dumped and destroyed). `text` stands for m.text when given.
void AppendMemoryJson(std::string& out, const Memory& m, const std::string* text = nullptr);
void AppendNamespaceJson(std::string& out, const Namespace& ns);
// `last` (may be empty) gives members written last in the hit's object and
// in each of its context steps', e.g. "\"trust\":\"trusted\"". REQUIRES: their
// keys sort after "score" (DumpJson writes keys in order).
void AppendSearchHitJson(std::string& out, const SearchHit& hit,
                         const std::function<std::string(const Memory&)>& last = nullptr);

// {seq, at (ISO 8601), actor, action, record_id, tenant, reason, details (object)}.
nlohmann::json AuditEventToJson(const AuditEvent& e);

// {episodes_read, candidates, facts_added, facts_merged, facts_superseded, fact_ids}.
nlohmann::json ConsolidationReportToJson(const ConsolidationReport& r);

// {records, active, expired, by_kind {kind: n}, by_layer {layer: n},
//  last_seq, lexical_applied_seq, vector_applied_seq, vector_rows,
//  vector_graph_placed, vector_graph_pending, index_rebuilds {lexical,
//  vector}, audit_events, embedder_id}: memory_stats' answer (not the store's
//  path, which is no caller's business).
nlohmann::json StatsToJson(const Stats& s);

// {id, merged, evicted_ids}.
nlohmann::json WriteResultToJson(const WriteResult& r);

// {lines, applied}.
nlohmann::json ImportReportToJson(const ImportReport& r);

}  // namespace msp

#endif  // MSP_CODEC_MEMORY_JSON_H_
