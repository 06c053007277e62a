// JSON encoding and strict decoding of records and reports.
#include "codec/memory_json.h"

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "codec/json_reader.h"
#include "codec/json_text.h"
#include "util/time.h"
#include "util/utf8.h"
#include "util/uuid.h"

namespace msp {
namespace {

using nlohmann::json;

// "string", "number", "object"... for error messages.
std::string Quote(std::string_view s) {
  std::string out = "'";
  out += s;
  out += "'";
  return out;
}

// InvalidArgument naming field `name` when `s` is not valid UTF-8.
Status CheckUtf8(const std::string& name, std::string_view s) {
  size_t bad = 0;
  if (IsValidUtf8(s, &bad)) return Status::Ok();
  return Status::InvalidArgument("field " + Quote(name) + " is not valid UTF-8 (bad byte at offset " +
                                 std::to_string(bad) + ")");
}

// `s` quoted, or "(invalid UTF-8)" when it cannot be shown.
std::string Shown(std::string_view s) { return IsValidUtf8(s) ? Quote(s) : "(invalid UTF-8)"; }

json TimeToJson(TimeMs t) { return t == 0 ? json(nullptr) : json(FormatIso8601(t)); }

// The body text as a JSON value: an object when it parses as one, otherwise
// the raw text (which MemoryFromJson then rejects).
json BodyToJson(const std::string& body_json) {
  if (body_json.empty() || body_json == "{}") return json::object();
  json parsed = json::parse(body_json, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded() || !parsed.is_object()) return json(body_json);
  return parsed;
}

// Validates every string (keys and values) inside `j`; `path` names it.
Status CheckJsonUtf8(const json& j, const std::string& path) {
  if (j.is_string()) {
    MSP_RETURN_IF_ERROR(CheckUtf8(path, j.get_ref<const std::string&>()));
  } else if (j.is_object()) {
    for (const auto& [key, value] : j.items()) {
      if (!IsValidUtf8(key)) {
        return Status::InvalidArgument("field " + Quote(path) + " has a key that is not valid UTF-8");
      }
      MSP_RETURN_IF_ERROR(CheckJsonUtf8(value, path + "." + key));
    }
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) {
      MSP_RETURN_IF_ERROR(CheckJsonUtf8(j[i], path + "[" + std::to_string(i) + "]"));
    }
  }
  return Status::Ok();
}

// Reads the fields of one JSON object strictly. `prefix` ("", "namespace.",
// "provenance[2].") qualifies field names in errors.
class ObjectReader {
 public:
  ObjectReader(const json& obj, std::string prefix) : obj_(obj), prefix_(std::move(prefix)) {}

  // Every key of the object must be one of `known`.
  Status CheckKnown(std::initializer_list<std::string_view> known) const {
    for (const auto& [key, value] : obj_.items()) {
      bool found = false;
      for (std::string_view k : known) found = found || k == key;
      if (!found) {
        std::string list;
        for (std::string_view k : known) {
          if (!list.empty()) list += ", ";
          list += k;
        }
        const std::string shown = IsValidUtf8(key) ? Quote(prefix_ + key) : "(invalid UTF-8)";
        return Status::InvalidArgument("unknown field " + shown + "; known fields are " + list);
      }
    }
    return Status::Ok();
  }

  bool Has(std::string_view key) const { return obj_.contains(key); }

  Status Required(std::string_view key) const {
    if (!Has(key)) return Status::InvalidArgument("missing field " + Quote(Name(key)));
    return Status::Ok();
  }

  Status String(std::string_view key, std::string* out) const {
    const json* v = Find(key);
    if (v == nullptr) return Status::Ok();
    if (!v->is_string()) return WrongType(key, "a string", *v);
    const auto& s = v->get_ref<const std::string&>();
    MSP_RETURN_IF_ERROR(CheckUtf8(Name(key), s));
    *out = s;
    return Status::Ok();
  }

