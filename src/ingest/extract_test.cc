// Extractors: each format's text, segments (pages, heading paths) and
// errors for damaged input.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "ingest/document.h"
#include "ingest/fixtures.h"
#include "tests/support/test_util.h"

namespace msp {
namespace {

std::string Slice(const ExtractedDocument& d, const DocSegment& s) { return d.text.substr(s.start, s.end - s.start); }

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(ExtractTest, PdfKeepsPages) {
  const std::string pdf = testing::MakePdf({{"Alpha reactor report", "coolant pressure nominal"}, {}, {"Beta valve log"}});
  ASSERT_OK_AND_ASSIGN(ExtractedDocument d, ExtractPdf(pdf));
  ASSERT_EQ(d.segments.size(), 2u) << d.text;  // the empty page 2 has no segment
  EXPECT_EQ(d.segments[0].page, 1);
  EXPECT_EQ(d.segments[1].page, 3);
  EXPECT_NE(Slice(d, d.segments[0]).find("Alpha reactor report"), std::string::npos);
  EXPECT_NE(Slice(d, d.segments[0]).find("coolant pressure nominal"), std::string::npos);
  EXPECT_EQ(Slice(d, d.segments[0]).find("Beta"), std::string::npos);
  EXPECT_NE(Slice(d, d.segments[1]).find("Beta valve log"), std::string::npos);
}

TEST(ExtractTest, DamagedPdfIsAnError) {
  const std::string pdf = testing::MakePdf({{"Alpha"}});
  Result<ExtractedDocument> garbage = ExtractPdf("%PDF-1.4\nthis is no pdf at all\n");
  ASSERT_FALSE(garbage.ok());
  EXPECT_EQ(garbage.status().code(), StatusCode::kInvalidArgument);
  Result<ExtractedDocument> truncated = ExtractPdf(pdf.substr(0, 20));
  EXPECT_FALSE(truncated.ok());
}

TEST(ExtractTest, DocxParagraphsAndHeadingSections) {
  testing::TempDir dir("ingest-docx");
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.path() + "/a.docx";
  ASSERT_OK(testing::WriteDocx(path, {{"Heading1", "Overview"},
                                      {"", "The pump feeds the primary loop."},
                                      {"Heading2", "Maintenance"},
                                      {"", "Replace seals every 90 days & log it."},
                                      {"Heading1", "Safety"},
                                      {"", "Never bypass the interlock."}}));
  ASSERT_OK_AND_ASSIGN(ExtractedDocument d, ExtractDocx(ReadAll(path)));
  EXPECT_EQ(d.title, "Overview");
  ASSERT_EQ(d.segments.size(), 3u) << d.text;
  EXPECT_EQ(d.segments[0].section, "Overview");
  EXPECT_EQ(d.segments[1].section, "Overview > Maintenance");
  EXPECT_EQ(d.segments[2].section, "Safety");
  // Runs of one paragraph are joined; the heading opens its segment.
  EXPECT_EQ(Slice(d, d.segments[0]), "Overview\n\nThe pump feeds the primary loop.");
  EXPECT_EQ(Slice(d, d.segments[1]), "Maintenance\n\nReplace seals every 90 days & log it.");
  EXPECT_EQ(Slice(d, d.segments[2]), "Safety\n\nNever bypass the interlock.");
}

TEST(ExtractTest, DamagedDocxIsAnError) {
  testing::TempDir dir("ingest-docx-bad");
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.path() + "/a.docx";
  ASSERT_OK(testing::WriteDocx(path, {{"", "Some text that is long enough."}}));
  const std::string bytes = ReadAll(path);
  Result<ExtractedDocument> truncated = ExtractDocx(bytes.substr(0, bytes.size() / 2));
  ASSERT_FALSE(truncated.ok());
  EXPECT_EQ(truncated.status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(ExtractDocx("not a zip file").ok());
}

TEST(ExtractTest, MarkdownSectionsAndPlainText) {
  const std::string md =
      "---\ntitle: front matter is dropped\n---\n"
      "# Guide\n\nIntro with *emphasis* and `code` and a [link](http://x).\n\n"
      "## Install\n\n- first step\n- second step\n\n```\nmake install\n```\n\n"
      "## Use\nRun it.\n";
  ASSERT_OK_AND_ASSIGN(ExtractedDocument d, ExtractMarkdown(md));
  EXPECT_EQ(d.title, "Guide");
  EXPECT_EQ(d.text.find("front matter"), std::string::npos);
  ASSERT_EQ(d.segments.size(), 3u) << d.text;
  EXPECT_EQ(d.segments[0].section, "Guide");
  EXPECT_EQ(Slice(d, d.segments[0]), "Guide\n\nIntro with emphasis and code and a link.");
  EXPECT_EQ(d.segments[1].section, "Guide > Install");
  EXPECT_EQ(Slice(d, d.segments[1]), "Install\n\n- first step\n- second step\n\nmake install");
  EXPECT_EQ(d.segments[2].section, "Guide > Use");
  EXPECT_EQ(Slice(d, d.segments[2]), "Use\n\nRun it.");
}

TEST(ExtractTest, MarkdownHeadingWithoutBodyJoinsTheNextSection) {
  ASSERT_OK_AND_ASSIGN(ExtractedDocument d, ExtractMarkdown("# A\n## B\ntext under b\n"));
  ASSERT_EQ(d.segments.size(), 1u);
  EXPECT_EQ(d.segments[0].section, "A > B");
  EXPECT_EQ(Slice(d, d.segments[0]), "A\n\nB\n\ntext under b");
}

TEST(ExtractTest, HtmlDropsScriptsAndKeepsHeadings) {
  const std::string html =
      "<!DOCTYPE html><html><head><title> Plant  manual </title><style>p{color:red}</style>"
      "<script>var secret = 1;</script></head><body>"
      "<h1>Pumps</h1><p>The   pump\n feeds &amp; cools.</p><script>alert('x')</script>"
      "<h2>Seals</h2><ul><li>Check daily</li><li>Replace yearly</li></ul>"
      "<table><tr><td>a</td><td>b</td></tr></table></body></html>";
  ASSERT_OK_AND_ASSIGN(ExtractedDocument d, ExtractHtml(html));
  EXPECT_EQ(d.title, "Plant manual");
  EXPECT_EQ(d.text.find("secret"), std::string::npos);
  EXPECT_EQ(d.text.find("alert"), std::string::npos);
  EXPECT_EQ(d.text.find("color"), std::string::npos);
  ASSERT_EQ(d.segments.size(), 2u) << d.text;
  EXPECT_EQ(d.segments[0].section, "Pumps");
  EXPECT_EQ(Slice(d, d.segments[0]), "Pumps\n\nThe pump feeds & cools.");
  EXPECT_EQ(d.segments[1].section, "Pumps > Seals");
  EXPECT_EQ(Slice(d, d.segments[1]), "Seals\n\n- Check daily\n\n- Replace yearly\n\na | b");
}

// Found by fuzz/html_fuzz: a heading inside a heading crashed the walker
// (the inner one was handed to no document); its words belong to the outer.
TEST(ExtractTest, HtmlHeadingInsideAHeading) {
  for (const std::string html : {"<h1>Top<h2>Inner</h2></h1><p>body</p>", "<h1>Top<div><h2>Inner</h2></div></h1><p>body</p>"}) {
    ASSERT_OK_AND_ASSIGN(ExtractedDocument d, ExtractHtml(html));
    EXPECT_NE(d.text.find("Inner"), std::string::npos) << d.text;
    EXPECT_NE(d.text.find("body"), std::string::npos) << d.text;
    ASSERT_FALSE(d.segments.empty());
    EXPECT_EQ(d.segments[0].section.rfind("Top", 0), 0u) << d.segments[0].section;
  }
}

TEST(ExtractTest, HtmlUtf8WithoutDeclaredCharset) {
  ASSERT_OK_AND_ASSIGN(ExtractedDocument d, ExtractHtml("<p>Gr\xC3\xBC\xC3\x9F" "e, \xD0\x9A\xD0\xB8\xD1\x97\xD0\xB2</p>"));
  EXPECT_EQ(d.text, "Gr\xC3\xBC\xC3\x9F" "e, \xD0\x9A\xD0\xB8\xD1\x97\xD0\xB2");
}

TEST(ExtractTest, PlainText) {
  ASSERT_OK_AND_ASSIGN(ExtractedDocument d, ExtractText("\xEF\xBB\xBFline one\r\nline two\r\n\r\n"));
  EXPECT_EQ(d.text, "line one\nline two");
  ASSERT_EQ(d.segments.size(), 1u);
  EXPECT_EQ(d.segments[0].page, 0);
  EXPECT_EQ(d.segments[0].section, "");
  Result<ExtractedDocument> bad = ExtractText("caf\xE9");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("UTF-8"), std::string::npos);
}

TEST(ExtractTest, FormatDetection) {
  EXPECT_EQ(FormatFromExtension("/a/b/Report.PDF"), DocumentFormat::kPdf);
  EXPECT_EQ(FormatFromExtension("x.docx"), DocumentFormat::kDocx);
  EXPECT_EQ(FormatFromExtension("x.markdown"), DocumentFormat::kMarkdown);
  EXPECT_EQ(FormatFromExtension("x.htm"), DocumentFormat::kHtml);
  EXPECT_EQ(FormatFromExtension("x.txt"), DocumentFormat::kText);
  EXPECT_EQ(FormatFromExtension("x.png"), std::nullopt);
  EXPECT_EQ(FormatFromExtension("/a.d/README"), std::nullopt);
  EXPECT_EQ(SniffFormat(testing::MakePdf({{"x"}})), DocumentFormat::kPdf);
  EXPECT_EQ(SniffFormat("plain words"), DocumentFormat::kText);
  EXPECT_EQ(SniffFormat(std::string("\x89PNG\r\n\x1a\n\0\0", 10)), std::nullopt);
}

}  // namespace
}  // namespace msp
