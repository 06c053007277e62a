// A small HTTP(S) client for the model providers (OpenAI-compatible
// embeddings and chat): one base URL, JSON bodies, bearer authentication,
// timeouts, and retries with exponential backoff and jitter.
//
// Built on cpp-httplib; no cpp-httplib type appears here. The API key is sent
// only in the Authorization header and never appears in a Status message.
#ifndef MSP_NET_HTTP_CLIENT_H_
#define MSP_NET_HTTP_CLIENT_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "msp/status.h"

namespace msp::net {

// A parsed base URL: "https://api.openai.com/v1" -> {https, api.openai.com,
// 443, "/v1"}. path_prefix never ends in '/' ("" for the root).
struct BaseUrl {
  std::string scheme;  // "http" or "https"
  std::string host;    // as written; an IPv6 literal keeps its brackets
  int port = 0;
  std::string path_prefix;

  // "http://host:port" (always with the port).
  std::string Origin() const;
  // Origin() + path_prefix + path; `path` starts with '/'.
  std::string Join(std::string_view path) const;
};

// InvalidArgument naming the input when `url` is not http(s)://host[:port][/path],
// has a bad port, a query or a fragment.
Result<BaseUrl> ParseBaseUrl(std::string_view url);

struct HttpClientOptions {
  std::string base_url;                 // e.g. "http://localhost:11434/v1"
  std::string api_key;                  // empty: no Authorization header
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers
  int connect_timeout_ms = 10000;
  int read_timeout_ms = 60000;          // also the write timeout
  // Retries after the first attempt, on 408, 429, 5xx and transport errors
  // (refused, reset, timed out). 0: one attempt.
  int max_retries = 3;
  int initial_backoff_ms = 500;         // doubled after each retry
  int max_backoff_ms = 20000;           // cap of one computed wait
  // The most time all waits of one call may add up to; a wait that would
  // exceed it (a long Retry-After, say) ends the call instead.
  int retry_budget_ms = 120000;
  // How to wait between attempts; tests replace it to record the waits.
  // Default: std::this_thread::sleep_for.
  std::function<void(std::chrono::milliseconds)> sleep;
};

struct HttpResponse {
  int status = 0;
  std::string body;
  std::multimap<std::string, std::string> headers;  // names lowercased
  int attempts = 0;                                   // 1 + retries used
};

// The reply of a streamed GET (HttpClient::Download).
struct DownloadReply {
  int status = 0;
  std::multimap<std::string, std::string> headers;  // names lowercased
  std::string error_body;                           // a non-2xx reply's first 4 KB
  int64_t received = 0;                             // body bytes given to the sink
};

// Thread-safe: each call opens its own connection.
class HttpClient {
 public:
  // InvalidArgument for a bad base URL or negative limits.
  static Result<std::unique_ptr<HttpClient>> Create(HttpClientOptions options);

  // POSTs `body` (Content-Type application/json) to base + `path` and
  // retries as the options say. Returns the final response whatever its
  // status when it is not retryable (2xx, 3xx, 4xx but 408/429), so callers
  // can read a 400's body. Unavailable, naming the URL, the attempts and the
  // last HTTP status or transport error, when every attempt failed
  // retryably or the retry budget ran out.
  Result<HttpResponse> Post(std::string_view path, const std::string& body) const;

  // GET base + `path`, with the same retries.
  Result<HttpResponse> Get(std::string_view path) const;

  // GET base + `path` with `headers` added (a Range, say), following
  // redirects, also to another host (https needs OpenSSL); a 2xx reply's body
  // goes to `sink` as it arrives, with the reply's status and headers (false
  // from the sink stops: IoError). One
  // attempt and no retries: the caller resumes with a Range from what its
  // sink kept. Unavailable, naming the URL, for a transport error, also one
  // in the middle of the body (a connection dropped).
  Result<DownloadReply> Download(std::string_view path,
                                 const std::vector<std::pair<std::string, std::string>>& headers,
                                 const std::function<bool(const DownloadReply&, std::string_view)>& sink) const;

  // Post() then: a 2xx reply's body parsed as JSON; a non-2xx reply becomes a
  // Status (HttpStatusError). A 2xx body that is not JSON is retried like a
  // 5xx (same attempt count); Unavailable when the last one is still malformed.
  Result<nlohmann::json> PostJson(std::string_view path, const nlohmann::json& body) const;

  const BaseUrl& base_url() const { return base_; }
  const HttpClientOptions& options() const { return options_; }

 private:
  HttpClient(HttpClientOptions options, BaseUrl base);
  // want_json: a 2xx reply whose body is not JSON counts as a retryable failure.
  Result<HttpResponse> Send(const char* method, std::string_view path, const std::string* body,
                            bool want_json) const;
  std::chrono::milliseconds Backoff(int retry) const;

  HttpClientOptions options_;
  BaseUrl base_;
};

// A Status for a non-2xx reply: 400/404/413/415/422 InvalidArgument, 401/403
// FailedPrecondition (check the API key), 408/429/5xx Unavailable, others
// Internal. The message names `url`, the status and the start of the body
// (error.message when the body is OpenAI-style JSON).
Status HttpStatusError(const std::string& url, const HttpResponse& response);

// The error text of an OpenAI-style error body ({"error": {"message": ...}}
// or {"error": "..."}), else the first 300 bytes of the body.
std::string ErrorSnippet(const std::string& body);

}  // namespace msp::net

#endif  // MSP_NET_HTTP_CLIENT_H_
