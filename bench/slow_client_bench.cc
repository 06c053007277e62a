// Slow clients against a real `msp serve` (issue 24): S connections without
// an API key send a request head declaring a 100,000-byte body and then
// trickle it one byte a second (a closed one is reopened at once), while
// authenticated probes — GET /v1/memories?limit=1, each on a new connection,
// one after another — measure how long an honest client waits. The probes
// run first without the attack (the floor), then under it.
//
//   slow_client_bench --msp build/rel/src/cli/msp [--slow 200] [--probes 300]
//                     [--threads 8] [--max-seconds 60]
//
// A probe that gets no answer within 10 s counts as failed. Only flags every
// msp version knows are passed, so the same program measures an older
// binary. bench/README.md, "Slow clients".
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "serve_process.h"

namespace {

using Clock = std::chrono::steady_clock;
const std::string kKey = "slow-client-bench-key-0123456789";

[[noreturn]] void Die(const std::string& why) {
  std::fprintf(stderr, "slow_client_bench: %s\n", why.c_str());
  std::exit(1);
}

int Connect(int port, bool nonblocking) {
  const int fd = socket(AF_INET, SOCK_STREAM | (nonblocking ? SOCK_NONBLOCK : 0), 0);
  if (fd < 0) return -1;
  const int on = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 && errno != EINPROGRESS) {
    close(fd);
    return -1;
  }
  return fd;
}

// One authenticated request on a new connection: milliseconds to the whole
// answer, or -1 when none came within 10 s (or it was not 200).
double Probe(int port) {
  const auto start = Clock::now();
  const int fd = Connect(port, false);
  if (fd < 0) return -1;
  const std::string req = "GET /v1/memories?limit=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + kKey +
                          "\r\nConnection: close\r\n\r\n";
  if (send(fd, req.data(), req.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(req.size())) {
    close(fd);
    return -1;
  }
  std::string got;
  const auto deadline = start + std::chrono::seconds(10);
  for (;;) {
    const int left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count());
    pollfd p{fd, POLLIN, 0};
    if (left <= 0 || poll(&p, 1, left) <= 0) break;
    char buf[4096];
    const ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    got.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  if (got.rfind("HTTP/1.1 200", 0) != 0) return -1;
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

struct Figures {
  int answered = 0;
  int failed = 0;
  double p50 = 0, p99 = 0, max = 0;
};

Figures RunProbes(int port, int count, int max_seconds) {
  std::vector<double> ms;
  Figures f;
  const auto stop = Clock::now() + std::chrono::seconds(max_seconds);
  for (int i = 0; i < count && Clock::now() < stop; ++i) {
    const double t = Probe(port);
    if (t < 0) {
      ++f.failed;
    } else {
      ms.push_back(t);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  f.answered = static_cast<int>(ms.size());
  if (!ms.empty()) {
    std::sort(ms.begin(), ms.end());
    f.p50 = ms[ms.size() / 2];
    f.p99 = ms[std::min(ms.size() - 1, ms.size() * 99 / 100)];
    f.max = ms.back();
  }
  return f;
}

// S connections trickling a body one byte a second; a closed one is reopened.
class SlowClients {
 public:
  SlowClients(int port, int count) : port_(port), fds_(static_cast<size_t>(count), -1) {
    thread_ = std::thread([this] { Run(); });
  }
  ~SlowClients() {
    stop_ = true;
    thread_.join();
    for (int fd : fds_) {
      if (fd >= 0) close(fd);
    }
  }
  int reopened() const { return reopened_; }

 private:
  void Open(size_t i) {
    fds_[i] = Connect(port_, true);
    sent_head_[i] = false;
  }
  void Run() {
    sent_head_.assign(fds_.size(), false);
    for (size_t i = 0; i < fds_.size(); ++i) Open(i);
    const std::string head =
        "POST /v1/memories HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        "Content-Length: 100000\r\n\r\n";
    while (!stop_) {
      for (size_t i = 0; i < fds_.size(); ++i) {
        int& fd = fds_[i];
        bool dead = fd < 0;
        if (!dead) {
          // An answer or a close from the server ends this connection.
          pollfd p{fd, POLLIN, 0};
          if (poll(&p, 1, 0) > 0) dead = true;
        }
        if (!dead) {
          const std::string bytes = sent_head_[i] ? std::string("x") : head;
          const ssize_t n = send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
          if (n == static_cast<ssize_t>(bytes.size())) {
            sent_head_[i] = true;
          } else if (!(n < 0 && (errno == EAGAIN || errno == ENOTCONN || errno == EINPROGRESS))) {
            dead = true;
          }
        }
        if (dead) {
          if (fd >= 0) close(fd);
          Open(i);
          ++reopened_;
        }
      }
      for (int i = 0; i < 10 && !stop_; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }

  int port_;
  std::vector<int> fds_;
  std::vector<bool> sent_head_;
  std::atomic<bool> stop_{false};
  std::atomic<int> reopened_{0};
  std::thread thread_;
};

void Print(const char* what, const Figures& f) {
  std::printf("%-34s answered %4d  failed %4d  p50 %8.2f ms  p99 %8.2f ms  max %8.2f ms\n", what, f.answered,
              f.failed, f.p50, f.p99, f.max);
}

}  // namespace

int main(int argc, char** argv) {
  std::string msp;
  int slow = 200, probes = 300, threads = 8, max_seconds = 60;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const std::string value = argv[i + 1];
    if (flag == "--msp") {
      msp = value;
    } else if (flag == "--slow") {
      slow = std::stoi(value);
    } else if (flag == "--probes") {
      probes = std::stoi(value);
    } else if (flag == "--threads") {
      threads = std::stoi(value);
    } else if (flag == "--max-seconds") {
      max_seconds = std::stoi(value);
    } else {
      Die("unknown flag " + flag);
    }
  }
  if (msp.empty()) Die("usage: slow_client_bench --msp PATH [--slow N] [--probes N] [--threads N] [--max-seconds N]");
  const std::string dir = std::filesystem::temp_directory_path() / ("msp-slow-bench-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  {
    // One API key, 127.0.0.1, any port.
    msp::bench::ServeProcess serve(msp, {"--data-dir", dir, "--port", "0", "--api-keys", kKey + "=bench",
                                         "--access-log", "false", "--server-threads", std::to_string(threads)});
    std::printf("msp serve on port %d, %d worker threads; %d slow clients; %d probes\n", serve.port(), threads, slow,
                probes);
    Print("probes, no attack", RunProbes(serve.port(), probes, max_seconds));
    SlowClients attack(serve.port(), slow);
    std::this_thread::sleep_for(std::chrono::seconds(3));  // the attack settles
    const Figures under = RunProbes(serve.port(), probes, max_seconds);
    Print("probes, under attack", under);
    std::printf("slow connections reopened after the server closed them: %d\n", attack.reopened());
  }
  std::filesystem::remove_all(dir);
  return 0;
}
