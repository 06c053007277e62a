// ConnectionLoop: accepting, reading requests whole under deadlines (epoll),
// and the workers that answer them (see connection_loop.h).
#include "server/connection_loop.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/content_coding.h"
#include "server/socket_options.h"
#include "util/text.h"

namespace msp {

using Clock = std::chrono::steady_clock;

struct ConnectionLoop::Connection {
  int fd = -1;
  std::string client;  // the peer's address: the per-client cap's key
  int peer_port = 0;
  std::string local_ip;
  int local_port = 0;
  std::string in;  // received, not yet handed to a worker
  // kIdle: no byte of the next request yet; kHead / kBody: the request is
  // arriving; kBusy: a worker has it; kDraining: answered and shut for
  // writing, the client's late bytes read and dropped until it closes.
  enum class State { kIdle, kHead, kBody, kBusy, kDraining } state = State::kIdle;
  Clock::time_point since;     // when the state began
  Clock::time_point deadline;  // of the state (not kBusy)
  size_t scanned = 0;          // bytes of `in` searched for the head's end
  size_t request_size = 0;     // kBody: head and body
  size_t drained = 0;          // kDraining: bytes dropped
  bool close_after = false;    // the body is not read ahead
  bool accepts_gzip = false;   // the request being read accepts gzip
  int served = 0;              // requests answered
  // Parked with the workers: its keep-alive deadline (steady clock, ns);
  // 0 when not parked; kClaimed once the loop took it back to close.
  std::atomic<int64_t> parked_until{0};
  bool in_work_set = false;  // registered in the workers' epoll set
  bool claimed = false;      // the loop claimed it (loop thread only)
};

namespace {

constexpr int64_t kClaimed = -1;

int64_t Nanos(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

}  // namespace

std::string_view DropReasonName(DropReason reason) {
  switch (reason) {
    case DropReason::kHeaderTimeout: return "header_timeout";
    case DropReason::kBodyTimeout: return "body_timeout";
    case DropReason::kHeadTooLarge: return "head_too_large";
    case DropReason::kBadRequest: return "bad_request";
    case DropReason::kClientLimit: return "client_limit";
    case DropReason::kServerLimit: return "server_limit";
    case DropReason::kQueueFull: return "queue_full";
  }
  return "unknown";
}

namespace {

// HoldAnswerHead's request: set by the processor, read by the worker's
// stream, cleared after each request.
thread_local bool t_hold_head = false;

// One request, already read, as cpp-httplib's Stream: reads come from the
// buffer (its end is the end of the stream: nothing is ever read from the
// socket), writes go to the socket, each waiting at most the write timeout
// for room. A held head (HoldAnswerHead) goes with the next write, or with
// Flush.
class BufferedRequest final : public httplib::Stream {
 public:
  BufferedRequest(const std::string& request, int fd, const std::string& peer_ip, int peer_port,
                  const std::string& local_ip, int local_port, std::chrono::milliseconds write_timeout)
      : request_(request),
        fd_(fd),
        peer_ip_(peer_ip),
        peer_port_(peer_port),
        local_ip_(local_ip),
        local_port_(local_port),
        write_timeout_ms_(static_cast<int>(write_timeout.count())) {}

  bool is_readable() const override { return pos_ < request_.size(); }
  bool is_writable() const override {
    pollfd p{fd_, POLLOUT, 0};
    return poll(&p, 1, write_timeout_ms_) > 0 && (p.revents & (POLLERR | POLLHUP)) == 0;
  }
  ssize_t read(char* ptr, size_t size) override {
    const size_t n = std::min(size, request_.size() - pos_);
    std::memcpy(ptr, request_.data() + pos_, n);
    pos_ += n;
    return static_cast<ssize_t>(n);
  }
  ssize_t write(const char* ptr, size_t size) override {
    if (t_hold_head && !head_taken_) {
      // The answer's head (cpp-httplib writes it first, whole): held.
      head_taken_ = true;
      held_.assign(ptr, size);
      return static_cast<ssize_t>(size);
    }
    const bool sent = Send(held_, std::string_view(ptr, size));
    held_.clear();
    return sent ? static_cast<ssize_t>(size) : -1;
  }
  // Sends a head still held. False when the connection failed.
  bool Flush() {
    if (held_.empty()) return true;
    const bool sent = Send(held_, {});
    held_.clear();
    return sent;
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    ip = peer_ip_;
    port = peer_port_;
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    ip = local_ip_;
    port = local_port_;
  }
  // cpp-httplib (built with select()) answers 500 to a stream whose socket
  // is >= FD_SETSIZE without selecting on it; this stream never selects.
  socket_t socket() const override { return fd_ < FD_SETSIZE ? fd_ : -1; }

