// Unit tests of the server shell: API keys, the Status -> HTTP mapping, the
// metrics text, and the sockets and connections the server keeps (TCP_NODELAY,
// keep-alive, Connection: close) over real loopback sockets. (Routing is in
// tests/http/.)
#include <arpa/inet.h>
#include <poll.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <future>
#include <memory>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <httplib.h>

#include "server/auth.h"
#include "server/connection_loop.h"
#include "server/http_server.h"
#include "server/http_status.h"
#include "server/metrics.h"
#include "server/socket_options.h"
#include "tests/support/socket_probe.h"
#include "tests/support/test_util.h"
#include "util/text.h"

namespace msp {
namespace {

const std::string kKeyA = "key-a-0123456789abcdef";
const std::string kKeyB = "key-b-0123456789abcdef";

TEST(ApiKeysTest, LoadsEntriesAndResolves) {
  ASSERT_OK_AND_ASSIGN(ApiKeys keys, ApiKeys::Load({kKeyA + "=alpha", " " + kKeyB + " = beta "}, ""));
  EXPECT_EQ(keys.size(), 2u);
  EXPECT_EQ(keys.TenantFor(kKeyA).value_or(""), "alpha");
  EXPECT_EQ(keys.TenantFor(kKeyB).value_or(""), "beta");
  EXPECT_FALSE(keys.TenantFor(""));
  EXPECT_FALSE(keys.TenantFor(kKeyA + "x"));
  EXPECT_FALSE(keys.TenantFor(kKeyA.substr(0, kKeyA.size() - 1)));
  EXPECT_EQ(keys.Tenants(), (std::vector<std::string>{"alpha", "beta"}));
}

TEST(ApiKeysTest, LoadsFile) {
  testing::TempDir dir("msp-auth");
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.path() + "/keys";
  std::ofstream(path) << "# keys\n\n" << kKeyA << " alpha\n  " << kKeyB << "\tbeta  \n";
  ASSERT_OK_AND_ASSIGN(ApiKeys keys, ApiKeys::Load({}, path));
  EXPECT_EQ(keys.TenantFor(kKeyB).value_or(""), "beta");
  EXPECT_EQ(keys.size(), 2u);
}

TEST(ApiKeysTest, ClearancesFromEntriesAndFile) {
  const std::string key_c = "key-c-0123456789abcdef";
  ASSERT_OK_AND_ASSIGN(ApiKeys keys, ApiKeys::Load({kKeyA + "=alpha:3", kKeyB + "=beta", key_c + " = alpha : 0"}, ""));
  std::optional<ApiPrincipal> a = keys.PrincipalFor(kKeyA);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->tenant, "alpha");
  EXPECT_EQ(a->clearance, 3);
  std::optional<ApiPrincipal> b = keys.PrincipalFor(kKeyB);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->clearance, std::nullopt);  // no clearance: no limit
  EXPECT_EQ(keys.PrincipalFor(key_c)->clearance, 0);
  EXPECT_EQ(keys.TenantFor(kKeyA).value_or(""), "alpha");
  EXPECT_EQ(keys.Tenants(), (std::vector<std::string>{"alpha", "beta"}));

  testing::TempDir dir("msp-auth");
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.path() + "/keys";
  std::ofstream(path) << kKeyA << " alpha 9\n" << kKeyB << "\tbeta\n";
  ASSERT_OK_AND_ASSIGN(ApiKeys from_file, ApiKeys::Load({}, path));
  EXPECT_EQ(from_file.PrincipalFor(kKeyA)->clearance, 9);
  EXPECT_EQ(from_file.PrincipalFor(kKeyB)->clearance, std::nullopt);

  for (const std::string& bad : {kKeyA + "=alpha:10", kKeyA + "=alpha:-1", kKeyA + "=alpha:x", kKeyA + "=alpha:",
                                 kKeyA + "=:3"}) {
    auto r = ApiKeys::Load({bad}, "");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(r.status().message().find(kKeyA), std::string::npos) << r.status().message();
  }
  std::ofstream(path) << kKeyA << " alpha high\n";
  auto bad_file = ApiKeys::Load({}, path);
  ASSERT_FALSE(bad_file.ok());
  EXPECT_NE(bad_file.status().message().find("line 1"), std::string::npos) << bad_file.status().message();
  EXPECT_NE(bad_file.status().message().find("clearance"), std::string::npos);
  std::ofstream(path) << kKeyA << " alpha 3 extra\n";
  EXPECT_FALSE(ApiKeys::Load({}, path).ok());
}

