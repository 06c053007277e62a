// Content coding of the HTTP server's answers: whether an answer is sent
// gzip-encoded, and the encoder.
//
// msp decides, not cpp-httplib: cpp-httplib encodes every text or JSON
// answer a client accepts encoded, whatever its size and wherever the
// client is (brotli at its slowest quality when offered). On loopback the
// bytes cost nothing and the coding costs both ends: an MCP ping through
// Node's fetch took 1.2-1.5 ms gzip-encoded and 0.34-0.6 ms not (the
// server's deflate state alone, 256 KB of fresh memory, ~0.4 ms). So the
// connection loop hides Accept-Encoding from cpp-httplib (connection_loop.cc)
// and HttpServer encodes an answer itself when EncodeAnswer says so:
//   - the client accepts gzip (Accept-Encoding: gzip, x-gzip or *, q > 0);
//   - the answer is text, JSON, JavaScript, SVG or XML, 1 KB or more, whole
//     (not a range, not streamed) and not encoded already;
//   - server.compression allows it for this client: `remote` (the default)
//     encodes for clients not on loopback, `all` for every client (a reverse
//     proxy on this machine passing answers on to remote clients), `off`
//     never.
// Thread-safe: Gzip keeps one deflate state a thread.
#ifndef MSP_SERVER_CONTENT_CODING_H_
#define MSP_SERVER_CONTENT_CODING_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace msp {

enum class Compression { kRemote, kAll, kOff };

// "remote" | "all" | "off" (server.compression); nullopt for anything else.
std::optional<Compression> CompressionFromName(std::string_view name);

// Answers smaller than this are sent as they are: they fit a packet or two.
inline constexpr size_t kGzipMinBytes = 1024;

// True when an Accept-Encoding value (the values of several such headers
// joined with commas) accepts gzip: a coding gzip, x-gzip or * without
// q=0; a gzip with q=0 refuses it whatever * says.
bool AcceptsGzip(std::string_view accept_encoding);

// The media type of a Content-Type value: lower-case, without parameters
// ("application/json" for "Application/JSON; charset=utf-8").
std::string MediaTypeOf(std::string_view content_type);

// True for the media types worth encoding: text/* except
// text/event-stream (streamed as it happens), application/json,
// application/javascript, application/xml, image/svg+xml, and their
// `+json` / `+xml` kin; parameters (`; charset=utf-8`) are ignored.
bool CompressibleType(std::string_view content_type);

// True when `peer` (an IP address as the socket reports it) is on loopback:
// 127.0.0.0/8, ::1, or 127.x as an IPv4-mapped IPv6 address.
bool IsLoopbackPeer(std::string_view peer);

// The rule in two halves. MayGzip: an answer of `body_bytes` and
// `content_type` may go out encoded under `mode` (to some client: its URL
// then varies by Accept-Encoding). GzipsFor: a client at `peer` that
// `accepts_gzip` gets such an answer encoded.
bool MayGzip(Compression mode, std::string_view content_type, size_t body_bytes);
bool GzipsFor(Compression mode, bool accepts_gzip, std::string_view peer);

// True when an answer of `body_bytes` and `content_type` to a client at
// `peer` that `accepts_gzip` is to be encoded under `mode`: both halves.
inline bool ShouldGzip(Compression mode, bool accepts_gzip, std::string_view peer, std::string_view content_type,
                       size_t body_bytes) {
  return MayGzip(mode, content_type, body_bytes) && GzipsFor(mode, accepts_gzip, peer);
}

// `in` as a gzip member (RFC 1952) at level 4 (within ~15% of level 6's size
// at under half its time). Returns false, `out` unspecified, if zlib fails.
bool Gzip(std::string_view in, std::string* out);

}  // namespace msp

#endif  // MSP_SERVER_CONTENT_CODING_H_