  Status Uuid(std::string_view key, std::string* out) const {
    std::string s;
    MSP_RETURN_IF_ERROR(String(key, &s));
    if (!s.empty() && !IsUuid(s)) {
      return Status::InvalidArgument("field " + Quote(Name(key)) + " must be a UUID, got " + Quote(s));
    }
    if (Has(key)) *out = s;
    return Status::Ok();
  }

  Status StringList(std::string_view key, std::vector<std::string>* out) const {
    const json* v = Find(key);
    if (v == nullptr) return Status::Ok();
    if (!v->is_array()) return WrongType(key, "an array of strings", *v);
    std::vector<std::string> items;
    for (size_t i = 0; i < v->size(); ++i) {
      const json& e = (*v)[i];
      const std::string name = Name(key) + "[" + std::to_string(i) + "]";
      if (!e.is_string()) {
        return Status::InvalidArgument("field " + Quote(name) + " must be a string, got " + JsonTypeName(e));
      }
      MSP_RETURN_IF_ERROR(CheckUtf8(name, e.get_ref<const std::string&>()));
      items.push_back(e.get<std::string>());
    }
    *out = std::move(items);
    return Status::Ok();
  }

  Status Int(std::string_view key, int64_t min, int64_t* out) const {
    const json* v = Find(key);
    if (v == nullptr) return Status::Ok();
    if (!v->is_number_integer()) return WrongType(key, "an integer", *v);
    if (v->is_number_unsigned() &&
        v->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return Status::InvalidArgument("field " + Quote(Name(key)) + " is out of range");
    }
    const int64_t n = v->get<int64_t>();
    if (n < min) {
      return Status::InvalidArgument("field " + Quote(Name(key)) + " must be >= " + std::to_string(min) +
                                     ", got " + std::to_string(n));
    }
    *out = n;
    return Status::Ok();
  }

  Status Double(std::string_view key, double lo, double hi, double* out) const {
    const json* v = Find(key);
    if (v == nullptr) return Status::Ok();
    if (!v->is_number()) return WrongType(key, "a number", *v);
    const double d = v->get<double>();
    if (!(d >= lo && d <= hi)) {
      return Status::InvalidArgument("field " + Quote(Name(key)) + " must be between " + Num(lo) + " and " +
                                     Num(hi) + ", got " + v->dump());
    }
    *out = d;
    return Status::Ok();
  }

  // An ISO 8601 string, or null for "unset" (0).
  Status Time(std::string_view key, TimeMs* out) const {
    const json* v = Find(key);
    if (v == nullptr) return Status::Ok();
    if (v->is_null()) {
      *out = 0;
      return Status::Ok();
    }
    if (!v->is_string()) return WrongType(key, "an ISO 8601 string or null", *v);
    const auto& s = v->get_ref<const std::string&>();
    MSP_RETURN_IF_ERROR(CheckUtf8(Name(key), s));
    Result<TimeMs> t = ParseIso8601(s);
    if (!t.ok()) return t.status().WithContext("field " + Quote(Name(key)));
    *out = *t;
    return Status::Ok();
  }

  template <typename E>
  Status Enum(std::string_view key, std::string_view (*name)(E), std::optional<E> (*parse)(std::string_view),
              E* out) const {
    const json* v = Find(key);
    if (v == nullptr) return Status::Ok();
    if (!v->is_string()) return WrongType(key, "a string", *v);
    const auto& s = v->get_ref<const std::string&>();
    std::optional<E> e = parse(s);
    if (!e) {
      return Status::InvalidArgument("field " + Quote(Name(key)) + ": unknown value " + Shown(s) +
                                     "; allowed: " + EnumNames(name));
    }
    *out = *e;
    return Status::Ok();
  }

  const json* Find(std::string_view key) const {
    auto it = obj_.find(key);
    return it == obj_.end() ? nullptr : &*it;
  }

  std::string Name(std::string_view key) const { return prefix_ + std::string(key); }

