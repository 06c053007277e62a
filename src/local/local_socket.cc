// The resident path's socket: framing, the client's call and the server's
// accept threads (see local_socket.h).
#include "local/local_socket.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "codec/json_text.h"

namespace msp::local {

namespace {

using Clock = std::chrono::steady_clock;

// Waits until `fd` is ready for `events` or `deadline` passes.
bool WaitFor(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd p{fd, events, 0};
    const int n = poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 60000)));
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) return false;
  }
}

Status WriteAll(int fd, const char* data, size_t size, Clock::time_point deadline) {
  size_t done = 0;
  while (done < size) {
    const ssize_t n = send(fd, data + done, size - done, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!WaitFor(fd, POLLOUT, deadline)) return Status::Unavailable("timed out sending");
      continue;
    }
    return Status::Unavailable(std::string("cannot send: ") + std::strerror(errno));
  }
  return Status::Ok();
}

// Reads exactly `size` bytes. `*closed` is set when the peer closed before
// the first byte.
Status ReadExact(int fd, char* data, size_t size, Clock::time_point deadline, bool* closed = nullptr) {
  size_t done = 0;
  while (done < size) {
    const ssize_t n = recv(fd, data + done, size - done, MSG_DONTWAIT);
    if (n > 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    if (n == 0) {
      if (closed != nullptr && done == 0) *closed = true;
      return Status::Unavailable("the other side closed the connection");
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (!WaitFor(fd, POLLIN, deadline)) return Status::Unavailable("timed out receiving");
      continue;
    }
    return Status::Unavailable(std::string("cannot receive: ") + std::strerror(errno));
  }
  return Status::Ok();
}

Status WriteFrame(int fd, const nlohmann::json& j, Clock::time_point deadline) {
  // The length and the body in one send: the reader is not woken for the
  // four bytes alone.
  std::string frame(4, '\0');
  AppendJson(frame, j);
  const size_t n = frame.size() - 4;
  frame[0] = static_cast<char>(n >> 24);
  frame[1] = static_cast<char>(n >> 16);
  frame[2] = static_cast<char>(n >> 8);
  frame[3] = static_cast<char>(n);
  return WriteAll(fd, frame.data(), frame.size(), deadline);
}

Result<nlohmann::json> ReadFrame(int fd, size_t max_bytes, Clock::time_point deadline) {
  unsigned char head[4];
  MSP_RETURN_IF_ERROR(ReadExact(fd, reinterpret_cast<char*>(head), sizeof(head), deadline));
  const size_t n = (size_t{head[0]} << 24) | (size_t{head[1]} << 16) | (size_t{head[2]} << 8) | size_t{head[3]};
  if (n > max_bytes) {
    return Status::InvalidArgument("a frame of " + std::to_string(n) + " bytes is over the limit of " +
                                   std::to_string(max_bytes));
  }
  std::string body(n, '\0');
  MSP_RETURN_IF_ERROR(ReadExact(fd, body.data(), n, deadline));
  nlohmann::json j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status::InvalidArgument("the frame is not JSON");
  return j;
}

// After a refusal written before the call was read: no more from this side,
// and what the caller still sends is read and dropped (for up to `wait`), so
// that the caller's send does not fail on a closed socket before it reads
// the refusal.
void EndAfterRefusal(int fd, std::chrono::milliseconds wait) {
  shutdown(fd, SHUT_WR);
  const Clock::time_point deadline = Clock::now() + wait;
  char sink[4096];
  size_t dropped = 0;
  while (dropped < kMaxCallBytes) {
    const ssize_t n = recv(fd, sink, sizeof(sink), MSG_DONTWAIT);
    if (n > 0) {
      dropped += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && WaitFor(fd, POLLIN, deadline)) continue;
    return;  // the caller closed, an error, or the wait is over
  }
}

bool FillAddress(const std::string& path, sockaddr_un* a) {
  std::memset(a, 0, sizeof(*a));
  a->sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof(a->sun_path)) return false;
  std::memcpy(a->sun_path, path.data(), path.size());
  return true;
}

}  // namespace

