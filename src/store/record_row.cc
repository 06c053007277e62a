// The records row shared by the stores (see record_row.h).
#include "store/record_row.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <optional>

#include <nlohmann/json.hpp>

namespace msp::record_row {

static_assert(std::endian::native == std::endian::little, "embeddings are stored as little-endian float32");
static_assert(sizeof(float) == 4);

using Json = nlohmann::json;

const std::array<std::string_view, kColumnCount> kColumns = {
    "id",           "tenant",        "user_id",       "agent_id",        "session_id",
    "mission_id",   "operator_id",   "layer",         "kind",            "\"text\"",
    "body_json",    "tags_json",     "source",        "sensitivity",     "criticality",
    "confidence",   "created_at",    "updated_at",    "expires_at",      "valid_at",
    "invalid_at",   "access_count",  "last_accessed", "provenance_json", "state",
    "supersedes",   "superseded_by", "step_number",   "embedder_id",     "seq",
    "access_level", "embedding"};

std::string SelectList(std::string_view no_embedding) {
  std::string out;
  for (size_t i = 0; i < kColumns.size(); ++i) {
    if (i > 0) out += ", ";
    out += (i == kEmbedding && !no_embedding.empty()) ? no_embedding : kColumns[i];
  }
  return out;
}

std::string_view OrderBy(RecordQuery::Order order) {
  switch (order) {
    case RecordQuery::Order::kCreatedAsc: return " ORDER BY created_at ASC, id ASC";
    case RecordQuery::Order::kCreatedDesc: return " ORDER BY created_at DESC, id DESC";
    case RecordQuery::Order::kStepAsc: return " ORDER BY step_number ASC, created_at ASC, id ASC";
    case RecordQuery::Order::kStepDesc:
      return " ORDER BY step_number DESC, created_at DESC, id DESC";
  }
  return " ORDER BY created_at ASC, id ASC";
}

Status ValidateQuery(const RecordQuery& q, std::string_view op) {
  if (q.limit < 0 || q.offset < 0) {
    return Status::InvalidArgument(std::string(op) + ": limit and offset must be >= 0 (got " +
                                   std::to_string(q.limit) + ", " + std::to_string(q.offset) + ")");
  }
  return Status::Ok();
}

Status ValidatePut(const Memory& m) {
  if (m.id.empty()) return Status::InvalidArgument("put: a record has an empty id");
  if (m.ns.tenant.empty()) return Status::InvalidArgument("put: record " + m.id + " has an empty tenant");
  if (m.access_level < 0 || m.access_level > kMaxAccessLevel) {
    return Status::InvalidArgument("put: record " + m.id + " has access level " + std::to_string(m.access_level) +
                                   ", outside 0.." + std::to_string(kMaxAccessLevel));
  }
  if (!std::isfinite(m.confidence)) {
    return Status::InvalidArgument("put: record " + m.id + " has a confidence that is not finite");
  }
  return Status::Ok();
}

Result<EncodedPut> EncodePut(const Memory& m) {
  EncodedPut enc;
  try {
    enc.tags_json = Json(m.tags).dump();
  } catch (const Json::exception& e) {
    return Status::InvalidArgument("put: record " + m.id + " has a tag that is not valid UTF-8 (" + e.what() + ")");
  }
  try {
    Json array = Json::array();
    for (const ProvenanceRef& p : m.provenance) array.push_back({{"type", p.type}, {"ref", p.ref}, {"detail", p.detail}});
    enc.provenance_json = array.dump();
  } catch (const Json::exception& e) {
    return Status::InvalidArgument("put: record " + m.id + " has provenance that is not valid UTF-8 (" + e.what() +
                                   ")");
  }
  return enc;
}

void WriteRow(const Memory& m, const EncodedPut& enc, int64_t seq, RowWriter& out) {
  out.Text(kId, m.id);
  out.Text(kTenant, m.ns.tenant);
  out.Text(kUser, m.ns.user);
  out.Text(kAgent, m.ns.agent);
  out.Text(kSession, m.ns.session);
  out.Text(kMission, m.ns.mission);
  out.Text(kOperator, m.ns.operator_id);
  out.Text(kLayer, LayerName(m.layer));
  out.Text(kKind, KindName(m.kind));
  out.Text(kText, m.text);
  out.Text(kBody, m.body_json);
  out.Text(kTags, enc.tags_json);
  out.Text(kSource, m.source);
  out.Text(kSensitivity, SensitivityName(m.sensitivity));
  out.Text(kCriticality, CriticalityName(m.criticality));
  out.Double(kConfidence, m.confidence);
  out.Int(kCreatedAt, m.created_at);
  out.Int(kUpdatedAt, m.updated_at);
  out.Int(kExpiresAt, m.expires_at);
  out.Int(kValidAt, m.valid_at);
  out.Int(kInvalidAt, m.invalid_at);
  out.Int(kAccessCount, m.access_count);
  out.Int(kLastAccessed, m.last_accessed);
  out.Text(kProvenance, enc.provenance_json);
  out.Text(kState, RecordStateName(m.state));
  out.Text(kSupersedes, m.supersedes);
  out.Text(kSupersededBy, m.superseded_by);
  out.Int(kStepNumber, m.step_number);
  out.Text(kEmbedderId, m.embedder_id);
  out.Int(kSeq, seq);
  out.Int(kAccessLevel, m.access_level);
  if (m.embedding.empty()) {
    out.Null(kEmbedding);
  } else {
    out.Blob(kEmbedding, m.embedding.data(), m.embedding.size() * sizeof(float));
  }
}

namespace {

// Reads enum columns; the first unknown name is remembered as Corruption.
class EnumReader {
 public:
  EnumReader(const RowReader& row, std::string_view backend, const std::string& where, const Memory& m)
      : row_(row), backend_(backend), where_(where), m_(m) {}

