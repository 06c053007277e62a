// Finding and loading msp's modules and lazily used system libraries.
#include "util/module.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>

namespace msp {

namespace {

// The running program's path, from /proc ("" when it cannot be read).
std::string ProgramPath() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

}  // namespace

std::string ProgramDirectory() { return DirectoryOf(ProgramPath()); }

std::string LibraryDirectory() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&LibraryDirectory), &info) == 0 || info.dli_fname == nullptr) return "";
  const std::string path = info.dli_fname;
  if (path.empty() || path[0] != '/') return "";  // the program itself, named as it was started
  if (path == ProgramPath()) return "";
  return DirectoryOf(path);
}

std::vector<std::string> ModuleCandidates(const ModuleSpec& spec) {
  std::vector<std::string> out;
  if (const char* env = std::getenv(spec.env); env != nullptr && *env != '\0') out.push_back(env);
  const std::string dir = ProgramDirectory();
  if (!dir.empty()) {
    out.push_back(dir + "/" + spec.file);
    out.push_back(dir + "/../lib/msp/" + spec.file);
  }
  // A program linked to libmsp.so (docs/library.md): the modules installed
  // beside the library, in <libdir>/msp; with msp's parts as shared objects
  // (MSP_SHARED_LIBS) this code is in one of them, in <libdir>/msp itself.
  if (const std::string lib = LibraryDirectory(); !lib.empty()) {
    for (std::string path : {lib + "/msp/" + spec.file, lib + "/" + spec.file}) {
      if (std::find(out.begin(), out.end(), path) == out.end()) out.push_back(std::move(path));
    }
  }
  if (spec.build_path != nullptr && *spec.build_path != '\0' &&
      std::find(out.begin(), out.end(), spec.build_path) == out.end()) {
    out.push_back(spec.build_path);
  }
  return out;
}

Result<void*> LoadModule(const ModuleSpec& spec) {
  std::string tried;
  for (const std::string& path : ModuleCandidates(spec)) {
    if (access(path.c_str(), R_OK) != 0) {
      tried += "\n  " + path + " (not there)";
      continue;
    }
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* why = dlerror();
      tried += "\n  " + path + " (" + (why == nullptr ? "dlopen failed" : why) + ")";
      continue;
    }
    void* entry = dlsym(handle, spec.entry);
    if (entry == nullptr) {
      tried += "\n  " + path + " (no " + spec.entry + ": not this msp module)";
      continue;
    }
    return entry;
  }
  return Status::FailedPrecondition(
      std::string(spec.needed_for) + " needs msp's module " + spec.file +
      ", which could not be loaded. Install it beside msp (`cmake --install BUILD` puts it in <prefix>/lib/msp; "
      "a build tree has it beside the msp binary) or name it in " + spec.env + ". Tried:" + tried);
}

Result<void*> LoadSystemLibrary(const char* soname, const char* package, const char* needed_for) {
  void* handle = dlopen(soname, RTLD_NOW | RTLD_GLOBAL);
  if (handle != nullptr) return handle;
  const char* why = dlerror();
  return Status::FailedPrecondition(std::string(needed_for) + " needs " + soname + ", which could not be loaded (" +
                                    (why == nullptr ? "dlopen failed" : why) + "). Install it: apt-get install " +
                                    package);
}

}  // namespace msp
