// Loads libmsp_ingest_formats.so (see formats.h) and forwards the
// format extractors of document.h to it; the dispatcher Extract().
#include <dlfcn.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "ingest/formats.h"
#include "util/utf8.h"

#ifndef MSP_INGEST_MODULE_BUILD_PATH
#define MSP_INGEST_MODULE_BUILD_PATH ""
#endif

namespace msp {
namespace {

constexpr const char* kModuleName = "libmsp_ingest_formats.so";

std::string ProgramDir() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return "";
  std::string path(buf, static_cast<size_t>(n));
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

std::vector<std::string> Candidates() {
  std::vector<std::string> out;
  if (const char* env = std::getenv("MSP_INGEST_MODULE"); env != nullptr && *env != '\0') out.push_back(env);
  const std::string dir = ProgramDir();
  if (!dir.empty()) {
    out.push_back(dir + "/" + kModuleName);
    out.push_back(dir + "/../lib/msp/" + kModuleName);
  }
  if (std::string(MSP_INGEST_MODULE_BUILD_PATH) != "") out.push_back(MSP_INGEST_MODULE_BUILD_PATH);
  return out;
}

struct Loaded {
  const IngestFormatsV1* table = nullptr;
  std::string error;
};

Loaded Load() {
  Loaded out;
  std::string tried;
  for (const std::string& path : Candidates()) {
    if (access(path.c_str(), R_OK) != 0) {
      tried += "\n  " + path + " (not there)";
      continue;
    }
    // Never closed: the readers stay loaded for the life of the process.
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* why = dlerror();
      tried += "\n  " + path + " (" + (why == nullptr ? "dlopen failed" : why) + ")";
      continue;
    }
    using Entry = const IngestFormatsV1* (*)();
    auto entry = reinterpret_cast<Entry>(dlsym(handle, "msp_ingest_formats_v1"));
    const IngestFormatsV1* table = entry == nullptr ? nullptr : entry();
    if (table == nullptr || table->version != 1 || table->pdf == nullptr || table->docx == nullptr ||
        table->markdown == nullptr || table->html == nullptr) {
      tried += "\n  " + path + " (not an msp document-reader module of version 1)";
      continue;
    }
    out.table = table;
    return out;
  }
  out.error = std::string("the document readers (") + kModuleName +
              ") could not be loaded; build or install it beside msp, or set MSP_INGEST_MODULE. Tried:" + tried;
  return out;
}

}  // namespace

Result<const IngestFormatsV1*> IngestFormats() {
  static std::once_flag once;
  static Loaded loaded;
  std::call_once(once, [] { loaded = Load(); });
  if (loaded.table == nullptr) return Status::FailedPrecondition(loaded.error);
  return loaded.table;
}

Result<ExtractedDocument> ExtractPdf(std::string_view bytes) {
  MSP_ASSIGN_OR_RETURN(const IngestFormatsV1* f, IngestFormats());
  return f->pdf(bytes);
}

Result<ExtractedDocument> ExtractDocx(std::string_view bytes) {
  MSP_ASSIGN_OR_RETURN(const IngestFormatsV1* f, IngestFormats());
  return f->docx(bytes);
}

Result<ExtractedDocument> ExtractMarkdown(std::string_view bytes) {
  MSP_ASSIGN_OR_RETURN(const IngestFormatsV1* f, IngestFormats());
  return f->markdown(bytes);
}

Result<ExtractedDocument> ExtractHtml(std::string_view bytes) {
  MSP_ASSIGN_OR_RETURN(const IngestFormatsV1* f, IngestFormats());
  return f->html(bytes);
}

Result<ExtractedDocument> Extract(DocumentFormat format, std::string_view bytes) {
  Result<ExtractedDocument> doc = [&]() -> Result<ExtractedDocument> {
    switch (format) {
      case DocumentFormat::kPdf: return ExtractPdf(bytes);
      case DocumentFormat::kDocx: return ExtractDocx(bytes);
      case DocumentFormat::kMarkdown: return ExtractMarkdown(bytes);
      case DocumentFormat::kHtml: return ExtractHtml(bytes);
      case DocumentFormat::kText: return ExtractText(bytes);
    }
    return Status::InvalidArgument("unknown format");
  }();
  if (!doc.ok()) return doc;
  size_t bad = 0;
  if (!IsValidUtf8(doc->text, &bad)) {
    return Status::InvalidArgument("the extracted text is not valid UTF-8 (first bad byte at offset " +
                                   std::to_string(bad) + ")");
  }
  return doc;
}

}  // namespace msp
