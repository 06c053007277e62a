// The web console of `msp serve` (docs/console.md): static pages at /ui, on
// the server's port, that sign in with an API key (kept in the browser's
// sessionStorage) and call the REST API (/v1) as any client does, with the
// same keys and clearances. The files (assets/) are compiled in
// (embed_assets.cmake): no build step on the user's side, no request
// outside the server. Every answer carries a strict Content-Security-Policy
// (scripts and styles from the server only, no inline script, no eval, no
// framing), nosniff and an ETag. Mounting registers three routes; nothing
// is read or computed until a page is asked for.
#ifndef MSP_CONSOLE_CONSOLE_H_
#define MSP_CONSOLE_CONSOLE_H_

#include <string>
#include <string_view>
#include <vector>

#include "server/http_server.h"

namespace msp {

// One embedded file: its name under assets/ and its bytes.
struct ConsoleAsset {
  const char* name;
  std::string_view bytes;
};

// Every embedded file (console_assets.cc, generated).
const std::vector<ConsoleAsset>& ConsoleAssets();

// The Content-Security-Policy of every console answer.
inline constexpr std::string_view kConsoleCsp =
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

// Registers GET /ui, /ui/ (the page) and /ui/{file} (its scripts and
// styles, and session.json: whom the request's key signs in as), none
// needing a key (they hold no data). `server` must outlive its routes.
// REQUIRES: before server.Start().
void MountConsole(HttpServer& server);

}  // namespace msp

#endif  // MSP_CONSOLE_CONSOLE_H_
