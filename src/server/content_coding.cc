// Content coding of the HTTP server's answers (content_coding.h).
#include "server/content_coding.h"

#include <zlib.h>

#include <algorithm>
#include <cstdlib>

#include "util/text.h"

namespace msp {
namespace {

constexpr int kGzipLevel = 4;
constexpr int kGzipWindowBits = 15 + 16;  // 32 KB window, gzip wrapper
constexpr int kGzipMemLevel = 8;

// The q of one coding's parameters ("q=0.5" among "; "-separated ones):
// 1 when absent, 0 when unreadable (a client that garbles it gets nothing
// it did not clearly ask for).
double QualityOf(std::string_view params) {
  while (!params.empty()) {
    const std::string_view p = NextListItem(params, ';');
    if (p.size() < 2 || (p[0] != 'q' && p[0] != 'Q')) continue;
    const std::string_view rest = TrimAsciiSpace(p.substr(1));
    if (rest.empty() || rest[0] != '=') continue;
    const std::string value(TrimAsciiSpace(rest.substr(1)));
    char* end = nullptr;
    const double q = std::strtod(value.c_str(), &end);
    if (value.empty() || end != value.c_str() + value.size() || !(q >= 0)) return 0;
    return q;
  }
  return 1;
}

// One deflate state a thread, reset for every answer: a new one allocates
// and first touches ~256 KB.
class Deflater {
 public:
  Deflater() {
    ok_ = deflateInit2(&z_, kGzipLevel, Z_DEFLATED, kGzipWindowBits, kGzipMemLevel, Z_DEFAULT_STRATEGY) == Z_OK;
  }
  ~Deflater() {
    if (ok_) deflateEnd(&z_);
  }
  Deflater(const Deflater&) = delete;
  Deflater& operator=(const Deflater&) = delete;

  bool Run(std::string_view in, std::string* out) {
    if (!ok_ || deflateReset(&z_) != Z_OK) return false;
    // Room for the whole member when the input fits a uInt; the output
    // grows if it does not. Input and output go to zlib in pieces of at
    // most 1 GB (its counts are 32-bit).
    constexpr size_t kPiece = size_t{1} << 30;
    out->resize(static_cast<size_t>(deflateBound(&z_, static_cast<uLong>(std::min(in.size(), kPiece)))));
    size_t consumed = 0;
    size_t produced = 0;
    int rc = Z_OK;
    while (rc != Z_STREAM_END) {
      if (z_.avail_in == 0 && consumed < in.size()) {
        const size_t piece = std::min(in.size() - consumed, kPiece);
        z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data() + consumed));
        z_.avail_in = static_cast<uInt>(piece);
        consumed += piece;
      }
      if (produced == out->size()) out->resize(out->size() * 2 + 64);
      const size_t room = std::min(out->size() - produced, kPiece);
      z_.next_out = reinterpret_cast<Bytef*>(out->data() + produced);
      z_.avail_out = static_cast<uInt>(room);
      rc = deflate(&z_, consumed == in.size() ? Z_FINISH : Z_NO_FLUSH);
      produced += room - z_.avail_out;
      if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) return false;
    }
    out->resize(produced);
    return true;
  }

 private:
  z_stream z_{};
  bool ok_ = false;
};

}  // namespace

std::optional<Compression> CompressionFromName(std::string_view name) {
  if (name == "remote") return Compression::kRemote;
  if (name == "all") return Compression::kAll;
  if (name == "off") return Compression::kOff;
  return std::nullopt;
}

bool AcceptsGzip(std::string_view accept_encoding) {
  std::optional<double> gzip, star;
  while (!accept_encoding.empty()) {
    std::string_view params = NextListItem(accept_encoding, ',');
    const std::string name = AsciiLower(NextListItem(params, ';'));
    const double q = QualityOf(params);
    if (name == "gzip" || name == "x-gzip") {
      gzip = gzip ? std::min(*gzip, q) : q;  // a coding named twice: the stricter
    } else if (name == "*") {
      star = star ? std::min(*star, q) : q;
    }
  }
  if (gzip) return *gzip > 0;
  return star && *star > 0;
}

std::string MediaTypeOf(std::string_view content_type) { return AsciiLower(NextListItem(content_type, ';')); }

bool CompressibleType(std::string_view content_type) {
  const std::string type = MediaTypeOf(content_type);
  if (type.rfind("text/", 0) == 0) return type != "text/event-stream";
  if (type == "application/json" || type == "application/javascript" || type == "application/xml" ||
      type == "image/svg+xml" || type == "application/x-ndjson") {
    return true;
  }
  constexpr std::string_view kApplication = "application/";
  if (type.rfind(kApplication, 0) != 0) return false;
  const std::string_view subtype = std::string_view(type).substr(kApplication.size());
  const auto ends_with = [&](std::string_view tail) {
    return subtype.size() > tail.size() && subtype.substr(subtype.size() - tail.size()) == tail;
  };
  return ends_with("+json") || ends_with("+xml");
}

bool IsLoopbackPeer(std::string_view peer) {
  return peer == "::1" || peer.rfind("127.", 0) == 0 || AsciiLower(std::string(peer)).rfind("::ffff:127.", 0) == 0;
}

bool MayGzip(Compression mode, std::string_view content_type, size_t body_bytes) {
  return mode != Compression::kOff && body_bytes >= kGzipMinBytes && CompressibleType(content_type);
}

bool GzipsFor(Compression mode, bool accepts_gzip, std::string_view peer) {
  return accepts_gzip && mode != Compression::kOff && !(mode == Compression::kRemote && IsLoopbackPeer(peer));
}

bool Gzip(std::string_view in, std::string* out) {
  thread_local Deflater deflater;
  return deflater.Run(in, out);
}

}  // namespace msp