TEST(ApiKeysTest, ErrorsNeverShowTheKey) {
  const std::string short_key = "tiny-secret";
  auto s = ApiKeys::Load({short_key + "=alpha"}, "");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.status().message().find(short_key), std::string::npos) << s.status().message();
  EXPECT_NE(s.status().message().find("entry 1"), std::string::npos);
  // It says how long a key must be and how to make one.
  EXPECT_NE(s.status().message().find("has 11 characters; a key needs at least 16 (make one with `openssl rand "
                                      "-hex 16`"),
            std::string::npos)
      << s.status().message();

  auto dup = ApiKeys::Load({kKeyA + "=alpha", kKeyA + "=beta"}, "");
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.status().message().find(kKeyA), std::string::npos) << dup.status().message();
  EXPECT_NE(dup.status().message().find("entry 2"), std::string::npos);

  EXPECT_FALSE(ApiKeys::Load({kKeyA}, "").ok());                     // no tenant
  EXPECT_FALSE(ApiKeys::Load({kKeyA + "="}, "").ok());               // empty tenant
  EXPECT_FALSE(ApiKeys::Load({kKeyA + "=a/b"}, "").ok());            // bad tenant
  EXPECT_FALSE(ApiKeys::Load({"key with space 0123=alpha"}, "").ok());
  EXPECT_EQ(ApiKeys::Load({}, "/nonexistent/keys").status().code(), StatusCode::kNotFound);
}

TEST(ApiKeysTest, RequestKeyFromHeaders) {
  httplib::Request req;
  EXPECT_EQ(RequestApiKey(req), "");
  req.set_header("X-API-Key", kKeyB);
  EXPECT_EQ(RequestApiKey(req), kKeyB);
  req.set_header("Authorization", "bearer " + kKeyA);
  EXPECT_EQ(RequestApiKey(req), kKeyA);  // Authorization wins
  httplib::Request basic;
  basic.set_header("Authorization", "Basic abc");
  EXPECT_EQ(RequestApiKey(basic), "");
}

TEST(HttpStatusTest, MapsEveryCode) {
  EXPECT_EQ(HttpStatusFor(Status::InvalidArgument("x")), 400);
  EXPECT_EQ(HttpStatusFor(Status::NotFound("x")), 404);
  EXPECT_EQ(HttpStatusFor(Status::Refused("x")), 422);
  EXPECT_EQ(HttpStatusFor(Status::Conflict("x")), 409);
  EXPECT_EQ(HttpStatusFor(Status::AlreadyExists("x")), 409);
  EXPECT_EQ(HttpStatusFor(Status::FailedPrecondition("x")), 409);
  EXPECT_EQ(HttpStatusFor(Status::Unavailable("x")), 503);
  EXPECT_EQ(HttpStatusFor(Status::IoError("x")), 500);
  EXPECT_EQ(HttpStatusFor(Status::Corruption("x")), 500);
  EXPECT_EQ(HttpStatusFor(Status::Internal("x")), 500);
  EXPECT_EQ(HttpStatusFor(Status::DiskFull("x")), 507);
  EXPECT_EQ(HttpStatusFor(Status::ReadOnly("x")), 503);
  EXPECT_EQ(StatusErrorJson(Status::DiskFull("the disk is full"))["error"]["code"], "disk_full");
  EXPECT_EQ(StatusErrorJson(Status::ReadOnly("writes are refused"))["error"]["code"], "read_only");
}

TEST(HttpStatusTest, ErrorBodyNamesTheRule) {
  const nlohmann::json j = StatusErrorJson(Status::Refused("request 2: policy rule min_chars: too short"));
  EXPECT_EQ(j["error"]["code"], "refused");
  EXPECT_EQ(j["error"]["rule"], "min_chars");
  EXPECT_EQ(j["error"]["message"], "request 2: policy rule min_chars: too short");
  EXPECT_FALSE(StatusErrorJson(Status::NotFound("no record"))["error"].contains("rule"));
}

TEST(MetricsTest, CountsAndHistograms) {
  HttpMetrics m;
  m.Record("GET", "/v1/memories/{id}", 200, 0.002);
  m.Record("GET", "/v1/memories/{id}", 204, 0.02);
  m.Record("GET", "/v1/memories/{id}", 404, 0.0001);
  const std::string text = m.Render();
  EXPECT_NE(text.find("# TYPE msp_http_requests_total counter"), std::string::npos);
  EXPECT_NE(text.find("msp_http_requests_total{method=\"GET\",route=\"/v1/memories/{id}\",status=\"2xx\"} 2"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("msp_http_requests_total{method=\"GET\",route=\"/v1/memories/{id}\",status=\"4xx\"} 1"),
            std::string::npos);
  // 0.002 and 0.02 are both <= 0.025; only 0.002 is <= 0.0025.
  EXPECT_NE(text.find("status=\"2xx\",le=\"0.0025\"} 1"), std::string::npos) << text;
  EXPECT_NE(text.find("status=\"2xx\",le=\"0.025\"} 2"), std::string::npos);
  EXPECT_NE(text.find("status=\"2xx\",le=\"+Inf\"} 2"), std::string::npos);
  EXPECT_NE(text.find("msp_http_request_duration_seconds_count{method=\"GET\",route=\"/v1/memories/{id}\",status=\"4xx\"} 1"),
            std::string::npos);
  EXPECT_EQ(EscapeLabel("a\"b\\c\n"), "a\\\"b\\\\c\\n");
  EXPECT_EQ(StatusClass(503), "5xx");
  EXPECT_EQ(StatusClass(42), "unknown");
}

TEST(HttpServerTest, RefusesToStartWithoutKeysUnlessAnonymousOnLoopback) {
  ServerOptions o;
  auto none = HttpServer::Create(o, ApiKeys(), nullptr);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("server.api_keys"), std::string::npos);

  o.allow_anonymous = true;
  EXPECT_TRUE(HttpServer::Create(o, ApiKeys(), nullptr).ok());
  o.bind = "0.0.0.0";
  auto open = HttpServer::Create(o, ApiKeys(), nullptr);
  ASSERT_FALSE(open.ok());
  EXPECT_NE(open.status().message().find("loopback"), std::string::npos);

  ASSERT_OK_AND_ASSIGN(ApiKeys keys, ApiKeys::Load({kKeyA + "=alpha"}, ""));
  o.bind = "127.0.0.1";
  EXPECT_FALSE(HttpServer::Create(o, keys, nullptr).ok());  // anonymous and keys
  o.allow_anonymous = false;
  EXPECT_TRUE(HttpServer::Create(o, keys, nullptr).ok());
  EXPECT_TRUE(IsLoopbackAddress("127.0.0.1"));
  EXPECT_TRUE(IsLoopbackAddress("::1"));
  EXPECT_TRUE(IsLoopbackAddress("::ffff:127.0.0.1"));
  EXPECT_FALSE(IsLoopbackAddress("10.0.0.1"));
}

