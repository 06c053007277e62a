// PgPool: on-demand connections, bounded, dropped when broken.
#include "store/postgres/pg_pool.h"

#include <chrono>

namespace msp {

PgPool::Lease::~Lease() {
  if (pool_ != nullptr && conn_ != nullptr) pool_->Return(std::move(conn_));
}

PgPool::PgPool(PgConnectOptions options, int size, int acquire_timeout_ms)
    : options_(std::move(options)), size_(size < 1 ? 1 : size),
      acquire_timeout_ms_(acquire_timeout_ms < 0 ? 0 : acquire_timeout_ms) {}

Result<PgPool::Lease> PgPool::Acquire(std::string_view op) {
  std::unique_lock<std::mutex> lock(mu_);
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(acquire_timeout_ms_);
  while (idle_.empty() && open_ >= size_) {
    if (freed_.wait_until(lock, deadline) == std::cv_status::timeout && idle_.empty() &&
        open_ >= size_) {
      return Status::Unavailable("postgres: " + std::string(op) + " on " + options_.describe +
                                 ": all " + std::to_string(size_) + " connections stayed busy for " +
                                 std::to_string(acquire_timeout_ms_) +
                                 " ms; raise store.postgres_pool_size or retry later");
    }
  }
  if (!idle_.empty()) {
    std::unique_ptr<PgConnection> conn = std::move(idle_.back());
    idle_.pop_back();
    return Lease(this, std::move(conn));
  }
  ++open_;
  lock.unlock();
  auto connected = PgConnection::Connect(options_);
  if (!connected.ok()) {
    lock.lock();
    --open_;
    freed_.notify_one();
    return connected.status();
  }
  return Lease(this, std::move(connected).value());
}

void PgPool::Return(std::unique_ptr<PgConnection> conn) {
  std::vector<std::unique_ptr<PgConnection>> dropped;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (conn->broken()) {
      --open_;
      dropped.push_back(std::move(conn));
      open_ -= static_cast<int>(idle_.size());
      for (auto& c : idle_) dropped.push_back(std::move(c));
      idle_.clear();
    } else if (!conn->idle()) {
      --open_;  // a transaction left open: never lend it again
      dropped.push_back(std::move(conn));
    } else {
      idle_.push_back(std::move(conn));
    }
  }
  freed_.notify_all();
  // `dropped` closes its connections here, outside the lock.
}

void PgPool::DropIdle() {
  std::vector<std::unique_ptr<PgConnection>> dropped;
  {
    std::lock_guard<std::mutex> lock(mu_);
    open_ -= static_cast<int>(idle_.size());
    dropped = std::move(idle_);
    idle_.clear();
  }
  freed_.notify_all();
}

int PgPool::open() const {
  std::lock_guard<std::mutex> lock(mu_);
  return open_;
}

}  // namespace msp
