// Loading the libraries behind the lazy shims (lazy.h).
#include "lazy/lazy.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

#include "util/module.h"

namespace msp::lazy {

void* Symbol(const LazyLibrary& library, const char* name) {
  // One handle per library; the lists are short, and a lookup happens once
  // per function per process.
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  Result<void*> handle = LoadSystemLibrary(library.soname, library.package, library.needed_for);
  if (!handle.ok()) {
    std::fprintf(stderr, "msp: %s\n", handle.status().message().c_str());
    std::exit(1);
  }
  void* fn = dlsym(*handle, name);
  if (fn == nullptr) {
    std::fprintf(stderr, "msp: %s has no %s (a different version?); %s needs it. Install %s.\n", library.soname,
                 name, library.needed_for, library.package);
    std::exit(1);
  }
  return fn;
}

}  // namespace msp::lazy
