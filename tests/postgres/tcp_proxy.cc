// TcpProxy: one acceptor thread, two copying threads per connection.
#include "tests/postgres/tcp_proxy.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

namespace msp::testing {
namespace {

// Copies bytes from `from` to `to` until either side ends, then ends both.
void Pump(int from, int to) {
  char buf[16384];
  while (true) {
    const ssize_t n = read(from, buf, sizeof(buf));
    if (n <= 0) break;
    ssize_t sent = 0;
    while (sent < n) {
      // MSG_NOSIGNAL: a peer that has gone (the proxy taken down) is an
      // error here, not a SIGPIPE that ends the whole test program.
      const ssize_t w = send(to, buf + sent, static_cast<size_t>(n - sent), MSG_NOSIGNAL);
      if (w <= 0) {
        sent = -1;
        break;
      }
      sent += w;
    }
    if (sent < 0) break;
  }
  shutdown(from, SHUT_RDWR);
  shutdown(to, SHUT_RDWR);
}

}  // namespace

std::unique_ptr<TcpProxy> TcpProxy::Start(const std::string& target, int target_port) {
  std::unique_ptr<TcpProxy> proxy(new TcpProxy(target, target_port));
  if (!proxy->Listen()) return nullptr;
  return proxy;
}

TcpProxy::~TcpProxy() { Down(); }

bool TcpProxy::Listen() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port_));
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || listen(fd, 64) != 0) {
    close(fd);
    return false;
  }
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  std::lock_guard<std::mutex> lock(mu_);
  listen_fd_ = fd;
  acceptor_ = std::thread([this, fd] { AcceptLoop(fd); });
  return true;
}

int TcpProxy::ConnectTarget() const {
  if (!target_.empty() && target_[0] == '/') {
    const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    const std::string path = target_ + "/.s.PGSQL." + std::to_string(target_port_);
    std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
    if (fd >= 0 && connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) return fd;
    if (fd >= 0) close(fd);
    return -1;
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(target_port_);
  if (getaddrinfo(target_.c_str(), port.c_str(), &hints, &found) != 0) return -1;
  int fd = -1;
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
    if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen) == 0) break;
    if (fd >= 0) close(fd);
    fd = -1;
  }
  freeaddrinfo(found);
  return fd;
}

void TcpProxy::AcceptLoop(int listen_fd) {
  while (true) {
    const int client = accept(listen_fd, nullptr, nullptr);
    if (client < 0) return;  // Down() shut the listener
    const int server = ConnectTarget();
    if (server < 0) {
      close(client);
      continue;
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (listen_fd_ != listen_fd) {  // went down meanwhile
      close(client);
      close(server);
      return;
    }
    fds_.push_back(client);
    fds_.push_back(server);
    pumps_.emplace_back(Pump, client, server);
    pumps_.emplace_back(Pump, server, client);
  }
}

void TcpProxy::Down() {
  int listen_fd;
  std::thread acceptor;
  {
    std::lock_guard<std::mutex> lock(mu_);
    listen_fd = listen_fd_;
    listen_fd_ = -1;
    acceptor = std::move(acceptor_);
  }
  if (listen_fd >= 0) shutdown(listen_fd, SHUT_RDWR);
  if (acceptor.joinable()) acceptor.join();
  if (listen_fd >= 0) close(listen_fd);
  std::vector<int> fds;
  std::vector<std::thread> pumps;
  {
    std::lock_guard<std::mutex> lock(mu_);
    fds = std::move(fds_);
    pumps = std::move(pumps_);
    fds_.clear();
    pumps_.clear();
  }
  for (int fd : fds) shutdown(fd, SHUT_RDWR);
  for (std::thread& t : pumps) t.join();
  for (int fd : fds) close(fd);
}

bool TcpProxy::Up() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (listen_fd_ >= 0) return true;
  }
  return Listen();
}

}  // namespace msp::testing