  Status WrongType(std::string_view key, const char* expected, const json& got) const {
    return Status::InvalidArgument("field " + Quote(Name(key)) + " must be " + expected + ", got " +
                                   JsonTypeName(got));
  }

 private:
  // 0.5 -> "0.5", 1.0 -> "1".
  static std::string Num(double d) {
    if (std::fabs(d) < 1e15 && d == std::floor(d)) return std::to_string(static_cast<int64_t>(d));
    return json(d).dump();
  }

  const json& obj_;
  std::string prefix_;
};

Result<ProvenanceRef> ProvenanceFromJson(const json& j, const std::string& name) {
  if (!j.is_object()) {
    return Status::InvalidArgument("field " + Quote(name) + " must be an object {type, ref, detail}, got " +
                                   JsonTypeName(j));
  }
  ObjectReader r(j, name + ".");
  MSP_RETURN_IF_ERROR(r.CheckKnown({"type", "ref", "detail"}));
  MSP_RETURN_IF_ERROR(r.Required("type"));
  MSP_RETURN_IF_ERROR(r.Required("ref"));
  ProvenanceRef p;
  MSP_RETURN_IF_ERROR(r.String("type", &p.type));
  MSP_RETURN_IF_ERROR(r.String("ref", &p.ref));
  MSP_RETURN_IF_ERROR(r.String("detail", &p.detail));
  if (p.type.empty()) return Status::InvalidArgument("field " + Quote(name + ".type") + " must not be empty");
  return p;
}

// Finds the nesting depth of `text` without parsing it, so that hostile
// input cannot make later recursive walks overflow the stack. Returns the
// byte offset where kMaxJsonDepth is exceeded, or npos.
size_t DepthExceededAt(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > kMaxJsonDepth) return i;
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return std::string_view::npos;
}

}  // namespace

Result<nlohmann::json> ParseJsonObject(std::string_view text, std::string_view what) {
  const std::string prefix(what);
  size_t bad = 0;
  if (!IsValidUtf8(text, &bad)) {
    return Status::InvalidArgument(prefix + ": invalid UTF-8 at byte " + std::to_string(bad));
  }
  if (size_t at = DepthExceededAt(text); at != std::string_view::npos) {
    return Status::InvalidArgument(prefix + ": JSON nested deeper than " + std::to_string(kMaxJsonDepth) +
                                   " levels at byte " + std::to_string(at));
  }
  // Keys seen in each object being read, innermost last: a repeated key is
  // refused rather than read as its last value.
  std::vector<std::set<std::string>> keys;
  std::string repeated;
  auto track = [&keys, &repeated](int, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) {
      keys.emplace_back();
    } else if (event == json::parse_event_t::object_end) {
      keys.pop_back();
    } else if (event == json::parse_event_t::key && repeated.empty() && !keys.empty() &&
               !keys.back().insert(parsed.get<std::string>()).second) {
      repeated = parsed.get<std::string>();
    }
    return true;
  };
  json j;
  try {
    j = json::parse(text.begin(), text.end(), track);
  } catch (const json::parse_error& e) {
    // nlohmann quotes the bytes it last read, which may end inside a
    // character: escaped, the message stays valid UTF-8 for a JSON reply.
    std::string detail = EscapeInvalidUtf8(e.what());
    // Drop nlohmann's "[json.exception.parse_error.101] parse error at line 1, column 5: ".
    const size_t col = detail.find("column ");
    if (col != std::string::npos) {
      const size_t colon = detail.find(": ", col);
      if (colon != std::string::npos) detail = detail.substr(colon + 2);
    }
    return Status::InvalidArgument(prefix + ": invalid JSON at byte " + std::to_string(e.byte) + ": " +
                                   detail);
  } catch (const json::exception& e) {
    return Status::InvalidArgument(prefix + ": invalid JSON: " + EscapeInvalidUtf8(e.what()));
  }
  if (!repeated.empty()) {
    return Status::InvalidArgument(prefix + ": the key '" + repeated +
                                   "' appears twice in one JSON object; send each key once");
  }
  if (!j.is_object()) {
    return Status::InvalidArgument(prefix + ": expected a JSON object, got " + JsonTypeName(j));
  }
  return j;
}

