// http_client.h's functions outside libmsp_http_client.so: each loads the
// module on first use (http_client_module.h) and forwards to it. A process
// that never makes a request to a model server or tracker never loads it.
//
// When the module cannot be loaded, ParseBaseUrl, Create and the requests
// return its FailedPrecondition (which names the file and how to install it).
#include <mutex>

#include "net/http_client_module.h"
#include "util/module.h"

#ifndef MSP_HTTP_CLIENT_MODULE_BUILD_PATH
#define MSP_HTTP_CLIENT_MODULE_BUILD_PATH ""
#endif

namespace msp::net {
namespace {

Result<const HttpClientModuleV1*> Module() {
  static std::once_flag once;
  static Result<const HttpClientModuleV1*> loaded = Status::Internal("not loaded");
  std::call_once(once, [] {
    static constexpr ModuleSpec kSpec{"libmsp_http_client.so", "MSP_HTTP_CLIENT_MODULE",
                                      MSP_HTTP_CLIENT_MODULE_BUILD_PATH, "msp_http_client_v1",
                                      "talking to a model server or tracker over HTTP(S)"};
    Result<void*> entry = LoadModule(kSpec);
    if (!entry.ok()) {
      loaded = entry.status();
      return;
    }
    using Entry = const HttpClientModuleV1* (*)();
    const HttpClientModuleV1* table = reinterpret_cast<Entry>(*entry)();
    if (table == nullptr || table->version != 2) {
      loaded = Status::FailedPrecondition(std::string(kSpec.file) + " is not an msp HTTP client module of version 2");
      return;
    }
    loaded = table;
  });
  return loaded;
}

}  // namespace

Result<BaseUrl> ParseBaseUrl(std::string_view url) {
  MSP_ASSIGN_OR_RETURN(const HttpClientModuleV1* m, Module());
  return m->parse_base_url(url);
}

// A parsed BaseUrl exists only once ParseBaseUrl loaded the module; one made
// by hand without the module formats as "".
std::string BaseUrl::Origin() const {
  Result<const HttpClientModuleV1*> m = Module();
  return m.ok() ? (*m)->origin(*this) : std::string();
}

std::string BaseUrl::Join(std::string_view path) const {
  Result<const HttpClientModuleV1*> m = Module();
  return m.ok() ? (*m)->join(*this, path) : std::string();
}

Result<std::unique_ptr<HttpClient>> HttpClient::Create(HttpClientOptions options) {
  MSP_ASSIGN_OR_RETURN(const HttpClientModuleV1* m, Module());
  return m->create(std::move(options));
}

// An HttpClient exists only once Create loaded the module.
Result<HttpResponse> HttpClient::Post(std::string_view path, const std::string& body) const {
  return (*Module())->post(*this, path, body);
}

Result<HttpResponse> HttpClient::Get(std::string_view path) const { return (*Module())->get(*this, path); }

Result<nlohmann::json> HttpClient::PostJson(std::string_view path, const nlohmann::json& body) const {
  return (*Module())->post_json(*this, path, body);
}

Result<DownloadReply> HttpClient::Download(std::string_view path,
                                           const std::vector<std::pair<std::string, std::string>>& headers,
                                           const std::function<bool(const DownloadReply&, std::string_view)>& sink) const {
  return (*Module())->download(*this, path, headers, sink);
}

Status HttpStatusError(const std::string& url, const HttpResponse& response) {
  MSP_ASSIGN_OR_RETURN(const HttpClientModuleV1* m, Module());
  return m->status_error(url, response);
}

std::string ErrorSnippet(const std::string& body) {
  Result<const HttpClientModuleV1*> m = Module();
  return m.ok() ? (*m)->error_snippet(body) : body.substr(0, 300);
}

}  // namespace msp::net
