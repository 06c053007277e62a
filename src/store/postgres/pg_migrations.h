// The PostgreSQL schema as numbered forward migrations, and the code that
// applies them under an advisory lock.
//
// Migration N (1-based) turns a version N-1 schema into version N; a new
// change is one more entry at the end, and released entries are never
// edited. Applied versions are rows of schema_version. All of msp's tables
// live in one PostgreSQL schema (store.postgres_schema), so several msp
// deployments (or tests) can share a database.
#ifndef MSP_STORE_POSTGRES_PG_MIGRATIONS_H_
#define MSP_STORE_POSTGRES_PG_MIGRATIONS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "msp/status.h"
#include "store/postgres/pg_conn.h"

namespace msp {

struct PgMigration {
  int version;                   // 1, 2, 3, ... in order
  std::string_view description;  // recorded in schema_version
  std::string_view sql;          // one or more statements
};

// msp's PostgreSQL migrations, ascending.
const std::vector<PgMigration>& PgSchemaMigrations();

// The advisory-lock key pair (class, object) for `name` in `schema`: class
// kPgLockMigrate for migrations, kPgLockLease for leases.
inline constexpr int32_t kPgLockMigrate = 0x6d7370;  // "msp"
inline constexpr int32_t kPgLockLease = 0x6d7371;
int32_t PgLockKey(std::string_view schema, std::string_view name);

// The schema version in conn's search_path schema: 0 when it has no
// schema_version table.
Result<int> PgReadSchemaVersion(PgConnection& conn);

// Creates the schema if needed and brings it to the last of `migrations`
// (numbered 1..N). Holds a session advisory lock on the schema meanwhile,
// so servers starting at once apply each step once; the missing steps run
// in one transaction, so a failure leaves the schema as it was. A schema
// newer than the last migration is refused with kFailedPrecondition.
Status PgMigrate(PgConnection& conn, const std::vector<PgMigration>& migrations);

}  // namespace msp

#endif  // MSP_STORE_POSTGRES_PG_MIGRATIONS_H_
