// Loads libmsp_ingest_formats.so (see formats.h) and forwards the
// format extractors of document.h to it; the dispatcher Extract().
#include <mutex>
#include <string>

#include "ingest/formats.h"
#include "util/module.h"
#include "util/utf8.h"

#ifndef MSP_INGEST_MODULE_BUILD_PATH
#define MSP_INGEST_MODULE_BUILD_PATH ""
#endif

namespace msp {
namespace {

struct Loaded {
  const IngestFormatsV1* table = nullptr;
  Status error;
};

Loaded Load() {
  static constexpr ModuleSpec kSpec{"libmsp_ingest_formats.so", "MSP_INGEST_MODULE", MSP_INGEST_MODULE_BUILD_PATH,
                                    "msp_ingest_formats_v1", "reading PDF, DOCX, Markdown and HTML documents"};
  Loaded out;
  Result<void*> entry = LoadModule(kSpec);
  if (!entry.ok()) {
    out.error = entry.status();
    return out;
  }
  using Entry = const IngestFormatsV1* (*)();
  const IngestFormatsV1* table = reinterpret_cast<Entry>(*entry)();
  if (table == nullptr || table->version != 1 || table->pdf == nullptr || table->docx == nullptr ||
      table->markdown == nullptr || table->html == nullptr) {
    out.error = Status::FailedPrecondition(std::string(kSpec.file) + " is not an msp document-reader module of version 1");
    return out;
  }
  out.table = table;
  return out;
}

}  // namespace

Result<const IngestFormatsV1*> IngestFormats() {
  static std::once_flag once;
  static Loaded loaded;
  std::call_once(once, [] { loaded = Load(); });
  if (loaded.table == nullptr) return loaded.error;
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
