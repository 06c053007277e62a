// Unit tests of the server shell: API keys, the Status -> HTTP mapping and
// the metrics text. (Routing over real sockets is in tests/http/.)
#include <gtest/gtest.h>

#include <fstream>
#include <optional>

#include <httplib.h>

#include "server/auth.h"
#include "server/http_server.h"
#include "server/http_status.h"
#include "server/metrics.h"
#include "tests/support/test_util.h"

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
  EXPECT_FALSE(IsLoopbackAddress("10.0.0.1"));
}

}  // namespace
}  // namespace msp