int IntOption(int fd, int level, int name) {
  int value = -1;
  socklen_t len = sizeof(value);
  if (getsockopt(fd, level, name, &value, &len) != 0) return -1;
  return value;
}

sockaddr_in Loopback(int port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

TEST(SocketOptionsTest, ListenSocketPassesNoDelayToAcceptedSockets) {
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(listener, 0);
  SetListenSocketOptions(listener);
  sockaddr_in addr = Loopback(0);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(listener, 4), 0);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  EXPECT_EQ(IntOption(listener, IPPROTO_TCP, TCP_NODELAY), 1);
  EXPECT_EQ(IntOption(listener, SOL_SOCKET, SO_REUSEADDR), 1);
  // Not SO_REUSEPORT: a second server must not share a port in use.
  EXPECT_EQ(IntOption(listener, SOL_SOCKET, SO_REUSEPORT), 0);

  const int client = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(client, 0);
  ASSERT_EQ(connect(client, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  const int accepted = accept(listener, nullptr, nullptr);
  ASSERT_GE(accepted, 0);
  EXPECT_EQ(IntOption(accepted, IPPROTO_TCP, TCP_NODELAY), 1);
  // A plain socket starts with Nagle on: the option is what turned it off.
  EXPECT_EQ(IntOption(client, IPPROTO_TCP, TCP_NODELAY), 0);
  EXPECT_TRUE(SetTcpNoDelay(client));
  EXPECT_EQ(IntOption(client, IPPROTO_TCP, TCP_NODELAY), 1);
  close(accepted);
  close(client);
  close(listener);
}

// One HTTP/1.x answer read off a raw socket.
struct RawAnswer {
  int status = 0;  // 0: the connection closed or failed first
  std::map<std::string, std::string> headers;  // names lowercased
  std::string body;

  std::string Header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? "" : it->second;
  }
};

// A client connection that sends requests as written and reads the answers,
// so a test sees what goes over one TCP connection.
class RawConnection {
 public:
  explicit RawConnection(int port) : fd_(socket(AF_INET, SOCK_STREAM, 0)) {
    // A guard against a hung server, not a timing assertion.
    timeval tv{30, 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    sockaddr_in addr = Loopback(port);
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  }
  ~RawConnection() { close(fd_); }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  bool connected() const { return connected_; }

  RawAnswer Exchange(const std::string& request) {
    if (!Send(request)) return {};
    return Read();
  }
  bool Send(const std::string& bytes) {
    return send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size());
  }
  // The next answer (status 0 when the connection closed first).
  RawAnswer Read() { return ReadOne(); }

  // True when the server closed its end: read() returns 0.
  bool ClosedByServer() {
    char c;
    return recv(fd_, &c, 1, 0) == 0;
  }
  int fd() const { return fd_; }

 private:
  RawAnswer ReadOne() {
    RawAnswer a;
    size_t header_end;
    while ((header_end = buffer_.find("\r\n\r\n")) == std::string::npos) {
      if (!Fill()) return a;
    }
    const std::string head = buffer_.substr(0, header_end);
    buffer_.erase(0, header_end + 4);
    size_t line_end = head.find("\r\n");
    const std::string status_line = head.substr(0, line_end);
    if (status_line.size() < 12) return a;
    for (size_t pos = line_end; pos != std::string::npos && pos < head.size();) {
      const size_t start = pos + 2;
      const size_t next = head.find("\r\n", start);
      const std::string line = head.substr(start, next == std::string::npos ? std::string::npos : next - start);
      const size_t colon = line.find(':');
      if (colon != std::string::npos) {
        a.headers[AsciiLower(line.substr(0, colon))] = std::string(TrimAsciiSpace(line.substr(colon + 1)));
      }
      pos = next;
    }
    const size_t length = static_cast<size_t>(std::strtoul(a.Header("content-length").c_str(), nullptr, 10));
    while (buffer_.size() < length) {
      if (!Fill()) return a;
    }
    a.body = buffer_.substr(0, length);
    buffer_.erase(0, length);
    a.status = std::atoi(status_line.substr(9, 3).c_str());
    return a;
  }

  bool Fill() {
    char buf[4096];
    const ssize_t n = recv(fd_, buf, sizeof(buf), 0);
    if (n <= 0) return false;
    buffer_.append(buf, static_cast<size_t>(n));
    return true;
  }

  int fd_;
  bool connected_ = false;
  std::string buffer_;
};

constexpr char kHealthz[] = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";

// An anonymous loopback server on any port, two threads, no access log.
ServerOptions TestServerOptions() {
  ServerOptions o;
  o.port = 0;
  o.threads = 2;
  o.allow_anonymous = true;
  o.access_log = false;
  return o;
}

class HttpServerSocketTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = HttpServer::Create(TestServerOptions(), ApiKeys(), nullptr);
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(server).value();
    auto port = server_->Start();
    ASSERT_TRUE(port.ok()) << port.status().ToString();
    port_ = *port;
  }

  std::unique_ptr<HttpServer> server_;
  int port_ = 0;
};

