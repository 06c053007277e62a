// The Store's default implementations of WaitForChange and TryLease (store.h),
// apart from the factory so that the PostgreSQL module (postgres_module.cc)
// links them without the factory.
#include <chrono>
#include <thread>

#include "store/store.h"

namespace msp {

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
