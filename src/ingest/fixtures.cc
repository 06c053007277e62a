// Test fixtures for ingest_test (see fixtures.h).
#include "ingest/fixtures.h"

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <git2.h>
#include <zip.h>

namespace msp::testing {

namespace fs = std::filesystem;

std::string MakePdf(const std::vector<std::vector<std::string>>& pages) {
  // Objects: 1 catalog, 2 page tree, 3 font, then per page a page and its
  // content stream.
  std::vector<std::string> objects;
  std::string kids;
  for (size_t i = 0; i < pages.size(); ++i) kids += std::to_string(4 + 2 * i) + " 0 R ";
  objects.push_back("<< /Type /Catalog /Pages 2 0 R >>");
  objects.push_back("<< /Type /Pages /Kids [" + kids + "] /Count " + std::to_string(pages.size()) + " >>");
  objects.push_back("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>");
  for (size_t i = 0; i < pages.size(); ++i) {
    std::string stream = "BT /F1 12 Tf 72 720 Td 14 TL\n";
    for (const std::string& line : pages[i]) stream += "(" + line + ") Tj T*\n";
    stream += "ET\n";
    objects.push_back("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> "
                      "/Contents " + std::to_string(5 + 2 * i) + " 0 R >>");
    objects.push_back("<< /Length " + std::to_string(stream.size()) + " >>\nstream\n" + stream + "endstream");
  }
  std::string pdf = "%PDF-1.4\n%\xE2\xE3\xCF\xD3\n";
  std::vector<size_t> offsets;
  for (size_t i = 0; i < objects.size(); ++i) {
    offsets.push_back(pdf.size());
    pdf += std::to_string(i + 1) + " 0 obj\n" + objects[i] + "\nendobj\n";
  }
  const size_t xref = pdf.size();
  pdf += "xref\n0 " + std::to_string(objects.size() + 1) + "\n0000000000 65535 f \n";
  for (size_t off : offsets) {
    char line[32];
    std::snprintf(line, sizeof(line), "%010zu 00000 n \n", off);
    pdf += line;
  }
  pdf += "trailer\n<< /Size " + std::to_string(objects.size() + 1) + " /Root 1 0 R >>\nstartxref\n" +
         std::to_string(xref) + "\n%%EOF\n";
  return pdf;
}

Status WriteFile(const std::string& path, const std::string& bytes) {
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
  out.close();
  if (!out) return Status::IoError("cannot write " + path);
  return Status::Ok();
}

namespace {

std::string XmlEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<') {
      out += "&lt;";
    } else if (c == '>') {
      out += "&gt;";
    } else if (c == '&') {
      out += "&amp;";
    } else {
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace

Status WriteDocx(const std::string& path, const std::vector<std::pair<std::string, std::string>>& paragraphs) {
  const char* w = "xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\"";
  std::string document = std::string("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n<w:document ") + w +
                         "><w:body>";
  for (const auto& [style, text] : paragraphs) {
    document += "<w:p>";
    if (!style.empty()) document += "<w:pPr><w:pStyle w:val=\"" + style + "\"/></w:pPr>";
    // Two runs per paragraph, split mid-text, as Word often writes them.
    const size_t half = text.size() / 2;
    document += "<w:r><w:t xml:space=\"preserve\">" + XmlEscape(text.substr(0, half)) + "</w:t></w:r>";
    document += "<w:r><w:rPr><w:b/></w:rPr><w:t xml:space=\"preserve\">" + XmlEscape(text.substr(half)) +
                "</w:t></w:r></w:p>";
  }
  document += "<w:sectPr/></w:body></w:document>";
  const std::string styles = std::string("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<w:styles ") + w +
                             "><w:style w:type=\"paragraph\" w:styleId=\"Heading1\"><w:name w:val=\"heading 1\"/></w:style>"
                             "<w:style w:type=\"paragraph\" w:styleId=\"Heading2\"><w:name w:val=\"heading 2\"/></w:style>"
                             "<w:style w:type=\"paragraph\" w:styleId=\"Normal\"><w:name w:val=\"Normal\"/></w:style>"
                             "</w:styles>";
  const std::string types =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Types "
      "xmlns=\"http://schemas.openxmlformats.org/package/2006/content-types\"><Default Extension=\"xml\" "
      "ContentType=\"application/xml\"/><Override PartName=\"/word/document.xml\" "
      "ContentType=\"application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml\"/></Types>";
  int error = 0;
  zip_t* zip = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &error);
  if (zip == nullptr) return Status::IoError("zip_open " + path + " failed: " + std::to_string(error));
  // libzip reads the buffers at zip_close: keep them alive until then.
  const std::vector<std::pair<const char*, const std::string*>> parts = {
      {"[Content_Types].xml", &types}, {"word/document.xml", &document}, {"word/styles.xml", &styles}};
  for (const auto& [name, content] : parts) {
    zip_source_t* src = zip_source_buffer(zip, content->data(), content->size(), 0);
    if (src == nullptr || zip_file_add(zip, name, src, ZIP_FL_OVERWRITE) < 0) {
      zip_source_free(src);
      zip_discard(zip);
      return Status::IoError(std::string("zip_file_add ") + name + " failed");
    }
  }
  if (zip_close(zip) != 0) {
    zip_discard(zip);
    return Status::IoError("zip_close " + path + " failed");
  }
  return Status::Ok();
}

// ------------------------------------------------------------- ScriptedRepo

namespace {

Status GitError(const std::string& what) {
  const git_error* e = git_error_last();
  return Status::IoError(what + ": " + (e != nullptr && e->message != nullptr ? e->message : "?"));
}

}  // namespace

Result<ScriptedRepo> ScriptedRepo::Init(const std::string& dir) {
  git_libgit2_init();
  git_repository* repo = nullptr;
  if (git_repository_init(&repo, dir.c_str(), /*is_bare=*/0) != 0) {
    Status s = GitError("git init " + dir);
    git_libgit2_shutdown();
    return s;
  }
  return ScriptedRepo(dir, repo);
}

ScriptedRepo::ScriptedRepo(ScriptedRepo&& other) noexcept : dir_(std::move(other.dir_)), repo_(other.repo_) {
  other.repo_ = nullptr;
}

ScriptedRepo::~ScriptedRepo() {
  if (repo_ != nullptr) {
    git_repository_free(static_cast<git_repository*>(repo_));
    git_libgit2_shutdown();
  }
}

Result<std::string> ScriptedRepo::Commit(const std::vector<std::pair<std::string, std::string>>& changes,
                                         const std::string& message, const std::string& author, int64_t time_s) {
  git_repository* repo = static_cast<git_repository*>(repo_);
  git_index* index = nullptr;
  if (git_repository_index(&index, repo) != 0) return GitError("index");
  Status status = Status::Ok();
  for (const auto& [path, content] : changes) {
    if (content == "<delete>") {
      std::error_code ec;
      fs::remove(dir_ + "/" + path, ec);
      if (git_index_remove_bypath(index, path.c_str()) != 0) status = GitError("index remove " + path);
    } else {
      status = WriteFile(dir_ + "/" + path, content);
      if (status.ok() && git_index_add_bypath(index, path.c_str()) != 0) status = GitError("index add " + path);
    }
    if (!status.ok()) break;
  }
  git_oid tree_id;
  if (status.ok() && (git_index_write(index) != 0 || git_index_write_tree(&tree_id, index) != 0)) {
    status = GitError("write tree");
  }
  git_index_free(index);
  if (!status.ok()) return status;

  git_tree* tree = nullptr;
  if (git_tree_lookup(&tree, repo, &tree_id) != 0) return GitError("tree lookup");
  git_signature* sig = nullptr;
  const std::string email = author + "@example.com";
  if (git_signature_new(&sig, author.c_str(), email.c_str(), time_s, 0) != 0) {
    git_tree_free(tree);
    return GitError("signature");
  }
  git_commit* parent = nullptr;
  git_oid head;
  const bool has_parent = git_reference_name_to_id(&head, repo, "HEAD") == 0;
  if (has_parent && git_commit_lookup(&parent, repo, &head) != 0) {
    git_signature_free(sig);
    git_tree_free(tree);
    return GitError("parent lookup");
  }
  const git_commit* parents[] = {parent};
  git_oid id;
  const int rc = git_commit_create(&id, repo, "HEAD", sig, sig, nullptr, message.c_str(), tree, has_parent ? 1 : 0,
                                   has_parent ? parents : nullptr);
  git_commit_free(parent);
  git_signature_free(sig);
  git_tree_free(tree);
  if (rc != 0) return GitError("commit");
  char buf[GIT_OID_HEXSZ + 1];
  git_oid_tostr(buf, sizeof(buf), &id);
  return std::string(buf);
}

}  // namespace msp::testing
