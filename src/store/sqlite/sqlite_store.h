// The SQLite Store: one database file in WAL mode, the default source of truth.
//
// Layout (see migrations.cc): records (every Memory field a column; tags and
// provenance as JSON text; the embedding a BLOB of little-endian float32),
// changes (the change sequence), audit, meta, schema_version. Writes run in
// BEGIN IMMEDIATE transactions, so several processes may share the file.
#ifndef MSP_STORE_SQLITE_SQLITE_STORE_H_
#define MSP_STORE_SQLITE_SQLITE_STORE_H_

#include <memory>
#include <string>

#include "msp/options.h"
#include "msp/status.h"
#include "store/store.h"

namespace msp {

// Opens (creating and migrating if needed) the SQLite store in file `db_path`,
// whose directory must exist. Uses options.synchronous ("full" or "normal";
// anything else is kInvalidArgument) and options.busy_timeout_ms (>= 0).
// The returned store is thread-safe (one connection behind a mutex).
Result<std::unique_ptr<Store>> OpenSqliteStore(const std::string& db_path,
                                               const StoreOptions& options);

}  // namespace msp

#endif  // MSP_STORE_SQLITE_SQLITE_STORE_H_
