// TcpProxy: a TCP forwarder in front of the test database, so a test can
// take "the database" down and bring it back (every connection cut, new ones
// refused) without touching the cluster other tests share.
#ifndef MSP_TESTS_POSTGRES_TCP_PROXY_H_
#define MSP_TESTS_POSTGRES_TCP_PROXY_H_

#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace msp::testing {

class TcpProxy {
 public:
  // Listens on 127.0.0.1 (any free port) and forwards each connection to
  // `target`: a TCP host, or a Unix socket directory (starting with '/'), at
  // `target_port`. nullptr if it cannot listen.
  static std::unique_ptr<TcpProxy> Start(const std::string& target, int target_port);
  ~TcpProxy();
  TcpProxy(const TcpProxy&) = delete;
  TcpProxy& operator=(const TcpProxy&) = delete;

  int port() const { return port_; }
  // Cuts every forwarded connection and stops listening: connects are refused.
  void Down();
  // Listens again on the same port; false if it cannot.
  bool Up();

 private:
  TcpProxy(std::string target, int target_port) : target_(std::move(target)), target_port_(target_port) {}
  bool Listen();
  void AcceptLoop(int listen_fd);
  int ConnectTarget() const;

  const std::string target_;
  const int target_port_;
  int port_ = 0;
  std::mutex mu_;
  int listen_fd_ = -1;
  std::thread acceptor_;
  std::vector<int> fds_;               // forwarded sockets, both ends
  std::vector<std::thread> pumps_;
};

}  // namespace msp::testing

#endif  // MSP_TESTS_POSTGRES_TCP_PROXY_H_
