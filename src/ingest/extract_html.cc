// HTML text through libxml2's HTML parser (htmlReadMemory): h1..h6 open
// sections, block elements become blocks, script / style / head and similar
// non-text elements are dropped; the <title> becomes the document's title.
#include <cstring>
#include <memory>
#include <string>

#include <libxml/HTMLparser.h>
#include <libxml/tree.h>

#include "ingest/formats.h"
#include "util/utf8.h"

namespace msp {
namespace {

bool Is(const xmlNode* n, const char* name) {
  return n->name != nullptr && std::strcmp(reinterpret_cast<const char*>(n->name), name) == 0;
}

bool Dropped(const xmlNode* n) {
  for (const char* name : {"script", "style", "noscript", "template", "head", "svg", "canvas", "iframe", "object"}) {
    if (Is(n, name)) return true;
  }
  return false;
}

bool BlockElement(const xmlNode* n) {
  for (const char* name : {"p",     "div",  "section", "article", "main",    "header", "footer", "nav",
                           "aside", "ul",   "ol",      "li",      "dl",      "dt",     "dd",     "table",
                           "tr",    "pre",  "blockquote", "figure", "figcaption", "address", "hr", "form",
                           "fieldset", "details", "summary", "body", "html", "caption", "thead", "tbody", "tfoot"}) {
    if (Is(n, name)) return true;
  }
  return false;
}

int HeadingLevelOf(const xmlNode* n) {
  if (n->name == nullptr) return 0;
  const char* name = reinterpret_cast<const char*>(n->name);
  if (name[0] == 'h' && name[1] >= '1' && name[1] <= '6' && name[2] == '\0') return name[1] - '0';
  return 0;
}

class HtmlWalker {
 public:
  explicit HtmlWalker(DocumentBuilder* builder) : builder_(builder) {}

  void Walk(const xmlNode* node) {
    for (const xmlNode* n = node; n != nullptr; n = n->next) {
      if (n->type == XML_TEXT_NODE || n->type == XML_CDATA_SECTION_NODE) {
        Text(reinterpret_cast<const char*>(n->content));
        continue;
      }
      if (n->type != XML_ELEMENT_NODE) continue;
      if (Dropped(n)) continue;
      if (const int level = HeadingLevelOf(n); level > 0) {
        if (builder_ == nullptr) {  // a heading inside a heading: its words are the outer one's
          Walk(n->children);
          continue;
        }
        Flush();
        HtmlWalker inner(nullptr);
        inner.Walk(n->children);
        builder_->Heading(level, inner.buffer_);
        continue;
      }
      if (Is(n, "br")) {
        buffer_.push_back('\n');
        continue;
      }
      if (Is(n, "td") || Is(n, "th")) {
        if (!buffer_.empty()) buffer_ += " | ";
        Walk(n->children);
        continue;
      }
      if (Is(n, "img")) {
        if (const xmlChar* alt = xmlGetProp(n, reinterpret_cast<const xmlChar*>("alt"))) {
          Text(reinterpret_cast<const char*>(alt));
          xmlFree(const_cast<xmlChar*>(alt));
        }
        continue;
      }
      const bool block = BlockElement(n);
      if (block) Flush();
      if (Is(n, "li")) buffer_ += "- ";
      const bool pre = Is(n, "pre");
      if (pre) ++pre_depth_;
      Walk(n->children);
      if (pre) --pre_depth_;
      if (block) Flush();
    }
  }

  void Flush() {
    if (builder_ == nullptr) return;
    // Trim spaces around line breaks (collapsed whitespace leaves them).
    std::string out;
    size_t i = 0;
    while (i < buffer_.size()) {
      const size_t nl = buffer_.find('\n', i);
      std::string_view line(buffer_.data() + i, (nl == std::string::npos ? buffer_.size() : nl) - i);
      if (pre_depth_ == 0) {
        while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
        while (!line.empty() && line.back() == ' ') line.remove_suffix(1);
      }
      out += line;
      if (nl == std::string::npos) break;
      out.push_back('\n');
      i = nl + 1;
    }
    builder_->Block(out);
    buffer_.clear();
  }

 private:
  void Text(const char* text) {
    if (text == nullptr) return;
    if (pre_depth_ > 0) {
      buffer_ += text;
      return;
    }
    for (const char* p = text; *p != '\0'; ++p) {
      const char c = *p;
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f') {
        if (!buffer_.empty() && buffer_.back() != ' ' && buffer_.back() != '\n') buffer_.push_back(' ');
      } else {
        buffer_.push_back(c);
      }
    }
  }

  DocumentBuilder* builder_;
  std::string buffer_;
  int pre_depth_ = 0;
};

std::string TitleOf(const xmlNode* node) {
  for (const xmlNode* n = node; n != nullptr; n = n->next) {
    if (n->type != XML_ELEMENT_NODE) continue;
    if (Is(n, "title")) {
      xmlChar* content = xmlNodeGetContent(n);
      std::string out = content == nullptr ? "" : reinterpret_cast<const char*>(content);
      xmlFree(content);
      std::string collapsed;
      for (char c : out) {
        const bool space = c == ' ' || c == '\t' || c == '\n' || c == '\r';
        if (space && (collapsed.empty() || collapsed.back() == ' ')) continue;
        collapsed.push_back(space ? ' ' : c);
      }
      while (!collapsed.empty() && collapsed.back() == ' ') collapsed.pop_back();
      return collapsed;
    }
    if (Is(n, "body")) continue;
    std::string inner = TitleOf(n->children);
    if (!inner.empty()) return inner;
  }
  return "";
}

}  // namespace

Result<ExtractedDocument> ReadHtml(std::string_view bytes) {
  if (bytes.size() > static_cast<size_t>(INT32_MAX)) return Status::InvalidArgument("too large for the HTML reader");
  if (bytes.substr(0, 3) == "\xEF\xBB\xBF") bytes.remove_prefix(3);
  // Valid UTF-8 is read as UTF-8 whatever the page declares; anything else
  // as the page's declared charset (libxml2 converts it to UTF-8).
  const bool utf8 = IsValidUtf8(bytes);
  int options = HTML_PARSE_RECOVER | HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING | HTML_PARSE_NONET;
  if (utf8) options |= HTML_PARSE_IGNORE_ENC;
  std::unique_ptr<xmlDoc, void (*)(xmlDoc*)> doc(
      htmlReadMemory(bytes.empty() ? "" : bytes.data(), static_cast<int>(bytes.size()), nullptr,
                     utf8 ? "UTF-8" : nullptr, options),
      &xmlFreeDoc);
  DocumentBuilder builder;
  if (!doc) {
    if (bytes.find_first_not_of(" \t\r\n") == std::string_view::npos) return builder.Finish();
    return Status::InvalidArgument("not readable as HTML");
  }
  const xmlNode* root = xmlDocGetRootElement(doc.get());
  const std::string title = TitleOf(root);
  HtmlWalker walker(&builder);
  walker.Walk(root);
  walker.Flush();
  ExtractedDocument out = builder.Finish();
  if (!title.empty()) out.title = title;
  return out;
}

}  // namespace msp
