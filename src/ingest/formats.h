// The document readers that need third-party libraries (PDF: poppler-cpp;
// DOCX: libzip + pugixml; Markdown: cmark; HTML: libxml2) live in a module,
// libmsp_ingest_formats.so, that the static msp_ingest library loads with
// dlopen the first time a document of one of those formats is extracted.
// So `msp` and every program linking msp_ingest start without loading those
// libraries and their ~30 dependencies (about 7 ms per process); only
// `msp ingest` pays for them.
//
// This header is the module's interface: the Read* functions are defined in
// the module (extract_*.cc), and the loader (formats_loader.cc) finds them
// through the one exported symbol, msp_ingest_formats_v1.
#ifndef MSP_INGEST_FORMATS_H_
#define MSP_INGEST_FORMATS_H_

#include <string_view>

#include "ingest/document.h"

namespace msp {

// The module's table of readers (see document.h for what each returns).
struct IngestFormatsV1 {
  int version = 1;
  Result<ExtractedDocument> (*pdf)(std::string_view bytes) = nullptr;
  Result<ExtractedDocument> (*docx)(std::string_view bytes) = nullptr;
  Result<ExtractedDocument> (*markdown)(std::string_view bytes) = nullptr;
  Result<ExtractedDocument> (*html)(std::string_view bytes) = nullptr;
};

// In the module.
Result<ExtractedDocument> ReadPdf(std::string_view bytes);
Result<ExtractedDocument> ReadDocx(std::string_view bytes);
Result<ExtractedDocument> ReadMarkdown(std::string_view bytes);
Result<ExtractedDocument> ReadHtml(std::string_view bytes);

// The readers, loading the module on first use (thread-safe; loaded once per
// process). FailedPrecondition naming every place looked at when the module
// cannot be loaded. Looked for, in order: $MSP_INGEST_MODULE; beside the
// running program; ../lib/msp/ beside it; where the build put it.
Result<const IngestFormatsV1*> IngestFormats();

}  // namespace msp

// The module's one exported symbol.
extern "C" const msp::IngestFormatsV1* msp_ingest_formats_v1();

#endif  // MSP_INGEST_FORMATS_H_
