// PostgreSQL settings: the checks on store.postgres_* and the server named
// in messages without its password.
#ifndef MSP_STORE_POSTGRES_PG_OPTIONS_H_
#define MSP_STORE_POSTGRES_PG_OPTIONS_H_

#include <string>

#include "msp/status.h"

namespace msp {

// "postgresql host=... port=... dbname=... user=... schema=...": the server
// as messages name it, without the password. kInvalidArgument when libpq
// cannot parse `conninfo`.
Result<std::string> DescribeConninfo(const std::string& conninfo, const std::string& schema);

}  // namespace msp

#endif  // MSP_STORE_POSTGRES_PG_OPTIONS_H_
