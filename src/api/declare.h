// How an operation is declared (internal to src/api): Declaration<R> holds
// the field table of request struct R, each row bound to the member it
// fills, and the handler; Declare() turns it into an Operation. The strict
// decoding of every row goes through the one JSON reader (codec/json_reader.h).
//
//   using F = Fields<RetrieveRequest>;
//   F::Int({.name = "top_k", .doc = "Hits to return."}, 1, 1000,
//          [](RetrieveRequest& r) -> auto& { return r.top_k; })
#ifndef MSP_API_DECLARE_H_
#define MSP_API_DECLARE_H_

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "api/operation.h"
#include "codec/json_reader.h"
#include "codec/memory_json.h"
#include "core/idempotency.h"
#include "msp/mission.h"
#include "util/fence.h"
#include "util/time.h"

namespace msp::api {

// A row of R's field table: its description and how it reads and shows the
// member it is bound to.
template <typename R>
struct Field {
  FieldInfo info;
  // Reads the field (when present) from the reader of its group into `r`.
  std::function<Status(const JsonReader& reader, R& r)> read;
  // The member's value as JSON (for the default shown in docs and schemas).
  std::function<nlohmann::json(R& r)> show;
  // Sets the member from the call context before decoding (the namespace).
  std::function<void(const CallContext& context, R& r)> preset;
};

template <typename E>
std::vector<std::string> EnumValues(std::string_view (*name)(E)) {
  std::vector<std::string> out;
  for (int i = 0; i < 64 && name(static_cast<E>(i)) != "unknown"; ++i) out.emplace_back(name(static_cast<E>(i)));
  return out;
}

// The row builders. `at` is a lambda returning a reference to the member:
// [](R& r) -> auto& { return r.filter.kinds; }.
template <typename R>
struct Fields {
  template <typename At>
  static Field<R> String(FieldInfo info, At at) {
    info.type = info.type == FieldType::kText ? FieldType::kText : FieldType::kString;
    const std::string name = info.name;
    const bool text = info.type == FieldType::kText;
    return {std::move(info),
            [name, text, at](const JsonReader& reader, R& r) -> Status {
              MSP_RETURN_IF_ERROR(reader.String(name, &at(r)));
              if (text && reader.Has(name) && at(r).find_first_not_of(" \t\r\n") == std::string::npos) {
                return Status::InvalidArgument("field '" + reader.prefix() + name + "' must not be empty");
              }
              return Status::Ok();
            },
            [at](R& r) { return at(r).empty() ? nlohmann::json() : nlohmann::json(at(r)); }, nullptr};
  }
  template <typename At>
  static Field<R> Text(FieldInfo info, At at) {
    info.type = FieldType::kText;
    return String(std::move(info), at);
  }
  template <typename At>
  static Field<R> Int(FieldInfo info, int64_t lo, int64_t hi, At at) {
    info.type = FieldType::kInt;
    info.min_int = lo;
    info.max_int = hi;
    const std::string name = info.name;
    return {std::move(info),
            [name, lo, hi, at](const JsonReader& reader, R& r) { return reader.Int(name, &at(r), lo, hi); },
            [at](R& r) { return nlohmann::json(at(r)); }, nullptr};
  }
  template <typename At>
  static Field<R> Number(FieldInfo info, double lo, double hi, At at) {
    info.type = FieldType::kNumber;
    info.min_number = lo;
    info.max_number = hi;
    const std::string name = info.name;
    return {std::move(info),
            [name, lo, hi, at](const JsonReader& reader, R& r) { return reader.Double(name, &at(r), lo, hi); },
            [at](R& r) { return nlohmann::json(at(r)); }, nullptr};
  }
  template <typename At>
  static Field<R> Bool(FieldInfo info, At at) {
    info.type = FieldType::kBool;
    const std::string name = info.name;
    return {std::move(info), [name, at](const JsonReader& reader, R& r) { return reader.Bool(name, &at(r)); },
            [at](R& r) { return nlohmann::json(at(r)); }, nullptr};
  }
  // An ISO 8601 time; 0 (unset) has no default.
  template <typename At>
  static Field<R> Time(FieldInfo info, At at) {
    info.type = FieldType::kTime;
    const std::string name = info.name;
    return {std::move(info), [name, at](const JsonReader& reader, R& r) { return reader.Time(name, &at(r)); },
            [at](R& r) { return at(r) == 0 ? nlohmann::json() : nlohmann::json(FormatIso8601(at(r))); }, nullptr};
  }
  template <typename E, typename At>
  static Field<R> Enum(FieldInfo info, std::optional<E> (*parse)(std::string_view), std::string_view (*name_of)(E),
                       At at) {
    info.type = FieldType::kEnum;
    info.values = EnumValues(name_of);
    const std::string name = info.name;
    return {std::move(info),
            [name, parse, name_of, at](const JsonReader& reader, R& r) {
              return reader.Enum(name, &at(r), parse, name_of);
            },
            [name_of, at](R& r) { return nlohmann::json(std::string(name_of(at(r)))); }, nullptr};
  }
  // An enum that may be left unset (std::optional<E>): no default.
  template <typename E, typename At>
  static Field<R> OptionalEnum(FieldInfo info, std::optional<E> (*parse)(std::string_view),
                               std::string_view (*name_of)(E), At at) {
    info.type = FieldType::kEnum;
    info.values = EnumValues(name_of);
    const std::string name = info.name;
    return {std::move(info),
            [name, parse, name_of, at](const JsonReader& reader, R& r) -> Status {
              if (!reader.Has(name)) return Status::Ok();
              E value{};
              MSP_RETURN_IF_ERROR(reader.Enum(name, &value, parse, name_of));
              at(r) = value;
              return Status::Ok();
            },
            [name_of, at](R& r) { return at(r) ? nlohmann::json(std::string(name_of(*at(r)))) : nlohmann::json(); },
            nullptr};
  }
  // An enum whose values are `allowed` only (of the type's names).
  template <typename E, typename At>
  static Field<R> EnumOf(FieldInfo info, std::vector<E> allowed, std::optional<E> (*parse)(std::string_view),
                         std::string_view (*name_of)(E), At at) {
    info.type = FieldType::kEnum;
    info.values.clear();
    for (E e : allowed) info.values.emplace_back(name_of(e));
    const std::string name = info.name;
    const std::vector<std::string> values = info.values;
    return {std::move(info),
            [name, values, parse, at](const JsonReader& reader, R& r) -> Status {
              if (!reader.Has(name)) return Status::Ok();
              std::string text;
              MSP_RETURN_IF_ERROR(reader.String(name, &text));
              std::optional<E> value = std::find(values.begin(), values.end(), text) == values.end()
                                           ? std::nullopt
                                           : parse(text);
              if (!value) {
                std::string list;
                for (const std::string& v : values) list += (list.empty() ? "" : ", ") + v;
                return Status::InvalidArgument("field '" + reader.prefix() + name + "': unknown value '" + text +
                                               "'; allowed: " + list);
              }
              at(r) = *value;
              return Status::Ok();
            },
            [name_of, at](R& r) { return nlohmann::json(std::string(name_of(at(r)))); }, nullptr};
  }
  // Files handed over as text: [{name, text, first_commit_at, last_author}],
  // name and text required (msp/mission.h's AdrFile).
  template <typename At>
  static Field<R> Files(FieldInfo info, At at) {
    info.type = FieldType::kFiles;
    return ObjectList<AdrFile>(std::move(info), "{name, text}", at,
                               [](const JsonReader& item, const std::string& where, AdrFile& f) -> Status {
                                 MSP_RETURN_IF_ERROR(item.Known({"name", "text", "first_commit_at", "last_author"}));
                                 MSP_RETURN_IF_ERROR(item.String("name", &f.name));
                                 MSP_RETURN_IF_ERROR(item.String("text", &f.text));
                                 MSP_RETURN_IF_ERROR(item.Time("first_commit_at", &f.first_commit_at));
                                 MSP_RETURN_IF_ERROR(item.String("last_author", &f.last_author));
                                 if (f.name.empty() || f.text.empty()) {
                                   return Status::InvalidArgument("field '" + where +
                                                                  "' needs a non-empty name and text");
                                 }
                                 return Status::Ok();
                               });
  }
  // A JSON object, kept as its text.
  template <typename At>
  static Field<R> Object(FieldInfo info, At at) {
    info.type = FieldType::kObject;
    const std::string name = info.name;
    return {std::move(info), [name, at](const JsonReader& reader, R& r) { return reader.ObjectText(name, &at(r)); },
            [](R&) { return nlohmann::json(); }, nullptr};
  }
  // Provenance references: [{type, ref, detail}].
  template <typename At>
  static Field<R> Provenance(FieldInfo info, At at) {
    info.type = FieldType::kProvenance;
    const std::string name = info.name;
    return {std::move(info), [name, at](const JsonReader& reader, R& r) { return reader.Provenance(name, &at(r)); },
            [](R&) { return nlohmann::json(); }, nullptr};
  }
  // Rejected alternatives of a decision: [{option, reason}], both required.
  template <typename At>
  static Field<R> Alternatives(FieldInfo info, At at) {
    info.type = FieldType::kAlternatives;
    return ObjectList<Alternative>(
        std::move(info), "{option, reason}", at,
        [](const JsonReader& item, const std::string& where, Alternative& a) -> Status {
          MSP_RETURN_IF_ERROR(item.Known({"option", "reason"}));
          MSP_RETURN_IF_ERROR(item.String("option", &a.option));
          MSP_RETURN_IF_ERROR(item.String("reason", &a.reason));
          if (a.option.empty() || a.reason.empty()) {
            return Status::InvalidArgument("field '" + where +
                                           "' needs a non-empty option and reason (why it was rejected)");
          }
          return Status::Ok();
        });
  }
  // An array of objects (`shape` in its error: "{option, reason}"), each
  // read by `one` from its reader, named "field[i]" in errors.
  template <typename T, typename At, typename One>
  static Field<R> ObjectList(FieldInfo info, std::string shape, At at, One one) {
    const std::string name = info.name;
    return {std::move(info),
            [name, shape, at, one](const JsonReader& reader, R& r) -> Status {
              if (!reader.Has(name)) return Status::Ok();
              const nlohmann::json& v = reader.obj().at(name);
              if (!v.is_array()) {
                return Status::InvalidArgument("field '" + reader.prefix() + name + "' must be an array of " + shape +
                                               " objects, got " + JsonTypeName(v));
              }
              std::vector<T> out;
              for (size_t i = 0; i < v.size(); ++i) {
                const std::string at_item = name + "[" + std::to_string(i) + "]";
                JsonReader item(v[i], reader.prefix() + at_item + ".");
                MSP_RETURN_IF_ERROR(item.Object());
                T t;
                MSP_RETURN_IF_ERROR(one(item, reader.prefix() + at_item, t));
                out.push_back(std::move(t));
              }
              at(r) = std::move(out);
              return Status::Ok();
            },
            [](R&) { return nlohmann::json(); }, nullptr};
  }
  template <typename At>
  static Field<R> Strings(FieldInfo info, At at) {
    info.type = FieldType::kStrings;
    const std::string name = info.name;
    return {std::move(info), [name, at](const JsonReader& reader, R& r) { return reader.Strings(name, &at(r)); },
            [at](R& r) { return at(r).empty() ? nlohmann::json() : nlohmann::json(at(r)); }, nullptr};
  }
  template <typename E, typename At>
  static Field<R> Enums(FieldInfo info, std::optional<E> (*parse)(std::string_view), std::string_view (*name_of)(E),
                        At at) {
    info.type = FieldType::kEnums;
    info.values = EnumValues(name_of);
    const std::string name = info.name;
    return {std::move(info),
            [name, parse, name_of, at](const JsonReader& reader, R& r) {
              at(r).clear();
              return reader.Enums(name, &at(r), parse, name_of);
            },
            [name_of, at](R& r) {
              if (at(r).empty()) return nlohmann::json();
              nlohmann::json out = nlohmann::json::array();
              for (auto e : at(r)) out.push_back(std::string(name_of(e)));
              return out;
            },
            nullptr};
  }
  // The namespace: the context's, with the parts the request gives. A
  // request may name the context's tenant, never another one.
  template <typename At>
  static Field<R> Scope(FieldInfo info, At at) {
    info.type = FieldType::kNamespace;
    info.cli = CliForm::kNamespaceFlags;
    const std::string name = info.name;
    return {std::move(info),
            [name, at](const JsonReader& reader, R& r) -> Status {
              if (!reader.Has(name)) return Status::Ok();
              JsonReader parts(reader.obj().at(name), reader.prefix() + name + ".");
              MSP_RETURN_IF_ERROR(parts.Object());
              MSP_RETURN_IF_ERROR(parts.Known({"tenant", "user", "agent", "session", "mission", "operator"}));
              Namespace& ns = at(r);
              std::string tenant = ns.tenant;
              MSP_RETURN_IF_ERROR(parts.String("tenant", &tenant));
              if (tenant != ns.tenant) {
                return Status::InvalidArgument("field '" + parts.prefix() + "tenant' names tenant '" + tenant +
                                                "', but this call belongs to tenant '" + ns.tenant +
                                                "': leave the tenant out");
              }
              MSP_RETURN_IF_ERROR(parts.String("user", &ns.user));
              MSP_RETURN_IF_ERROR(parts.String("agent", &ns.agent));
              MSP_RETURN_IF_ERROR(parts.String("session", &ns.session));
              MSP_RETURN_IF_ERROR(parts.String("mission", &ns.mission));
              return parts.String("operator", &ns.operator_id);
            },
            [](R&) { return nlohmann::json(); },
            [at](const CallContext& context, R& r) { at(r) = context.ns; }};
  }
};

// The rows and checks more than one operation shares.

// request_id: an idempotency key (core/idempotency.h), checked as it is read.
template <typename R, typename At>
Field<R> RequestIdField(std::string doc, At at) {
  Field<R> f = Fields<R>::String({.name = "request_id", .doc = std::move(doc)}, at);
  f.read = [read = f.read, at](const JsonReader& reader, R& r) -> Status {
    MSP_RETURN_IF_ERROR(read(reader, r));
    if (!reader.Has("request_id")) return Status::Ok();
    if (Status s = ValidateRequestId(at(r)); !s.ok()) {
      return Status::InvalidArgument("field '" + reader.prefix() + "request_id': " + s.message());
    }
    return Status::Ok();
  };
  return f;
}

// source: where a record came from; from a model's face (MCP) the face's
// source unless the request names another (CheckClaimedSource).
template <typename R, typename At>
Field<R> SourceField(std::string doc, At at) {
  Field<R> f = Fields<R>::String({.name = "source", .doc = std::move(doc)}, at);
  f.preset = [at](const CallContext& context, R& r) {
    if (context.agent_writes) at(r) = context.agent_writes->source;
  };
  return f;
}

// A model (context.agent_writes) may not claim a trusted source
// (policy.context_trusted_sources): trust is the operator's to give.
inline Status CheckClaimedSource(const CallContext& context, const std::string& source, std::string_view tool) {
  if (!context.agent_writes || source == context.agent_writes->source ||
      !IsTrustedSource(source, context.trusted_sources)) {
    return Status::Ok();
  }
  return Status::InvalidArgument("source '" + source + "' is trusted (policy.context_trusted_sources) and cannot be "
                                 "claimed by a " + std::string(tool) + " call: omit source (stored as '" +
                                 context.agent_writes->source + "') or name an untrusted one; nothing was written");
}

// An operation's declaration over request struct R.
template <typename R>
struct Declaration {
  OperationInfo info;  // its `fields` are filled from `fields`
  std::vector<Field<R>> fields;
  // Checks across fields (a time range's order), after decoding; errors name
  // the fields by their JSON paths.
  Status (*check)(const R& r) = nullptr;
  // Runs the operation. REQUIRES: `r` decoded from a request.
  Result<nlohmann::json> (*handle)(const CallContext& context, R& r) = nullptr;
  // Optional: the same answer written as DumpJson's text (Operation::CallText).
  Result<std::string> (*handle_text)(const CallContext& context, R& r) = nullptr;
};

// Decodes `request` into `r` with `fields`, strictly.
template <typename R>
Status DecodeRequest(const std::vector<Field<R>>& fields, const CallContext& context, const nlohmann::json& request,
                     R& r, const std::string& prefix = "") {
  for (const Field<R>& f : fields) {
    if (f.preset) f.preset(context, r);
  }
  JsonReader top(request, prefix);
  MSP_RETURN_IF_ERROR(top.Object());
  std::vector<std::string> top_names;
  std::vector<std::string> groups;
  for (const Field<R>& f : fields) {
    const std::string& n = f.info.group.empty() ? f.info.name : f.info.group;
    if (std::find(top_names.begin(), top_names.end(), n) == top_names.end()) top_names.push_back(n);
    if (!f.info.group.empty() && std::find(groups.begin(), groups.end(), f.info.group) == groups.end()) {
      groups.push_back(f.info.group);
    }
  }
  MSP_RETURN_IF_ERROR(top.Known(top_names));
  for (const std::string& g : groups) {
    if (!top.Has(g)) continue;
    JsonReader group(request.at(g), prefix + g + ".");
    MSP_RETURN_IF_ERROR(group.Object());
    std::vector<std::string> names;
    for (const Field<R>& f : fields) {
      if (f.info.group == g) names.push_back(f.info.name);
    }
    MSP_RETURN_IF_ERROR(group.Known(names));
  }
  for (const Field<R>& f : fields) {
    const bool grouped = !f.info.group.empty();
    if (grouped && !top.Has(f.info.group)) {
      if (f.info.required) return Status::InvalidArgument("field '" + prefix + f.info.Path() + "' is required");
      continue;
    }
    JsonReader reader = grouped ? JsonReader(request.at(f.info.group), prefix + f.info.group + ".") : top;
    if (f.info.required && !reader.Has(f.info.name)) {
      return Status::InvalidArgument("field '" + prefix + f.info.Path() + "' is required");
    }
    MSP_RETURN_IF_ERROR(f.read(reader, r));
  }
  return Status::Ok();
}

template <typename R>
class DeclaredOperation final : public Operation {
 public:
  explicit DeclaredOperation(Declaration<R> d) : Operation(InfoOf(d)), d_(std::move(d)) {}

