// The PostgreSQL Store: records, the change sequence, audit and metadata in
// one PostgreSQL schema, shared by any number of msp processes.
//
// Layout (see pg_migrations.cc): the tables of the SQLite store, plus
// change_counter, whose single row hands out change-sequence numbers: every
// Apply that puts or deletes locks it for the rest of its transaction, so
// numbers are gapless and in commit order, and derived indexes that catch up
// with ChangesSince() never skip a change that commits late. Writers are
// therefore serialised (as on SQLite); readers never wait.
//
// Each Apply with changes also sends NOTIFY on channel ChangeChannel(schema)
// (payload: the new last seq), delivered at commit, so other processes can
// wake up (WaitForChange) instead of polling.
//
// Connections come from a pool (StoreOptions::postgres_pool_size). A lost
// connection is replaced on the next call; a call that lost its connection
// before committing is retried once on a fresh one, so a restart of the
// database costs callers at most the calls made while it was down, which fail
// with kUnavailable.
#ifndef MSP_STORE_POSTGRES_POSTGRES_STORE_H_
#define MSP_STORE_POSTGRES_POSTGRES_STORE_H_

#include <cstdint>
#include <memory>
#include <string>

#include "msp/options.h"
#include "msp/status.h"
#include "store/store.h"

namespace msp {

// Beyond Store: WaitForChange listens (LISTEN on ChangeChannel) on a
// connection of its own and wakes on the NOTIFY of any process's commit.
// TryLease takes a session advisory lock (keyed by schema and name) on a
// connection of its own, held while the lease lives; nullptr when another
// process, or another lease of this store, holds it.
class PostgresStore : public Store {
 public:
  // Checks that the database answers (one round trip). kUnavailable if not.
  virtual Status Ping() = 0;
};

// The NOTIFY channel of the store in `schema`.
std::string ChangeChannel(const std::string& schema);

// Checks the postgres_* fields of `options` (schema name, pool size,
// timeouts, a connection string libpq can parse): kInvalidArgument naming the
// setting otherwise.
Status ValidatePostgresOptions(const StoreOptions& options);

// Connects to options.postgres_url, creates options.postgres_schema if
// missing and migrates it forward (under an advisory lock). kUnavailable if
// the database cannot be reached within postgres_connect_timeout_ms.
// The returned store is thread-safe.
Result<std::unique_ptr<PostgresStore>> OpenPostgresStore(const StoreOptions& options);

}  // namespace msp

#endif  // MSP_STORE_POSTGRES_POSTGRES_STORE_H_
