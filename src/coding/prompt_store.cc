// The prompt store on libgit2: small RAII handles, errors mapped to Status.
#include "coding/prompt_store.h"

#include <git2.h>
#include <git2/sys/commit.h>

#include <sys/file.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fcntl.h>
#include <optional>
#include <random>
#include <thread>
#include <unordered_map>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "coding/capture.h"
#include "coding/recent_prompts.h"
#include "util/time.h"

namespace msp {
namespace {

namespace fs = std::filesystem;

constexpr char kPromptFile[] = "prompt.txt";
constexpr char kMetaFile[] = "meta.json";
constexpr int kMaxAttempts = 50;

// Owns one libgit2 object; frees it with `Free`.
template <typename T, void (*Free)(T*)>
class GitHandle {
 public:
  GitHandle() = default;
  ~GitHandle() {
    if (p_ != nullptr) Free(p_);
  }
  GitHandle(const GitHandle&) = delete;
  GitHandle& operator=(const GitHandle&) = delete;
  T** out() { return &p_; }
  T* get() const { return p_; }

 private:
  T* p_ = nullptr;
};

using Signature = GitHandle<git_signature, git_signature_free>;
using TreeBuilder = GitHandle<git_treebuilder, git_treebuilder_free>;
using Reference = GitHandle<git_reference, git_reference_free>;
using RefIterator = GitHandle<git_reference_iterator, git_reference_iterator_free>;
using Commit = GitHandle<git_commit, git_commit_free>;
using Tree = GitHandle<git_tree, git_tree_free>;
using Blob = GitHandle<git_blob, git_blob_free>;

// libgit2's last error, for a message.
std::string GitError(int code) {
  const git_error* e = git_error_last();
  std::string m = e != nullptr && e->message != nullptr ? e->message : "libgit2 error";
  return m + " (code " + std::to_string(code) + ")";
}

Status GitStatus(int code, const std::string& what) {
  if (code == GIT_ENOTFOUND) return Status::NotFound(what + ": " + GitError(code));
  if (code == GIT_ELOCKED || code == GIT_EEXISTS) return Status::Conflict(what + ": " + GitError(code));
  return Status::IoError(what + ": " + GitError(code));
}

}  // namespace

namespace {

std::string Hex(const git_oid& oid) {
  char buf[GIT_OID_HEXSZ + 1];
  git_oid_tostr(buf, sizeof buf, &oid);
  return buf;
}

// The commit message: the prompt's first line, cut at 72 bytes on a UTF-8
// boundary.
std::string Subject(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  if (line.size() > 72) {
    size_t cut = 72;
    while (cut > 0 && (static_cast<unsigned char>(line[cut]) & 0xC0) == 0x80) --cut;
    line = line.substr(0, cut) + "...";
  }
  return line.empty() ? "(empty prompt)\n" : line + "\n";
}

// Holds an exclusive flock on a file while alive: taken at once or not at
// all, or (`wait`) when the holder lets it go.
class FileLock {
 public:
  explicit FileLock(const std::string& path, bool wait = false) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd_ >= 0 && ::flock(fd_, wait ? LOCK_EX : LOCK_EX | LOCK_NB) == 0) held_ = true;
  }
  ~FileLock() {
    if (fd_ >= 0) ::close(fd_);  // releases the lock
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  bool held() const { return held_; }
  bool opened() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
  bool held_ = false;
};

}  // namespace

GitLibrary::GitLibrary() { git_libgit2_init(); }
GitLibrary::~GitLibrary() { git_libgit2_shutdown(); }

PromptStore::PromptStore(std::string path, git_repository* repo) : path_(std::move(path)), repo_(repo) {}

PromptStore::~PromptStore() { git_repository_free(repo_); }

