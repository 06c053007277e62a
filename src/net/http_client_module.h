// The interface of libmsp_http_client.so, the model providers' HTTP(S)
// client as a module: cpp-httplib with OpenSSL, zlib and brotli (10 shared
// objects, and OpenSSL's initialisation at load: ~8 ms of every process
// start) are loaded only by a process that talks to a model server or a
// tracker. http_client.h's functions, called outside the module, are
// forwarded to this table (http_client_loader.cc).
#ifndef MSP_NET_HTTP_CLIENT_MODULE_H_
#define MSP_NET_HTTP_CLIENT_MODULE_H_

#include "net/http_client.h"

namespace msp::net {

struct HttpClientModuleV1 {
  int version = 2;  // 2: download
  Result<BaseUrl> (*parse_base_url)(std::string_view url) = nullptr;
  std::string (*origin)(const BaseUrl& base) = nullptr;
  std::string (*join)(const BaseUrl& base, std::string_view path) = nullptr;
  Result<std::unique_ptr<HttpClient>> (*create)(HttpClientOptions options) = nullptr;
  Result<HttpResponse> (*post)(const HttpClient& client, std::string_view path, const std::string& body) = nullptr;
  Result<HttpResponse> (*get)(const HttpClient& client, std::string_view path) = nullptr;
  Result<nlohmann::json> (*post_json)(const HttpClient& client, std::string_view path,
                                      const nlohmann::json& body) = nullptr;
  Status (*status_error)(const std::string& url, const HttpResponse& response) = nullptr;
  std::string (*error_snippet)(const std::string& body) = nullptr;
  Result<DownloadReply> (*download)(const HttpClient& client, std::string_view path,
                                    const std::vector<std::pair<std::string, std::string>>& headers,
                                    const std::function<bool(const DownloadReply&, std::string_view)>& sink) = nullptr;
};

}  // namespace msp::net

// The module's one exported symbol.
extern "C" const msp::net::HttpClientModuleV1* msp_http_client_v1();

#endif  // MSP_NET_HTTP_CLIENT_MODULE_H_
