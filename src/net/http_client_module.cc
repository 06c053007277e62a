// The entry point of libmsp_http_client.so (see http_client_module.h).
#include "net/http_client_module.h"

extern "C" __attribute__((visibility("default"))) const msp::net::HttpClientModuleV1* msp_http_client_v1() {
  using namespace msp::net;
  static const HttpClientModuleV1 table{
      2,
      &ParseBaseUrl,
      [](const BaseUrl& base) { return base.Origin(); },
      [](const BaseUrl& base, std::string_view path) { return base.Join(path); },
      &HttpClient::Create,
      [](const HttpClient& c, std::string_view path, const std::string& body) { return c.Post(path, body); },
      [](const HttpClient& c, std::string_view path) { return c.Get(path); },
      [](const HttpClient& c, std::string_view path, const nlohmann::json& body) { return c.PostJson(path, body); },
      &HttpStatusError,
      &ErrorSnippet,
      [](const HttpClient& c, std::string_view path, const std::vector<std::pair<std::string, std::string>>& headers,
         const std::function<bool(const DownloadReply&, std::string_view)>& sink) { return c.Download(path, headers, sink); },
  };
  return &table;
}