std::string DumpJson(const nlohmann::json& j, int indent) {
  if (indent >= 0) return j.dump(indent, ' ', /*ensure_ascii=*/false, json::error_handler_t::replace);
  std::string out;
  AppendJson(out, j);  // the same bytes, faster (codec/json_text.h)
  return out;
}

nlohmann::json NamespaceToJson(const Namespace& ns) {
  json j(json::value_t::object);
  json::object_t& o = j.get_ref<json::object_t&>();
  // Members in key order, each placed at the end (no search of the map).
  o.emplace_hint(o.end(), "agent", ns.agent);
  o.emplace_hint(o.end(), "mission", ns.mission);
  o.emplace_hint(o.end(), "operator", ns.operator_id);
  o.emplace_hint(o.end(), "session", ns.session);
  o.emplace_hint(o.end(), "tenant", ns.tenant);
  o.emplace_hint(o.end(), "user", ns.user);
  return j;
}

Result<Namespace> NamespaceFromJson(const nlohmann::json& j, std::string_view field) {
  const std::string name(field);
  if (!j.is_object()) {
    return Status::InvalidArgument("field " + Quote(name) + " must be an object, got " + JsonTypeName(j));
  }
  ObjectReader r(j, name + ".");
  MSP_RETURN_IF_ERROR(r.CheckKnown({"tenant", "user", "agent", "session", "mission", "operator"}));
  Namespace ns;
  MSP_RETURN_IF_ERROR(r.String("tenant", &ns.tenant));
  MSP_RETURN_IF_ERROR(r.String("user", &ns.user));
  MSP_RETURN_IF_ERROR(r.String("agent", &ns.agent));
  MSP_RETURN_IF_ERROR(r.String("session", &ns.session));
  MSP_RETURN_IF_ERROR(r.String("mission", &ns.mission));
  MSP_RETURN_IF_ERROR(r.String("operator", &ns.operator_id));
  if (ns.tenant.empty()) {
    return Status::InvalidArgument("field " + Quote(name + ".tenant") + " must not be empty");
  }
  return ns;
}

nlohmann::json MemoryToJson(const Memory& m, bool with_embedding) {
  json provenance = json::array();
  for (const ProvenanceRef& p : m.provenance) {
    provenance.push_back(json{{"type", p.type}, {"ref", p.ref}, {"detail", p.detail}});
  }
  // Built member by member in key order, each placed at the end of the map:
  // an initializer list builds a two-element array per member first (search
  // answers write ten records at a time).
  json j(json::value_t::object);
  json::object_t& o = j.get_ref<json::object_t&>();
  auto put = [&o](const char* key, json value) { o.emplace_hint(o.end(), key, std::move(value)); };
  put("access_count", m.access_count);
  put("access_level", m.access_level);
  put("body", BodyToJson(m.body_json));
  put("confidence", m.confidence);
  put("created_at", TimeToJson(m.created_at));
  put("criticality", CriticalityName(m.criticality));
  put("expires_at", TimeToJson(m.expires_at));
  put("id", m.id);
  put("invalid_at", TimeToJson(m.invalid_at));
  put("kind", KindName(m.kind));
  put("last_accessed", TimeToJson(m.last_accessed));
  put("layer", LayerName(m.layer));
  put("namespace", NamespaceToJson(m.ns));
  put("provenance", std::move(provenance));
  put("sensitivity", SensitivityName(m.sensitivity));
  put("source", m.source);
  put("state", RecordStateName(m.state));
  put("step_number", m.step_number);
  put("superseded_by", m.superseded_by);
  put("supersedes", m.supersedes);
  put("tags", m.tags);
  put("text", m.text);
  put("updated_at", TimeToJson(m.updated_at));
  put("valid_at", TimeToJson(m.valid_at));
  if (with_embedding) {
    j["embedder_id"] = m.embedder_id;
    json vec = json::array();
    for (float f : m.embedding) vec.push_back(static_cast<double>(f));
    j["embedding"] = std::move(vec);
  }
  return j;
}