  Result<nlohmann::json> Call(const CallContext& context, const nlohmann::json& request) const override {
    R r{};
    MSP_RETURN_IF_ERROR(Decode(context, request, r));
    return d_.handle(context, r);
  }

  Result<std::string> CallText(const CallContext& context, const nlohmann::json& request) const override {
    R r{};
    MSP_RETURN_IF_ERROR(Decode(context, request, r));
    if (d_.handle_text) return d_.handle_text(context, r);
    MSP_ASSIGN_OR_RETURN(nlohmann::json answer, d_.handle(context, r));
    return DumpJson(answer);
  }

  Status Check(const CallContext& context, const nlohmann::json& request) const override {
    R r{};
    return Decode(context, request, r);
  }

 private:
  static OperationInfo InfoOf(const Declaration<R>& d) {
    OperationInfo info = d.info;
    R defaults{};
    info.fields.clear();
    for (const Field<R>& f : d.fields) {
      FieldInfo fi = f.info;
      fi.default_value = f.show(defaults);
      info.fields.push_back(std::move(fi));
    }
    return info;
  }

  Status Decode(const CallContext& context, const nlohmann::json& request, R& r) const {
    MSP_RETURN_IF_ERROR(DecodeRequest(d_.fields, context, request, r));
    return d_.check ? d_.check(r) : Status::Ok();
  }

  Declaration<R> d_;
};

template <typename R>
std::unique_ptr<Operation> Declare(Declaration<R> d) {
  return std::make_unique<DeclaredOperation<R>>(std::move(d));
}

}  // namespace msp::api

#endif  // MSP_API_DECLARE_H_
