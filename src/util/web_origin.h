// Who a browser says a request is from and for: the Origin and Host headers
// an HTTP server checks against cross-site requests and DNS rebinding.
// Shared by the REST server (src/server) and MCP over HTTP (src/mcp).
#ifndef MSP_UTIL_WEB_ORIGIN_H_
#define MSP_UTIL_WEB_ORIGIN_H_

#include <string>
#include <string_view>
#include <vector>

namespace msp {

// True for localhost, [::1] and a dotted quad in 127.0.0.0/8 (no port).
bool IsLoopbackHost(std::string_view host);

// True for an Origin header value a server on this machine accepts: http(s)
// on localhost, 127.0.0.0/8 or [::1] (any port), or an entry of `allowed`
// (compared without case and without a trailing '/').
bool OriginAllowed(const std::string& origin, const std::vector<std::string>& allowed);

// True for a Host header value that names a server bound to `bind`: its
// host part (the port aside, without case) is
//   - an entry of `allowed_hosts` ("memory.example.com"), or
//   - when `bind` is a loopback address: a loopback host (localhost,
//     127.0.0.0/8, [::1]); when `bind` is a wildcard (0.0.0.0, ::): localhost
//     or any IP literal; otherwise: `bind` itself.
// A name outside these is what a DNS-rebinding page sends (Host:
// evil.example), since the browser names the site it thinks it talks to.
// An IP literal is never such a page's host.
bool HostAllowed(const std::string& host_header, const std::string& bind,
                 const std::vector<std::string>& allowed_hosts);

}  // namespace msp

#endif  // MSP_UTIL_WEB_ORIGIN_H_
