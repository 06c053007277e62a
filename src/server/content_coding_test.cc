// Tests of the server's content coding: which answers go out gzip-encoded
// (the rules of content_coding.h), the encoder against zlib's own decoder,
// and what a client gets over real loopback sockets under each
// server.compression.
#include "server/content_coding.h"

#include <zlib.h>

#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>

#include <httplib.h>

#include "server/http_server.h"
#include "tests/support/test_util.h"

namespace msp {
namespace {

// `in` decoded as one gzip member; nullopt when it is not one, or when
// bytes follow it.
std::optional<std::string> Gunzip(const std::string& in) {
  z_stream z{};
  if (inflateInit2(&z, 15 + 16) != Z_OK) return std::nullopt;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  std::string out;
  int rc = Z_OK;
  while (rc == Z_OK) {
    char buf[16384];
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof(buf);
    rc = inflate(&z, Z_NO_FLUSH);
    out.append(buf, sizeof(buf) - z.avail_out);
  }
  const bool whole = rc == Z_STREAM_END && z.avail_in == 0;
  inflateEnd(&z);
  if (!whole) return std::nullopt;
  return out;
}

TEST(ContentCodingTest, AcceptsGzipReadsTheCodingsAndTheirWeights) {
  EXPECT_TRUE(AcceptsGzip("gzip"));
  EXPECT_TRUE(AcceptsGzip("gzip, deflate, br"));
  EXPECT_TRUE(AcceptsGzip("br;q=1.0 , GZIP;q=0.5"));
  EXPECT_TRUE(AcceptsGzip("x-gzip"));
  EXPECT_TRUE(AcceptsGzip("*"));
  EXPECT_TRUE(AcceptsGzip("deflate, *;q=0.1"));
  EXPECT_TRUE(AcceptsGzip("gzip ; q = 0.001"));
  EXPECT_FALSE(AcceptsGzip(""));
  EXPECT_FALSE(AcceptsGzip("br"));
  EXPECT_FALSE(AcceptsGzip("deflate, identity"));
  EXPECT_FALSE(AcceptsGzip("gzip;q=0"));
  EXPECT_FALSE(AcceptsGzip("gzip;q=0.0, br"));
  EXPECT_FALSE(AcceptsGzip("gzip;q=0, *"));   // refused by name, whatever * says
  EXPECT_FALSE(AcceptsGzip("*;q=0"));
  EXPECT_FALSE(AcceptsGzip("gzip;q=x"));      // an unreadable weight asks for nothing
  EXPECT_FALSE(AcceptsGzip("gzipped, xgzip"));
  EXPECT_FALSE(AcceptsGzip("gzip, gzip;q=0"));  // named twice: the stricter
}

TEST(ContentCodingTest, CompressibleTypes) {
  for (const char* type : {"application/json", "application/json; charset=utf-8", "text/html", "text/plain",
                           "text/javascript; charset=utf-8", "TEXT/CSS", "application/javascript", "image/svg+xml",
                           "application/problem+json", "application/x-ndjson", "application/xml"}) {
    EXPECT_TRUE(CompressibleType(type)) << type;
  }
  for (const char* type : {"text/event-stream", "image/png", "application/octet-stream", "application/gzip",
                           "font/woff2", "", "application/jsonx", "application/+json"}) {
    EXPECT_FALSE(CompressibleType(type)) << type;
  }
}

TEST(ContentCodingTest, LoopbackPeers) {
  EXPECT_TRUE(IsLoopbackPeer("127.0.0.1"));
  EXPECT_TRUE(IsLoopbackPeer("127.1.2.3"));
  EXPECT_TRUE(IsLoopbackPeer("::1"));
  EXPECT_TRUE(IsLoopbackPeer("::ffff:127.0.0.1"));
  EXPECT_FALSE(IsLoopbackPeer("10.0.0.2"));
  EXPECT_FALSE(IsLoopbackPeer("192.168.1.7"));
  EXPECT_FALSE(IsLoopbackPeer("::ffff:10.0.0.2"));
  EXPECT_FALSE(IsLoopbackPeer("2001:db8::1"));
  EXPECT_FALSE(IsLoopbackPeer(""));
}

TEST(ContentCodingTest, ShouldGzipKeepsToTheModeTheSizeAndTheClient) {
  const std::string json = "application/json";
  EXPECT_TRUE(ShouldGzip(Compression::kRemote, true, "10.0.0.2", json, kGzipMinBytes));
  EXPECT_FALSE(ShouldGzip(Compression::kRemote, true, "10.0.0.2", json, kGzipMinBytes - 1));
  EXPECT_FALSE(ShouldGzip(Compression::kRemote, true, "127.0.0.1", json, 1 << 20));
  EXPECT_FALSE(ShouldGzip(Compression::kRemote, true, "::1", json, 1 << 20));
  EXPECT_FALSE(ShouldGzip(Compression::kRemote, false, "10.0.0.2", json, 1 << 20));
  EXPECT_FALSE(ShouldGzip(Compression::kRemote, true, "10.0.0.2", "image/png", 1 << 20));
  EXPECT_TRUE(ShouldGzip(Compression::kAll, true, "127.0.0.1", json, kGzipMinBytes));
  EXPECT_FALSE(ShouldGzip(Compression::kAll, false, "127.0.0.1", json, 1 << 20));
  EXPECT_FALSE(ShouldGzip(Compression::kOff, true, "10.0.0.2", json, 1 << 20));

  EXPECT_EQ(CompressionFromName("remote"), Compression::kRemote);
  EXPECT_EQ(CompressionFromName("all"), Compression::kAll);
  EXPECT_EQ(CompressionFromName("off"), Compression::kOff);
  EXPECT_FALSE(CompressionFromName("gzip"));
  EXPECT_FALSE(CompressionFromName(""));
}

TEST(ContentCodingTest, GzipIsDecodedBackByZlib) {
  std::mt19937 rng(7);
  std::string text;
  while (text.size() < 200000) text += "caroline went to the lgbtq support group on " + std::to_string(rng() % 1000) + "; ";
  std::string noise(3u << 20, '\0');
  for (char& c : noise) c = static_cast<char>(rng());
  // The same thread encodes one after another: its deflate state is reset
  // between answers, never carried over.
  const std::string inputs[] = {std::string(), std::string("x"), text, noise, text.substr(0, 5000)};
  for (const std::string& in : inputs) {
    std::string out;
    ASSERT_TRUE(Gzip(in, &out)) << in.size();
    const std::optional<std::string> back = Gunzip(out);
    ASSERT_TRUE(back) << in.size();
    EXPECT_EQ(*back, in);
    // Text shrinks; noise cannot, and grows by a few bytes a block at most.
    if (in.size() > 1000 && in != noise) {
      EXPECT_LT(out.size(), in.size() / 3) << in.size();
    } else {
      EXPECT_LT(out.size(), in.size() + in.size() / 1000 + 32) << in.size();
    }
  }
}

// A loopback server under `compression` with a route answering `kBigJson`
// (above kGzipMinBytes, with an ETag) and the built-in /healthz (small).
class CodingServer {
 public:
  explicit CodingServer(const std::string& compression) {
    ServerOptions o;
    o.port = 0;
    o.threads = 2;
    o.allow_anonymous = true;
    o.access_log = false;
    o.compression = compression;
    auto server = HttpServer::Create(o, ApiKeys(), nullptr);
    if (!server.ok()) {
      ADD_FAILURE() << server.status().ToString();
      return;
    }
    server_ = std::move(server).value();
    server_->Handle({"GET", "/big", [](const HttpCall&, httplib::Response& res) {
                       res.set_header("ETag", "\"big-1\"");
                       res.set_content(BigJson(), "application/json");
                     }});
    auto port = server_->Start();
    if (!port.ok()) {
      ADD_FAILURE() << port.status().ToString();
      return;
    }
    port_ = *port;
  }

