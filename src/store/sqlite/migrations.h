// The SQLite schema as a list of numbered forward migrations.
//
// Migration N (1-based) turns a version N-1 database into version N. A new
// schema change is one more entry at the end of SchemaMigrations(); entries
// already released are never edited. The applied versions are recorded in the
// schema_version table (one row per applied migration).
#ifndef MSP_STORE_SQLITE_MIGRATIONS_H_
#define MSP_STORE_SQLITE_MIGRATIONS_H_

#include <string_view>
#include <vector>

#include "msp/status.h"
#include "store/sqlite/sqlite_db.h"

namespace msp {

struct Migration {
  int version;                   // 1, 2, 3, ... in order
  std::string_view description;  // recorded in schema_version
  std::string_view sql;          // one or more statements
};

// msp's migrations, ascending.
const std::vector<Migration>& SchemaMigrations();

// The schema version of `db`: 0 for a database without a schema_version table.
Result<int> ReadSchemaVersion(SqliteDb& db);

// Brings `db` to the last version of `migrations` (which must be numbered
// 1..N in order). Each open applies the missing steps in one IMMEDIATE
// transaction, so concurrent openers apply them once and a failed step leaves
// the database as it was. A database newer than the last migration is refused
// with kFailedPrecondition naming both versions and the path.
Status Migrate(SqliteDb& db, const std::vector<Migration>& migrations);

}  // namespace msp

#endif  // MSP_STORE_SQLITE_MIGRATIONS_H_
