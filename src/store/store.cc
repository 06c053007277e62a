// OpenStore: picks the Store backend named in StoreOptions.
#include "store/store.h"

#include <filesystem>
#include <system_error>

#include "store/postgres/postgres_store.h"
#include "store/sqlite/sqlite_store.h"

namespace msp {

Result<std::unique_ptr<Store>> OpenStore(const StoreOptions& options) {
  if (options.backend == "postgres") {
    MSP_ASSIGN_OR_RETURN(std::unique_ptr<PostgresStore> store, OpenPostgresStore(options));
    return std::unique_ptr<Store>(std::move(store));
  }
  if (options.backend != "sqlite") {
    return Status::InvalidArgument("unknown store backend \"" + options.backend +
                                   "\"; allowed: sqlite, postgres");
  }
  if (options.data_dir.empty()) {
    return Status::InvalidArgument("store data_dir is empty; name a directory for msp.db");
  }
  const std::filesystem::path dir(options.data_dir);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir)) {
    const std::string why = ec ? ec.message() : "it exists and is not a directory";
    return Status::IoError("cannot create data directory " + options.data_dir + ": " + why);
  }
  return OpenSqliteStore((dir / "msp.db").string(), options);
}

}  // namespace msp
