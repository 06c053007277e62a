// The SQLite schema migrations and the code that applies them.
#include "store/sqlite/migrations.h"

#include <string>

#include "util/time.h"

namespace msp {
namespace {

// Version 1: records, the change sequence, the audit log and metadata.
// The embedding BLOB is the last column of records, so reading a row without
// it never touches the BLOB's overflow pages.
constexpr std::string_view kSchemaV1 = R"sql(
CREATE TABLE records (
  id              TEXT PRIMARY KEY NOT NULL,
  tenant          TEXT NOT NULL,
  user_id         TEXT NOT NULL DEFAULT '',
  agent_id        TEXT NOT NULL DEFAULT '',
  session_id      TEXT NOT NULL DEFAULT '',
  mission_id      TEXT NOT NULL DEFAULT '',
  operator_id     TEXT NOT NULL DEFAULT '',
  layer           TEXT NOT NULL,
  kind            TEXT NOT NULL,
  text            TEXT NOT NULL,
  body_json       TEXT NOT NULL DEFAULT '{}',
  tags_json       TEXT NOT NULL DEFAULT '[]',
  source          TEXT NOT NULL DEFAULT '',
  sensitivity     TEXT NOT NULL,
  criticality     TEXT NOT NULL,
  confidence      REAL NOT NULL,
  created_at      INTEGER NOT NULL DEFAULT 0,
  updated_at      INTEGER NOT NULL DEFAULT 0,
  expires_at      INTEGER NOT NULL DEFAULT 0,
  valid_at        INTEGER NOT NULL DEFAULT 0,
  invalid_at      INTEGER NOT NULL DEFAULT 0,
  access_count    INTEGER NOT NULL DEFAULT 0,
  last_accessed   INTEGER NOT NULL DEFAULT 0,
  provenance_json TEXT NOT NULL DEFAULT '[]',
  state           TEXT NOT NULL,
  supersedes      TEXT NOT NULL DEFAULT '',
  superseded_by   TEXT NOT NULL DEFAULT '',
  step_number     INTEGER NOT NULL DEFAULT 0,
  embedder_id     TEXT NOT NULL DEFAULT '',
  seq             INTEGER NOT NULL,
  embedding       BLOB
);
CREATE INDEX records_tenant_kind_created ON records(tenant, kind, created_at);
CREATE INDEX records_tenant_created ON records(tenant, created_at);
CREATE INDEX records_tenant_user_kind_created ON records(tenant, user_id, kind, created_at);
CREATE INDEX records_tenant_session_step ON records(tenant, session_id, step_number);
CREATE INDEX records_session_created ON records(session_id, created_at);

CREATE TABLE changes (
  seq       INTEGER PRIMARY KEY AUTOINCREMENT,
  record_id TEXT NOT NULL,
  op        TEXT NOT NULL CHECK (op IN ('put', 'delete')),
  at        INTEGER NOT NULL
);

CREATE TABLE audit (
  seq          INTEGER PRIMARY KEY AUTOINCREMENT,
  at           INTEGER NOT NULL,
  actor        TEXT NOT NULL DEFAULT '',
  action       TEXT NOT NULL,
  record_id    TEXT NOT NULL DEFAULT '',
  tenant       TEXT NOT NULL,
  reason       TEXT NOT NULL DEFAULT '',
  details_json TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX audit_tenant_seq ON audit(tenant, seq);
CREATE INDEX audit_tenant_record_seq ON audit(tenant, record_id, seq);

CREATE TABLE meta (
  key   TEXT PRIMARY KEY NOT NULL,
  value TEXT NOT NULL
);
)sql";

// Version 2: a session's step numbers are unique, so two processes appending
// to one session at once cannot both take the same step (0 means "no step").
constexpr std::string_view kSchemaV2 = R"sql(
CREATE UNIQUE INDEX records_episode_step ON records(
  tenant, user_id, agent_id, session_id, mission_id, operator_id, step_number)
  WHERE kind = 'episode' AND step_number > 0;
)sql";

// Version 3: records carry an access level (0..9). The table is rebuilt so
// that the embedding stays the last column (ADD COLUMN would append after it).
constexpr std::string_view kSchemaV3 = R"sql(
CREATE TABLE records_v3 (
  id              TEXT PRIMARY KEY NOT NULL,
  tenant          TEXT NOT NULL,
  user_id         TEXT NOT NULL DEFAULT '',
  agent_id        TEXT NOT NULL DEFAULT '',
  session_id      TEXT NOT NULL DEFAULT '',
  mission_id      TEXT NOT NULL DEFAULT '',
  operator_id     TEXT NOT NULL DEFAULT '',
  layer           TEXT NOT NULL,
  kind            TEXT NOT NULL,
  text            TEXT NOT NULL,
  body_json       TEXT NOT NULL DEFAULT '{}',
  tags_json       TEXT NOT NULL DEFAULT '[]',
  source          TEXT NOT NULL DEFAULT '',
  sensitivity     TEXT NOT NULL,
  criticality     TEXT NOT NULL,
  confidence      REAL NOT NULL,
  created_at      INTEGER NOT NULL DEFAULT 0,
  updated_at      INTEGER NOT NULL DEFAULT 0,
  expires_at      INTEGER NOT NULL DEFAULT 0,
  valid_at        INTEGER NOT NULL DEFAULT 0,
  invalid_at      INTEGER NOT NULL DEFAULT 0,
  access_count    INTEGER NOT NULL DEFAULT 0,
  last_accessed   INTEGER NOT NULL DEFAULT 0,
  provenance_json TEXT NOT NULL DEFAULT '[]',
  state           TEXT NOT NULL,
  supersedes      TEXT NOT NULL DEFAULT '',
  superseded_by   TEXT NOT NULL DEFAULT '',
  step_number     INTEGER NOT NULL DEFAULT 0,
  embedder_id     TEXT NOT NULL DEFAULT '',
  seq             INTEGER NOT NULL,
  access_level    INTEGER NOT NULL DEFAULT 0 CHECK (access_level BETWEEN 0 AND 9),
  embedding       BLOB
);
INSERT INTO records_v3 (id, tenant, user_id, agent_id, session_id, mission_id, operator_id, layer, kind, text,
  body_json, tags_json, source, sensitivity, criticality, confidence, created_at, updated_at,
  expires_at, valid_at, invalid_at, access_count, last_accessed, provenance_json, state,
  supersedes, superseded_by, step_number, embedder_id, seq, access_level, embedding)
  SELECT id, tenant, user_id, agent_id, session_id, mission_id, operator_id, layer, kind, text,
  body_json, tags_json, source, sensitivity, criticality, confidence, created_at, updated_at,
  expires_at, valid_at, invalid_at, access_count, last_accessed, provenance_json, state,
  supersedes, superseded_by, step_number, embedder_id, seq, 0, embedding FROM records;
DROP TABLE records;
ALTER TABLE records_v3 RENAME TO records;
CREATE INDEX records_tenant_kind_created ON records(tenant, kind, created_at);
CREATE INDEX records_tenant_created ON records(tenant, created_at);
CREATE INDEX records_tenant_user_kind_created ON records(tenant, user_id, kind, created_at);
CREATE INDEX records_tenant_session_step ON records(tenant, session_id, step_number);
CREATE INDEX records_session_created ON records(session_id, created_at);
CREATE UNIQUE INDEX records_episode_step ON records(
  tenant, user_id, agent_id, session_id, mission_id, operator_id, step_number)
  WHERE kind = 'episode' AND step_number > 0;
)sql";

