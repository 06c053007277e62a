// Markdown text through cmark: headings open sections, every other block
// becomes plain text (emphasis, link and code markers dropped; list items
// keep a "- " or "N. " marker).
#include <memory>
#include <string>

#include <cmark.h>

#include "ingest/formats.h"
#include "util/utf8.h"

namespace msp {
namespace {

// The inline text of `node` and its descendants.
void InlineText(cmark_node* node, std::string* out) {
  for (cmark_node* c = cmark_node_first_child(node); c != nullptr; c = cmark_node_next(c)) {
    switch (cmark_node_get_type(c)) {
      case CMARK_NODE_TEXT:
      case CMARK_NODE_CODE:
        if (const char* lit = cmark_node_get_literal(c)) *out += lit;
        break;
      case CMARK_NODE_SOFTBREAK:
      case CMARK_NODE_LINEBREAK:
        out->push_back('\n');
        break;
      case CMARK_NODE_HTML_INLINE:
        break;  // markup, not text
      default:
        InlineText(c, out);
    }
  }
}

// A block and its descendants as plain text, inner blocks one a line.
std::string BlockText(cmark_node* node);

std::string ListText(cmark_node* list) {
  std::string out;
  const bool ordered = cmark_node_get_list_type(list) == CMARK_ORDERED_LIST;
  int number = cmark_node_get_list_start(list);
  for (cmark_node* item = cmark_node_first_child(list); item != nullptr; item = cmark_node_next(item)) {
    std::string body;
    for (cmark_node* b = cmark_node_first_child(item); b != nullptr; b = cmark_node_next(b)) {
      const std::string t = BlockText(b);
      if (t.empty()) continue;
      if (!body.empty()) body.push_back('\n');
      body += t;
    }
    if (!out.empty()) out.push_back('\n');
    out += ordered ? std::to_string(number++) + ". " : "- ";
    // Continuation lines of an item are indented under its marker.
    for (char c : body) {
      out.push_back(c);
      if (c == '\n') out += "  ";
    }
  }
  return out;
}

std::string BlockText(cmark_node* node) {
  switch (cmark_node_get_type(node)) {
    case CMARK_NODE_PARAGRAPH:
    case CMARK_NODE_HEADING: {
      std::string out;
      InlineText(node, &out);
      return out;
    }
    case CMARK_NODE_CODE_BLOCK: {
      const char* lit = cmark_node_get_literal(node);
      std::string out = lit == nullptr ? "" : lit;
      while (!out.empty() && out.back() == '\n') out.pop_back();
      return out;
    }
    case CMARK_NODE_LIST:
      return ListText(node);
    case CMARK_NODE_HTML_BLOCK:
    case CMARK_NODE_THEMATIC_BREAK:
      return "";
    default: {
      std::string out;
      for (cmark_node* c = cmark_node_first_child(node); c != nullptr; c = cmark_node_next(c)) {
        const std::string t = BlockText(c);
        if (t.empty()) continue;
        if (!out.empty()) out.push_back('\n');
        out += t;
      }
      return out;
    }
  }
}

// The top-level blocks (and those of block quotes) into the builder.
void WalkBlocks(cmark_node* parent, DocumentBuilder* builder) {
  for (cmark_node* c = cmark_node_first_child(parent); c != nullptr; c = cmark_node_next(c)) {
    const cmark_node_type type = cmark_node_get_type(c);
    if (type == CMARK_NODE_HEADING) {
      std::string text;
      InlineText(c, &text);
      builder->Heading(cmark_node_get_heading_level(c), text);
    } else if (type == CMARK_NODE_BLOCK_QUOTE) {
      WalkBlocks(c, builder);
    } else {
      builder->Block(BlockText(c));
    }
  }
}

// Drops a leading YAML front matter block ("---" ... "---").
std::string_view WithoutFrontMatter(std::string_view text) {
  if (text.substr(0, 4) != "---\n" && text.substr(0, 5) != "---\r\n") return text;
  for (size_t at = text.find("\n---", 3); at != std::string_view::npos; at = text.find("\n---", at + 1)) {
    const size_t after = at + 4;
    if (after == text.size() || text[after] == '\n' || text[after] == '\r') {
      return after == text.size() ? std::string_view() : text.substr(after + 1);
    }
  }
  return text;
}

}  // namespace

Result<ExtractedDocument> ReadMarkdown(std::string_view bytes) {
  if (bytes.substr(0, 3) == "\xEF\xBB\xBF") bytes.remove_prefix(3);
  size_t bad = 0;
  if (!IsValidUtf8(bytes, &bad)) {
    return Status::InvalidArgument("not valid UTF-8 (first bad byte at offset " + std::to_string(bad) + ")");
  }
  if (bytes.find('\0') != std::string_view::npos) return Status::InvalidArgument("holds NUL bytes: not Markdown");
  std::string_view body = WithoutFrontMatter(bytes);
  if (body.empty()) body = "";
  std::unique_ptr<cmark_node, void (*)(cmark_node*)> root(cmark_parse_document(body.data(), body.size(), 0),
                                                         &cmark_node_free);
  if (!root) return Status::InvalidArgument("the Markdown parser failed");
  DocumentBuilder builder;
  WalkBlocks(root.get(), &builder);
  return builder.Finish();
}

}  // namespace msp
