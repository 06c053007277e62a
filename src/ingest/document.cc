// Format detection, the plain-text extractor and DocumentBuilder (see
// document.h); the other extractors and the dispatcher are in
// formats_loader.cc.
#include "ingest/document.h"

#include <algorithm>
#include <cctype>
#include <string>

#include "util/text.h"
#include "util/utf8.h"

namespace msp {
namespace {

constexpr size_t kNone = static_cast<size_t>(-1);

std::string LowerExtension(std::string_view path) {
  const size_t slash = path.find_last_of('/');
  const std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  const size_t dot = name.find_last_of('.');
  if (dot == std::string_view::npos || dot == 0) return "";
  std::string ext(name.substr(dot + 1));
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return ext;
}

// `block` without leading blank lines and trailing whitespace.
std::string_view TrimBlock(std::string_view block) {
  size_t b = 0;
  // Drop whole leading blank lines, keep a first line's indentation.
  for (size_t i = 0; i < block.size(); ++i) {
    if (block[i] == '\n') {
      b = i + 1;
    } else if (!IsAsciiSpace(block[i])) {
      break;
    }
  }
  size_t e = block.size();
  while (e > b && IsAsciiSpace(block[e - 1])) --e;
  return block.substr(b, e - b);
}

}  // namespace

std::string_view DocumentFormatName(DocumentFormat f) {
  switch (f) {
    case DocumentFormat::kPdf: return "pdf";
    case DocumentFormat::kDocx: return "docx";
    case DocumentFormat::kMarkdown: return "markdown";
    case DocumentFormat::kHtml: return "html";
    case DocumentFormat::kText: return "text";
  }
  return "text";
}

std::optional<DocumentFormat> FormatFromExtension(std::string_view path) {
  const std::string ext = LowerExtension(path);
  if (ext == "pdf") return DocumentFormat::kPdf;
  if (ext == "docx") return DocumentFormat::kDocx;
  if (ext == "md" || ext == "markdown") return DocumentFormat::kMarkdown;
  if (ext == "html" || ext == "htm" || ext == "xhtml") return DocumentFormat::kHtml;
  if (ext == "txt" || ext == "text") return DocumentFormat::kText;
  return std::nullopt;
}

std::optional<DocumentFormat> SniffFormat(std::string_view bytes) {
  if (bytes.substr(0, 5) == "%PDF-") return DocumentFormat::kPdf;
  if (bytes.substr(0, 4) == std::string_view("PK\x03\x04", 4)) {
    // A ZIP: a DOCX names its main part early in the central directory.
    if (bytes.find("word/document.xml") != std::string_view::npos) return DocumentFormat::kDocx;
    return std::nullopt;
  }
  if (bytes.find('\0') != std::string_view::npos) return std::nullopt;
  std::string_view body = bytes;
  if (body.substr(0, 3) == "\xEF\xBB\xBF") body.remove_prefix(3);
  if (!IsValidUtf8(body)) return std::nullopt;
  return DocumentFormat::kText;
}

Result<ExtractedDocument> ExtractText(std::string_view bytes) {
  if (bytes.substr(0, 3) == "\xEF\xBB\xBF") bytes.remove_prefix(3);
  if (bytes.find('\0') != std::string_view::npos) {
    return Status::InvalidArgument("holds NUL bytes: not a text file");
  }
  size_t bad = 0;
  if (!IsValidUtf8(bytes, &bad)) {
    return Status::InvalidArgument("not valid UTF-8 (first bad byte at offset " + std::to_string(bad) +
                                   "); convert it to UTF-8 first");
  }
  std::string text;
  text.reserve(bytes.size());
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (bytes[i] == '\r') {
      text.push_back('\n');
      if (i + 1 < bytes.size() && bytes[i + 1] == '\n') ++i;
    } else {
      text.push_back(bytes[i]);
    }
  }
  DocumentBuilder b;
  b.Block(text);
  return b.Finish();
}

// ------------------------------------------------------------ DocumentBuilder

void DocumentBuilder::Append(std::string_view block) {
  if (!doc_.text.empty()) doc_.text += "\n\n";
  // Segments open lazily: one starts where its first block does.
  if (segment_start_ == kNone) segment_start_ = doc_.text.size();
  // Control characters other than tab and newline become spaces (form feeds
  // from PDFs, vertical tabs from DOCX), so records hold plain text.
  for (char c : block) {
    const unsigned char u = static_cast<unsigned char>(c);
    doc_.text.push_back((u < 0x20 && c != '\n' && c != '\t') || u == 0x7F ? ' ' : c);
  }
}

void DocumentBuilder::CloseSegment() {
  if (segment_start_ != kNone && doc_.text.size() > segment_start_) {
    DocSegment s;
    s.start = segment_start_;
    s.end = doc_.text.size();
    s.page = page_;
    for (const auto& [level, heading] : headings_) {
      (void)level;
      if (!s.section.empty()) s.section += " > ";
      s.section += heading;
    }
    doc_.segments.push_back(std::move(s));
  }
  segment_start_ = kNone;
  segment_has_body_ = false;
}

void DocumentBuilder::Heading(int level, std::string_view heading) {
  std::string_view h = TrimBlock(heading);
  while (!h.empty() && IsAsciiSpace(h.front())) h.remove_prefix(1);
  std::string text(h);
  // A heading is one line.
  std::replace(text.begin(), text.end(), '\n', ' ');
  if (text.empty()) return;
  if (segment_has_body_) CloseSegment();
  while (!headings_.empty() && headings_.back().first >= level) headings_.pop_back();
  headings_.emplace_back(level, text);
  if (doc_.title.empty()) doc_.title = text;
  Append(text);
}

void DocumentBuilder::Block(std::string_view block) {
  const std::string_view b = TrimBlock(block);
  if (b.empty()) return;
  Append(b);
  segment_has_body_ = true;
}

void DocumentBuilder::Page(int page) {
  CloseSegment();
  page_ = page;
}

ExtractedDocument DocumentBuilder::Finish() {
  CloseSegment();
  return std::move(doc_);
}

}  // namespace msp