// Version 4: each change names its record's tenant, so that a deleted
// record's change is shown only to its own tenant (MemoryLayer::ChangesSince
// `gone`). Older changes keep '' (unknown); nothing is backfilled, since a
// change whose record still exists is scoped by the record itself.
constexpr std::string_view kSchemaV4 = R"sql(
ALTER TABLE changes ADD COLUMN tenant TEXT NOT NULL DEFAULT '';
)sql";

// Version 5: idempotency keys of writes (WriteBatch::idempotency), per
// tenant, pruned when they expire.
constexpr std::string_view kSchemaV5 = R"sql(
CREATE TABLE idempotency_keys (
  tenant       TEXT NOT NULL,
  key          TEXT NOT NULL,
  request_hash TEXT NOT NULL,
  reply        TEXT NOT NULL,
  created_at   INTEGER NOT NULL,
  expires_at   INTEGER NOT NULL,
  PRIMARY KEY (tenant, key)
);
CREATE INDEX idempotency_keys_expires ON idempotency_keys(expires_at);
)sql";

// Version 6: changes that give the indexes nothing to do (Change::neutral),
// so that replaying the log can skip them. Older changes keep 0 (replayed).
constexpr std::string_view kSchemaV6 = R"sql(
ALTER TABLE changes ADD COLUMN neutral INTEGER NOT NULL DEFAULT 0;
)sql";