 private:
  // Sends `first` then `second` (either may be empty) in as few system
  // calls as the socket takes them.
  bool Send(std::string_view first, std::string_view second) {
    iovec parts[2] = {{const_cast<char*>(first.data()), first.size()}, {const_cast<char*>(second.data()), second.size()}};
    iovec* at = parts;
    size_t left = 2;
    while (left > 0) {
      if (at->iov_len == 0) {
        ++at;
        --left;
        continue;
      }
      msghdr m{};
      m.msg_iov = at;
      m.msg_iovlen = left;
      const ssize_t n = sendmsg(fd_, &m, MSG_NOSIGNAL);
      if (n > 0) {
        for (size_t k = static_cast<size_t>(n); k > 0;) {
          const size_t step = std::min(k, at->iov_len);
          at->iov_base = static_cast<char*>(at->iov_base) + step;
          at->iov_len -= step;
          k -= step;
          if (at->iov_len == 0 && k > 0) {
            ++at;
            --left;
          }
        }
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        pollfd p{fd_, POLLOUT, 0};
        if (poll(&p, 1, write_timeout_ms_) <= 0) return false;
        continue;
      }
      return false;
    }
    return true;
  }

  const std::string& request_;
  size_t pos_ = 0;
  int fd_;
  std::string peer_ip_;
  int peer_port_;
  std::string local_ip_;
  int local_port_;
  int write_timeout_ms_;
  bool head_taken_ = false;  // this answer's head was held (HoldAnswerHead)
  std::string held_;
};

// Reads what `fd` (non-blocking) has now and hands it to `take` a piece at
// a time until nothing more is waiting or `take` returns false. Returns
// false when the peer closed or the connection failed. A read that did not
// fill the buffer took all that was waiting: no second call to hear
// EAGAIN (an end of stream behind the bytes is heard at the next
// readiness, epoll's being level-triggered or re-armed).
template <typename Take>
bool ReadAvailable(int fd, Take&& take) {
  char buf[16384];
  for (;;) {
    const ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n > 0) {
      if (!take(std::string_view(buf, static_cast<size_t>(n)))) return true;
      if (static_cast<size_t>(n) < sizeof(buf)) return true;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
  }
}

void AddressOf(const sockaddr_storage& a, std::string* ip, int* port) {
  char text[INET6_ADDRSTRLEN] = {0};
  if (a.ss_family == AF_INET) {
    const auto& v4 = reinterpret_cast<const sockaddr_in&>(a);
    inet_ntop(AF_INET, &v4.sin_addr, text, sizeof(text));
    *port = ntohs(v4.sin_port);
  } else if (a.ss_family == AF_INET6) {
    const auto& v6 = reinterpret_cast<const sockaddr_in6&>(a);
    inet_ntop(AF_INET6, &v6.sin6_addr, text, sizeof(text));
    *port = ntohs(v6.sin6_port);
  }
  *ip = text;
  // An IPv4 peer of a dual-stack socket counts as its IPv4 address.
  if (ip->rfind("::ffff:", 0) == 0 && ip->find('.') != std::string::npos) *ip = ip->substr(7);
}

// A whole answer of the loop's own, closing the connection.
std::string ErrorAnswer(int status, std::string_view code, std::string_view message) {
  const std::string body =
      nlohmann::json{{"error", {{"code", code}, {"message", message}}}}.dump(-1, ' ', false,
                                                                             nlohmann::json::error_handler_t::replace);
  const char* reason = status == 400   ? "Bad Request"
                       : status == 408 ? "Request Timeout"
                       : status == 431 ? "Request Header Fields Too Large"
                                       : "Service Unavailable";
  std::string out = "HTTP/1.1 " + std::to_string(status) + " " + std::string(reason) + "\r\n";
  out += "Content-Type: application/json\r\nConnection: close\r\n";
  if (status == 503) out += "Retry-After: 1\r\n";
  out += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  return out;
}

// What the loop needs from a request's head.
struct HeadFacts {
  bool bad = false;            // an unreadable or conflicting Content-Length
  bool has_transfer_encoding = false;
  std::optional<uint64_t> content_length;
  size_t expect_begin = 0, expect_end = 0;  // the Expect: 100-continue line, if any
  // The values of the Accept-Encoding lines, [begin, end) in the head, and
  // whether they accept gzip.
  std::vector<std::pair<size_t, size_t>> accept_encoding;
  bool accepts_gzip = false;
};

HeadFacts ReadHead(std::string_view head) {
  HeadFacts f;
  std::string codings;  // the Accept-Encoding lines' values, joined
  size_t pos = head.find("\r\n");
  while (pos != std::string_view::npos && pos + 2 < head.size()) {
    const size_t start = pos + 2;
    const size_t end = head.find("\r\n", start);
    const std::string_view line = head.substr(start, end == std::string_view::npos ? head.npos : end - start);
    pos = end;
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string name = AsciiLower(std::string(line.substr(0, colon)));
    const std::string value(TrimAsciiSpace(line.substr(colon + 1)));
    if (name == "content-length") {
      if (value.empty() || value.size() > 18 || !std::all_of(value.begin(), value.end(), [](char c) {
            return c >= '0' && c <= '9';
          })) {
        f.bad = true;
        continue;
      }
      const uint64_t n = std::stoull(value);
      if (f.content_length && *f.content_length != n) f.bad = true;
      f.content_length = n;
    } else if (name == "transfer-encoding") {
      f.has_transfer_encoding = true;
    } else if (name == "accept-encoding") {
      f.accept_encoding.emplace_back(start + colon + 1, start + line.size());
      codings += (codings.empty() ? "" : ",") + value;
    } else if (name == "expect" && AsciiLower(value) == "100-continue") {
      f.expect_begin = start;
      f.expect_end = end == std::string_view::npos ? head.size() : end + 2;
    }
  }
  f.accepts_gzip = AcceptsGzip(codings);
  return f;
}

// cpp-httplib would encode every text answer a client accepts encoded,
// whatever its size and wherever the client is, and with brotli at its
// slowest quality (11: 1.9 s for a 1.1 MB list) when offered, as browsers
// do. Blanked out (same length), Accept-Encoding is the processor's to act
// on (RequestFacts::accepts_gzip, content_coding.h).
void BlankAcceptEncoding(const HeadFacts& facts, std::string* request) {
  for (const auto& [first, last] : facts.accept_encoding) {
    std::fill(request->begin() + static_cast<std::ptrdiff_t>(first), request->begin() + static_cast<std::ptrdiff_t>(last),
              ' ');
  }
}

int MillisUntil(Clock::time_point t, Clock::time_point now) {
  if (t <= now) return 0;
  return static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(t - now).count()) + 1;
}

}  // namespace

void HoldAnswerHead() { t_hold_head = true; }

ConnectionLoop::ConnectionLoop(ConnectionLimits limits, RequestProcessor process,
                               std::function<void(DropReason)> on_drop)
    : limits_(limits), process_(std::move(process)), on_drop_(std::move(on_drop)) {}

ConnectionLoop::~ConnectionLoop() { Stop(); }

Result<int> ConnectionLoop::Start(const std::string& host, int port) {
  std::string name = host;
  if (name.size() > 2 && name.front() == '[' && name.back() == ']') name = name.substr(1, name.size() - 2);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (getaddrinfo(name.c_str(), service.c_str(), &hints, &found) != 0) {
    return Status::Unavailable("cannot resolve '" + host + "' (server.bind)");
  }
  for (addrinfo* a = found; a != nullptr && listen_fd_ < 0; a = a->ai_next) {
    const int fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    SetListenSocketOptions(fd);
    if (a->ai_family == AF_INET6) {
      const int off = 0;
      (void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
    }
    if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, SOMAXCONN) == 0) {
      listen_fd_ = fd;
    } else {
      close(fd);
    }
  }
  freeaddrinfo(found);
  if (listen_fd_ < 0) {
    return Status::Unavailable("cannot listen on " + host + ":" + std::to_string(port) +
                               " (server.bind, server.port): the address is in use or not this machine's");
  }
  sockaddr_storage bound{};
  socklen_t len = sizeof(bound);
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&bound), &len);
  std::string ip;
  int bound_port = 0;
  AddressOf(bound, &ip, &bound_port);

  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (epoll_fd_ < 0 || wake_fd_ < 0) return Status::Internal(std::string("epoll: ") + std::strerror(errno));
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = listen_fd_;
  epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, listen_fd_, &ev);
  ev.data.fd = wake_fd_;
  epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &ev);
  work_epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  jobs_fd_ = eventfd(0, EFD_SEMAPHORE | EFD_NONBLOCK | EFD_CLOEXEC);
  if (work_epoll_fd_ < 0 || jobs_fd_ < 0) return Status::Internal(std::string("epoll: ") + std::strerror(errno));
  // One-shot, re-armed by the worker that took a count: one job wakes one
  // worker (level-triggered alone, each count woke every idle worker).
  epoll_event jobs{};
  jobs.events = EPOLLIN | EPOLLONESHOT;
  jobs.data.ptr = nullptr;
  epoll_ctl(work_epoll_fd_, EPOLL_CTL_ADD, jobs_fd_, &jobs);

  stopping_ = false;
  workers_stop_ = false;
  for (int i = 0; i < std::max(1, limits_.workers); ++i) workers_.emplace_back([this] { Work(); });
  loop_thread_ = std::thread([this] { Loop(); });
  return bound_port;
}

