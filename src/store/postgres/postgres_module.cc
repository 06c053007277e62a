// The entry point of libmsp_postgres.so (see postgres_module.h).
#include "store/postgres/postgres_module.h"

extern "C" __attribute__((visibility("default"))) const msp::PostgresModuleV1* msp_postgres_v1() {
  static const msp::PostgresModuleV1 table{1, &msp::OpenPostgresStore, &msp::ValidatePostgresOptions,
                                           &msp::ChangeChannel};
  return &table;
}