TEST_F(HttpServerSocketTest, KeepsTheConnectionWithNoDelayOnTheAcceptedSocket) {
  RawConnection c(port_);
  ASSERT_TRUE(c.connected());
  const RawAnswer first = c.Exchange(kHealthz);
  ASSERT_EQ(first.status, 200) << first.body;
  EXPECT_EQ(first.body, R"({"status":"ok"})");
  EXPECT_EQ(first.Header("content-length"), std::to_string(first.body.size()));
  EXPECT_EQ(first.Header("connection"), "");
  // Node's fetch keeps a connection for the advertised timeout minus 2 s.
  EXPECT_EQ(first.Header("keep-alive"), "timeout=" + std::to_string(HttpServer::kKeepAliveSeconds) +
                                            ", max=" + std::to_string(HttpServer::kKeepAliveMaxRequests));
  EXPECT_GT(HttpServer::kKeepAliveSeconds, 2);

  // The server's end of this connection is a socket of this process.
  int accepted = 0;
  for (const testing::TcpSocketInfo& s : testing::TcpSocketsOfThisProcess()) {
    if (s.local_port != port_) continue;
    EXPECT_TRUE(s.nodelay) << "fd " << s.fd << (s.listening ? " (listening)" : " (accepted)");
    if (!s.listening) ++accepted;
  }
  EXPECT_EQ(accepted, 1);

  // The second request goes over the same connection.
  const RawAnswer second = c.Exchange(kHealthz);
  EXPECT_EQ(second.status, 200) << second.body;
  const RawAnswer post = c.Exchange(
      "POST /nowhere HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}");
  EXPECT_EQ(post.status, 404) << post.body;
  EXPECT_EQ(post.Header("content-length"), std::to_string(post.body.size()));
  const RawAnswer third = c.Exchange(kHealthz);
  EXPECT_EQ(third.status, 200) << third.body;
}

