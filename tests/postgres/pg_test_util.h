// The test database ($MSP_TEST_PG, set by scripts/test.sh) and scratch
// schemas in it, for the PostgreSQL tests.
#ifndef MSP_TESTS_POSTGRES_PG_TEST_UTIL_H_
#define MSP_TESTS_POSTGRES_PG_TEST_UTIL_H_

#include <map>
#include <string>
#include <string_view>

#include "msp/options.h"

namespace msp::testing {

// What a test says when $MSP_TEST_PG is missing.
extern const char kTestPgUnset[];

// $MSP_TEST_PG, or "" when unset.
std::string TestPg();

// A schema name no other test uses: <prefix>_<pid>_<n>_<random>.
std::string NewSchemaName(std::string_view prefix);

// Drops `schema` and everything in it; errors are ignored.
void DropSchema(const std::string& schema);

// `conninfo` as a keyword string with `overrides` replacing (or adding)
// keywords; "" if libpq cannot parse it.
std::string RewriteConninfo(const std::string& conninfo,
                            const std::map<std::string, std::string>& overrides);

// The value of `keyword` in `conninfo` ("" when absent).
std::string ConninfoValue(const std::string& conninfo, const std::string& keyword);

// StoreOptions for the postgres backend on the test database in `schema`.
StoreOptions PgStoreOptions(const std::string& schema);

}  // namespace msp::testing

#endif  // MSP_TESTS_POSTGRES_PG_TEST_UTIL_H_
