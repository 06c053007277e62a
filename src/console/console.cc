// The console's static files over HTTP: content types, security headers,
// ETags (console.h).
#include "console/console.h"

#include <cstdint>
#include <cstdio>
#include <optional>

#include <nlohmann/json.hpp>

#include "msp/types.h"
#include "util/text.h"

namespace msp {
namespace {

std::string_view ContentType(std::string_view name) {
  auto ends = [&](std::string_view ext) {
    return name.size() >= ext.size() && name.substr(name.size() - ext.size()) == ext;
  };
  if (ends(".html")) return "text/html; charset=utf-8";
  if (ends(".js") || ends(".mjs")) return "text/javascript; charset=utf-8";
  if (ends(".css")) return "text/css; charset=utf-8";
  if (ends(".svg")) return "image/svg+xml";
  if (ends(".png")) return "image/png";
  if (ends(".json")) return "application/json";
  return "application/octet-stream";
}

// FNV-1a of the bytes, quoted: the file's ETag.
std::string ETagOf(std::string_view bytes) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char out[24];
  std::snprintf(out, sizeof(out), "\"%016llx\"", static_cast<unsigned long long>(h));
  return out;
}

// True when an If-None-Match value names `etag`: "*", or a comma-separated
// list of entity tags compared weakly (a W/ prefix ignored: an answer the
// server sent gzip-encoded carries its tag weakened; RFC 9110, 13.1.2).
bool NoneMatchNames(std::string_view header, std::string_view etag) {
  while (!header.empty()) {
    std::string_view tag = NextListItem(header, ',');
    if (tag == "*") return true;
    if (tag.rfind("W/", 0) == 0) tag.remove_prefix(2);
    if (tag == etag) return true;
  }
  return false;
}

const ConsoleAsset* Find(std::string_view name) {
  for (const ConsoleAsset& a : ConsoleAssets()) {
    if (name == a.name) return &a;
  }
  return nullptr;
}

void SecurityHeaders(httplib::Response& res) {
  res.set_header("Content-Security-Policy", std::string(kConsoleCsp));
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("Referrer-Policy", "no-referrer");
  res.set_header("X-Frame-Options", "DENY");
  res.set_header("Cross-Origin-Opener-Policy", "same-origin");
  res.set_header("Cross-Origin-Resource-Policy", "same-origin");
}

void Serve(std::string_view name, const HttpCall& call, httplib::Response& res) {
  SecurityHeaders(res);
  const ConsoleAsset* asset = Find(name);
  if (asset == nullptr) {
    return SendError(res, 404, "not_found", "the console has no file '" + std::string(name) + "'");
  }
  const std::string etag = ETagOf(asset->bytes);
  res.set_header("ETag", etag);
  // Revalidated on every load (a new msp serves new files under the same
  // names), answered 304 while unchanged.
  res.set_header("Cache-Control", "no-cache");
  if (NoneMatchNames(call.req.get_header_value("If-None-Match"), etag)) {
    res.status = 304;
    return;
  }
  res.status = 200;
  res.set_content(std::string(asset->bytes), std::string(ContentType(name)));
}

// The names the search form's lists offer, from the engine's tables (the
// OpenAPI document's enums are the same names; the page does not fetch it).
nlohmann::json Enums() {
  nlohmann::json kinds = nlohmann::json::array(), layers = nlohmann::json::array(),
                 criticalities = nlohmann::json::array();
  for (Kind k : AllKinds()) kinds.push_back(KindName(k));
  for (Layer l : {Layer::kEpisodic, Layer::kSemantic, Layer::kProcedural, Layer::kDomain, Layer::kWorkflow,
                  Layer::kPractitioner}) {
    layers.push_back(LayerName(l));
  }
  for (Criticality c : {Criticality::kLow, Criticality::kNormal, Criticality::kHigh, Criticality::kCritical}) {
    criticalities.push_back(CriticalityName(c));
  }
  return {{"kinds", kinds}, {"layers", layers}, {"criticalities", criticalities}};
}

// /ui/session.json: whom the request's key (if any) signs in as. Always 200,
// so the page learns it without an error in the browser's console:
// {signed_in, tenant, clearance, keys (the server asks for one), enums (the
// search form's lists: kinds, layers, criticalities)}.
void Session(const HttpServer& server, const HttpCall& call, httplib::Response& res) {
  SecurityHeaders(res);
  res.set_header("Cache-Control", "no-store");
  const std::optional<ApiPrincipal> p = server.Identify(call.req);
  nlohmann::json out = {{"signed_in", p.has_value()},
                        {"keys", !server.options().allow_anonymous},
                        {"tenant", p ? nlohmann::json(p->tenant) : nlohmann::json(nullptr)},
                        {"clearance", p && p->clearance ? nlohmann::json(*p->clearance) : nlohmann::json(nullptr)},
                        {"enums", Enums()}};
  SendJson(res, 200, out);
}

}  // namespace

void MountConsole(HttpServer& server) {
  auto page = [](const HttpCall& call, httplib::Response& res) { Serve("index.html", call, res); };
  server.Handle({"GET", "/ui", page, false});
  server.Handle({"GET", "/ui/", page, false});
  server.Handle({"GET", "/ui/{file}",
                 [&server](const HttpCall& call, httplib::Response& res) {
                   const std::string& file = call.params.at("file");
                   if (file == "session.json") return Session(server, call, res);
                   Serve(file, call, res);
                 },
                 false});
}

}  // namespace msp