constexpr std::string_view kCreateVersionTable = R"sql(
CREATE TABLE IF NOT EXISTS schema_version (
  version     INTEGER PRIMARY KEY,
  applied_at  INTEGER NOT NULL,
  description TEXT NOT NULL
);
)sql";

Status Refuse(const SqliteDb& db, int found, int supported) {
  return Status::FailedPrecondition(
      "sqlite: database " + db.path() + " has schema version " + std::to_string(found) +
      ", newer than this build of msp supports (" + std::to_string(supported) +
      "); use a newer msp or another data directory");
}

}  // namespace

const std::vector<Migration>& SchemaMigrations() {
  static const std::vector<Migration> kMigrations = {
      {1, "records, changes, audit, meta", kSchemaV1},
      {2, "unique step numbers within a session", kSchemaV2},
      {3, "access levels on records", kSchemaV3},
      {4, "the tenant of each change", kSchemaV4},
      {5, "idempotency keys of writes", kSchemaV5},
      {6, "changes the indexes need not replay", kSchemaV6},
  };
  return kMigrations;
}

Result<int> ReadSchemaVersion(SqliteDb& db) {
  MSP_ASSIGN_OR_RETURN(
      Statement has_table,
      db.Prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = "
                 "'schema_version'",
                 "read schema version"));
  MSP_ASSIGN_OR_RETURN(bool row, has_table.Step());
  if (!row || has_table.ColumnInt(0) == 0) return 0;
  MSP_ASSIGN_OR_RETURN(Statement max_version,
                       db.Prepare("SELECT COALESCE(MAX(version), 0) FROM schema_version",
                                  "read schema version"));
  MSP_ASSIGN_OR_RETURN(row, max_version.Step());
  if (!row) return 0;
  return static_cast<int>(max_version.ColumnInt(0));
}

Status Migrate(SqliteDb& db, const std::vector<Migration>& migrations) {
  for (size_t i = 0; i < migrations.size(); ++i) {
    if (migrations[i].version != static_cast<int>(i) + 1) {
      return Status::Internal("sqlite: migration list is not numbered 1..N at entry " +
                              std::to_string(i));
    }
  }
  const int latest = static_cast<int>(migrations.size());

  // Most opens find the schema current: check without taking the write lock.
  MSP_ASSIGN_OR_RETURN(int version, ReadSchemaVersion(db));
  if (version == latest) return Status::Ok();
  if (version > latest) return Refuse(db, version, latest);

  Transaction txn(&db, Transaction::Mode::kImmediate, "migrate schema");
  MSP_RETURN_IF_ERROR(txn.status());
  MSP_RETURN_IF_ERROR(db.Exec(kCreateVersionTable, "create schema_version"));
  // Another process may have migrated between the check and the lock.
  MSP_ASSIGN_OR_RETURN(version, ReadSchemaVersion(db));
  if (version > latest) return Refuse(db, version, latest);
  for (int v = version + 1; v <= latest; ++v) {
    const Migration& m = migrations[static_cast<size_t>(v - 1)];
    const std::string op =
        "migration " + std::to_string(v) + " (" + std::string(m.description) + ")";
    MSP_RETURN_IF_ERROR(db.Exec(m.sql, op));
    MSP_ASSIGN_OR_RETURN(
        Statement record,
        db.Prepare("INSERT INTO schema_version(version, applied_at, description) VALUES (?, ?, ?)",
                   op, /*cache=*/false));
    record.BindInt(1, v);
    record.BindInt(2, WallClockMs());
    record.BindText(3, m.description);
    MSP_RETURN_IF_ERROR(record.Run());
  }
  return txn.Commit();
}

}  // namespace msp
