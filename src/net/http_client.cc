// HttpClient over cpp-httplib: URL parsing, retries, backoff, error mapping.
#include "net/http_client.h"

#include <httplib.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <random>
#include <thread>

#include "util/text.h"

namespace msp::net {
namespace {

bool RetryableStatus(int status) { return status == 408 || status == 429 || status >= 500; }

// Transport errors worth another attempt: the server may come back.
bool RetryableError(httplib::Error error) {
  switch (error) {
    case httplib::Error::Unknown:
    case httplib::Error::Connection:
    case httplib::Error::Read:
    case httplib::Error::Write:
    case httplib::Error::SSLConnection:
    case httplib::Error::ConnectionTimeout:
      return true;
    default:
      return false;
  }
}

std::string DescribeError(httplib::Error error) {
  switch (error) {
    case httplib::Error::Connection: return "could not connect";
    case httplib::Error::Read: return "connection closed or read timed out";
    case httplib::Error::Write: return "could not send the request";
    case httplib::Error::ConnectionTimeout: return "connect timed out";
    case httplib::Error::SSLConnection: return "TLS handshake failed";
    case httplib::Error::SSLLoadingCerts: return "could not load CA certificates";
    case httplib::Error::SSLServerVerification: return "TLS certificate verification failed";
    case httplib::Error::Canceled: return "canceled";
    default: return httplib::to_string(error);
  }
}

// Retry-After as a delay: delta-seconds only (an HTTP date is ignored).
std::optional<std::chrono::milliseconds> RetryAfter(const HttpResponse& response) {
  auto it = response.headers.find("retry-after");
  if (it == response.headers.end()) return std::nullopt;
  const std::string& v = it->second;
  long long seconds = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), seconds);
  if (ec != std::errc() || end != v.data() + v.size() || seconds < 0) return std::nullopt;
  return std::chrono::milliseconds(std::min<long long>(seconds, 86400) * 1000);
}

std::string Truncate(std::string s, size_t n) {
  if (s.size() > n) {
    s.resize(n);
    s += "...";
  }
  return s;
}

// The headers every request carries: the configured ones and the API key.
httplib::Headers BaseHeaders(const HttpClientOptions& options) {
  httplib::Headers headers;
  for (const auto& [name, value] : options.headers) headers.emplace(name, value);
  if (!options.api_key.empty()) headers.emplace("Authorization", "Bearer " + options.api_key);
  return headers;
}

// The options' timeouts on `client`, one request a connection, Nagle off
// (cpp-httplib sends a request's headers and body in two writes; with Nagle
// on, the body waited for the server's delayed ACK, ~40 ms).
void Configure(httplib::Client& client, const HttpClientOptions& options) {
  client.set_connection_timeout(std::chrono::milliseconds(options.connect_timeout_ms));
  client.set_read_timeout(std::chrono::milliseconds(options.read_timeout_ms));
  client.set_write_timeout(std::chrono::milliseconds(options.read_timeout_ms));
  client.set_keep_alive(false);
  client.set_tcp_nodelay(true);
}

}  // namespace

std::string BaseUrl::Origin() const {
  return scheme + "://" + host + ":" + std::to_string(port);
}

std::string BaseUrl::Join(std::string_view path) const {
  return Origin() + path_prefix + std::string(path);
}

Result<BaseUrl> ParseBaseUrl(std::string_view url) {
  auto bad = [&](const std::string& why) {
    return Status::InvalidArgument("bad base URL '" + std::string(url) + "': " + why +
                                   " (expected http(s)://host[:port][/path])");
  };
  BaseUrl out;
  size_t sep = url.find("://");
  if (sep == std::string_view::npos) return bad("no scheme");
  out.scheme = AsciiLower(url.substr(0, sep));
  if (out.scheme != "http" && out.scheme != "https") return bad("scheme must be http or https");
  std::string_view rest = url.substr(sep + 3);
  if (rest.find_first_of("?#") != std::string_view::npos) return bad("no query or fragment allowed");
  size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
  if (authority.find('@') != std::string_view::npos) return bad("no user info allowed");
  std::string_view host = authority;
  std::string_view port;
  if (!authority.empty() && authority.front() == '[') {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) return bad("unclosed IPv6 bracket");
    host = authority.substr(0, close + 1);
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return bad("junk after the IPv6 address");
      port = after.substr(1);
    }
  } else {
    size_t colon = authority.rfind(':');
    if (colon != std::string_view::npos) {
      host = authority.substr(0, colon);
      port = authority.substr(colon + 1);
    }
  }
  if (host.empty() || host == "[]") return bad("no host");
  for (char c : host) {
    if (std::isspace(static_cast<unsigned char>(c))) return bad("space in the host");
  }
  out.host = std::string(host);
  if (port.empty()) {
    if (authority.size() > host.size()) return bad("empty port");
    out.port = out.scheme == "https" ? 443 : 80;
  } else {
    int p = 0;
    auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), p);
    if (ec != std::errc() || end != port.data() + port.size() || p < 1 || p > 65535) {
      return bad("port must be 1-65535");
    }
    out.port = p;
  }
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  out.path_prefix = std::string(path);
  return out;
}

