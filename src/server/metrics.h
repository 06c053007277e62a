// Request metrics of the HTTP server, rendered in the Prometheus text
// exposition format (version 0.0.4) at /metrics.
//
// Series are labelled by method, route template ("/v1/memories/{id}", never
// a raw path, so the number of series stays bounded) and status class
// ("2xx", "4xx", ...). Thread-safe.
#ifndef MSP_SERVER_METRICS_H_
#define MSP_SERVER_METRICS_H_

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace msp {

class HttpMetrics {
 public:
  // Upper bounds of the latency histogram buckets, in seconds (+Inf implied).
  static const std::vector<double>& Buckets();

  // Counts one answered request that took `seconds`.
  void Record(std::string_view method, std::string_view route, int status, double seconds);

  // Counts a connection the server closed with an answer of its own before
  // a handler saw the request (connection_loop.h: "header_timeout",
  // "client_limit", ...).
  void CountDroppedConnection(std::string_view reason);

  // msp_http_requests_total (counter), msp_http_request_duration_seconds
  // (histogram) and msp_http_connections_dropped_total (counter, by reason),
  // with HELP and TYPE lines; empty series are not shown.
  std::string Render() const;

 private:
  struct Series {
    uint64_t count = 0;
    double sum = 0.0;
    std::vector<uint64_t> buckets;  // cumulative counts per bound
  };
  using Key = std::tuple<std::string, std::string, std::string>;  // method, route, class

  mutable std::mutex mu_;
  std::map<Key, Series> series_;
  std::map<std::string, uint64_t> dropped_;  // by reason
};

// "2xx" for 204; "unknown" outside 100..599.
std::string StatusClass(int status);

// A Prometheus label value with \, " and newline escaped.
std::string EscapeLabel(std::string_view value);

}  // namespace msp

#endif  // MSP_SERVER_METRICS_H_