Result<Memory> MemoryFromJson(const nlohmann::json& j) {
  if (!j.is_object()) {
    return Status::InvalidArgument("a record must be a JSON object, got " + JsonTypeName(j));
  }
  ObjectReader r(j, "");
  MSP_RETURN_IF_ERROR(r.CheckKnown({"id",
                                    "namespace",
                                    "layer",
                                    "kind",
                                    "text",
                                    "body",
                                    "tags",
                                    "source",
                                    "sensitivity",
                                    "criticality",
                                    "confidence",
                                    "created_at",
                                    "updated_at",
                                    "expires_at",
                                    "valid_at",
                                    "invalid_at",
                                    "access_count",
                                    "last_accessed",
                                    "provenance",
                                    "state",
                                    "supersedes",
                                    "superseded_by",
                                    "step_number",
                                    "access_level",
                                    "embedder_id",
                                    "embedding"}));
  MSP_RETURN_IF_ERROR(r.Required("text"));
  Memory m;
  MSP_RETURN_IF_ERROR(r.Uuid("id", &m.id));
  if (const json* ns = r.Find("namespace")) {
    MSP_ASSIGN_OR_RETURN(m.ns, NamespaceFromJson(*ns, "namespace"));
  }
  MSP_RETURN_IF_ERROR(r.Enum("kind", &KindName, &ParseKind, &m.kind));
  m.layer = DefaultLayer(m.kind);
  MSP_RETURN_IF_ERROR(r.Enum("layer", &LayerName, &ParseLayer, &m.layer));
  MSP_RETURN_IF_ERROR(r.String("text", &m.text));
  if (const json* body = r.Find("body")) {
    if (!body->is_object()) return r.WrongType("body", "an object", *body);
    MSP_RETURN_IF_ERROR(CheckJsonUtf8(*body, "body"));
    m.body_json = body->dump();
  }
  MSP_RETURN_IF_ERROR(r.StringList("tags", &m.tags));
  MSP_RETURN_IF_ERROR(r.String("source", &m.source));
  MSP_RETURN_IF_ERROR(r.Enum("sensitivity", &SensitivityName, &ParseSensitivity, &m.sensitivity));
  MSP_RETURN_IF_ERROR(r.Enum("criticality", &CriticalityName, &ParseCriticality, &m.criticality));
  MSP_RETURN_IF_ERROR(r.Double("confidence", 0.0, 1.0, &m.confidence));
  MSP_RETURN_IF_ERROR(r.Time("created_at", &m.created_at));
  MSP_RETURN_IF_ERROR(r.Time("updated_at", &m.updated_at));
  MSP_RETURN_IF_ERROR(r.Time("expires_at", &m.expires_at));
  MSP_RETURN_IF_ERROR(r.Time("valid_at", &m.valid_at));
  MSP_RETURN_IF_ERROR(r.Time("invalid_at", &m.invalid_at));
  MSP_RETURN_IF_ERROR(r.Int("access_count", 0, &m.access_count));
  MSP_RETURN_IF_ERROR(r.Time("last_accessed", &m.last_accessed));
  if (const json* prov = r.Find("provenance")) {
    if (!prov->is_array()) return r.WrongType("provenance", "an array of {type, ref, detail}", *prov);
    for (size_t i = 0; i < prov->size(); ++i) {
      MSP_ASSIGN_OR_RETURN(ProvenanceRef p,
                           ProvenanceFromJson((*prov)[i], "provenance[" + std::to_string(i) + "]"));
      m.provenance.push_back(std::move(p));
    }
  }
  MSP_RETURN_IF_ERROR(r.Enum("state", &RecordStateName, &ParseRecordState, &m.state));
  MSP_RETURN_IF_ERROR(r.Uuid("supersedes", &m.supersedes));
  MSP_RETURN_IF_ERROR(r.Uuid("superseded_by", &m.superseded_by));
  MSP_RETURN_IF_ERROR(r.Int("step_number", 0, &m.step_number));
  int64_t access_level = 0;
  MSP_RETURN_IF_ERROR(r.Int("access_level", 0, &access_level));
  if (access_level > kMaxAccessLevel) {
    return Status::InvalidArgument("field 'access_level' must be <= " +
                                   std::to_string(kMaxAccessLevel) + ", got " +
                                   std::to_string(access_level));
  }
  m.access_level = static_cast<int>(access_level);
  MSP_RETURN_IF_ERROR(r.String("embedder_id", &m.embedder_id));
  if (const json* vec = r.Find("embedding")) {
    if (!vec->is_array()) return r.WrongType("embedding", "an array of numbers", *vec);
    m.embedding.reserve(vec->size());
    for (size_t i = 0; i < vec->size(); ++i) {
      const json& e = (*vec)[i];
      const std::string name = "embedding[" + std::to_string(i) + "]";
      if (!e.is_number()) {
        return Status::InvalidArgument("field " + Quote(name) + " must be a number, got " + JsonTypeName(e));
      }
      const double d = e.get<double>();
      if (!std::isfinite(d) || std::fabs(d) > std::numeric_limits<float>::max()) {
        return Status::InvalidArgument("field " + Quote(name) + " is out of range for a float");
      }
      m.embedding.push_back(static_cast<float>(d));
    }
  }
  if (!m.embedding.empty() && m.embedder_id.empty()) {
    return Status::InvalidArgument("field 'embedder_id' is required with 'embedding'");
  }
  return m;
}