Result<std::unique_ptr<HttpClient>> HttpClient::Create(HttpClientOptions options) {
  MSP_ASSIGN_OR_RETURN(BaseUrl base, ParseBaseUrl(options.base_url));
  if (options.connect_timeout_ms <= 0 || options.read_timeout_ms <= 0) {
    return Status::InvalidArgument("HTTP timeouts must be positive (got connect " +
                                   std::to_string(options.connect_timeout_ms) + " ms, read " +
                                   std::to_string(options.read_timeout_ms) + " ms)");
  }
  if (options.max_retries < 0 || options.initial_backoff_ms < 0 || options.max_backoff_ms < 0 ||
      options.retry_budget_ms < 0) {
    return Status::InvalidArgument("HTTP retry limits must not be negative");
  }
  if (!options.sleep) {
    options.sleep = [](std::chrono::milliseconds d) { std::this_thread::sleep_for(d); };
  }
  return std::unique_ptr<HttpClient>(new HttpClient(std::move(options), std::move(base)));
}

HttpClient::HttpClient(HttpClientOptions options, BaseUrl base)
    : options_(std::move(options)), base_(std::move(base)) {}

std::chrono::milliseconds HttpClient::Backoff(int retry) const {
  // Exponential with "equal jitter": half the step fixed, half random, so
  // clients that failed together do not retry together.
  long long step = options_.initial_backoff_ms;
  for (int i = 0; i < retry && step < options_.max_backoff_ms; ++i) step *= 2;
  step = std::min<long long>(step, options_.max_backoff_ms);
  if (step <= 1) return std::chrono::milliseconds(step);
  thread_local std::minstd_rand rng{std::random_device{}()};
  std::uniform_int_distribution<long long> dist(0, step / 2);
  return std::chrono::milliseconds(step - step / 2 + dist(rng));
}

Result<HttpResponse> HttpClient::Post(std::string_view path, const std::string& body) const {
  return Send("POST", path, &body, /*want_json=*/false);
}

Result<HttpResponse> HttpClient::Get(std::string_view path) const {
  return Send("GET", path, nullptr, /*want_json=*/false);
}

Result<HttpResponse> HttpClient::Send(const char* method, std::string_view path,
                                      const std::string* body, bool want_json) const {
  const std::string url = base_.Join(path);
  const std::string full_path = base_.path_prefix + std::string(path);
  httplib::Headers headers = BaseHeaders(options_);
  headers.emplace("Accept", "application/json");

  std::string last_failure;
  long long waited_ms = 0;
  const int attempts_allowed = options_.max_retries + 1;
  for (int attempt = 1;; ++attempt) {
    httplib::Client client(base_.Origin());
    Configure(client, options_);
    httplib::Result result = body != nullptr
                                 ? client.Post(full_path, headers, *body, "application/json")
                                 : client.Get(full_path, headers);
    std::optional<std::chrono::milliseconds> server_wait;
    if (result) {
      HttpResponse response;
      response.status = result->status;
      response.body = result->body;
      response.attempts = attempt;
      for (const auto& [name, value] : result->headers) response.headers.emplace(AsciiLower(name), value);
      const bool ok_status = response.status >= 200 && response.status < 300;
      if (ok_status && want_json && !nlohmann::json::accept(response.body)) {
        // A proxy's HTML page or a truncated body: retried like a 5xx.
        last_failure = "HTTP " + std::to_string(response.status) + " with malformed JSON: '" +
                       Truncate(response.body, 120) + "'";
      } else if (!RetryableStatus(response.status)) {
        return response;
      } else {
        last_failure = "HTTP " + std::to_string(response.status) + ": " +
                       Truncate(ErrorSnippet(response.body), 200);
        server_wait = RetryAfter(response);
      }
    } else {
      last_failure = DescribeError(result.error());
      if (!RetryableError(result.error())) {
        return Status::Unavailable(std::string(method) + " " + url + " failed: " + last_failure);
      }
    }
    if (attempt >= attempts_allowed) {
      return Status::Unavailable(std::string(method) + " " + url + " failed after " +
                                 std::to_string(attempt) + " attempt(s); last: " + last_failure);
    }
    std::chrono::milliseconds wait = Backoff(attempt - 1);
    if (server_wait) wait = std::max(wait, *server_wait);
    if (waited_ms + wait.count() > options_.retry_budget_ms) {
      return Status::Unavailable(std::string(method) + " " + url + " failed after " +
                                 std::to_string(attempt) + " attempt(s); the next wait (" +
                                 std::to_string(wait.count()) + " ms) exceeds the retry budget of " +
                                 std::to_string(options_.retry_budget_ms) + " ms; last: " +
                                 last_failure);
    }
    waited_ms += wait.count();
    options_.sleep(wait);
  }
}

