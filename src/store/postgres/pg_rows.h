// Records as PostgreSQL rows: the SQL text of the record statements, a
// record's statement parameters, a result row read back into a record, and a
// RecordQuery as a WHERE clause. The column order and encoding are
// store/record_row.h's, shared with the SQLite store; this is what is
// particular to libpq (text-format results, $n parameters, no NUL bytes in
// text).
#ifndef MSP_STORE_POSTGRES_PG_ROWS_H_
#define MSP_STORE_POSTGRES_PG_ROWS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "msp/status.h"
#include "msp/types.h"
#include "store/postgres/pg_conn.h"
#include "store/record_row.h"
#include "store/store.h"

namespace msp {

// SELECT of every record column FROM records (the embedding as NULL when
// `with_embedding` is false); callers append WHERE / ORDER BY / LIMIT.
const std::string& PgSelectRecords(bool with_embedding);

// INSERT of `rows` records; a record whose id exists is replaced whole.
std::string PgUpsertSql(int rows);

// True when `s` holds a NUL byte, which PostgreSQL text cannot hold.
bool HasNul(std::string_view s);

// PostgreSQL's own check on top of ValidatePut: text cannot hold NUL bytes.
Status ValidatePgPut(const Memory& m);

// Appends the parameters of record `m` (encoded as `enc`, at change `seq`) to
// `p`, in column order.
void PgBindRecord(PgParams& p, const Memory& m, const record_row::EncodedPut& enc,
                  int64_t seq);

// Reads row `row` of a PgSelectRecords() result into *m; `where` names the
// store in errors.
Status PgReadRecord(const PgResult& r, int row, const std::string& where, Memory* m);
Result<std::vector<Memory>> PgReadRecords(const PgResult& r, const std::string& where);

// A WHERE clause and its parameters, built from a RecordQuery.
struct PgFilter {
  std::string sql;
  PgParams params;

  std::string Next() { return "$" + std::to_string(params.size() + 1); }
  void Add(const std::string& clause) {
    sql += sql.empty() ? " WHERE " : " AND ";
    sql += clause;
  }
  void AddEquals(std::string_view column, const std::string& value) {
    Add(std::string(column) + " = " + Next());
    params.Text(value);
  }
  void AddAtLeast(std::string_view column, int64_t value, std::string_view op = ">=") {
    Add(std::string(column) + " " + std::string(op) + " " + Next());
    params.Int(value);
  }
  template <typename E, typename Name>
  void AddAnyOf(std::string_view column, const std::vector<E>& values, Name name) {
    if (values.empty()) return;
    std::vector<std::string> names;
    for (const E& v : values) names.emplace_back(name(v));
    Add(std::string(column) + " = ANY(" + Next() + "::text[])");
    params.Text(PgTextArray(names));
  }
};

PgFilter BuildPgFilter(const RecordQuery& q);

// LIMIT n, or LIMIT NULL (no limit) for 0.
void PgAddLimit(PgParams& p, int limit);

}  // namespace msp

#endif  // MSP_STORE_POSTGRES_PG_ROWS_H_
