// PostgreSQL settings (pg_options.h) and ValidatePostgresOptions
// (postgres_store.h).
#include "store/postgres/pg_options.h"

#include <libpq-fe.h>

#include <algorithm>
#include <cctype>
#include <string_view>

#include "store/postgres/postgres_store.h"

namespace msp {
namespace {

bool ValidSchemaName(const std::string& s) {
  if (s.empty() || s.size() > 63) return false;
  if (!(std::islower(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) ||
           c == '_';
  });
}

}  // namespace

Result<std::string> DescribeConninfo(const std::string& conninfo, const std::string& schema) {
  char* error = nullptr;
  PQconninfoOption* parsed = PQconninfoParse(conninfo.c_str(), &error);
  if (parsed == nullptr) {
    std::string why = error != nullptr ? error : "out of memory";
    if (error != nullptr) PQfreemem(error);
    while (!why.empty() && why.back() == '\n') why.pop_back();
    return Status::InvalidArgument("store.postgres_url is not a connection string libpq reads: " +
                                   why);
  }
  std::string out = "postgresql";
  for (PQconninfoOption* o = parsed; o->keyword != nullptr; ++o) {
    const std::string_view k = o->keyword;
    if (o->val == nullptr || o->val[0] == '\0') continue;
    if (k == "host" || k == "hostaddr" || k == "port" || k == "dbname" || k == "user") {
      out += " " + std::string(k) + "=" + o->val;
    }
  }
  PQconninfoFree(parsed);
  return out + " schema=" + schema;
}

Status ValidatePostgresOptions(const StoreOptions& options) {
  if (!ValidSchemaName(options.postgres_schema)) {
    return Status::InvalidArgument(
        "store.postgres_schema \"" + options.postgres_schema +
        "\" is not a plain identifier: use lower-case letters, digits and '_' (at most 63), "
        "starting with a letter or '_'");
  }
  if (options.postgres_pool_size < 1) {
    return Status::InvalidArgument("store.postgres_pool_size must be >= 1, got " +
                                   std::to_string(options.postgres_pool_size));
  }
  if (options.postgres_connect_timeout_ms < 0) {
    return Status::InvalidArgument("store.postgres_connect_timeout_ms must be >= 0, got " +
                                   std::to_string(options.postgres_connect_timeout_ms));
  }
  if (options.postgres_statement_timeout_ms < 0) {
    return Status::InvalidArgument("store.postgres_statement_timeout_ms must be >= 0, got " +
                                   std::to_string(options.postgres_statement_timeout_ms));
  }
  return DescribeConninfo(options.postgres_url, options.postgres_schema).status();
}

}  // namespace msp
