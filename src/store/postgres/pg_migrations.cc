// The PostgreSQL schema migrations and the code that applies them.
#include "store/postgres/pg_migrations.h"

#include "util/hash.h"
#include "util/time.h"

namespace msp {
namespace {

// Version 1: the shape of SQLite's version 3 (records with access levels,
// unique episode steps), plus the change counter.
//
// Identifiers are COLLATE "C" so that ORDER BY id is byte order whatever the
// database's locale (Scan and List promise id order). body_json stays text,
// not jsonb, so a record's body comes back byte for byte. Embeddings are
// little-endian float32 in a bytea, never compressed (floats do not
// compress), and kept in the row up to a row of 8160 bytes (a 1536-dim
// vector fits): a record with a 384-dim vector is about 2 KB, right at
// PostgreSQL's default TOAST threshold, and would otherwise often be split
// into an out-of-line TOAST entry on write and joined again on read. change_counter's single row is the change sequence: a writer
// locks it (UPDATE) for the rest of its transaction, so sequence numbers are
// handed out in commit order and without gaps, and a reader that has seen
// seq N has seen every change before it.
constexpr std::string_view kPgSchemaV1 = R"sql(
CREATE TABLE records (
  id              text COLLATE "C" PRIMARY KEY,
  tenant          text COLLATE "C" NOT NULL,
  user_id         text COLLATE "C" NOT NULL DEFAULT '',
  agent_id        text COLLATE "C" NOT NULL DEFAULT '',
  session_id      text COLLATE "C" NOT NULL DEFAULT '',
  mission_id      text COLLATE "C" NOT NULL DEFAULT '',
  operator_id     text COLLATE "C" NOT NULL DEFAULT '',
  layer           text NOT NULL,
  kind            text NOT NULL,
  "text"          text NOT NULL,
  body_json       text NOT NULL DEFAULT '{}',
  tags_json       text NOT NULL DEFAULT '[]',
  source          text NOT NULL DEFAULT '',
  sensitivity     text NOT NULL,
  criticality     text NOT NULL,
  confidence      double precision NOT NULL,
  created_at      bigint NOT NULL DEFAULT 0,
  updated_at      bigint NOT NULL DEFAULT 0,
  expires_at      bigint NOT NULL DEFAULT 0,
  valid_at        bigint NOT NULL DEFAULT 0,
  invalid_at      bigint NOT NULL DEFAULT 0,
  access_count    bigint NOT NULL DEFAULT 0,
  last_accessed   bigint NOT NULL DEFAULT 0,
  provenance_json text NOT NULL DEFAULT '[]',
  state           text NOT NULL,
  supersedes      text NOT NULL DEFAULT '',
  superseded_by   text NOT NULL DEFAULT '',
  step_number     bigint NOT NULL DEFAULT 0,
  embedder_id     text NOT NULL DEFAULT '',
  seq             bigint NOT NULL,
  access_level    integer NOT NULL DEFAULT 0 CHECK (access_level BETWEEN 0 AND 9),
  embedding       bytea
);
ALTER TABLE records ALTER COLUMN embedding SET STORAGE EXTERNAL;
ALTER TABLE records SET (toast_tuple_target = 8160);
CREATE INDEX records_tenant_kind_created ON records(tenant, kind, created_at);
CREATE INDEX records_tenant_created ON records(tenant, created_at);
CREATE INDEX records_tenant_user_kind_created ON records(tenant, user_id, kind, created_at);
CREATE INDEX records_tenant_session_step ON records(tenant, session_id, step_number);
CREATE INDEX records_session_created ON records(session_id, created_at);
CREATE UNIQUE INDEX records_episode_step ON records(
  tenant, user_id, agent_id, session_id, mission_id, operator_id, step_number)
  WHERE kind = 'episode' AND step_number > 0;

CREATE TABLE changes (
  seq       bigint PRIMARY KEY,
  record_id text COLLATE "C" NOT NULL,
  op        text NOT NULL CHECK (op IN ('put', 'delete')),
  at        bigint NOT NULL
);
CREATE TABLE change_counter (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  last_seq  bigint NOT NULL
);
INSERT INTO change_counter (singleton, last_seq) VALUES (true, 0);

CREATE TABLE audit (
  seq          bigserial PRIMARY KEY,
  at           bigint NOT NULL,
  actor        text NOT NULL DEFAULT '',
  action       text NOT NULL,
  record_id    text COLLATE "C" NOT NULL DEFAULT '',
  tenant       text COLLATE "C" NOT NULL,
  reason       text NOT NULL DEFAULT '',
  details_json text NOT NULL DEFAULT '{}'
);
CREATE INDEX audit_tenant_seq ON audit(tenant, seq);
CREATE INDEX audit_tenant_record_seq ON audit(tenant, record_id, seq);

CREATE TABLE meta (
  key   text COLLATE "C" PRIMARY KEY,
  value text NOT NULL
);
)sql";

// Version 2: each change names its record's tenant (as SQLite schema 4), so
// that a deleted record's change is shown only to its own tenant. Older
// changes keep '' (unknown).
constexpr std::string_view kPgSchemaV2 = R"sql(
ALTER TABLE changes ADD COLUMN tenant text COLLATE "C" NOT NULL DEFAULT '';
)sql";

constexpr std::string_view kPgCreateVersionTable = R"sql(
CREATE TABLE IF NOT EXISTS schema_version (
  version     integer PRIMARY KEY,
  applied_at  bigint NOT NULL,
  description text NOT NULL
);
)sql";