Result<DownloadReply> HttpClient::Download(std::string_view path,
                                           const std::vector<std::pair<std::string, std::string>>& headers,
                                           const std::function<bool(const DownloadReply&, std::string_view)>& sink) const {
  const std::string url = base_.Join(path);
  const std::string full_path = base_.path_prefix + std::string(path);
  httplib::Headers request_headers = BaseHeaders(options_);
  for (const auto& [name, value] : headers) request_headers.emplace(name, value);
  httplib::Client client(base_.Origin());
  Configure(client, options_);
  // Hugging Face's resolve/ URLs redirect to a content server.
  client.set_follow_location(true);
  DownloadReply reply;
  bool sink_stopped = false;
  httplib::Result result = client.Get(
      full_path, request_headers,
      [&](const httplib::Response& response) {
        reply.status = response.status;
        reply.headers.clear();
        for (const auto& [name, value] : response.headers) reply.headers.emplace(AsciiLower(name), value);
        return true;
      },
      [&](const char* data, size_t n) {
        if (reply.status < 200 || reply.status >= 300) {
          if (reply.error_body.size() < 4096) reply.error_body.append(data, std::min<size_t>(n, 4096 - reply.error_body.size()));
          return true;
        }
        if (!sink(reply, std::string_view(data, n))) {
          sink_stopped = true;
          return false;
        }
        reply.received += static_cast<int64_t>(n);
        return true;
      });
  if (sink_stopped) return Status::IoError("GET " + url + ": stopped after " + std::to_string(reply.received) + " bytes");
  if (!result) {
    return Status::Unavailable("GET " + url + " failed after " + std::to_string(reply.received) +
                               " bytes of the body: " + DescribeError(result.error()));
  }
  reply.status = result->status;
  return reply;
}

Result<nlohmann::json> HttpClient::PostJson(std::string_view path, const nlohmann::json& body) const {
  const std::string url = base_.Join(path);
  std::string text;
  try {
    text = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  } catch (const std::exception& e) {
    return Status::InvalidArgument("request body for " + url + " is not serialisable: " + e.what());
  }
  MSP_ASSIGN_OR_RETURN(HttpResponse response, Send("POST", path, &text, /*want_json=*/true));
  if (response.status < 200 || response.status >= 300) return HttpStatusError(url, response);
  nlohmann::json parsed = nlohmann::json::parse(response.body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return Status::Internal("POST " + url + ": reply is not JSON");
  return parsed;
}

std::string ErrorSnippet(const std::string& body) {
  nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  if (!j.is_discarded() && j.is_object() && j.contains("error")) {
    const auto& e = j["error"];
    if (e.is_string()) return e.get<std::string>();
    if (e.is_object() && e.contains("message") && e["message"].is_string()) {
      return e["message"].get<std::string>();
    }
  }
  return Truncate(body, 300);
}

Status HttpStatusError(const std::string& url, const HttpResponse& response) {
  std::string msg = url + " returned HTTP " + std::to_string(response.status) + ": " +
                    ErrorSnippet(response.body);
  int s = response.status;
  if (s == 401 || s == 403) {
    return Status::FailedPrecondition(msg + " (check llm.api_key / embedder api key)");
  }
  if (s == 400 || s == 404 || s == 413 || s == 415 || s == 422) return Status::InvalidArgument(msg);
  if (RetryableStatus(s)) return Status::Unavailable(msg);
  return Status::Internal(msg);
}

}  // namespace msp::net
