// ConnectionLoop: the socket side of msp's HTTP server. It accepts
// connections and reads each request whole — head and body — on one thread
// (epoll), under deadlines, before a worker sees it; workers only ever parse,
// route and answer a request that is already in memory, and write the answer
// back. A client that trickles its head or body, or declares a body it never
// sends, therefore holds a file descriptor and a buffer until its deadline,
// never a worker thread.
//
// Limits (ConnectionLimits, from server.* settings; docs/rest.md, "Limits"):
//   - the head of a request must arrive within header_timeout, and its body
//     within body_timeout of the head: past them the client gets 408 and the
//     connection is closed;
//   - an idle keep-alive connection is closed after keep_alive;
//   - at most max_connections connections, and max_connections_per_client
//     from one address. A connection past a cap takes the place of the
//     oldest connection (of that client, or of all) that is not being
//     answered: one that has not finished a request (stalled part-way, or
//     silent since it opened; bytes already sent are read first), else an
//     idle kept-alive one, which is closed (503). When there is none, the
//     new one gets 503;
//   - at most max_queued_requests complete requests wait for a worker;
//     past that a request gets 503 with Retry-After.
// A request whose body is not read ahead (Transfer-Encoding, or a
// Content-Length over max_body_bytes) goes to a worker as soon as its head
// is in, with no body: the handlers refuse it (411, 413) and the connection
// is closed after the answer.
// A connection closed after an answer (Connection: close, a refusal) is shut
// for writing first and its late bytes are read and dropped until the client
// closes (at most kLingerTime, kLingerBytes): closing with bytes unread would
// reset the connection and lose the answer on the client's side.
//
// A kept-alive connection waits for its next request with the workers, not
// the loop: after an answer, the worker that wrote it puts the connection in
// the workers' own epoll set (one-shot), and the worker woken by the next
// request's bytes reads them and, when they are one plain whole request
// (head, and a Content-Length body within max_body_bytes; no
// Transfer-Encoding, no Expect), answers it at once — one wake-up a request
// instead of three (loop, worker, loop). Anything else — part of a request,
// bytes behind it, the client closing — goes back to the loop, which reads
// it under its deadlines as above. The loop still owns every connection's
// deadline: a parked connection past keep_alive, or chosen to make room, is
// claimed by the loop (an atomic exchange against the worker's) and shut
// down, and the worker that sees it hands it back to be closed.
//
// Thread-safe: Start / Stop from one thread; the processor runs on the
// worker threads, concurrently.
#ifndef MSP_SERVER_CONNECTION_LOOP_H_
#define MSP_SERVER_CONNECTION_LOOP_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <httplib.h>

#include "msp/status.h"

namespace msp {

struct ConnectionLimits {
  std::chrono::milliseconds header_timeout{10000};
  std::chrono::milliseconds body_timeout{30000};
  std::chrono::milliseconds keep_alive{5000};
  // Each write of an answer must make progress within this.
  std::chrono::milliseconds write_timeout{5000};
  size_t max_header_bytes = 64u << 10;  // a larger head gets 431
  size_t max_body_bytes = 4u << 20;     // a larger body is not read ahead
  int max_connections = 512;
  int max_connections_per_client = 64;
  int max_queued_requests = 256;
  int keep_alive_max_requests = 100;
  int workers = 8;
};

// What the loop learnt from a request's head for the one who answers it.
struct RequestFacts {
  bool close_connection = false;  // the answer must close the connection
  // Accept-Encoding accepts gzip (content_coding.h). The header reaches
  // cpp-httplib blanked, so that it never encodes an answer itself: the
  // processor decides.
  bool accepts_gzip = false;
};

// Answers the one request `in` holds (its head and, when read ahead, its
// body) and writes the answer to `in`. Returns true when the connection may
// serve another request. Runs on a worker thread.
using RequestProcessor = std::function<bool(httplib::Stream& in, const RequestFacts& facts)>;

// For a RequestProcessor, once it knows the answer it is about to write is
// whole (its body in memory, not streamed): the answer's head then waits for
// the first write after it and both leave in one send — one segment, one
// wake-up of the client, one system call fewer — instead of two. Only for the
// calling worker's current request; a head with nothing after it leaves when
// the processor returns. A streamed answer must not call this: its head
// would wait for its first chunk.
void HoldAnswerHead();

// Why the loop closed a connection itself (counted for /metrics).
enum class DropReason { kHeaderTimeout, kBodyTimeout, kHeadTooLarge, kBadRequest, kClientLimit, kServerLimit, kQueueFull };
std::string_view DropReasonName(DropReason reason);

class ConnectionLoop {
 public:

