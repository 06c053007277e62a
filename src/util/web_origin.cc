// Origin and Host checks (see web_origin.h).
#include "util/web_origin.h"

#include <arpa/inet.h>

#include <algorithm>

#include "util/text.h"

namespace msp {
namespace {

std::string TrimSlash(std::string s) {
  while (!s.empty() && s.back() == '/') s.pop_back();
  return s;
}

bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Splits "host", "host:port", "[v6]" or "[v6]:port" (lowercased). False
// when it is none of these.
bool SplitAuthority(const std::string& authority, std::string* host, std::string* port) {
  const std::string a = AsciiLower(authority);
  port->clear();
  if (!a.empty() && a[0] == '[') {
    const size_t close = a.find(']');
    if (close == std::string::npos) return false;
    *host = a.substr(0, close + 1);
    const std::string after = a.substr(close + 1);
    if (!after.empty()) {
      if (after[0] != ':') return false;
      *port = after.substr(1);
      if (!AllDigits(*port)) return false;
    }
  } else if (const size_t colon = a.find(':'); colon != std::string::npos) {
    *host = a.substr(0, colon);
    *port = a.substr(colon + 1);
    if (!AllDigits(*port)) return false;
  } else {
    *host = a;
  }
  return !host->empty() && host->find_first_of("/?#@ \t") == std::string::npos;
}

bool IsIpLiteral(const std::string& host) {
  unsigned char buf[16];
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    return inet_pton(AF_INET6, host.substr(1, host.size() - 2).c_str(), buf) == 1;
  }
  return inet_pton(AF_INET, host.c_str(), buf) == 1;
}

// "::1" -> "[::1]": hosts are compared as a Host header writes them.
std::string Bracketed(std::string address) {
  if (address.find(':') != std::string::npos && address.front() != '[') return "[" + address + "]";
  return address;
}

}  // namespace

bool IsLoopbackHost(std::string_view host) {
  if (host == "localhost" || host == "[::1]") return true;
  // 127.0.0.0/8, written as a dotted quad.
  if (host.substr(0, 4) != "127.") return false;
  int parts = 0;
  size_t start = 0;
  while (start <= host.size()) {
    const size_t dot = std::min(host.find('.', start), host.size());
    const std::string_view part = host.substr(start, dot - start);
    if (!AllDigits(part) || part.size() > 3 || std::stoi(std::string(part)) > 255) return false;
    ++parts;
    start = dot + 1;
  }
  return parts == 4;
}

bool OriginAllowed(const std::string& origin, const std::vector<std::string>& allowed) {
  const std::string o = TrimSlash(AsciiLower(origin));
  for (const std::string& a : allowed) {
    if (!a.empty() && TrimSlash(AsciiLower(a)) == o) return true;
  }
  std::string rest;
  if (o.rfind("http://", 0) == 0) {
    rest = o.substr(7);
  } else if (o.rfind("https://", 0) == 0) {
    rest = o.substr(8);
  } else {
    return false;  // "null", other schemes
  }
  std::string host, port;
  if (!SplitAuthority(rest, &host, &port)) return false;
  return IsLoopbackHost(host);
}

bool HostAllowed(const std::string& host_header, const std::string& bind,
                 const std::vector<std::string>& allowed_hosts) {
  std::string host, port;
  if (!SplitAuthority(std::string(TrimAsciiSpace(host_header)), &host, &port)) return false;
  for (const std::string& a : allowed_hosts) {
    if (AsciiLower(std::string(TrimAsciiSpace(a))) == host) return true;
  }
  const std::string b = Bracketed(AsciiLower(bind));
  if (IsLoopbackHost(b)) return IsLoopbackHost(host);
  if (b == "0.0.0.0" || b == "[::]") return host == "localhost" || IsIpLiteral(host);
  return host == b;
}

}  // namespace msp