Result<Memory> MemoryFromJsonText(std::string_view text, std::string_view what) {
  MSP_ASSIGN_OR_RETURN(json j, ParseJsonObject(text, what));
  Result<Memory> m = MemoryFromJson(j);
  if (!m.ok()) return m.status().WithContext(std::string(what));
  return m;
}

nlohmann::json SearchHitToJson(const SearchHit& hit, bool with_embedding) {
  json explain = json::array();
  for (const SignalContribution& c : hit.explain) {
    explain.push_back(
        json{{"signal", c.signal}, {"rank", c.rank}, {"raw", c.raw}, {"contribution", c.contribution}});
  }
  json out{{"memory", MemoryToJson(hit.memory, with_embedding)}, {"score", hit.score}, {"explain", std::move(explain)}};
  // A hit that shows part of its record: the part is the memory's text, and
  // where it lies in the whole says passage.
  if (!hit.passage.empty()) {
    out["memory"]["text"] = hit.passage;
    out["passage"] = json{{"begin", hit.passage_begin},
                          {"end", hit.passage_end},
                          {"text_bytes", hit.memory.text.size()}};
  }
  // Its neighbouring steps, shown as hits are, without scores of their own.
  if (!hit.context.empty()) {
    json context = json::array();
    for (const SearchHit& step : hit.context) {
      json c = SearchHitToJson(step, with_embedding);
      c.erase("score");
      c.erase("explain");
      context.push_back(std::move(c));
    }
    out["context"] = std::move(context);
  }
  return out;
}