  // `on_drop` (may be empty) is called on the loop thread for each
  // connection the loop closed with an error answer of its own.
  ConnectionLoop(ConnectionLimits limits, RequestProcessor process, std::function<void(DropReason)> on_drop);
  ~ConnectionLoop();  // Stop()
  ConnectionLoop(const ConnectionLoop&) = delete;
  ConnectionLoop& operator=(const ConnectionLoop&) = delete;

  // Binds `host`:`port` (0: any free port) with SO_REUSEADDR and
  // TCP_NODELAY (socket_options.h), listens, and starts the loop and the
  // workers. Returns the bound port. Unavailable when the address cannot be
  // bound. REQUIRES: not started.
  Result<int> Start(const std::string& host, int port);
  // Stops accepting, closes connections that are not being answered, lets
  // the requests taken finish, and joins the threads. Idempotent.
  void Stop();

 private:
  struct Connection;
  struct Job {
    Connection* conn;
    std::string request;
    RequestFacts facts;
  };

  void Loop();
  void Work();
  // A worker answers `request` on `c` (which it owns), then parks `c`
  // (Park) or hands it back to the loop (Return).
  void Serve(Connection* c, const std::string& request, const RequestFacts& facts);
  // Puts `c`, answered and kept alive, in the workers' epoll set until
  // `until` (steady clock, ns): its keep-alive deadline.
  void Park(Connection* c, int64_t until);
  // A worker woke for a parked `c`: answers its next request, or gives `c`
  // back to the loop.
  void OnParkedReadable(Connection* c);
  // A plain request whole in c->in (see the header comment), taken out of it
  // as the loop would take it; nullopt and c->in untouched otherwise.
  std::optional<Job> TakePlainRequest(Connection* c) const;
  // The request being taken is c's last: the server stops, or it is the
  // keep_alive_max_requests-th. Read by whoever owns c.
  bool LastRequest(const Connection& c) const;
  // Hands `c` back to the loop (from the workers' set, if it was parked).
  void Return(Connection* c, bool keep);
  // The loop takes a parked connection from the workers, sends it `answer`
  // (if any) and shuts it down; false when a worker has just taken it to
  // answer a request.
  bool ClaimParked(Connection* c, std::string_view answer = {});
  void Accept();
  void OnReadable(Connection* c);
  // Looks for a whole request in c->in and hands it to a worker.
  void Advance(Connection* c);
  void Expire(std::chrono::steady_clock::time_point now);
  // Makes room for a connection from `client` by closing the oldest
  // connection not being answered; the cap that is full when there is none.
  std::optional<DropReason> MakeRoom(const std::string& client);
  void Refuse(Connection* c, int status, std::string_view code, std::string_view message, DropReason reason);
  // Shuts `c` for writing and drops what the client still sends until it
  // closes (Drain), or kLingerTime passes, or kLingerBytes arrived.
  void Linger(Connection* c);
  void Drain(Connection* c);
  void Close(Connection* c);

  static constexpr std::chrono::milliseconds kLingerTime{2000};
  static constexpr size_t kLingerBytes = 16u << 20;
  void TakeBackReturned();
  void Arm(Connection* c);

  ConnectionLimits limits_;
  RequestProcessor process_;
  std::function<void(DropReason)> on_drop_;
  int listen_fd_ = -1;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;  // eventfd: a worker returned a connection, or Stop()
  // The workers' epoll set: jobs_fd_ (data.ptr null) and parked connections
  // (data.ptr the Connection, one-shot).
  int work_epoll_fd_ = -1;
  int jobs_fd_ = -1;  // eventfd (semaphore): one count a queued job, or a stop token
  std::atomic<bool> stopping_{false};
  std::thread loop_thread_;
  std::vector<std::thread> workers_;

  // Owned by the loop thread.
  std::map<int, std::unique_ptr<Connection>> conns_;
  std::map<std::string, int> per_client_;  // claimed connections not counted
  size_t claimed_ = 0;                      // connections claimed, not yet closed

  std::mutex mu_;  // guards the fields below
  std::deque<Job> jobs_;
  int busy_ = 0;  // connections with the workers (answering or parked), not returned
  bool workers_stop_ = false;
  // Connections answered, back to the loop: (connection, keep it).
  std::vector<std::pair<Connection*, bool>> returned_;
};

}  // namespace msp

#endif  // MSP_SERVER_CONNECTION_LOOP_H_
