// OpenStore: picks the Store backend named in StoreOptions. SQLite is linked
// in; the PostgreSQL store (and libpq with its ~20 dependencies) is a module,
// libmsp_postgres.so, loaded the first time a PostgreSQL store is opened
// (postgres/postgres_module.cc).
#include "store/store.h"

#include <filesystem>
#include <mutex>
#include <system_error>

#include "store/postgres/postgres_module.h"
#include "store/postgres/postgres_store.h"
#include "store/sqlite/sqlite_store.h"
#include "util/data_file.h"
#include "util/module.h"

#ifndef MSP_POSTGRES_MODULE_BUILD_PATH
#define MSP_POSTGRES_MODULE_BUILD_PATH ""
#endif

namespace msp {
namespace {

Result<const PostgresModuleV1*> PostgresModule() {
  static std::once_flag once;
  static Result<const PostgresModuleV1*> loaded = Status::Internal("not loaded");
  std::call_once(once, [] {
    static constexpr ModuleSpec kSpec{"libmsp_postgres.so", "MSP_POSTGRES_MODULE", MSP_POSTGRES_MODULE_BUILD_PATH,
                                      "msp_postgres_v1", "the PostgreSQL store (store.backend = postgres)"};
    Result<void*> entry = LoadModule(kSpec);
    if (!entry.ok()) {
      loaded = entry.status();
      return;
    }
    using Entry = const PostgresModuleV1* (*)();
    const PostgresModuleV1* table = reinterpret_cast<Entry>(*entry)();
    if (table == nullptr || table->version != 1) {
      loaded = Status::FailedPrecondition(std::string(kSpec.file) + " is not an msp PostgreSQL module of version 1");
      return;
    }
    loaded = table;
  });
  return loaded;
}

}  // namespace

// The PostgreSQL store's functions (postgres_store.h), forwarded to the module.
Result<std::unique_ptr<PostgresStore>> OpenPostgresStore(const StoreOptions& options) {
  MSP_ASSIGN_OR_RETURN(const PostgresModuleV1* pg, PostgresModule());
  return pg->open(options);
}

Status ValidatePostgresOptions(const StoreOptions& options) {
  MSP_ASSIGN_OR_RETURN(const PostgresModuleV1* pg, PostgresModule());
  return pg->validate(options);
}

std::string ChangeChannel(const std::string& schema) {
  Result<const PostgresModuleV1*> pg = PostgresModule();
  return pg.ok() ? (*pg)->change_channel(schema) : std::string();
}

Result<std::unique_ptr<Store>> OpenStore(const StoreOptions& options) {
  if (options.backend == StoreBackend::kPostgres) {
    MSP_ASSIGN_OR_RETURN(std::unique_ptr<PostgresStore> store, OpenPostgresStore(options));
    return std::unique_ptr<Store>(std::move(store));
  }
  if (options.data_dir.empty()) {
    return Status::InvalidArgument("store data_dir is empty; name a directory for msp.db");
  }
  const std::filesystem::path dir(options.data_dir);
  std::error_code ec;
  CreatePrivateDirectories(options.data_dir, ec);
  if (ec || !std::filesystem::is_directory(dir)) {
    const std::string why = ec ? ec.message() : "it exists and is not a directory";
    return Status::IoError("cannot create data directory " + options.data_dir + ": " + why);
  }
  // 0600 from the start: SQLite gives msp.db-wal and msp.db-shm its mode. A
  // refused open (bad settings) leaves no file behind.
  const std::string path = (dir / "msp.db").string();
  const bool created = PrecreatePrivateFile(path);
  Result<std::unique_ptr<Store>> store = OpenSqliteStore(path, options);
  if (!store.ok() && created && std::filesystem::file_size(path, ec) == 0 && !ec) std::filesystem::remove(path, ec);
  return store;
}

}  // namespace msp
