// Prometheus text rendering of the request counters and latency histograms.
#include "server/metrics.h"

#include <cstdio>
#include <sstream>

namespace msp {
namespace {

// Shortest text that reads back as `v` ("0.005", "1", "2.5").
std::string FormatBound(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.15g", v);
  return buf;
}

}  // namespace

const std::vector<double>& HttpMetrics::Buckets() {
  static const std::vector<double> buckets = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                              0.1,    0.25,  0.5,    1.0,   2.5,  5.0,   10.0};
  return buckets;
}

std::string StatusClass(int status) {
  if (status < 100 || status > 599) return "unknown";
  return std::to_string(status / 100) + "xx";
}

std::string EscapeLabel(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

void HttpMetrics::Record(std::string_view method, std::string_view route, int status, double seconds) {
  const std::vector<double>& bounds = Buckets();
  std::lock_guard<std::mutex> lock(mu_);
  Series& s = series_[Key(std::string(method), std::string(route), StatusClass(status))];
  if (s.buckets.empty()) s.buckets.assign(bounds.size(), 0);
  ++s.count;
  s.sum += seconds;
  for (size_t i = 0; i < bounds.size(); ++i) {
    if (seconds <= bounds[i]) ++s.buckets[i];
  }
}

void HttpMetrics::CountDroppedConnection(std::string_view reason) {
  std::lock_guard<std::mutex> lock(mu_);
  ++dropped_[std::string(reason)];
}

std::string HttpMetrics::Render() const {
  const std::vector<double>& bounds = Buckets();
  std::map<Key, Series> copy;
  std::map<std::string, uint64_t> dropped;
  {
    std::lock_guard<std::mutex> lock(mu_);
    copy = series_;
    dropped = dropped_;
  }
  std::ostringstream out;
  auto labels = [](const Key& k) {
    return "method=\"" + EscapeLabel(std::get<0>(k)) + "\",route=\"" + EscapeLabel(std::get<1>(k)) +
           "\",status=\"" + EscapeLabel(std::get<2>(k)) + "\"";
  };
  out << "# HELP msp_http_requests_total HTTP requests answered, by method, route template and status class.\n"
      << "# TYPE msp_http_requests_total counter\n";
  for (const auto& [key, s] : copy) out << "msp_http_requests_total{" << labels(key) << "} " << s.count << "\n";
  out << "# HELP msp_http_request_duration_seconds Time from routing a request to writing its answer.\n"
      << "# TYPE msp_http_request_duration_seconds histogram\n";
  for (const auto& [key, s] : copy) {
    const std::string l = labels(key);
    for (size_t i = 0; i < bounds.size(); ++i) {
      out << "msp_http_request_duration_seconds_bucket{" << l << ",le=\"" << FormatBound(bounds[i]) << "\"} "
          << s.buckets[i] << "\n";
    }
    out << "msp_http_request_duration_seconds_bucket{" << l << ",le=\"+Inf\"} " << s.count << "\n"
        << "msp_http_request_duration_seconds_sum{" << l << "} " << FormatBound(s.sum) << "\n"
        << "msp_http_request_duration_seconds_count{" << l << "} " << s.count << "\n";
  }
  if (!dropped.empty()) {
    out << "# HELP msp_http_connections_dropped_total Connections the server closed with an answer of its own "
           "(timeouts, connection caps, a full queue), by reason.\n"
        << "# TYPE msp_http_connections_dropped_total counter\n";
    for (const auto& [reason, n] : dropped) {
      out << "msp_http_connections_dropped_total{reason=\"" << EscapeLabel(reason) << "\"} " << n << "\n";
    }
  }
  return out.str();
}

}  // namespace msp