  static std::string BigJson() {
    std::string s = "{\"hits\":[";
    for (int i = 0; i < 100; ++i) s += (i ? "," : "") + std::string("{\"id\":") + std::to_string(i) + ",\"text\":\"a turn of the conversation\"}";
    return s + "]}";
  }

  // GET `path` with `accept_encoding`, the answer as sent.
  httplib::Result Get(const std::string& path, const std::string& accept_encoding) {
    httplib::Client client("127.0.0.1", port_);
    client.set_decompress(false);  // the bytes as they came
    return client.Get(path, httplib::Headers{{"Accept-Encoding", accept_encoding}});
  }

 private:
  std::unique_ptr<HttpServer> server_;
  int port_ = 0;
};

TEST(ContentCodingServerTest, AllEncodesLargeAnswersForClientsThatAcceptGzip) {
  CodingServer server("all");
  const std::string big = CodingServer::BigJson();
  ASSERT_GE(big.size(), kGzipMinBytes);

  auto plain = server.Get("/big", "identity");
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->status, 200);
  EXPECT_EQ(plain->body, big);
  EXPECT_FALSE(plain->has_header("Content-Encoding"));
  EXPECT_EQ(plain->get_header_value("Vary"), "Accept-Encoding");
  EXPECT_EQ(plain->get_header_value("ETag"), "\"big-1\"");

