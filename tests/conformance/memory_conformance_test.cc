// Runs the Store conformance suite against the in-memory store
// (tests/support/memory_store.h).
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "store/store.h"
#include "tests/conformance/store_conformance.h"
#include "tests/support/memory_store.h"

namespace msp::conformance {
namespace {

// The stores made so far, by scratch directory: a later call with the same
// directory opens a second handle on the same records, as reopening a
// database file would. A store is forgotten once its directory is gone.
Result<std::unique_ptr<Store>> OpenMemory(const std::string& scratch_dir) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<testing::MemoryStore>> stores;
  std::lock_guard<std::mutex> lock(mu);
  std::erase_if(stores, [](const auto& entry) { return !std::filesystem::exists(entry.first); });
  std::unique_ptr<testing::MemoryStore>& first = stores[scratch_dir];
  if (!first) first = std::make_unique<testing::MemoryStore>();
  return std::unique_ptr<Store>(first->NewHandle());
}

INSTANTIATE_TEST_SUITE_P(Memory, StoreConformanceTest,
                         ::testing::Values(StoreBackend{"memory", OpenMemory}), StoreBackendName);

}  // namespace
}  // namespace msp::conformance