Result<std::unique_ptr<PromptStore>> PromptStore::Open(const std::string& path, bool create) {
  if (path.empty()) return Status::InvalidArgument("the prompt repository path is empty (capture.repository)");
  std::error_code exists_ec;
  if (!create && !fs::exists(path, exists_ec)) {
    // Without loading libgit2 (a SessionStart before any capture).
    return Status::NotFound("no prompt repository at '" + path + "' (capture.repository); nothing captured yet");
  }
  auto library = std::make_unique<GitLibrary>();
  git_repository* repo = nullptr;
  constexpr unsigned kOpenFlags = GIT_REPOSITORY_OPEN_NO_SEARCH | GIT_REPOSITORY_OPEN_BARE;
  int rc = git_repository_open_ext(&repo, path.c_str(), kOpenFlags, nullptr);
  if (rc == GIT_ENOTFOUND && !create) {
    return Status::NotFound("no prompt repository at '" + path + "' (capture.repository); nothing captured yet");
  }
  // Several processes may create the repository at once: one init wins; the
  // others (whose init fails or finds it half made) open it once it is whole.
  for (int attempt = 0; rc < 0 && create && attempt < 100; ++attempt) {
    git_repository_init_options opts = GIT_REPOSITORY_INIT_OPTIONS_INIT;
    opts.flags = GIT_REPOSITORY_INIT_BARE | GIT_REPOSITORY_INIT_MKPATH;
    opts.description = "msp: prompts captured from coding agents (one orphan commit per prompt)";
    rc = git_repository_init_ext(&repo, path.c_str(), &opts);
    if (rc == 0) {
      git_config* cfg = nullptr;
      if (git_repository_config(&cfg, repo) == 0) {
        // No reflogs (a file per prompt ref otherwise); keep refs loose.
        (void)git_config_set_bool(cfg, "core.logAllRefUpdates", 0);
        (void)git_config_set_bool(cfg, "gc.packRefs", 0);
        (void)git_config_set_int32(cfg, "gc.auto", 0);
        git_config_free(cfg);
      }
      break;
    }
    const std::string init_error = GitError(rc);
    // Only a lock held by another creator, or a repository another process
    // has begun to make, is worth waiting for; anything else fails now.
    std::error_code ec;
    const bool racing = rc == GIT_ELOCKED || rc == GIT_EEXISTS || fs::exists(path + "/HEAD.lock", ec) ||
                        fs::exists(path + "/config.lock", ec) || fs::is_directory(path + "/objects", ec);
    if (!racing) return Status::IoError("cannot create the prompt repository '" + path + "': " + init_error);
    std::this_thread::sleep_for(std::chrono::milliseconds(1 + attempt / 10));
    rc = git_repository_open_ext(&repo, path.c_str(), kOpenFlags, nullptr);
    if (rc < 0 && attempt == 99) {
      return Status::IoError("cannot create the prompt repository '" + path + "': " + init_error + "; " +
                             GitError(rc));
    }
  }
  if (rc < 0) return GitStatus(rc, "cannot open the prompt repository '" + path + "'");
  return std::unique_ptr<PromptStore>(new PromptStore(path, repo));
}

Result<std::string> PromptStore::WriteCommit(const CapturedPrompt& prompt, void* oid_out) {
  if (prompt.at <= 0) return Status::InvalidArgument("a captured prompt needs its capture time");
  const std::string meta = PromptMetadataJson(prompt);
  git_oid text_oid, meta_oid, tree_oid;
  git_oid& commit_oid = *static_cast<git_oid*>(oid_out);
  if (int rc = git_blob_create_from_buffer(&text_oid, repo_, prompt.text.data(), prompt.text.size()); rc < 0) {
    return GitStatus(rc, "cannot write the prompt to '" + path_ + "'");
  }
  if (int rc = git_blob_create_from_buffer(&meta_oid, repo_, meta.data(), meta.size()); rc < 0) {
    return GitStatus(rc, "cannot write the prompt's metadata to '" + path_ + "'");
  }
  {
    TreeBuilder tb;
    int rc = git_treebuilder_new(tb.out(), repo_, nullptr);
    if (rc == 0) rc = git_treebuilder_insert(nullptr, tb.get(), kMetaFile, &meta_oid, GIT_FILEMODE_BLOB);
    if (rc == 0) rc = git_treebuilder_insert(nullptr, tb.get(), kPromptFile, &text_oid, GIT_FILEMODE_BLOB);
    if (rc == 0) rc = git_treebuilder_write(&tree_oid, tb.get());
    if (rc < 0) return GitStatus(rc, "cannot write the prompt's tree to '" + path_ + "'");
  }
  Signature sig;
  const git_time_t secs = static_cast<git_time_t>(prompt.at / 1000);
  if (int rc = git_signature_new(sig.out(), "msp", "msp@localhost", secs, 0); rc < 0) {
    return GitStatus(rc, "cannot make the commit signature");
  }
  const std::string message = Subject(prompt.text);
  if (int rc = git_commit_create_from_ids(&commit_oid, repo_, nullptr, sig.get(), sig.get(), "UTF-8",
                                          message.c_str(), &tree_oid, 0, nullptr);
      rc < 0) {
    return GitStatus(rc, "cannot write the prompt's commit to '" + path_ + "'");
  }
  return Hex(commit_oid);
}