nlohmann::json ErrorFrame(const Status& status) {
  return {{"error", {{"code", StatusCodeName(status.code())}, {"message", status.message()}}}};
}

Status StatusOfError(const nlohmann::json& error) {
  const std::string code = error.is_object() ? error.value("code", std::string()) : std::string();
  const std::string message = error.is_object() ? error.value("message", std::string()) : std::string();
  for (int c = static_cast<int>(StatusCode::kInvalidArgument); c <= static_cast<int>(StatusCode::kReadOnly); ++c) {
    if (code == StatusCodeName(static_cast<StatusCode>(c))) return Status(static_cast<StatusCode>(c), message);
  }
  return Status::Internal("the msp server answered an error this command does not know (" + code + "): " + message);
}

std::string SocketPath(const std::string& data_dir) {
  if (data_dir.empty()) return "";
  std::string path = data_dir;
  if (path.back() != '/') path += '/';
  path += "msp.sock";
  return path.size() < sizeof(sockaddr_un::sun_path) ? path : "";
}

std::string LockPath(const std::string& path) { return path + ".lock"; }

Result<std::optional<nlohmann::json>> Call(const std::string& path, const nlohmann::json& call,
                                           std::chrono::milliseconds timeout) {
  sockaddr_un address;
  if (!FillAddress(path, &address)) return std::optional<nlohmann::json>();
  OwnedFd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return std::optional<nlohmann::json>();
  if (connect(fd.get(), reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0) {
    // No file, nobody accepting, not a socket, or not ours to use: no
    // resident server for this caller.
    return std::optional<nlohmann::json>();
  }
  const Clock::time_point deadline = Clock::now() + timeout;
  const std::string where = "the msp server on " + path;
  if (Status s = WriteFrame(fd.get(), call, deadline); !s.ok()) {
    // A server that refuses (another user, a frame over its limit) may
    // answer and close before it has read the call: its answer is there.
    Result<nlohmann::json> early =
        ReadFrame(fd.get(), kMaxAnswerBytes, std::min(deadline, Clock::now() + std::chrono::seconds(1)));
    if (early.ok()) return std::optional<nlohmann::json>(std::move(early).value());
    return s.WithContext(where);
  }
  Result<nlohmann::json> answer = ReadFrame(fd.get(), kMaxAnswerBytes, deadline);
  if (!answer.ok()) return answer.status().WithContext(where);
  return std::optional<nlohmann::json>(std::move(answer).value());
}

Result<std::unique_ptr<LocalServer>> LocalServer::Start(const std::string& path, Handler handler, int threads) {
  sockaddr_un address;
  if (!FillAddress(path, &address)) {
    return Status::InvalidArgument("the socket path '" + path + "' is empty or longer than " +
                                   std::to_string(sizeof(address.sun_path) - 1) + " bytes");
  }
  std::unique_ptr<LocalServer> server(new LocalServer(path, std::move(handler)));
  const std::string lock_path = LockPath(path);
  server->lock_fd_ = OwnedFd(open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  if (!server->lock_fd_.valid()) {
    return Status::IoError("cannot open " + lock_path + ": " + std::strerror(errno));
  }
  if (flock(server->lock_fd_.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) return Status::AlreadyExists("another msp server holds " + path);
    return Status::IoError("cannot lock " + lock_path + ": " + std::strerror(errno));
  }
  // Ours now: a file left at the path is a dead server's socket.
  (void)unlink(path.c_str());
  server->listen_fd_ = OwnedFd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!server->listen_fd_.valid()) return Status::IoError(std::string("socket: ") + std::strerror(errno));
  if (bind(server->listen_fd_.get(), reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0) {
    return Status::IoError("cannot bind " + path + ": " + std::strerror(errno));
  }
  // The data directory is private already; the socket is too, and each
  // caller's uid is checked.
  if (chmod(path.c_str(), 0600) != 0 || listen(server->listen_fd_.get(), 64) != 0) {
    const Status s = Status::IoError("cannot listen on " + path + ": " + std::strerror(errno));
    (void)unlink(path.c_str());
    return s;
  }
  struct stat st;
  if (stat(path.c_str(), &st) == 0) {
    server->socket_dev_ = st.st_dev;
    server->socket_ino_ = st.st_ino;
  }
  for (int i = 0; i < std::max(1, threads); ++i) server->threads_.emplace_back([s = server.get()] { s->Serve(); });
  return server;
}

nlohmann::json ResignCall() { return {{"v", 1}, {"resign", true}}; }

bool IsResignCall(const nlohmann::json& call) {
  return call.is_object() && call.contains("resign") && call["resign"] == true;
}

nlohmann::json ResignedFrame() { return {{"resigned", true}}; }

Result<std::unique_ptr<LocalServer>> LocalServer::StartTakingOver(const std::string& path, Handler handler,
                                                                  int threads) {
  Result<std::unique_ptr<LocalServer>> started = Start(path, handler, threads);
  if (started.ok() || started.status().code() != StatusCode::kAlreadyExists) return started;
  Result<std::optional<nlohmann::json>> reply = Call(path, ResignCall(), std::chrono::seconds(5));
  if (!reply.ok() || !reply->has_value() || (**reply).value("resigned", false) != true) return started;
  // It stops after its calls in flight (each bounded by its deadline):
  // the lock is free then.
  const Clock::time_point until = Clock::now() + std::chrono::seconds(5);
  while (Clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    started = Start(path, handler, threads);
    if (started.ok() || started.status().code() != StatusCode::kAlreadyExists) return started;
  }
  return started;
}

bool LocalServer::Gone() const {
  struct stat st;
  return stat(path_.c_str(), &st) != 0 || st.st_dev != socket_dev_ || st.st_ino != socket_ino_;
}

LocalServer::~LocalServer() { Stop(); }

void LocalServer::Stop() {
  if (stopping_.exchange(true)) return;
  // Wakes the threads blocked in accept() (Linux: EINVAL).
  if (listen_fd_.valid()) shutdown(listen_fd_.get(), SHUT_RDWR);
  for (std::thread& t : threads_) t.join();
  threads_.clear();
  if (listen_fd_.valid() && !Gone()) (void)unlink(path_.c_str());
  listen_fd_.reset();
  lock_fd_.reset();
}

void LocalServer::Serve() {
  while (!stopping_) {
    const int fd = accept4(listen_fd_.get(), nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (stopping_) return;
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        usleep(10000);  // out of descriptors: the caller waits in the backlog
        continue;
      }
      return;
    }
    OwnedFd conn(fd);
    Answer(conn.get());
  }
}

void LocalServer::Answer(int fd) {
  const Clock::time_point deadline = Clock::now() + std::chrono::seconds(30);
  ucred peer{};
  socklen_t len = sizeof(peer);
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &len) != 0 || peer.uid != geteuid()) {
    ++refused_;
    (void)WriteFrame(fd, ErrorFrame(Status::Forbidden("only the user running the msp server may call it here")),
                     deadline);
    EndAfterRefusal(fd, std::chrono::milliseconds(200));
    return;
  }
  Result<nlohmann::json> call = ReadFrame(fd, kMaxCallBytes, deadline);
  if (!call.ok()) {
    ++refused_;
    if (call.status().code() == StatusCode::kInvalidArgument) {
      (void)WriteFrame(fd, ErrorFrame(call.status()), deadline);
      EndAfterRefusal(fd, std::chrono::milliseconds(200));
    }
    return;
  }
  nlohmann::json answer;
  try {
    answer = handler_(*call);
  } catch (const std::exception& e) {
    answer = ErrorFrame(Status::Internal(std::string("the server failed answering: ") + e.what()));
  }
  if (WriteFrame(fd, answer, deadline).ok()) ++answered_;
}

}  // namespace msp::local
