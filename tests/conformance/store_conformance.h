// The Store conformance suite: what every backend (SQLite, later PostgreSQL)
// must do, as one value-parameterised GoogleTest suite.
//
// A backend runs it unchanged by instantiating it with a StoreBackend:
//
//   INSTANTIATE_TEST_SUITE_P(Sqlite, StoreConformanceTest,
//                            ::testing::Values(StoreBackend{"sqlite", OpenMySqlite}),
//                            StoreBackendName);
//
// and linking the object library msp_store_conformance (store_conformance.cc,
// compiled once for every backend; not a static library: the linker would
// drop its unreferenced tests).
#ifndef MSP_TESTS_CONFORMANCE_STORE_CONFORMANCE_H_
#define MSP_TESTS_CONFORMANCE_STORE_CONFORMANCE_H_

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include "msp/status.h"
#include "store/store.h"

namespace msp::conformance {

// Makes the store for one test. `scratch_dir` is an empty directory that
// exists for the whole test and is removed after it. The first call for a
// scratch_dir returns a fresh, empty store; a later call with the same
// scratch_dir opens a second handle on that same store.
using StoreFactory = std::function<Result<std::unique_ptr<Store>>(const std::string& scratch_dir)>;

struct StoreBackend {
  std::string name;  // a test-name suffix: letters, digits, underscores
  StoreFactory open;
};

inline void PrintTo(const StoreBackend& backend, std::ostream* os) { *os << backend.name; }

// For INSTANTIATE_TEST_SUITE_P's name generator.
inline std::string StoreBackendName(const ::testing::TestParamInfo<StoreBackend>& info) {
  return info.param.name;
}

class StoreConformanceTest : public ::testing::TestWithParam<StoreBackend> {
 protected:
  void SetUp() override;
  void TearDown() override;

  // A second handle on the store under test.
  Result<std::unique_ptr<Store>> OpenAgain() { return GetParam().open(dir_); }

  std::string dir_;
  std::unique_ptr<Store> store_;
};

}  // namespace msp::conformance

#endif  // MSP_TESTS_CONFORMANCE_STORE_CONFORMANCE_H_