Result<CapturedPrompt> PromptStore::Append(const CapturedPrompt& prompt) {
  git_oid commit_oid;
  CapturedPrompt out = prompt;
  MSP_ASSIGN_OR_RETURN(out.id, WriteCommit(prompt, &commit_oid));
  int rc = 0;
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    out.ref = PromptRefName(prompt.at, RandomBits());
    Reference ref;
    rc = git_reference_create(ref.out(), repo_, out.ref.c_str(), &commit_oid, /*force=*/0, nullptr);
    if (rc == 0) return out;
    if (rc != GIT_EEXISTS && rc != GIT_ELOCKED) break;
    // A name collision or a lock held by another writer: new name, short pause.
    std::this_thread::sleep_for(std::chrono::microseconds(200 * (attempt + 1)));
  }
  return GitStatus(rc, "cannot write the ref of the prompt to '" + path_ + "'");
}

Result<CapturedPrompt> PromptStore::AppendAs(const CapturedPrompt& prompt, const std::string& ref_name) {
  if (PromptRefTime(ref_name) < 0) return Status::InvalidArgument("'" + ref_name + "' is not a prompt ref name");
  git_oid commit_oid;
  CapturedPrompt out = prompt;
  MSP_ASSIGN_OR_RETURN(out.id, WriteCommit(prompt, &commit_oid));
  out.ref = ref_name;
  int rc = 0;
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    Reference ref;
    rc = git_reference_create(ref.out(), repo_, ref_name.c_str(), &commit_oid, /*force=*/0, nullptr);
    if (rc == 0) return out;
    if (rc == GIT_EEXISTS) {
      git_oid existing;
      if (git_reference_name_to_id(&existing, repo_, ref_name.c_str()) == 0 &&
          git_oid_equal(&existing, &commit_oid)) {
        return out;  // imported before
      }
      if (git_reference_name_to_id(&existing, repo_, ref_name.c_str()) == 0) {
        return Status::Conflict(ref_name + " names another commit (" + Hex(existing) + ")");
      }
    } else if (rc != GIT_ELOCKED) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200 * (attempt + 1)));
  }
  return GitStatus(rc, "cannot write " + ref_name + " to '" + path_ + "'");
}

Result<size_t> PromptStore::Count() {
  RefIterator it;
  int rc = git_reference_iterator_glob_new(it.out(), repo_, "refs/prompts/*");
  if (rc < 0) return GitStatus(rc, "cannot list the prompts in '" + path_ + "'");
  size_t n = 0;
  const char* name = nullptr;
  while ((rc = git_reference_next_name(&name, it.get())) == 0) {
    if (PromptRefTime(name) >= 0) ++n;
  }
  if (rc != GIT_ITEROVER) return GitStatus(rc, "cannot list the prompts in '" + path_ + "'");
  return n;
}

Status PromptStore::RefreshRecent() {
  // One refresher at a time (blocking: a later one lists the refs after the
  // earlier one's file is in place, so the last file written is the newest).
  const std::string lock_path = RecentPromptsPath(path_) + ".lock";
  const FileLock lock(lock_path, /*wait=*/true);
  if (!lock.held()) return Status::IoError("cannot lock '" + lock_path + "'");
  const std::optional<std::vector<std::string>> refs = NewestPromptRefs(path_, kRecentPromptsKept);
  if (!refs) {
    // Packed prompt refs: the file could never answer; readers use List.
    std::error_code ec;
    fs::remove(RecentPromptsPath(path_), ec);
    return Status::Ok();
  }
  std::unordered_map<std::string, RecentPrompt> known;
  if (Result<std::vector<RecentPrompt>> old = ReadRecentPromptsFile(path_); old.ok()) {
    for (RecentPrompt& e : *old) known.emplace(e.prompt.ref, std::move(e));
  }
  std::vector<RecentPrompt> entries;
  for (const std::string& ref : *refs) {
    auto it = known.find(ref);
    if (it != known.end() && LooseRefId(path_, ref) == it->second.prompt.id) {
      entries.push_back(std::move(it->second));
      continue;
    }
    Result<CapturedPrompt> p = Read(ref);
    if (!p.ok()) continue;  // not a prompt commit: List skips it too
    RecentPrompt e;
    e.prompt = std::move(p).value();
    if (e.prompt.text.size() > kRecentPromptTextBytes) {
      e.prompt.text.clear();
      e.text_omitted = true;
    }
    entries.push_back(std::move(e));
  }
  return WriteRecentPromptsFile(path_, entries);
}

