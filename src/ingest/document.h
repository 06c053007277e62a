// Text extraction for document ingestion: a file's bytes -> its plain text
// (UTF-8) cut into segments that carry where they came from (a PDF page, a
// heading path).
//
// Every extractor is a pure function of the bytes; none touches the file
// system or the engine. The PDF, DOCX, Markdown and HTML readers live in a
// module loaded on first use (formats.h); when it cannot be loaded they
// return FailedPrecondition. Library exceptions and errors are caught inside and
// come back as a Status: InvalidArgument for a damaged or unreadable file
// (the message says what was wrong), never a crash.
#ifndef MSP_INGEST_DOCUMENT_H_
#define MSP_INGEST_DOCUMENT_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "msp/status.h"

namespace msp {

enum class DocumentFormat { kPdf, kDocx, kMarkdown, kHtml, kText };

// "pdf", "docx", "markdown", "html", "text".
std::string_view DocumentFormatName(DocumentFormat f);

// A run [start, end) of ExtractedDocument::text from one place of the file.
// Chunks never cross a segment boundary.
struct DocSegment {
  size_t start = 0;
  size_t end = 0;
  int page = 0;           // 1-based PDF page; 0: the format has no pages
  std::string section;    // heading path "Intro > Setup"; empty: none
};

struct ExtractedDocument {
  std::string text;                   // valid UTF-8, "\n" line ends
  std::vector<DocSegment> segments;   // in order, non-overlapping, inside text
  std::string title;                  // first heading or <title>; may be empty
};

// The format of a file named `path` by its extension (.pdf, .docx, .md,
// .markdown, .html, .htm, .xhtml, .txt, .text); nullopt for other names.
std::optional<DocumentFormat> FormatFromExtension(std::string_view path);

// The format of `bytes` when the extension says nothing: a PDF header, a
// ZIP holding word/document.xml, else UTF-8 text without NUL bytes.
// nullopt when none fits (a binary file).
std::optional<DocumentFormat> SniffFormat(std::string_view bytes);

// The extractors. Each returns the text and its segments; InvalidArgument
// for a damaged file, naming the problem.
Result<ExtractedDocument> ExtractPdf(std::string_view bytes);       // one segment per page with text
Result<ExtractedDocument> ExtractDocx(std::string_view bytes);      // sections from Heading1..9 / Title styles
Result<ExtractedDocument> ExtractMarkdown(std::string_view bytes);  // sections from ATX / setext headings
Result<ExtractedDocument> ExtractHtml(std::string_view bytes);      // sections from h1..h6; script/style dropped
Result<ExtractedDocument> ExtractText(std::string_view bytes);      // one segment; must be UTF-8

// Dispatches on `format`.
Result<ExtractedDocument> Extract(DocumentFormat format, std::string_view bytes);

// Builds an ExtractedDocument block by block, for the extractors: blocks are
// separated by one blank line; a heading closes the current section and opens
// a new one (a section holding nothing but its heading is merged into the
// next one, whose path then names both levels' headings).
class DocumentBuilder {
 public:
  // Starts a heading of `level` (1 = top) with text `heading` (also added to
  // the text as its own block).
  void Heading(int level, std::string_view heading);
  // Adds a block of text (a paragraph, list item, code block...). Leading and
  // trailing blank lines are dropped; empty blocks are ignored.
  void Block(std::string_view block);
  // Starts page `page` (PDF): closes the current segment.
  void Page(int page);
  ExtractedDocument Finish();

 private:
  void CloseSegment();
  void Append(std::string_view block);

  ExtractedDocument doc_;
  std::vector<std::pair<int, std::string>> headings_;  // the open heading path
  size_t segment_start_ = static_cast<size_t>(-1);  // none open
  bool segment_has_body_ = false;
  int page_ = 0;
};

}  // namespace msp

#endif  // MSP_INGEST_DOCUMENT_H_
