// OpenStore: picks the Store backend named in StoreOptions.
#include "store/store.h"

#include <chrono>
#include <filesystem>
#include <system_error>
#include <thread>

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

Result<int64_t> Store::WaitForChange(int64_t after, int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (true) {
    MSP_ASSIGN_OR_RETURN(int64_t last, LastSeq());
    if (last > after || std::chrono::steady_clock::now() >= deadline) return last;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

namespace {

class GrantedLease final : public StoreLease {
 public:
  bool held() override { return true; }
};

}  // namespace

Result<std::unique_ptr<StoreLease>> Store::TryLease(const std::string& /*name*/) {
  return std::unique_ptr<StoreLease>(new GrantedLease);
}

}  // namespace msp
