// PgPool: a bounded pool of PostgreSQL connections shared by a store's
// threads.
//
// Connections are opened on demand up to `size`; a caller waits (up to
// acquire_timeout_ms) when all are in use. A connection found broken (the
// server restarted, or the network failed) is closed instead of returned, and
// the idle ones are dropped with it, since they most likely died the same
// way; the next Acquire connects afresh. Thread-safe.
#ifndef MSP_STORE_POSTGRES_PG_POOL_H_
#define MSP_STORE_POSTGRES_PG_POOL_H_

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include "msp/status.h"
#include "store/postgres/pg_conn.h"

namespace msp {

class PgPool {
 public:
  // A borrowed connection, given back when destroyed.
  class Lease {
   public:
    Lease(PgPool* pool, std::unique_ptr<PgConnection> conn) : pool_(pool), conn_(std::move(conn)) {}
    Lease(Lease&& other) noexcept = default;
    Lease& operator=(Lease&&) = delete;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease();
    PgConnection& operator*() const { return *conn_; }
    PgConnection* operator->() const { return conn_.get(); }

   private:
    PgPool* pool_;
    std::unique_ptr<PgConnection> conn_;
  };

  // REQUIRES: size >= 1, acquire_timeout_ms >= 0.
  PgPool(PgConnectOptions options, int size, int acquire_timeout_ms);
  PgPool(const PgPool&) = delete;
  PgPool& operator=(const PgPool&) = delete;

  // An idle connection, or a new one while fewer than `size` are open.
  // kUnavailable when the server cannot be reached or every connection stays
  // busy for acquire_timeout_ms.
  Result<Lease> Acquire(std::string_view op);

  // Closes the idle connections (after one was found broken).
  void DropIdle();

  const PgConnectOptions& options() const { return options_; }
  // Connections open now (idle and lent), for tests and metrics.
  int open() const;

 private:
  void Return(std::unique_ptr<PgConnection> conn);

  const PgConnectOptions options_;
  const int size_;
  const int acquire_timeout_ms_;
  mutable std::mutex mu_;
  std::condition_variable freed_;
  std::vector<std::unique_ptr<PgConnection>> idle_;
  int open_ = 0;  // idle + lent + being connected
};

}  // namespace msp

#endif  // MSP_STORE_POSTGRES_PG_POOL_H_
