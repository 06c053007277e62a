// PDF text through poppler-cpp: one segment per page that has text.
#include <climits>
#include <memory>
#include <mutex>
#include <string>

#include <poppler-document.h>
#include <poppler-global.h>
#include <poppler-page.h>

#include "ingest/formats.h"

namespace msp {
namespace {

// poppler reports syntax errors through one process-wide function; the
// extractor keeps the first message of the current thread's document for its
// error, and nothing reaches stderr.
thread_local std::string* g_poppler_errors = nullptr;

void CollectPopplerError(const std::string& message, void*) {
  if (g_poppler_errors != nullptr && g_poppler_errors->empty()) *g_poppler_errors = message;
}

void QuietPoppler() {
  static std::once_flag once;
  std::call_once(once, [] { poppler::set_debug_error_function(&CollectPopplerError, nullptr); });
}

std::string Utf8(const poppler::ustring& s) {
  const poppler::byte_array bytes = s.to_utf8();
  std::string out(bytes.begin(), bytes.end());
  // poppler may end a page with NULs; they are no text.
  while (!out.empty() && out.back() == '\0') out.pop_back();
  std::string clean;
  clean.reserve(out.size());
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == '\0') continue;
    if (out[i] == '\r') {
      clean.push_back('\n');
      if (i + 1 < out.size() && out[i + 1] == '\n') ++i;
      continue;
    }
    clean.push_back(out[i]);
  }
  return clean;
}

}  // namespace

Result<ExtractedDocument> ReadPdf(std::string_view bytes) {
  QuietPoppler();
  if (bytes.size() > static_cast<size_t>(INT_MAX)) return Status::InvalidArgument("too large for the PDF reader");
  std::string errors;
  g_poppler_errors = &errors;
  struct Reset {
    ~Reset() { g_poppler_errors = nullptr; }
  } reset;
  try {
    std::unique_ptr<poppler::document> doc(
        poppler::document::load_from_raw_data(bytes.data(), static_cast<int>(bytes.size())));
    if (!doc) {
      return Status::InvalidArgument("not a readable PDF" + (errors.empty() ? std::string() : " (" + errors + ")"));
    }
    if (doc->is_locked()) return Status::InvalidArgument("the PDF is encrypted with a password");
    DocumentBuilder builder;
    const int pages = doc->pages();
    for (int i = 0; i < pages; ++i) {
      std::unique_ptr<poppler::page> page(doc->create_page(i));
      builder.Page(i + 1);
      if (!page) continue;
      builder.Block(Utf8(page->text()));
    }
    ExtractedDocument out = builder.Finish();
    const std::string title = Utf8(doc->info_key("Title"));
    if (!title.empty()) out.title = title;
    return out;
  } catch (const std::exception& e) {
    return Status::InvalidArgument(std::string("PDF reader failed: ") + e.what());
  }
}

}  // namespace msp