void ConnectionLoop::Stop() {
  if (!loop_thread_.joinable()) return;
  stopping_ = true;
  const uint64_t one = 1;
  (void)!write(wake_fd_, &one, sizeof(one));
  loop_thread_.join();
  {
    std::lock_guard<std::mutex> lock(mu_);
    workers_stop_ = true;
  }
  const uint64_t tokens = workers_.size();  // one a worker
  (void)!write(jobs_fd_, &tokens, sizeof(tokens));
  for (std::thread& t : workers_) t.join();
  workers_.clear();
  close(epoll_fd_);
  close(wake_fd_);
  close(work_epoll_fd_);
  close(jobs_fd_);
  epoll_fd_ = wake_fd_ = work_epoll_fd_ = jobs_fd_ = -1;
}

void ConnectionLoop::Loop() {
  std::vector<epoll_event> events(128);
  while (!stopping_) {
    const Clock::time_point now = Clock::now();
    int timeout = 1000;
    // A connection parked after this wait began is looked at by the next
    // one: with connections at the workers, the loop wakes at least every
    // eighth of keep_alive.
    const int parked_tick = std::max(1, static_cast<int>(limits_.keep_alive.count() / 8));
    for (const auto& [fd, c] : conns_) {
      if (c->state != Connection::State::kBusy) {
        timeout = std::min(timeout, MillisUntil(c->deadline, now));
      } else {
        timeout = std::min(timeout, parked_tick);
      }
    }
    const int n = epoll_wait(epoll_fd_, events.data(), static_cast<int>(events.size()), timeout);
    for (int i = 0; i < n; ++i) {
      const int fd = events[static_cast<size_t>(i)].data.fd;
      if (fd == listen_fd_) {
        Accept();
      } else if (fd == wake_fd_) {
        uint64_t count;
        (void)!read(wake_fd_, &count, sizeof(count));
        TakeBackReturned();
      } else if (auto it = conns_.find(fd); it != conns_.end()) {
        OnReadable(it->second.get());
      }
    }
    Expire(Clock::now());
  }
  // Stopping: no new connections; close those not being answered, then wait
  // for the workers to give back the rest.
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, listen_fd_, nullptr);
  close(listen_fd_);
  listen_fd_ = -1;
  std::vector<Connection*> idle;
  for (const auto& [fd, c] : conns_) {
    if (c->state != Connection::State::kBusy) idle.push_back(c.get());
  }
  for (Connection* c : idle) Close(c);
  for (;;) {
    // Parked connections are claimed each time round: a worker may park
    // one it was answering while the loop began to stop.
    for (const auto& [fd, c] : conns_) {
      if (c->state == Connection::State::kBusy && !c->claimed) (void)ClaimParked(c.get());
    }
    TakeBackReturned();
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (busy_ == 0 && jobs_.empty() && returned_.empty()) break;
    }
    pollfd p{wake_fd_, POLLIN, 0};
    poll(&p, 1, 100);
    uint64_t count;
    (void)!read(wake_fd_, &count, sizeof(count));
  }
  TakeBackReturned();
}