// Steps 2 and 3 of PgMigrate, run while the advisory lock is held.
Status MigrateLocked(PgConnection& conn, const std::vector<PgMigration>& migrations) {
  const std::string& schema = conn.options().schema;
  MSP_ASSIGN_OR_RETURN(PgResult exists,
                       conn.Exec("SELECT 1 FROM pg_namespace WHERE nspname = $1",
                                 PgParams().Text(schema), "look up the schema", false));
  if (exists.rows() == 0) {
    MSP_RETURN_IF_ERROR(conn.Script("CREATE SCHEMA " + PgQuoteIdent(schema), "create schema " + schema));
  }
  MSP_RETURN_IF_ERROR(conn.Script("SET search_path TO " + PgQuoteIdent(schema), "set search_path"));

  const int latest = static_cast<int>(migrations.size());
  MSP_ASSIGN_OR_RETURN(int version, PgReadSchemaVersion(conn));
  if (version > latest) {
    return Status::FailedPrecondition(
        "postgres: schema " + schema + " on " + conn.options().describe + " has version " +
        std::to_string(version) + ", newer than this build of msp supports (" +
        std::to_string(latest) + "); use a newer msp or another store.postgres_schema");
  }
  if (version == latest) return Status::Ok();

  MSP_RETURN_IF_ERROR(conn.Script("BEGIN", "migrate schema"));
  Status status = conn.Script(kPgCreateVersionTable, "create schema_version");
  for (int v = version + 1; status.ok() && v <= latest; ++v) {
    const PgMigration& m = migrations[static_cast<size_t>(v - 1)];
    const std::string op =
        "migration " + std::to_string(v) + " (" + std::string(m.description) + ")";
    status = conn.Script(m.sql, op);
    if (status.ok()) {
      status = conn.Exec("INSERT INTO schema_version (version, applied_at, description) "
                         "VALUES ($1, $2, $3)",
                         PgParams().Int(v).Int(WallClockMs()).Text(m.description), op, false)
                   .status();
    }
  }
  if (status.ok()) status = conn.Script("COMMIT", "migrate schema (commit)");
  if (!status.ok() && !conn.broken()) (void)conn.Script("ROLLBACK", "migrate schema (roll back)");
  return status;
}

}  // namespace

// Version 3: idempotency keys of writes (WriteBatch::idempotency), per
// tenant, pruned when they expire.
constexpr std::string_view kPgSchemaV3 = R"sql(
CREATE TABLE idempotency_keys (
  tenant       text COLLATE "C" NOT NULL,
  key          text COLLATE "C" NOT NULL,
  request_hash text NOT NULL,
  reply        text NOT NULL,
  created_at   bigint NOT NULL,
  expires_at   bigint NOT NULL,
  PRIMARY KEY (tenant, key)
);
CREATE INDEX idempotency_keys_expires ON idempotency_keys (expires_at);
)sql";

// Version 4: changes that give the indexes nothing to do (as SQLite's
// version 6); older changes keep false (replayed).
constexpr std::string_view kPgSchemaV4 = R"sql(
ALTER TABLE changes ADD COLUMN neutral boolean NOT NULL DEFAULT false;
)sql";

const std::vector<PgMigration>& PgSchemaMigrations() {
  static const std::vector<PgMigration> kMigrations = {
      {1, "records, changes, change counter, audit, meta", kPgSchemaV1},
      {2, "the tenant of each change", kPgSchemaV2},
      {3, "idempotency keys of writes", kPgSchemaV3},
      {4, "changes the indexes need not replay", kPgSchemaV4},
  };
  return kMigrations;
}

int32_t PgLockKey(std::string_view schema, std::string_view name) {
  // FNV-1a over "schema/name", folded to 32 bits: stable across builds.
  return static_cast<int32_t>(Fnv1a32(name, Fnv1a32("/", Fnv1a32(schema))));
}

Result<int> PgReadSchemaVersion(PgConnection& conn) {
  MSP_ASSIGN_OR_RETURN(
      PgResult has_table,
      conn.Exec("SELECT 1 FROM pg_tables WHERE schemaname = $1 AND tablename = 'schema_version'",
                PgParams().Text(conn.options().schema), "read schema version", false));
  if (has_table.rows() == 0) return 0;
  MSP_ASSIGN_OR_RETURN(PgResult max_version,
                       conn.Exec("SELECT COALESCE(MAX(version), 0) FROM schema_version",
                                 PgParams(), "read schema version", false));
  if (max_version.rows() == 0) return 0;
  return static_cast<int>(max_version.Int(0, 0));
}

Status PgMigrate(PgConnection& conn, const std::vector<PgMigration>& migrations) {
  for (size_t i = 0; i < migrations.size(); ++i) {
    if (migrations[i].version != static_cast<int>(i) + 1) {
      return Status::Internal("postgres: migration list is not numbered 1..N at entry " +
                              std::to_string(i));
    }
  }
  const std::string& schema = conn.options().schema;
  const int32_t key = PgLockKey(schema, "migrate");
  // A migration (or the wait for another server's) may take longer than a
  // statement is otherwise allowed.
  MSP_RETURN_IF_ERROR(conn.Script("SET statement_timeout = 0", "migrate schema"));
  MSP_RETURN_IF_ERROR(conn.Exec("SELECT pg_advisory_lock($1, $2)",
                                PgParams().Int(kPgLockMigrate).Int(key),
                                "wait for the migration lock", false)
                          .status());
  Status status = MigrateLocked(conn, migrations);
  if (!conn.broken()) {
    Status unlocked = conn.Exec("SELECT pg_advisory_unlock($1, $2)",
                                PgParams().Int(kPgLockMigrate).Int(key), "release the migration lock",
                                false)
                          .status();
    if (status.ok()) status = unlocked;
    Status reset = conn.Script(
        "SET statement_timeout = " + std::to_string(conn.options().statement_timeout_ms),
        "migrate schema");
    if (status.ok()) status = reset;
  }
  return status;
}

}  // namespace msp
