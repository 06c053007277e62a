// src/local: the resident path. `msp serve` listens on a Unix-domain socket
// in its data directory (<data_dir>/msp.sock); an `msp` command on the same
// data directory, run by the same user, hands a read-only operation to that
// server instead of opening the store itself, so a search costs a process
// start and the server's warm query rather than opening SQLite, Xapian and
// the vector index and closing them again (docs/cli.md, "The resident
// path"). Without a server the command opens the store as before.
//
// The wire: one call per connection. The client sends a frame, the server
// answers one and closes. A frame is a 4-byte big-endian length and that
// many bytes of JSON. Only the socket's owner may call: the socket is 0600
// and the server checks the peer's uid (SO_PEERCRED) against its own, so a
// caller has no access it would not have by opening the data directory.
//
// Thread-safe: LocalServer's handler runs on its threads, concurrently.
#ifndef MSP_LOCAL_LOCAL_SOCKET_H_
#define MSP_LOCAL_LOCAL_SOCKET_H_

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <sys/types.h>

#include <nlohmann/json.hpp>

#include "msp/status.h"
#include "util/owned_fd.h"

namespace msp::local {

// <data_dir>/msp.sock; "" when the path is longer than a socket address
// holds (108 bytes): then there is no resident path for that directory.
std::string SocketPath(const std::string& data_dir);

// The lock file a server holds while it owns the socket at `path`:
// <path>.lock.
std::string LockPath(const std::string& path);

// Largest frame either side accepts.
inline constexpr size_t kMaxCallBytes = 4u << 20;
inline constexpr size_t kMaxAnswerBytes = 256u << 20;

// Calls the server listening at `path`. nullopt when none listens there (no
// socket file, or nobody accepting on it: a server that stopped or was
// killed). An error when a server took the call and the exchange failed
// (it closed early, sent a bad frame, or did not answer within `timeout`):
// the caller cannot tell whether the call ran.
Result<std::optional<nlohmann::json>> Call(const std::string& path, const nlohmann::json& call,
                                           std::chrono::milliseconds timeout);

// An answer frame that carries a failure: {"error": {"code", "message"}}
// (the code as StatusCodeName spells it).
nlohmann::json ErrorFrame(const Status& status);
// The failure an answer frame's "error" object names (Internal for a code
// this build does not know).
Status StatusOfError(const nlohmann::json& error);

// Giving the socket up. A server that a command started in the background
// (`msp serve --local-only --idle-exit`) yields to one a user starts: the
// newcomer, finding the socket held, sends the resign call; such a server
// answers ResignedFrame() and stops, others answer it as any call they do
// not know.
nlohmann::json ResignCall();
bool IsResignCall(const nlohmann::json& call);
nlohmann::json ResignedFrame();

class LocalServer {
 public:
  // Answers one call. Runs on the server's threads.
  using Handler = std::function<nlohmann::json(const nlohmann::json& call)>;

  // Listens at `path` with `threads` threads. The server holds
  // LockPath(path) (flock) while it runs, so that one server per data
  // directory owns the socket: AlreadyExists when another holds it. A socket
  // file left by a server that died is replaced.
  static Result<std::unique_ptr<LocalServer>> Start(const std::string& path, Handler handler, int threads);
  ~LocalServer();  // Stop()
  LocalServer(const LocalServer&) = delete;
  LocalServer& operator=(const LocalServer&) = delete;

  // LocalServer::Start, and when another server holds the socket, the
  // resign call to it: a server that yields is waited for (up to 5 s) and
  // the socket taken. AlreadyExists when the holder does not yield.
  static Result<std::unique_ptr<LocalServer>> StartTakingOver(const std::string& path, Handler handler, int threads);

  // Stops accepting, lets the calls taken finish, removes the socket file
  // (unless the path no longer names this server's socket). Idempotent.
  void Stop();

  // Whether the socket's path no longer names this server's socket: the
  // file (or the data directory) was removed, or replaced.
  bool Gone() const;

  // Calls answered, and calls refused (another user, a bad frame).
  uint64_t answered() const { return answered_; }
  uint64_t refused() const { return refused_; }

 private:
  LocalServer(std::string path, Handler handler) : path_(std::move(path)), handler_(std::move(handler)) {}
  void Serve();
  void Answer(int fd);

  std::string path_;
  Handler handler_;
  OwnedFd lock_fd_;
  OwnedFd listen_fd_;
  dev_t socket_dev_ = 0;  // the socket file bound at path_
  ino_t socket_ino_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> answered_{0};
  std::atomic<uint64_t> refused_{0};
  std::vector<std::thread> threads_;
};

}  // namespace msp::local

#endif  // MSP_LOCAL_LOCAL_SOCKET_H_