void ConnectionLoop::Accept() {
  for (;;) {
    sockaddr_storage peer{};
    socklen_t len = sizeof(peer);
    const int fd = accept4(listen_fd_, reinterpret_cast<sockaddr*>(&peer), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return;  // EAGAIN, or out of descriptors: the next readiness retries
    }
    auto c = std::make_unique<Connection>();
    c->fd = fd;
    AddressOf(peer, &c->client, &c->peer_port);
    sockaddr_storage local{};
    len = sizeof(local);
    getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len);
    AddressOf(local, &c->local_ip, &c->local_port);
    const Clock::time_point now = Clock::now();
    c->since = now;
    c->deadline = now + limits_.header_timeout;
    Connection* raw = c.get();
    const std::optional<DropReason> full = MakeRoom(c->client);
    conns_[fd] = std::move(c);
    ++per_client_[raw->client];
    if (full) {
      Refuse(raw, 503, "unavailable",
             *full == DropReason::kClientLimit
                 ? "too many connections from this address (server.max_connections_per_client), all busy; retry"
                 : "too many connections (server.max_connections), all busy; retry",
             *full);
      continue;
    }
    Arm(raw);
  }
}

std::optional<DropReason> ConnectionLoop::MakeRoom(const std::string& client) {
  using State = Connection::State;
  // Bytes already sent by new connections are read first, so that a
  // connection whose request is in counts as such.
  std::vector<int> fresh;
  for (const auto& [fd, c] : conns_) {
    if (c->state == State::kIdle && c->served == 0) fresh.push_back(fd);
  }
  for (int fd : fresh) {
    if (auto it = conns_.find(fd); it != conns_.end()) OnReadable(it->second.get());
  }
  // The victim: one already answered and draining, else the oldest
  // connection not being answered that has not finished a request (stalled
  // part-way, or silent since it opened), else the oldest idle kept-alive
  // one.
  // A connection parked with the workers is an idle kept-alive one, parked
  // keep_alive before its deadline; one a worker is answering is skipped.
  auto oldest = [this](const std::string* only) -> Connection* {
    Connection* best = nullptr;
    int best_rank = 0;
    Clock::time_point best_since;
    for (const auto& [fd, c] : conns_) {
      if (c->claimed || (only != nullptr && c->client != *only)) continue;
      int rank;
      Clock::time_point since = c->since;
      if (c->state == State::kBusy) {
        const int64_t until = c->parked_until.load(std::memory_order_acquire);
        if (until <= 0) continue;
        rank = 1;
        since = Clock::time_point(std::chrono::nanoseconds(until)) - limits_.keep_alive;
      } else {
        rank = c->state == State::kDraining ? -1 : c->state == State::kIdle && c->served > 0 ? 1 : 0;
      }
      if (best == nullptr || rank < best_rank || (rank == best_rank && since < best_since)) {
        best = c.get();
        best_rank = rank;
        best_since = since;
      }
    }
    return best;
  };
  // Closes the victim chosen for `reason`; false when there is none.
  auto evict = [&](const std::string* only, DropReason reason, std::string_view message) {
    for (;;) {
      Connection* victim = oldest(only);
      if (victim == nullptr) return false;
      if (victim->state == State::kDraining) {
        Close(victim);  // answered already
        return true;
      }
      if (victim->state != State::kBusy) {
        Refuse(victim, 503, "unavailable", message, reason);
        return true;
      }
      // Parked: the same answer, then the worker that sees it shut down
      // gives it back to be closed. A worker that took it first is
      // answering it: look again.
      if (ClaimParked(victim, ErrorAnswer(503, "unavailable", message))) {
        if (on_drop_) on_drop_(reason);
        return true;
      }
    }
  };
  auto count = per_client_.find(client);
  if (count != per_client_.end() && count->second >= limits_.max_connections_per_client &&
      !evict(&client, DropReason::kClientLimit,
             "closed to make room for a newer connection from the same address "
             "(server.max_connections_per_client); retry")) {
    return DropReason::kClientLimit;
  }
  if (conns_.size() - claimed_ >= static_cast<size_t>(limits_.max_connections) &&
      !evict(nullptr, DropReason::kServerLimit,
             "closed to make room for a newer connection (server.max_connections); retry")) {
    return DropReason::kServerLimit;
  }
  return std::nullopt;
}

