// Runs the Store conformance suite against the PostgreSQL backend.
//
// The database is named by $MSP_TEST_PG (a libpq connection string;
// scripts/test.sh starts a private cluster and sets it). Without it every
// test fails, saying so: PostgreSQL is part of what the test command checks.
// Each test gets its own schema, dropped when the program ends.
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "store/postgres/pg_conn.h"
#include "store/store.h"
#include "tests/conformance/store_conformance.h"

namespace msp::conformance {
namespace {

constexpr char kUnset[] =
    "MSP_TEST_PG is not set: run the tests through scripts/test.sh, which starts a private "
    "PostgreSQL cluster (scripts/pg.sh start) and exports it, or export a libpq connection "
    "string yourself";

std::string TestPg() {
  const char* url = std::getenv("MSP_TEST_PG");
  return url != nullptr ? url : "";
}

// The schemas this program made, dropped at exit.
std::mutex schemas_mu;
std::vector<std::string> schemas;

class DropSchemas : public ::testing::Environment {
 public:
  void TearDown() override {
    if (TestPg().empty() || schemas.empty()) return;
    PgConnectOptions options;
    options.conninfo = TestPg();
    options.schema = "public";
    options.describe = "$MSP_TEST_PG";
    auto conn = PgConnection::Connect(options);
    ASSERT_TRUE(conn.ok()) << conn.status().ToString();
    for (const std::string& schema : schemas) {
      Status dropped = (*conn)->Script("DROP SCHEMA IF EXISTS " + PgQuoteIdent(schema) + " CASCADE",
                                       "drop test schema");
      EXPECT_TRUE(dropped.ok()) << dropped.ToString();
    }
  }
};

const ::testing::Environment* const kDropSchemas =
    ::testing::AddGlobalTestEnvironment(new DropSchemas);

// A fresh schema per scratch directory (its name kept in a file there, so a
// second call opens the same store).
Result<std::unique_ptr<Store>> OpenPostgres(const std::string& scratch_dir) {
  if (TestPg().empty()) return Status::FailedPrecondition(kUnset);
  const std::string name_file = scratch_dir + "/pg_schema";
  std::string schema;
  std::ifstream(name_file) >> schema;
  if (schema.empty()) {
    static std::atomic<int> counter{0};
    std::random_device rd;
    schema = "conf_" + std::to_string(getpid()) + "_" + std::to_string(++counter) + "_" +
             std::to_string(rd() % 1000000);
    std::ofstream(name_file) << schema;
    std::lock_guard<std::mutex> lock(schemas_mu);
    schemas.push_back(schema);
  }
  StoreOptions options;
  options.backend = msp::StoreBackend::kPostgres;
  options.postgres_url = TestPg();
  options.postgres_schema = schema;
  options.postgres_pool_size = 6;
  return OpenStore(options);
}

TEST(PostgresConformanceSetup, TestDatabaseIsNamed) {
  ASSERT_FALSE(TestPg().empty()) << kUnset;
}

INSTANTIATE_TEST_SUITE_P(Postgres, StoreConformanceTest,
                         ::testing::Values(StoreBackend{"postgres", OpenPostgres}),
                         StoreBackendName);

}  // namespace
}  // namespace msp::conformance
