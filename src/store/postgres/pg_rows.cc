// Records as PostgreSQL rows (pg_rows.h).
#include "store/postgres/pg_rows.h"

namespace msp {
namespace {

using namespace record_row;  // NOLINT: the row's columns name every statement here

// A statement's parameters from a record, appended in column order.
class ParamsWriter final : public RowWriter {
 public:
  explicit ParamsWriter(PgParams& p) : p_(p) {}
  void Text(int, std::string_view value) override { p_.Text(value); }
  void Int(int, int64_t value) override { p_.Int(value); }
  void Double(int, double value) override { p_.Double(value); }
  void Blob(int, const void* data, size_t size) override { p_.Bytes(data, size); }
  void Null(int) override { p_.Null(); }

 private:
  PgParams& p_;
};

// Row `row` of a PgSelectRecords() result.
class ResultReader final : public RowReader {
 public:
  ResultReader(const PgResult& r, int row) : r_(r), row_(row) {}
  std::string_view Text(int col) const override { return r_.Text(row_, col); }
  int64_t Int(int col) const override { return r_.Int(row_, col); }
  double Double(int col) const override { return r_.Double(row_, col); }
  bool IsNull(int col) const override { return r_.IsNull(row_, col); }
  bool Blob(int col, std::string_view* out) const override {
    if (!r_.Bytea(row_, col, &bytes_)) return false;
    *out = bytes_;
    return true;
  }

 private:
  const PgResult& r_;
  int row_;
  mutable std::string bytes_;  // the decoded bytea
};

}  // namespace

const std::string& PgSelectRecords(bool with_embedding) {
  static const std::string kWith = "SELECT " + SelectList() + " FROM records";
  static const std::string kWithout = "SELECT " + SelectList("NULL::bytea") + " FROM records";
  return with_embedding ? kWith : kWithout;
}

std::string PgUpsertSql(int rows) {
  std::string sql = "INSERT INTO records (" + SelectList();
  sql += ") VALUES ";
  int param = 1;
  for (int r = 0; r < rows; ++r) {
    sql += r == 0 ? "(" : ", (";
    for (size_t i = 0; i < kColumns.size(); ++i) {
      if (i > 0) sql += ", ";
      sql += "$" + std::to_string(param++);
    }
    sql += ")";
  }
  sql += " ON CONFLICT (id) DO UPDATE SET ";
  for (size_t i = 1; i < kColumns.size(); ++i) {
    if (i > 1) sql += ", ";
    sql += std::string(kColumns[i]) + " = EXCLUDED." + std::string(kColumns[i]);
  }
  return sql;
}

bool HasNul(std::string_view s) { return s.find('\0') != std::string_view::npos; }

Status ValidatePgPut(const Memory& m) {
  MSP_RETURN_IF_ERROR(ValidatePut(m));
  for (const std::string* s :
       {&m.id, &m.ns.tenant, &m.ns.user, &m.ns.agent, &m.ns.session, &m.ns.mission,
        &m.ns.operator_id, &m.text, &m.body_json, &m.source, &m.supersedes, &m.superseded_by,
        &m.embedder_id}) {
    if (HasNul(*s)) {
      return Status::InvalidArgument("put: record " + m.id +
                                     " has a NUL byte in a text field, which PostgreSQL "
                                     "text cannot hold");
    }
  }
  return Status::Ok();
}

void PgBindRecord(PgParams& p, const Memory& m, const record_row::EncodedPut& enc, int64_t seq) {
  ParamsWriter w(p);
  WriteRow(m, enc, seq, w);
}

Status PgReadRecord(const PgResult& r, int row, const std::string& where, Memory* m) {
  return ReadRow(ResultReader(r, row), "postgres", where, m);
}

Result<std::vector<Memory>> PgReadRecords(const PgResult& r, const std::string& where) {
  std::vector<Memory> out(static_cast<size_t>(r.rows()));
  for (int i = 0; i < r.rows(); ++i) {
    MSP_RETURN_IF_ERROR(PgReadRecord(r, i, where, &out[static_cast<size_t>(i)]));
  }
  return out;
}

PgFilter BuildPgFilter(const RecordQuery& q) {
  PgFilter f;
  f.AddEquals("tenant", q.scope.tenant);
  if (!q.scope.user.empty()) f.AddEquals("user_id", q.scope.user);
  if (!q.scope.agent.empty()) f.AddEquals("agent_id", q.scope.agent);
  if (!q.scope.session.empty()) f.AddEquals("session_id", q.scope.session);
  if (!q.scope.mission.empty()) f.AddEquals("mission_id", q.scope.mission);
  if (!q.scope.operator_id.empty()) f.AddEquals("operator_id", q.scope.operator_id);
  f.AddAnyOf("kind", q.kinds, &KindName);
  f.AddAnyOf("layer", q.layers, &LayerName);
  f.AddAnyOf("source", q.sources, +[](const std::string& s) { return std::string_view(s); });
  if (!q.session.empty()) f.AddEquals("session_id", q.session);
  if (q.min_step > 0) f.AddAtLeast("step_number", q.min_step);
  if (q.state) f.AddEquals("state", std::string(RecordStateName(*q.state)));
  if (q.created_from > 0) f.AddAtLeast("created_at", q.created_from);
  if (q.created_to > 0) f.AddAtLeast("created_at", q.created_to, "<");
  if (q.not_expired_at > 0) {
    f.Add("(expires_at = 0 OR expires_at > " + f.Next() + ")");
    f.params.Int(q.not_expired_at);
  }
  if (q.max_access_level) f.AddAtLeast("access_level", *q.max_access_level, "<=");
  return f;
}

void PgAddLimit(PgParams& p, int limit) {
  if (limit > 0) {
    p.Int(limit);
  } else {
    p.Null();
  }
}

}  // namespace msp