bool ConnectionLoop::ClaimParked(Connection* c, std::string_view answer) {
  int64_t until = c->parked_until.load(std::memory_order_acquire);
  if (until <= 0 || !c->parked_until.compare_exchange_strong(until, kClaimed, std::memory_order_acq_rel)) return false;
  // It no longer counts against the caps; Close knows.
  c->claimed = true;
  ++claimed_;
  if (auto count = per_client_.find(c->client); count != per_client_.end() && --count->second <= 0) {
    per_client_.erase(count);
  }
  // Best effort, as Refuse's.
  if (!answer.empty()) (void)send(c->fd, answer.data(), answer.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  // Readable now (end of stream, hang-up): the worker waiting on it wakes.
  shutdown(c->fd, SHUT_RDWR);
  return true;
}

void ConnectionLoop::Arm(Connection* c) {
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLRDHUP;
  ev.data.fd = c->fd;
  epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, c->fd, &ev);
}

void ConnectionLoop::OnReadable(Connection* c) {
  if (c->state == Connection::State::kBusy) return;  // a worker has it
  if (c->state == Connection::State::kDraining) return Drain(c);
  const bool open = ReadAvailable(c->fd, [&](std::string_view bytes) {
    c->in.append(bytes);
    // Enough to decide: a head over the limit, or the whole request.
    return c->in.size() <= limits_.max_header_bytes + limits_.max_body_bytes;
  });
  // The client closed or the connection failed: nothing to answer.
  if (!open) return Close(c);
  Advance(c);
}

