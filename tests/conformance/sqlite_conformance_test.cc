// Runs the Store conformance suite against the SQLite backend.
#include "store/store.h"
#include "tests/conformance/store_conformance.h"

namespace msp::conformance {
namespace {

// A fresh store in `scratch_dir` (the same store when called again with it).
Result<std::unique_ptr<Store>> OpenSqlite(const std::string& scratch_dir) {
  StoreOptions options;
  options.backend = msp::StoreBackend::kSqlite;
  options.data_dir = scratch_dir;
  options.synchronous = "normal";  // a killed test process is the only risk here
  return OpenStore(options);
}

INSTANTIATE_TEST_SUITE_P(Sqlite, StoreConformanceTest,
                         ::testing::Values(StoreBackend{"sqlite", OpenSqlite}), StoreBackendName);

}  // namespace
}  // namespace msp::conformance
