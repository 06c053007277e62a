// The test database and scratch schemas.
#include "tests/postgres/pg_test_util.h"

#include <libpq-fe.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <random>

#include "store/postgres/pg_conn.h"

namespace msp::testing {

const char kTestPgUnset[] =
    "MSP_TEST_PG is not set: run the tests through scripts/test.sh, which starts a private "
    "PostgreSQL cluster (scripts/pg.sh start) and exports it, or export a libpq connection "
    "string yourself";

std::string TestPg() {
  const char* url = std::getenv("MSP_TEST_PG");
  return url != nullptr ? url : "";
}

std::string NewSchemaName(std::string_view prefix) {
  static std::atomic<int> counter{0};
  std::random_device rd;
  return std::string(prefix) + "_" + std::to_string(getpid()) + "_" + std::to_string(++counter) +
         "_" + std::to_string(rd() % 1000000);
}

void DropSchema(const std::string& schema) {
  if (TestPg().empty() || schema.empty()) return;
  PgConnectOptions options;
  options.conninfo = TestPg();
  options.schema = "public";
  options.describe = "$MSP_TEST_PG";
  auto conn = PgConnection::Connect(options);
  if (!conn.ok()) return;
  (void)(*conn)->Script("DROP SCHEMA IF EXISTS " + PgQuoteIdent(schema) + " CASCADE", "drop schema");
}

namespace {

std::map<std::string, std::string> Parse(const std::string& conninfo, bool* ok) {
  std::map<std::string, std::string> out;
  char* error = nullptr;
  PQconninfoOption* parsed = PQconninfoParse(conninfo.c_str(), &error);
  if (error != nullptr) PQfreemem(error);
  *ok = parsed != nullptr;
  if (parsed == nullptr) return out;
  for (PQconninfoOption* o = parsed; o->keyword != nullptr; ++o) {
    if (o->val != nullptr && o->val[0] != '\0') out[o->keyword] = o->val;
  }
  PQconninfoFree(parsed);
  return out;
}

}  // namespace

std::string RewriteConninfo(const std::string& conninfo,
                            const std::map<std::string, std::string>& overrides) {
  bool ok = false;
  std::map<std::string, std::string> values = Parse(conninfo, &ok);
  if (!ok) return "";
  for (const auto& [k, v] : overrides) values[k] = v;
  std::string out;
  for (const auto& [k, v] : values) {
    std::string quoted = "'";
    for (char c : v) {
      if (c == '\'' || c == '\\') quoted += '\\';
      quoted += c;
    }
    out += (out.empty() ? "" : " ") + k + "=" + quoted + "'";
  }
  return out;
}

std::string ConninfoValue(const std::string& conninfo, const std::string& keyword) {
  bool ok = false;
  std::map<std::string, std::string> values = Parse(conninfo, &ok);
  auto it = values.find(keyword);
  return it == values.end() ? "" : it->second;
}

StoreOptions PgStoreOptions(const std::string& schema) {
  StoreOptions options;
  options.backend = StoreBackend::kPostgres;
  options.postgres_url = TestPg();
  options.postgres_schema = schema;
  options.postgres_pool_size = 4;
  return options;
}

}  // namespace msp::testing