void ConnectionLoop::Advance(Connection* c) {
  using State = Connection::State;
  if (c->state == State::kBusy || c->in.empty()) return;
  const Clock::time_point now = Clock::now();
  if (c->state == State::kIdle) {
    c->state = State::kHead;
    if (c->served > 0) c->since = now;  // a new connection's age counts from its accept
    c->deadline = now + limits_.header_timeout;
    c->scanned = 0;
  }
  if (c->state == State::kHead) {
    const size_t from = c->scanned > 3 ? c->scanned - 3 : 0;
    const size_t end = c->in.find("\r\n\r\n", from);
    if (end == std::string::npos || end + 4 > limits_.max_header_bytes) {
      if (c->in.size() > limits_.max_header_bytes) {
        return Refuse(c, 431, "request_header_fields_too_large",
                      "the request line and headers are larger than " + std::to_string(limits_.max_header_bytes) +
                          " bytes",
                      DropReason::kHeadTooLarge);
      }
      c->scanned = c->in.size();
      return;
    }
    size_t head_size = end + 4;
    const HeadFacts facts = ReadHead(std::string_view(c->in).substr(0, head_size));
    if (facts.bad) {
      return Refuse(c, 400, "bad_request", "the Content-Length header is not one non-negative integer",
                    DropReason::kBadRequest);
    }
    BlankAcceptEncoding(facts, &c->in);
    c->accepts_gzip = facts.accepts_gzip;
    const uint64_t length = facts.content_length.value_or(0);
    bool wait_for_body = !facts.has_transfer_encoding && length <= limits_.max_body_bytes;
    if (facts.expect_end > facts.expect_begin) {
      // Answered here (when the body is wanted), so the handlers see no Expect.
      c->in.erase(facts.expect_begin, facts.expect_end - facts.expect_begin);
      head_size -= facts.expect_end - facts.expect_begin;
      if (wait_for_body && c->in.size() < head_size + length) {
        static constexpr char kContinue[] = "HTTP/1.1 100 Continue\r\n\r\n";
        (void)send(c->fd, kContinue, sizeof(kContinue) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
      }
    }
    c->close_after = !wait_for_body;
    c->request_size = wait_for_body ? head_size + static_cast<size_t>(length) : head_size;
    c->state = State::kBody;
    c->since = now;
    c->deadline = now + limits_.body_timeout;
  }
  if (c->in.size() < c->request_size) return;

  Job job{c, c->in.substr(0, c->request_size),
          RequestFacts{c->close_after || LastRequest(*c),
                       c->accepts_gzip}};
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (static_cast<int>(jobs_.size()) >= limits_.max_queued_requests) {
      lock.unlock();
      return Refuse(c, 503, "unavailable",
                    "the server has too many requests waiting (server.max_queued_requests); retry",
                    DropReason::kQueueFull);
    }
    c->in.erase(0, c->request_size);
    c->state = State::kBusy;
    epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, c->fd, nullptr);
    jobs_.push_back(std::move(job));
  }
  const uint64_t one = 1;
  (void)!write(jobs_fd_, &one, sizeof(one));
}

void ConnectionLoop::Work() {
  for (;;) {
    epoll_event ev{};
    const int n = epoll_wait(work_epoll_fd_, &ev, 1, -1);
    if (n <= 0) continue;  // EINTR
    if (ev.data.ptr != nullptr) {
      OnParkedReadable(static_cast<Connection*>(ev.data.ptr));
      continue;
    }
    uint64_t token;
    const bool took = read(jobs_fd_, &token, sizeof(token)) == sizeof(token);
    epoll_event again{};
    again.events = EPOLLIN | EPOLLONESHOT;
    again.data.ptr = nullptr;
    epoll_ctl(work_epoll_fd_, EPOLL_CTL_MOD, jobs_fd_, &again);  // wakes the next worker if counts are left
    if (!took) continue;
    Job job;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (jobs_.empty()) {
        if (workers_stop_) return;
        continue;
      }
      job = std::move(jobs_.front());
      jobs_.pop_front();
      ++busy_;
    }
    Serve(job.conn, job.request, job.facts);
  }
}