Result<CapturedPrompt> PromptStore::Read(const std::string& ref_name) {
  git_oid oid;
  if (int rc = git_reference_name_to_id(&oid, repo_, ref_name.c_str()); rc < 0) return GitStatus(rc, ref_name);
  Commit commit;
  if (int rc = git_commit_lookup(commit.out(), repo_, &oid); rc < 0) return GitStatus(rc, ref_name);
  Tree tree;
  if (int rc = git_commit_tree(tree.out(), commit.get()); rc < 0) return GitStatus(rc, ref_name);
  CapturedPrompt p;
  p.id = Hex(oid);
  p.ref = ref_name;
  auto read_blob = [&](const char* file, std::string* text) -> Status {
    const git_tree_entry* e = git_tree_entry_byname(tree.get(), file);
    if (e == nullptr) return Status::Corruption(ref_name + " has no " + file);
    Blob blob;
    if (int rc = git_blob_lookup(blob.out(), repo_, git_tree_entry_id(e)); rc < 0) return GitStatus(rc, ref_name);
    text->assign(static_cast<const char*>(git_blob_rawcontent(blob.get())),
                 static_cast<size_t>(git_blob_rawsize(blob.get())));
    return Status::Ok();
  };
  std::string meta;
  MSP_RETURN_IF_ERROR(read_blob(kPromptFile, &p.text));
  MSP_RETURN_IF_ERROR(read_blob(kMetaFile, &meta));
  MSP_RETURN_IF_ERROR(ParsePromptMetadata(meta, &p).WithContext(ref_name));
  if (p.at <= 0) p.at = PromptRefTime(ref_name);
  return p;
}

Result<std::vector<CapturedPrompt>> PromptStore::List(const PromptFilter& filter, size_t* skipped) {
  if (skipped != nullptr) *skipped = 0;
  // The day directories of the loose refs, newest first, so that a time
  // range or `newest` reads only the days it needs. With a packed-refs file
  // that holds prompt refs (someone ran git pack-refs), one glob over all.
  std::vector<std::string> globs;
  if (PromptRefsPacked(path_)) {
    globs.push_back("refs/prompts/*");
  } else {
    for (const std::string& day : PromptRefDays(path_)) {
      // The day [start, start + 1 day) must meet [from, to).
      const TimeMs start = PromptRefTime("refs/prompts/" + day + "/000000000-");
      if (filter.to != 0 && start >= filter.to) continue;
      if (filter.from != 0 && start + 86400000 <= filter.from) continue;
      globs.push_back("refs/prompts/" + day + "/*");
    }
  }
  std::vector<CapturedPrompt> out;
  for (const std::string& glob : globs) {
    if (filter.newest != 0 && out.size() >= filter.newest) break;
    std::vector<std::pair<TimeMs, std::string>> names;
    RefIterator it;
    int rc = git_reference_iterator_glob_new(it.out(), repo_, glob.c_str());
    if (rc < 0) return GitStatus(rc, "cannot list the prompts in '" + path_ + "'");
    const char* name = nullptr;
    while ((rc = git_reference_next_name(&name, it.get())) == 0) {
      const TimeMs t = PromptRefTime(name);
      if (t < 0) {
        if (skipped != nullptr) ++*skipped;
        continue;
      }
      if ((filter.from != 0 && t < filter.from) || (filter.to != 0 && t >= filter.to)) continue;
      names.emplace_back(t, name);
    }
    if (rc != GIT_ITEROVER) return GitStatus(rc, "cannot list the prompts in '" + path_ + "'");
    std::sort(names.begin(), names.end());
    // Newest first, so that `newest` stops early; reversed at the end.
    for (auto n = names.rbegin(); n != names.rend(); ++n) {
      if (filter.newest != 0 && out.size() >= filter.newest) break;
      Result<CapturedPrompt> p = Read(n->second);
      if (!p.ok()) {
        if (skipped != nullptr) ++*skipped;
        continue;
      }
      if (!filter.session_id.empty() && p->session_id != filter.session_id) continue;
      if (!filter.repository.empty() && !PromptInRepository(*p, filter.repository)) continue;
      out.push_back(std::move(p).value());
    }
  }
  std::reverse(out.begin(), out.end());
  return out;
}