  // What browsers send: gzip, never brotli.
  for (const char* accept : {"gzip, deflate, br", "br;q=1.0, gzip;q=0.5", "*", "x-gzip"}) {
    auto encoded = server.Get("/big", accept);
    ASSERT_TRUE(encoded) << accept;
    EXPECT_EQ(encoded->status, 200);
    EXPECT_EQ(encoded->get_header_value("Content-Encoding"), "gzip") << accept;
    EXPECT_EQ(encoded->get_header_value("Content-Length"), std::to_string(encoded->body.size()));
    EXPECT_LT(encoded->body.size(), big.size());
    EXPECT_EQ(Gunzip(encoded->body).value_or("not gzip"), big) << accept;
    EXPECT_EQ(encoded->get_header_value("Vary"), "Accept-Encoding");
    EXPECT_EQ(encoded->get_header_value("ETag"), "W/\"big-1\"");  // another representation
  }
  // Not accepted: sent as it is.
  for (const char* accept : {"br", "gzip;q=0, *", "identity", "deflate"}) {
    auto same = server.Get("/big", accept);
    ASSERT_TRUE(same) << accept;
    EXPECT_FALSE(same->has_header("Content-Encoding")) << accept;
    EXPECT_EQ(same->body, big) << accept;
  }
  // Small answers go as they are, whatever the client accepts.
  auto small = server.Get("/healthz", "gzip, deflate, br");
  ASSERT_TRUE(small);
  EXPECT_EQ(small->status, 200);
  EXPECT_FALSE(small->has_header("Content-Encoding"));
  EXPECT_NE(small->body.find("\"ok\""), std::string::npos) << small->body;
}

TEST(ContentCodingServerTest, RemoteSendsLoopbackClientsTheBytesAsTheyAre) {
  CodingServer server("remote");  // the default
  EXPECT_EQ(ServerOptions().compression, "remote");
  for (const char* accept : {"gzip, deflate, br", "gzip", "*"}) {
    auto answer = server.Get("/big", accept);
    ASSERT_TRUE(answer) << accept;
    EXPECT_EQ(answer->status, 200);
    EXPECT_FALSE(answer->has_header("Content-Encoding")) << accept;
    EXPECT_EQ(answer->body, CodingServer::BigJson());
    // Another client of the same URL (not on loopback) may get it encoded.
    EXPECT_EQ(answer->get_header_value("Vary"), "Accept-Encoding");
    EXPECT_EQ(answer->get_header_value("ETag"), "\"big-1\"");
  }
}

TEST(ContentCodingServerTest, OffNeverEncodes) {
  CodingServer server("off");
  auto answer = server.Get("/big", "gzip");
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->status, 200);
  EXPECT_FALSE(answer->has_header("Content-Encoding"));
  EXPECT_FALSE(answer->has_header("Vary"));
  EXPECT_EQ(answer->body, CodingServer::BigJson());
}

TEST(ContentCodingServerTest, AnUnknownModeIsRefused) {
  ServerOptions o;
  o.allow_anonymous = true;
  o.compression = "brotli";
  auto server = HttpServer::Create(o, ApiKeys(), nullptr);
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(server.status().message().find("server.compression"), std::string::npos) << server.status().message();
}

}  // namespace
}  // namespace msp