void ConnectionLoop::Serve(Connection* c, const std::string& request, const RequestFacts& facts) {
  // The loop leaves a connection at the workers alone: its fields are
  // the worker's until it is parked or returned.
  BufferedRequest stream(request, c->fd, c->client, c->peer_port, c->local_ip, c->local_port, limits_.write_timeout);
  bool keep = false;
  t_hold_head = false;
  try {
    keep = process_(stream, facts) && !facts.close_connection;
  } catch (...) {
    keep = false;  // handlers answer their own errors; this is a last resort
  }
  t_hold_head = false;
  keep = stream.Flush() && keep;
  ++c->served;
  // Bytes behind the request (read by the loop with it) are the loop's to
  // read on.
  if (keep && c->in.empty() && !stopping_) return Park(c, Nanos(Clock::now() + limits_.keep_alive));
  Return(c, keep);
}

void ConnectionLoop::Park(Connection* c, int64_t until) {
  // The worker that wakes for c, or the loop claiming it, acquires
  // parked_until: every write to c comes before its store, and once armed
  // another worker may have c — nothing of c is touched after.
  const int fd = c->fd;
  const bool was_in = c->in_work_set;
  c->in_work_set = true;
  c->parked_until.store(until, std::memory_order_release);
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLRDHUP | EPOLLONESHOT;
  ev.data.ptr = c;
  if (epoll_ctl(work_epoll_fd_, was_in ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd, &ev) == 0) return;
  // Not armed (out of memory for the set), so still this worker's: the
  // loop keeps it (claimed meanwhile or not: TakeBackReturned knows).
  c->in_work_set = was_in;
  c->parked_until.store(0, std::memory_order_release);
  Return(c, true);
}

void ConnectionLoop::OnParkedReadable(Connection* c) {
  int64_t until = c->parked_until.load(std::memory_order_acquire);
  if (until == kClaimed || !c->parked_until.compare_exchange_strong(until, 0, std::memory_order_acq_rel)) {
    return Return(c, false);  // the loop claimed it: to be closed
  }
  const bool open = ReadAvailable(c->fd, [&](std::string_view bytes) {
    c->in.append(bytes);
    return c->in.size() <= limits_.max_header_bytes + limits_.max_body_bytes;
  });
  if (!open) return Return(c, false);  // the client closed, or the connection failed
  if (c->in.empty()) return Park(c, until);  // woken with nothing to read: wait on, same deadline
  std::optional<Job> job = TakePlainRequest(c);
  // Part of a request, or one the loop must look at: its deadlines and
  // refusals are the loop's.
  if (!job) return Return(c, true);
  Serve(c, job->request, job->facts);
}

std::optional<ConnectionLoop::Job> ConnectionLoop::TakePlainRequest(Connection* c) const {
  const size_t end = c->in.find("\r\n\r\n");
  if (end == std::string::npos || end + 4 > limits_.max_header_bytes) return std::nullopt;
  const size_t head_size = end + 4;
  const HeadFacts facts = ReadHead(std::string_view(c->in).substr(0, head_size));
  if (facts.bad || facts.has_transfer_encoding || facts.expect_end > facts.expect_begin) return std::nullopt;
  const uint64_t length = facts.content_length.value_or(0);
  if (length > limits_.max_body_bytes || c->in.size() < head_size + length) return std::nullopt;
  BlankAcceptEncoding(facts, &c->in);
  const size_t size = head_size + static_cast<size_t>(length);
  Job job{c, c->in.substr(0, size),
          RequestFacts{LastRequest(*c), facts.accepts_gzip}};
  c->in.erase(0, size);
  return job;
}

bool ConnectionLoop::LastRequest(const Connection& c) const {
  return stopping_ || c.served + 1 >= limits_.keep_alive_max_requests;
}

void ConnectionLoop::Return(Connection* c, bool keep) {
  if (c->in_work_set) {
    epoll_ctl(work_epoll_fd_, EPOLL_CTL_DEL, c->fd, nullptr);
    c->in_work_set = false;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    returned_.emplace_back(c, keep);
    --busy_;
  }
  const uint64_t one = 1;
  (void)!write(wake_fd_, &one, sizeof(one));
}