namespace {

// One spooled prompt: its ref and record.
Result<std::pair<std::string, CapturedPrompt>> ReadSpoolFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return Status::NotFound(path);
  std::stringstream ss;
  ss << f.rdbuf();
  nlohmann::json j = nlohmann::json::parse(ss.str(), nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("ref") || !j["ref"].is_string() || !j.contains("text") ||
      !j["text"].is_string() || !j.contains("meta") || !j["meta"].is_string()) {
    return Status::Corruption(path + " is not a spooled prompt");
  }
  CapturedPrompt p;
  MSP_RETURN_IF_ERROR(ParsePromptMetadata(j["meta"].get<std::string>(), &p));
  p.text = j["text"].get<std::string>();
  if (p.at <= 0) return Status::Corruption(path + " has no capture time");
  return std::make_pair(j["ref"].get<std::string>(), std::move(p));
}

std::vector<std::string> SpoolFiles(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() > 5 && name[0] != '.' && name.ends_with(".json")) files.push_back(it->path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

Result<SpoolImportReport> ImportSpool(const std::string& repository) {
  SpoolImportReport report;
  const std::string dir = SpoolDir(repository);
  std::error_code ec;
  if (!fs::is_directory(dir, ec) || SpoolFiles(dir).empty()) {
    // Nothing to import; a repository of an earlier msp gets its
    // recent-prompts file here (the directory may hold only the observation
    // spool: no repository yet, nothing to refresh).
    if (fs::exists(repository + "/HEAD", ec) && !fs::exists(RecentPromptsPath(repository), ec)) {
      if (auto store = PromptStore::Open(repository, /*create=*/false); store.ok()) {
        report.recent_refreshed = (*store)->RefreshRecent().ok();
      }
    }
    return report;
  }
  MSP_ASSIGN_OR_RETURN(auto store, PromptStore::Open(repository, /*create=*/true));
  // One importer at a time; after unlocking, look again, since a capture may
  // have spooled a prompt while its own importer found the lock taken.
  for (int round = 0; round < 1000; ++round) {
    {
      FileLock lock(dir + "/.import.lock");
      if (!lock.opened()) return Status::IoError("cannot open the spool lock in '" + dir + "'");
      if (!lock.held()) {
        report.busy = true;
        return report;
      }
      for (std::vector<std::string> files = SpoolFiles(dir); !files.empty(); files = SpoolFiles(dir)) {
        for (const std::string& file : files) {
          auto entry = ReadSpoolFile(file);
          if (!entry.ok()) {
            if (entry.status().IsNotFound()) continue;
            fs::create_directories(dir + "/bad", ec);
            fs::rename(file, dir + "/bad/" + fs::path(file).filename().string(), ec);
            if (ec) fs::remove(file, ec);
            ++report.failed;
            continue;
          }
          MSP_RETURN_IF_ERROR(store->AppendAs(entry->second, entry->first).status());
          fs::remove(file, ec);
          ++report.imported;
        }
      }
    }
    if (SpoolFiles(dir).empty()) break;
  }
  // The recent-prompts file follows the refs (a failure costs the next
  // SessionStart a read of the repository, nothing more).
  report.recent_refreshed = store->RefreshRecent().ok();
  return report;
}

Result<CapturedPrompt> CaptureDirect(std::string_view stdin_text, const std::string& repository, TimeMs now) {
  MSP_ASSIGN_OR_RETURN(HookInput in, ParseHookInput(stdin_text));
  MSP_ASSIGN_OR_RETURN(CapturedPrompt p, PromptFromHook(in, now));
  MSP_ASSIGN_OR_RETURN(auto store, PromptStore::Open(repository, /*create=*/true));
  MSP_ASSIGN_OR_RETURN(CapturedPrompt stored, store->Append(p));
  (void)store->RefreshRecent();  // a failure only costs the next SessionStart a read of the repository
  return stored;
}

}  // namespace msp