namespace {

// A member's key with its quotes and colon, after `before`: '{' for an
// object's first member, ',' for the others. msp's own keys need no escapes.
void AppendKey(std::string& out, std::string_view key, char before = ',') {
  out += before;
  out += '"';
  out += key;
  out += "\":";
}

void AppendTime(std::string& out, TimeMs t) {
  if (t == 0) {
    out += "null";
    return;
  }
  out += '"';
  out += FormatIso8601(t);
  out += '"';
}

template <typename T, typename Fn>
void AppendArray(std::string& out, const std::vector<T>& items, Fn&& append) {
  if (items.empty()) {
    out += "[]";
    return;
  }
  char separator = '[';
  for (const T& item : items) {
    out += separator;
    separator = ',';
    append(item);
  }
  out += ']';
}

// A hit's object; a context step's (no score, no explain) when !with_score.
void AppendHitJson(std::string& out, const SearchHit& hit, bool with_score,
                   const std::function<std::string(const Memory&)>& last) {
  char before = '{';
  if (!hit.context.empty()) {
    AppendKey(out, "context", before);
    before = ',';
    // A step's `last` as SearchHitToJson's users add it: to the hit's own
    // steps, not to steps of steps.
    AppendArray(out, hit.context,
                [&](const SearchHit& step) { AppendHitJson(out, step, false, with_score ? last : nullptr); });
  }
  if (with_score) {
    AppendKey(out, "explain", before);
    before = ',';
    AppendArray(out, hit.explain, [&](const SignalContribution& c) {
      AppendKey(out, "contribution", '{');
      AppendJsonNumber(out, c.contribution);
      AppendKey(out, "rank");
      AppendJsonNumber(out, int64_t{c.rank});
      AppendKey(out, "raw");
      AppendJsonNumber(out, c.raw);
      AppendKey(out, "signal");
      AppendJsonString(out, c.signal);
      out += '}';
    });
  }
  AppendKey(out, "memory", before);
  AppendMemoryJson(out, hit.memory, hit.passage.empty() ? nullptr : &hit.passage);
  if (!hit.passage.empty()) {
    AppendKey(out, "passage");
    AppendKey(out, "begin", '{');
    AppendJsonNumber(out, hit.passage_begin);
    AppendKey(out, "end");
    AppendJsonNumber(out, hit.passage_end);
    AppendKey(out, "text_bytes");
    AppendJsonNumber(out, static_cast<int64_t>(hit.memory.text.size()));
    out += '}';
  }
  if (with_score) {
    AppendKey(out, "score");
    AppendJsonNumber(out, hit.score);
  }
  if (last) {
    const std::string members = last(hit.memory);
    if (!members.empty()) {
      out += ',';
      out += members;
    }
  }
  out += '}';
}

}  // namespace

void AppendNamespaceJson(std::string& out, const Namespace& ns) {
  AppendKey(out, "agent", '{');
  AppendJsonString(out, ns.agent);
  AppendKey(out, "mission");
  AppendJsonString(out, ns.mission);
  AppendKey(out, "operator");
  AppendJsonString(out, ns.operator_id);
  AppendKey(out, "session");
  AppendJsonString(out, ns.session);
  AppendKey(out, "tenant");
  AppendJsonString(out, ns.tenant);
  AppendKey(out, "user");
  AppendJsonString(out, ns.user);
  out += '}';
}

