// DOCX text through libzip (the package) and pugixml (word/document.xml):
// one block per paragraph, sections from heading paragraph styles.
#include <cctype>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>

#include <pugixml.hpp>
#include <zip.h>

#include "ingest/formats.h"
#include "util/text.h"

namespace msp {
namespace {

constexpr zip_uint64_t kMaxPartBytes = 256u << 20;

// Reads one part of the package; NotFound when it is missing.
Result<std::string> ReadPart(zip_t* zip, const char* name) {
  zip_stat_t st;
  zip_stat_init(&st);
  if (zip_stat(zip, name, 0, &st) != 0) return Status::NotFound(std::string("no ") + name + " in the package");
  if ((st.valid & ZIP_STAT_SIZE) == 0 || st.size > kMaxPartBytes) {
    return Status::InvalidArgument(std::string(name) + " is too large or of unknown size");
  }
  zip_file_t* f = zip_fopen(zip, name, 0);
  if (f == nullptr) return Status::InvalidArgument(std::string("cannot open ") + name + ": " + zip_strerror(zip));
  std::string out(static_cast<size_t>(st.size), '\0');
  const zip_int64_t n = zip_fread(f, out.data(), st.size);
  const std::string err = n < 0 ? zip_file_strerror(f) : "";
  zip_fclose(f);
  if (n < 0 || static_cast<zip_uint64_t>(n) != st.size) {
    return Status::InvalidArgument(std::string("cannot read ") + name + (err.empty() ? "" : ": " + err));
  }
  return out;
}

// The heading level (1..9) of paragraph style id `style`, from the style's
// name in styles.xml ("heading 2") or its id ("Heading2"); 0 when not a
// heading. "Title" is level 1.
int HeadingLevel(const std::string& style, const std::map<std::string, std::string>& names) {
  auto level_of = [](const std::string& s) {
    const std::string low = AsciiLower(s);
    if (low == "title") return 1;
    std::string digits;
    if (low.rfind("heading", 0) == 0) {
      for (size_t i = 7; i < low.size(); ++i) {
        if (low[i] == ' ') continue;
        if (!std::isdigit(static_cast<unsigned char>(low[i]))) return 0;
        digits.push_back(low[i]);
      }
    }
    if (digits.empty() || digits.size() > 1) return 0;
    const int n = digits[0] - '0';
    return n >= 1 && n <= 9 ? n : 0;
  };
  auto it = names.find(style);
  if (it != names.end()) {
    if (int n = level_of(it->second); n > 0) return n;
  }
  return level_of(style);
}

// The text of paragraph `p`: runs' w:t, tabs and breaks, in order (nested
// hyperlinks, smart tags and insertions included; deletions left out).
void ParagraphText(const pugi::xml_node& node, std::string* out) {
  for (pugi::xml_node child : node.children()) {
    const std::string_view name = child.name();
    if (name == "w:t") {
      *out += child.text().get();
    } else if (name == "w:tab") {
      out->push_back('\t');
    } else if (name == "w:br" || name == "w:cr") {
      out->push_back('\n');
    } else if (name == "w:del" || name == "w:pPr" || name == "w:rPr" || name == "w:instrText" ||
               name == "w:delText") {
      continue;
    } else {
      ParagraphText(child, out);
    }
  }
}

// Every paragraph of the body in document order (tables' cells included).
void WalkBody(const pugi::xml_node& node, const std::map<std::string, std::string>& style_names,
              DocumentBuilder* builder) {
  for (pugi::xml_node child : node.children()) {
    const std::string_view name = child.name();
    if (name == "w:p") {
      std::string text;
      ParagraphText(child, &text);
      const std::string style = child.child("w:pPr").child("w:pStyle").attribute("w:val").as_string();
      int level = style.empty() ? 0 : HeadingLevel(style, style_names);
      if (level == 0) {
        // An explicit outline level (0-based) also makes a heading.
        const pugi::xml_attribute outline = child.child("w:pPr").child("w:outlineLvl").attribute("w:val");
        if (outline && outline.as_int(-1) >= 0 && outline.as_int(-1) <= 8) level = outline.as_int() + 1;
      }
      if (level > 0) {
        builder->Heading(level, text);
      } else {
        builder->Block(text);
      }
    } else if (name == "w:sectPr") {
      continue;
    } else {
      WalkBody(child, style_names, builder);
    }
  }
}

}  // namespace

Result<ExtractedDocument> ReadDocx(std::string_view bytes) {
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* source = zip_source_buffer_create(bytes.data(), bytes.size(), 0, &error);
  if (source == nullptr) {
    const std::string msg = zip_error_strerror(&error);
    zip_error_fini(&error);
    return Status::InvalidArgument("cannot read the package: " + msg);
  }
  zip_t* zip = zip_open_from_source(source, ZIP_RDONLY | ZIP_CHECKCONS, &error);
  if (zip == nullptr) {
    zip_source_free(source);
    const std::string msg = zip_error_strerror(&error);
    zip_error_fini(&error);
    return Status::InvalidArgument("not a readable DOCX (ZIP) package: " + msg);
  }
  zip_error_fini(&error);
  std::unique_ptr<zip_t, void (*)(zip_t*)> closer(zip, [](zip_t* z) { zip_discard(z); });

  Result<std::string> document = ReadPart(zip, "word/document.xml");
  if (!document.ok()) {
    return Status::InvalidArgument("not a DOCX document: " + document.status().message());
  }
  std::map<std::string, std::string> style_names;
  if (Result<std::string> styles = ReadPart(zip, "word/styles.xml"); styles.ok()) {
    pugi::xml_document sdoc;
    if (sdoc.load_buffer(styles->data(), styles->size())) {
      for (pugi::xml_node s : sdoc.child("w:styles").children("w:style")) {
        const std::string id = s.attribute("w:styleId").as_string();
        const std::string name = s.child("w:name").attribute("w:val").as_string();
        if (!id.empty() && !name.empty()) style_names[id] = name;
      }
    }
  }
  pugi::xml_document xml;
  const pugi::xml_parse_result parsed = xml.load_buffer(document->data(), document->size());
  if (!parsed) {
    return Status::InvalidArgument(std::string("word/document.xml is not well-formed XML: ") + parsed.description() +
                                   " at byte " + std::to_string(parsed.offset));
  }
  const pugi::xml_node body = xml.child("w:document").child("w:body");
  if (!body) return Status::InvalidArgument("word/document.xml has no w:document/w:body");
  DocumentBuilder builder;
  WalkBody(body, style_names, &builder);
  return builder.Finish();
}

}  // namespace msp
