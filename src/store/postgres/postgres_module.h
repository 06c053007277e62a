// The interface of libmsp_postgres.so, the PostgreSQL store as a module: the
// store library's OpenStore (store.cc) loads it with dlopen the first time a
// PostgreSQL store is opened, so no other process loads libpq and its
// dependencies (Kerberos, LDAP, TLS: 22 shared objects, ~9 ms of dynamic
// linking). postgres_store.h's functions, called outside the module, are
// forwarded to this table.
#ifndef MSP_STORE_POSTGRES_POSTGRES_MODULE_H_
#define MSP_STORE_POSTGRES_POSTGRES_MODULE_H_

#include <memory>
#include <string>

#include "store/postgres/postgres_store.h"

namespace msp {

struct PostgresModuleV1 {
  int version = 1;
  Result<std::unique_ptr<PostgresStore>> (*open)(const StoreOptions& options) = nullptr;
  Status (*validate)(const StoreOptions& options) = nullptr;
  std::string (*change_channel)(const std::string& schema) = nullptr;
};

}  // namespace msp

// The module's one exported symbol.
extern "C" const msp::PostgresModuleV1* msp_postgres_v1();

#endif  // MSP_STORE_POSTGRES_POSTGRES_MODULE_H_