TEST_F(HttpServerSocketTest, ClosesWhenTheClientAsks) {
  RawConnection c(port_);
  ASSERT_TRUE(c.connected());
  const RawAnswer a = c.Exchange("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
  ASSERT_EQ(a.status, 200);
  EXPECT_EQ(a.Header("connection"), "close");
  EXPECT_TRUE(c.ClosedByServer());

  // HTTP/1.0 closes unless the client asks for keep-alive.
  RawConnection old(port_);
  ASSERT_TRUE(old.connected());
  EXPECT_EQ(old.Exchange("GET /healthz HTTP/1.0\r\n\r\n").status, 200);
  EXPECT_TRUE(old.ClosedByServer());
  RawConnection old_kept(port_);
  ASSERT_TRUE(old_kept.connected());
  EXPECT_EQ(old_kept.Exchange("GET /healthz HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n").status, 200);
  EXPECT_EQ(old_kept.Exchange("GET /healthz HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n").status, 200);
}

TEST_F(HttpServerSocketTest, ClosesAfterTheMaximumRequestCount) {
  RawConnection c(port_);
  ASSERT_TRUE(c.connected());
  for (int i = 1; i < HttpServer::kKeepAliveMaxRequests; ++i) {
    const RawAnswer a = c.Exchange(kHealthz);
    ASSERT_EQ(a.status, 200) << "request " << i;
    ASSERT_EQ(a.Header("connection"), "") << "request " << i;
  }
  const RawAnswer last = c.Exchange(kHealthz);
  ASSERT_EQ(last.status, 200);
  EXPECT_EQ(last.Header("connection"), "close");
  EXPECT_TRUE(c.ClosedByServer());
}

// A client that sends its request and shuts its sending side (as `nc -N`
// does) is answered before the server closes: the request's bytes are read
// and answered, the end of stream behind them heard after. (Before: both
// came in one read, and the connection was closed unanswered.)
TEST_F(HttpServerSocketTest, AnswersAClientThatShutItsSendingSide) {
  RawConnection first(port_);
  ASSERT_TRUE(first.connected());
  ASSERT_TRUE(first.Send(kHealthz));
  ASSERT_EQ(shutdown(first.fd(), SHUT_WR), 0);
  const RawAnswer a = first.Read();
  EXPECT_EQ(a.status, 200) << a.body;
  EXPECT_TRUE(first.ClosedByServer());
  // The same on a kept-alive connection, after one answer.
  RawConnection kept(port_);
  ASSERT_TRUE(kept.connected());
  ASSERT_EQ(kept.Exchange(kHealthz).status, 200);
  ASSERT_TRUE(kept.Send(kHealthz));
  ASSERT_EQ(shutdown(kept.fd(), SHUT_WR), 0);
  EXPECT_EQ(kept.Read().status, 200);
  EXPECT_TRUE(kept.ClosedByServer());
}

TEST_F(HttpServerSocketTest, ASecondServerCannotTakeAPortInUse) {
  ServerOptions o;
  o.port = port_;
  o.allow_anonymous = true;
  auto second = HttpServer::Create(o, ApiKeys(), nullptr);
  ASSERT_TRUE(second.ok());
  auto port = (*second)->Start();
  ASSERT_FALSE(port.ok());
  EXPECT_EQ(port.status().code(), StatusCode::kUnavailable) << port.status().ToString();
}


// Slow clients (issue 24). A server with one API key; each test sets the
// limits it is about, and keeps the others out of the way.
class SlowClientTest : public ::testing::Test {
 protected:
  void Start(ServerOptions o, const std::function<void(HttpServer&)>& routes = nullptr) {
    o.port = 0;
    o.access_log = false;
    auto keys = ApiKeys::Load({kKeyA + "=alpha"}, "");
    ASSERT_TRUE(keys.ok());
    auto server = HttpServer::Create(o, std::move(keys).value(), nullptr);
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(server).value();
    if (routes) routes(*server_);
    auto port = server_->Start();
    ASSERT_TRUE(port.ok()) << port.status().ToString();
    port_ = *port;
  }

  // `n` connections that sent `bytes` (part of a request) and then stalled.
  std::vector<std::unique_ptr<RawConnection>> Stalled(int n, const std::function<std::string(int)>& bytes) {
    std::vector<std::unique_ptr<RawConnection>> out;
    for (int i = 0; i < n; ++i) {
      out.push_back(std::make_unique<RawConnection>(port_));
      EXPECT_TRUE(out.back()->connected() && out.back()->Send(bytes(i))) << "connection " << i;
    }
    return out;
  }

  // An authenticated request on a new connection.
  RawAnswer Probe() {
    RawConnection c(port_);
    if (!c.connected()) return {};
    return c.Exchange(kAuthedMetrics);
  }

  const std::string kAuthedMetrics =
      "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + kKeyA + "\r\n\r\n";
  std::unique_ptr<HttpServer> server_;
  int port_ = 0;
};

// 40 connections without a key stall mid-head or mid-body (declaring 1,000
// bytes and sending 1) against 2 worker threads, with deadlines too long to
// help: authenticated requests are still answered, since a request is read
// whole before a worker takes it. (Before: the first two held both workers,
// and a probe waited 5 s for each pair in turn.)
TEST_F(SlowClientTest, StalledSendersHoldNoWorker) {
  ServerOptions o;
  o.threads = 2;
  o.header_timeout_ms = 600000;
  o.body_timeout_ms = 600000;
  o.max_connections_per_client = 1000;
  Start(o);
  const auto slow = Stalled(40, [](int i) {
    return i % 2 == 0 ? std::string("POST /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-")
                      : std::string("POST /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                                    "Content-Length: 1000\r\n\r\n{");
  });
  for (int i = 0; i < 10; ++i) {
    const RawAnswer a = Probe();
    ASSERT_EQ(a.status, 200) << "probe " << i;
    EXPECT_NE(a.body.find("msp_http_requests_total"), std::string::npos);
  }
}

// Past server.header_timeout_ms (no head yet, or half of one) and
// server.body_timeout_ms (a Content-Length larger than the body sent) the
// client gets 408 and the connection is closed; /metrics counts each.
TEST_F(SlowClientTest, HeadAndBodyDeadlinesAnswer408AndClose) {
  ServerOptions o;
  o.header_timeout_ms = 500;
  o.body_timeout_ms = 500;
  Start(o);
  RawConnection silent(port_);
  RawConnection half_head(port_);
  RawConnection short_body(port_);
  ASSERT_TRUE(silent.connected() && half_head.connected() && short_body.connected());
  ASSERT_TRUE(half_head.Send("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n"));
  ASSERT_TRUE(short_body.Send("POST /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                              "Content-Length: 100\r\n\r\n{\"a\":"));
  for (RawConnection* c : {&silent, &half_head, &short_body}) {
    const RawAnswer a = c->Read();
    EXPECT_EQ(a.status, 408) << a.body;
    EXPECT_EQ(a.Header("connection"), "close");
    EXPECT_NE(a.body.find("request_timeout"), std::string::npos) << a.body;
    EXPECT_TRUE(c->ClosedByServer());
  }
  const RawAnswer m = Probe();
  ASSERT_EQ(m.status, 200);
  EXPECT_NE(m.body.find("msp_http_connections_dropped_total{reason=\"header_timeout\"} 2"), std::string::npos)
      << m.body;
  EXPECT_NE(m.body.find("msp_http_connections_dropped_total{reason=\"body_timeout\"} 1"), std::string::npos);
}

// server.max_connections_per_client: a connection past the cap closes the
// oldest of that client's connections that is not being answered (503);
// the others are kept and still answered.
TEST_F(SlowClientTest, PerClientCapClosesTheOldestStalledConnection) {
  ServerOptions o;
  o.header_timeout_ms = 600000;
  o.max_connections_per_client = 3;
  Start(o);
  const auto stalled = Stalled(3, [](int) { return std::string("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n"); });
  EXPECT_EQ(Probe().status, 200);
  const RawAnswer evicted = stalled[0]->Read();
  EXPECT_EQ(evicted.status, 503) << evicted.body;
  EXPECT_NE(evicted.body.find("server.max_connections_per_client"), std::string::npos) << evicted.body;
  EXPECT_TRUE(stalled[0]->ClosedByServer());
  // The probe's connection has closed (RawConnection's destructor): the two
  // younger stalled ones finish their requests.
  for (int i = 1; i < 3; ++i) {
    const RawAnswer a = stalled[static_cast<size_t>(i)]->Exchange("Authorization: Bearer " + kKeyA + "\r\n\r\n");
    EXPECT_EQ(a.status, 200) << "connection " << i << ": " << a.body;
  }
}

// server.max_queued_requests: with the one worker busy and one request
// waiting, a third gets 503 with Retry-After at once; the others are
// answered when the worker is free.
TEST_F(SlowClientTest, FullQueueAnswers503) {
  std::promise<void> entered;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  ServerOptions o;
  o.threads = 1;
  o.max_queued_requests = 1;
  Start(o, [&](HttpServer& s) {
    s.Handle({"GET", "/block",
              [&entered, released](const HttpCall&, httplib::Response& res) {
                entered.set_value();
                released.wait();
                SendJson(res, 200, {{"done", true}});
              },
              false});
  });
  RawConnection busy(port_);
  ASSERT_TRUE(busy.Send("GET /block HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
  entered.get_future().wait();
  RawConnection second(port_);
  RawConnection third(port_);
  ASSERT_TRUE(second.Send(kHealthz));
  ASSERT_TRUE(third.Send(kHealthz));
  // Whichever the server read last finds the queue full; it is answered first.
  pollfd p[2] = {{second.fd(), POLLIN, 0}, {third.fd(), POLLIN, 0}};
  ASSERT_EQ(poll(p, 2, 30000), 1);  // a guard against a hung server
  RawConnection& refused = (p[0].revents & POLLIN) ? second : third;
  RawConnection& queued = (p[0].revents & POLLIN) ? third : second;
  const RawAnswer r = refused.Read();
  EXPECT_EQ(r.status, 503) << r.body;
  EXPECT_EQ(r.Header("retry-after"), "1");
  EXPECT_NE(r.body.find("server.max_queued_requests"), std::string::npos) << r.body;
  release.set_value();
  EXPECT_EQ(busy.Read().status, 200);
  EXPECT_EQ(queued.Read().status, 200);
}

// A body over server.max_body_bytes is refused from the head (413) without
// waiting for it, and the connection closed; Expect: 100-continue gets
// "100 Continue" before the body is read.
TEST_F(SlowClientTest, OversizeBodyIsRefusedFromTheHeadAndExpectContinueIsAnswered) {
  ServerOptions o;
  o.max_body_bytes = 4096;
  o.body_timeout_ms = 600000;
  Start(o);
  RawConnection big(port_);
  const RawAnswer a = big.Exchange("POST /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                                   "Content-Length: 100000000\r\n\r\n");
  EXPECT_EQ(a.status, 413) << a.body;
  EXPECT_TRUE(big.ClosedByServer());

  RawConnection asks(port_);
  const RawAnswer cont = asks.Exchange("POST /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + kKeyA +
                                       "\r\nContent-Type: application/json\r\nExpect: 100-continue\r\n"
                                       "Content-Length: 2\r\n\r\n");
  EXPECT_EQ(cont.status, 100);
  const RawAnswer done = asks.Exchange("{}");
  EXPECT_EQ(done.status, 405) << done.body;  // /metrics is GET only: the request was read and routed
  EXPECT_EQ(asks.Exchange(kAuthedMetrics).status, 200);  // and the connection kept
}

// A client still sending a body the server refused (here chunked, 411)
// gets the answer, however late its bytes come: the server shuts its side
// and drops what arrives until the client closes. (Before: the server closed
// at once, the late bytes drew a reset, and the client's next write failed,
// so a client that writes its whole request before reading, as
// cpp-httplib's does, saw no answer.)
TEST_F(SlowClientTest, ARefusedClientStillSendingGetsItsAnswer) {
  Start(ServerOptions{});
  RawConnection chunked(port_);
  ASSERT_TRUE(chunked.Send("POST /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                           "Transfer-Encoding: chunked\r\n\r\n"));
  // The answer and the end of the server's stream are in before more is sent.
  pollfd p{chunked.fd(), POLLRDHUP, 0};
  ASSERT_EQ(poll(&p, 1, 30000), 1);
  ASSERT_TRUE(chunked.Send("2\r\n{}\r\n"));
  // Room for a reset to come back, if the server sends one (not a timing
  // assertion: with or without it the checks below are the same).
  pollfd err{chunked.fd(), 0, 0};
  (void)poll(&err, 1, 300);
  EXPECT_TRUE(chunked.Send("0\r\n\r\n")) << "the server reset the connection: " << std::strerror(errno);
  const RawAnswer a = chunked.Read();
  EXPECT_EQ(a.status, 411) << a.body;
  EXPECT_NE(a.body.find("length_required"), std::string::npos) << a.body;
  EXPECT_TRUE(chunked.ClosedByServer());
  EXPECT_EQ(Probe().status, 200);  // and the server is fine
}

// A kept-alive connection waits for its next request with the workers
// (connection_loop.h): a request that arrives whole is answered there; one
// that arrives in pieces, behind another, or with Expect goes back to the
// loop, and is answered the same. Each request's body reaches the handler
// whole.
TEST_F(SlowClientTest, KeptAliveRequestsInPiecesPipelinedOrExpectingAreAnswered) {
  ServerOptions o;
  o.threads = 2;
  Start(o, [](HttpServer& s) {
    s.Handle({"POST", "/echo",
              [](const HttpCall& call, httplib::Response& res) { SendJson(res, 200, {{"body", call.req.body}}); },
              false});
  });
  auto echo = [](const std::string& body, const std::string& extra = "") {
    return "POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" + extra +
           "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  };
  auto body_of = [](const RawAnswer& a) { return nlohmann::json::parse(a.body).value("body", "?"); };
  RawConnection c(port_);
  ASSERT_TRUE(c.connected());
  RawAnswer a = c.Exchange(echo("first"));
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(body_of(a), "first");
  // Whole: answered by the worker woken for it, many times over.
  for (int i = 0; i < 20; ++i) {
    a = c.Exchange(echo("whole " + std::to_string(i)));
    ASSERT_EQ(a.status, 200) << a.body;
    EXPECT_EQ(body_of(a), "whole " + std::to_string(i));
  }
  // In pieces: the head's first half, then (once the server has surely
  // looked at it) the rest.
  const std::string pieces = echo("in two pieces");
  ASSERT_TRUE(c.Send(pieces.substr(0, 20)));
  pollfd p{c.fd(), POLLIN, 0};
  EXPECT_EQ(poll(&p, 1, 200), 0);  // no answer to half a head
  ASSERT_TRUE(c.Send(pieces.substr(20)));
  a = c.Read();
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(body_of(a), "in two pieces");
  // Two requests in one send: both answered, in order.
  ASSERT_TRUE(c.Send(echo("one of two") + echo("two of two")));
  a = c.Read();
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(body_of(a), "one of two");
  a = c.Read();
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(body_of(a), "two of two");
  // Expect: 100-continue, the body sent after the 100.
  const std::string expecting = echo("after continue", "Expect: 100-continue\r\n");
  const size_t body_at = expecting.size() - std::string("after continue").size();
  EXPECT_EQ(c.Exchange(expecting.substr(0, body_at)).status, 100);
  a = c.Exchange(expecting.substr(body_at));
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(body_of(a), "after continue");
  // A body over the limit on a kept-alive connection: refused from the head.
  a = c.Exchange(
      "POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000000\r\n\r\n");
  EXPECT_EQ(a.status, 413) << a.body;
  EXPECT_TRUE(c.ClosedByServer());
}

// server.max_connections_per_client counts kept-alive connections waiting
// with the workers too: the oldest idle one is closed (503) to make room,
// and the younger one is still answered.
TEST_F(SlowClientTest, PerClientCapClosesTheOldestIdleKeptAliveConnection) {
  ServerOptions o;
  o.max_connections_per_client = 2;
  Start(o);
  RawConnection older(port_);
  ASSERT_TRUE(older.connected());
  ASSERT_EQ(older.Exchange(kAuthedMetrics).status, 200);
  RawConnection younger(port_);
  ASSERT_TRUE(younger.connected());
  ASSERT_EQ(younger.Exchange(kAuthedMetrics).status, 200);
  EXPECT_EQ(Probe().status, 200);
  const RawAnswer evicted = older.Read();
  EXPECT_EQ(evicted.status, 503) << evicted.body;
  EXPECT_NE(evicted.body.find("server.max_connections_per_client"), std::string::npos) << evicted.body;
  EXPECT_TRUE(older.ClosedByServer());
  const RawAnswer kept = younger.Exchange(kAuthedMetrics);
  ASSERT_EQ(kept.status, 200);
  EXPECT_NE(kept.body.find("msp_http_connections_dropped_total{reason=\"client_limit\"} 1"), std::string::npos)
      << kept.body;
}

// Stopping the server closes the kept-alive connections waiting with the
// workers, and returns.
TEST_F(SlowClientTest, StopClosesKeptAliveConnections) {
  Start(ServerOptions{});
  std::vector<std::unique_ptr<RawConnection>> kept;
  for (int i = 0; i < 5; ++i) {
    kept.push_back(std::make_unique<RawConnection>(port_));
    ASSERT_EQ(kept.back()->Exchange(kAuthedMetrics).status, 200) << "connection " << i;
  }
  server_->Stop();
  for (auto& c : kept) EXPECT_TRUE(c->ClosedByServer());
}

// An idle kept-alive connection, waiting with the workers after its
// answers, is closed after keep_alive; Stop closes one still waiting.
TEST(ConnectionLoopTest, IdleKeptAliveConnectionsCloseAfterKeepAlive) {
  ConnectionLimits limits;
  limits.keep_alive = std::chrono::milliseconds(300);
  limits.header_timeout = std::chrono::milliseconds(600000);
  limits.workers = 2;
  std::atomic<int> answered{0};
  ConnectionLoop loop(
      limits,
      [&answered](httplib::Stream& out, const RequestFacts&) {
        static constexpr char kAnswer[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
        ++answered;
        return out.write(kAnswer, sizeof(kAnswer) - 1) == static_cast<ssize_t>(sizeof(kAnswer) - 1);
      },
      nullptr);
  auto port = loop.Start("127.0.0.1", 0);
  ASSERT_TRUE(port.ok()) << port.status().ToString();
  RawConnection used(*port);
  ASSERT_TRUE(used.connected());
  for (int i = 0; i < 3; ++i) {
    const RawAnswer a = used.Exchange(kHealthz);
    ASSERT_EQ(a.status, 200);
    EXPECT_EQ(a.body, "ok");
  }
  EXPECT_TRUE(used.ClosedByServer());
  EXPECT_EQ(answered.load(), 3);
  RawConnection again(*port);
  EXPECT_EQ(again.Exchange(kHealthz).status, 200);
  loop.Stop();
  EXPECT_TRUE(again.ClosedByServer());
}

// Host and Origin on the server's own routes (REST's are in tests/http).
TEST_F(SlowClientTest, ForeignHostAndOriginAre403) {
  ServerOptions o;
  o.allowed_hosts = {"memory.example.com"};
  Start(o);
  const std::string port = std::to_string(port_);
  auto get = [&](const std::string& headers) {
    RawConnection c(port_);
    return c.Exchange("GET /metrics HTTP/1.1\r\nAuthorization: Bearer " + kKeyA + "\r\n" + headers + "\r\n");
  };
  EXPECT_EQ(get("Host: evil.example:" + port + "\r\n").status, 403);
  EXPECT_EQ(get("Host: localhost.evil.example\r\n").status, 403);
  EXPECT_NE(get("Host: evil.example\r\n").body.find("server.allowed_hosts"), std::string::npos);
  EXPECT_EQ(get("Host: 127.0.0.1:" + port + "\r\nOrigin: http://evil.example\r\n").status, 403);
  EXPECT_EQ(get("Host: 127.0.0.1:" + port + "\r\n").status, 200);
  EXPECT_EQ(get("Host: LOCALHOST:" + port + "\r\nOrigin: http://localhost:5173\r\n").status, 200);
  EXPECT_EQ(get("Host: memory.example.com\r\n").status, 200);
  EXPECT_EQ(get("Host: [::1]:" + port + "\r\n").status, 200);
}

}  // namespace
}  // namespace msp

namespace msp {
namespace {

using nlohmann::json;
using testing::Contains;

// /healthz reports what the store's health check says: up (200), up but
// refusing writes for a read-only data directory (200, "writes":
// "read_only"), up with a full disk (507 "disk_full"), down (503).
TEST(HttpServerHealthTest, ReportsReadOnlyAndDiskFull) {
  auto server = HttpServer::Create(TestServerOptions(), ApiKeys(), nullptr);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  std::mutex mu;
  Status health;
  (*server)->SetHealthSource([&] {
    std::lock_guard<std::mutex> lock(mu);
    return health;
  });
  auto port = (*server)->Start();
  ASSERT_TRUE(port.ok()) << port.status().ToString();
  const auto probe = [&](const Status& s) {
    {
      std::lock_guard<std::mutex> lock(mu);
      health = s;
    }
    RawConnection c(*port);
    EXPECT_TRUE(c.connected());
    return c.Exchange("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
  };
  RawAnswer a = probe(Status::Ok());
  EXPECT_EQ(a.status, 200);
  EXPECT_EQ(json::parse(a.body), (json{{"status", "ok"}, {"store", "up"}}));
  a = probe(Status::ReadOnly("the store is read-only"));
  EXPECT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(json::parse(a.body)["writes"], "read_only") << a.body;
  a = probe(Status::DiskFull("no space left on device"));
  EXPECT_EQ(a.status, 507) << a.body;
  EXPECT_EQ(json::parse(a.body)["status"], "disk_full") << a.body;
  EXPECT_TRUE(Contains(json::parse(a.body)["message"].get<std::string>(), "disk")) << a.body;
  a = probe(Status::Unavailable("down"));
  EXPECT_EQ(a.status, 503) << a.body;
  (*server)->Stop();
}

}  // namespace
}  // namespace msp