void AppendMemoryJson(std::string& out, const Memory& m, const std::string* text) {
  AppendKey(out, "access_count", '{');
  AppendJsonNumber(out, m.access_count);
  AppendKey(out, "access_level");
  AppendJsonNumber(out, int64_t{m.access_level});
  AppendKey(out, "body");
  if (m.body_json.empty() || m.body_json == "{}") {
    out += "{}";
  } else {
    AppendJson(out, BodyToJson(m.body_json));
  }
  AppendKey(out, "confidence");
  AppendJsonNumber(out, m.confidence);
  AppendKey(out, "created_at");
  AppendTime(out, m.created_at);
  AppendKey(out, "criticality");
  AppendJsonString(out, CriticalityName(m.criticality));
  AppendKey(out, "expires_at");
  AppendTime(out, m.expires_at);
  AppendKey(out, "id");
  AppendJsonString(out, m.id);
  AppendKey(out, "invalid_at");
  AppendTime(out, m.invalid_at);
  AppendKey(out, "kind");
  AppendJsonString(out, KindName(m.kind));
  AppendKey(out, "last_accessed");
  AppendTime(out, m.last_accessed);
  AppendKey(out, "layer");
  AppendJsonString(out, LayerName(m.layer));
  AppendKey(out, "namespace");
  AppendNamespaceJson(out, m.ns);
  AppendKey(out, "provenance");
  AppendArray(out, m.provenance, [&](const ProvenanceRef& p) {
    AppendKey(out, "detail", '{');
    AppendJsonString(out, p.detail);
    AppendKey(out, "ref");
    AppendJsonString(out, p.ref);
    AppendKey(out, "type");
    AppendJsonString(out, p.type);
    out += '}';
  });
  AppendKey(out, "sensitivity");
  AppendJsonString(out, SensitivityName(m.sensitivity));
  AppendKey(out, "source");
  AppendJsonString(out, m.source);
  AppendKey(out, "state");
  AppendJsonString(out, RecordStateName(m.state));
  AppendKey(out, "step_number");
  AppendJsonNumber(out, m.step_number);
  AppendKey(out, "superseded_by");
  AppendJsonString(out, m.superseded_by);
  AppendKey(out, "supersedes");
  AppendJsonString(out, m.supersedes);
  AppendKey(out, "tags");
  AppendArray(out, m.tags, [&](const std::string& t) { AppendJsonString(out, t); });
  AppendKey(out, "text");
  AppendJsonString(out, text != nullptr ? *text : m.text);
  AppendKey(out, "updated_at");
  AppendTime(out, m.updated_at);
  AppendKey(out, "valid_at");
  AppendTime(out, m.valid_at);
  out += '}';
}

void AppendSearchHitJson(std::string& out, const SearchHit& hit,
                         const std::function<std::string(const Memory&)>& last) {
  AppendHitJson(out, hit, /*with_score=*/true, last);
}

nlohmann::json AuditEventToJson(const AuditEvent& e) {
  return json{{"seq", e.seq},
              {"at", TimeToJson(e.at)},
              {"actor", e.actor},
              {"action", AuditActionName(e.action)},
              {"record_id", e.record_id},
              {"tenant", e.tenant},
              {"reason", e.reason},
              {"details", BodyToJson(e.details_json)}};
}

nlohmann::json ConsolidationReportToJson(const ConsolidationReport& r) {
  return json{{"episodes_read", r.episodes_read},
              {"candidates", r.candidates},
              {"facts_added", r.facts_added},
              {"facts_merged", r.facts_merged},
              {"facts_superseded", r.facts_superseded},
              {"fact_ids", r.fact_ids}};
}

nlohmann::json StatsToJson(const Stats& s) {
  auto counts = [](const std::vector<std::pair<std::string, int64_t>>& by) {
    json out = json::object();
    for (const auto& [name, n] : by) out[name] = n;
    return out;
  };
  return json{{"records", s.records},
              {"active", s.active},
              {"expired", s.expired},
              {"by_kind", counts(s.by_kind)},
              {"by_layer", counts(s.by_layer)},
              {"last_seq", s.last_seq},
              {"lexical_applied_seq", s.lexical_applied_seq},
              {"vector_applied_seq", s.vector_applied_seq},
              {"vector_rows", s.vector_rows},
              {"vector_graph_placed", s.vector_graph_placed},
              {"vector_graph_pending", s.vector_graph_pending},
              {"index_rebuilds", {{"lexical", s.lexical_rebuilds}, {"vector", s.vector_rebuilds}}},
              {"audit_events", s.audit_events},
              {"embedder_id", s.embedder_id}};
}

nlohmann::json WriteResultToJson(const WriteResult& r) {
  return json{{"id", r.id}, {"merged", r.merged}, {"evicted_ids", r.evicted_ids}};
}

nlohmann::json ImportReportToJson(const ImportReport& r) {
  return json{{"lines", r.lines}, {"applied", r.applied}, {"split", r.split}, {"truncated", r.truncated}};
}

}  // namespace msp