void ConnectionLoop::TakeBackReturned() {
  std::vector<std::pair<Connection*, bool>> back;
  {
    std::lock_guard<std::mutex> lock(mu_);
    back.swap(returned_);
  }
  const Clock::time_point now = Clock::now();
  for (auto [c, keep] : back) {
    if (stopping_ || c->claimed) {
      Close(c);
      continue;
    }
    if (!keep) {
      Arm(c);  // a worker's connection is out of the epoll set
      Linger(c);
      continue;
    }
    c->state = Connection::State::kIdle;
    c->since = now;
    c->deadline = now + limits_.keep_alive;
    Arm(c);
    Advance(c);  // a request sent behind the last one
  }
}

void ConnectionLoop::Expire(Clock::time_point now) {
  std::vector<Connection*> due;
  const int64_t now_ns = Nanos(now);
  for (const auto& [fd, c] : conns_) {
    if (c->state != Connection::State::kBusy) {
      if (c->deadline <= now) due.push_back(c.get());
    } else if (!c->claimed) {
      // Parked past keep_alive: closed once its worker gives it back.
      const int64_t until = c->parked_until.load(std::memory_order_acquire);
      if (until > 0 && until <= now_ns) (void)ClaimParked(c.get());
    }
  }
  for (Connection* c : due) {
    if ((c->state == Connection::State::kIdle && c->served > 0) || c->state == Connection::State::kDraining) {
      Close(c);  // keep-alive ended, or the client never closed after its answer
      continue;
    }
    const bool body = c->state == Connection::State::kBody;
    const std::string what = c->state == Connection::State::kIdle ? "no request arrived"
                             : body ? "the request body did not arrive"
                                    : "the request line and headers did not arrive";
    const auto limit = body ? limits_.body_timeout : limits_.header_timeout;
    Refuse(c, 408, "request_timeout",
           what + " within " + (body ? "server.body_timeout_ms" : "server.header_timeout_ms") + " (" +
               std::to_string(limit.count()) + " ms" + (body ? " of the headers); nothing was done" : ")"),
           body ? DropReason::kBodyTimeout : DropReason::kHeaderTimeout);
  }
}

void ConnectionLoop::Refuse(Connection* c, int status, std::string_view code, std::string_view message,
                            DropReason reason) {
  const std::string answer = ErrorAnswer(status, code, message);
  // Best effort: a client that reads nothing must not hold the loop.
  (void)send(c->fd, answer.data(), answer.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  // A connection closed to make room for another goes at once; the others
  // linger, so that the client reads the answer.
  if (reason == DropReason::kClientLimit || reason == DropReason::kServerLimit) {
    shutdown(c->fd, SHUT_WR);
    Close(c);
  } else {
    Linger(c);
  }
  if (on_drop_) on_drop_(reason);
}

void ConnectionLoop::Linger(Connection* c) {
  // Closing a socket with unread bytes in its receive queue, or receiving
  // bytes after the close, makes the kernel send a reset, and a reset makes
  // the client's kernel drop the answer it has not read yet: a client still
  // sending a body the server refused (chunked, too large) would see no
  // answer at all. So the server shuts its side for writing (the client
  // reads the answer, then end of stream) and reads and drops what still
  // comes until the client closes, for at most kLingerTime and
  // kLingerBytes.
  shutdown(c->fd, SHUT_WR);
  c->state = Connection::State::kDraining;
  c->in.clear();
  c->in.shrink_to_fit();
  c->drained = 0;
  c->since = Clock::now();
  c->deadline = c->since + kLingerTime;
  Drain(c);
}

void ConnectionLoop::Drain(Connection* c) {
  bool more = true;
  const bool open = ReadAvailable(c->fd, [&](std::string_view bytes) {
    c->drained += bytes.size();
    more = c->drained <= kLingerBytes;
    return more;
  });
  // The client closed, the connection failed, or it sent too much.
  if (!open || !more) Close(c);
}

void ConnectionLoop::Close(Connection* c) {
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, c->fd, nullptr);
  close(c->fd);
  if (c->claimed) {
    --claimed_;  // not counted in per_client_ since its claim
  } else if (auto count = per_client_.find(c->client); count != per_client_.end() && --count->second <= 0) {
    per_client_.erase(count);
  }
  conns_.erase(c->fd);  // destroys c
}

}  // namespace msp