  template <typename E>
  void Read(std::optional<E> (*parse)(std::string_view), int col, const char* column, E* out) {
    const std::string_view text = row_.Text(col);
    if (std::optional<E> v = parse(text)) {
      *out = *v;
    } else if (status_.ok()) {
      status_ = Status::Corruption(std::string(backend_) + ": record " + m_.id + " in " + where_ +
                                   " has an unknown " + column + " '" + std::string(text) + "'");
    }
  }
  const Status& status() const { return status_; }

 private:
  const RowReader& row_;
  std::string_view backend_;
  const std::string& where_;
  const Memory& m_;
  Status status_;
};

}  // namespace

Status ReadRow(const RowReader& row, std::string_view backend, const std::string& where, Memory* m) {
  auto text = [&](int col) { return std::string(row.Text(col)); };
  m->id = text(kId);
  m->ns.tenant = text(kTenant);
  m->ns.user = text(kUser);
  m->ns.agent = text(kAgent);
  m->ns.session = text(kSession);
  m->ns.mission = text(kMission);
  m->ns.operator_id = text(kOperator);
  m->text = text(kText);
  m->body_json = text(kBody);
  m->source = text(kSource);
  m->confidence = row.Double(kConfidence);
  m->created_at = row.Int(kCreatedAt);
  m->updated_at = row.Int(kUpdatedAt);
  m->expires_at = row.Int(kExpiresAt);
  m->valid_at = row.Int(kValidAt);
  m->invalid_at = row.Int(kInvalidAt);
  m->access_count = row.Int(kAccessCount);
  m->last_accessed = row.Int(kLastAccessed);
  m->supersedes = text(kSupersedes);
  m->superseded_by = text(kSupersededBy);
  m->step_number = row.Int(kStepNumber);
  m->embedder_id = text(kEmbedderId);
  m->seq = row.Int(kSeq);
  m->access_level = static_cast<int>(row.Int(kAccessLevel));

  EnumReader enums(row, backend, where, *m);
  enums.Read(&ParseLayer, kLayer, "layer", &m->layer);
  enums.Read(&ParseKind, kKind, "kind", &m->kind);
  enums.Read(&ParseSensitivity, kSensitivity, "sensitivity", &m->sensitivity);
  enums.Read(&ParseCriticality, kCriticality, "criticality", &m->criticality);
  enums.Read(&ParseRecordState, kState, "state", &m->state);
  MSP_RETURN_IF_ERROR(enums.status());

  try {
    const Json tags = Json::parse(row.Text(kTags));
    m->tags.clear();
    for (const Json& t : tags) m->tags.push_back(t.get<std::string>());
    const Json provenance = Json::parse(row.Text(kProvenance));
    m->provenance.clear();
    for (const Json& p : provenance) {
      m->provenance.push_back(ProvenanceRef{p.at("type").get<std::string>(), p.at("ref").get<std::string>(),
                                            p.value("detail", std::string())});
    }
  } catch (const Json::exception& e) {
    return Status::Corruption(std::string(backend) + ": record " + m->id + " in " + where +
                              " has malformed tags or provenance JSON: " + e.what());
  }

  // A malformed embedding (not whole float32s) is read as none: the vector
  // is derived data, and one bad row must not make the store unreadable.
  // The vector index leaves such a record out (IndexSync warns) and `msp
  // reembed` makes its vector again.
  m->embedding.clear();
  if (!row.IsNull(kEmbedding)) {
    std::string_view bytes;
    if (row.Blob(kEmbedding, &bytes) && bytes.size() % sizeof(float) == 0 && !bytes.empty()) {
      m->embedding.resize(bytes.size() / sizeof(float));
      std::memcpy(m->embedding.data(), bytes.data(), bytes.size());
    }
  }
  return Status::Ok();
}

}  // namespace msp::record_row
