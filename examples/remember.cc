// remember: a program that uses msp as a library (docs/library.md).
//
//   remember DATA_DIR write TEXT...   stores each TEXT as a fact of user "ann"
//                                     and prints its id
//   remember DATA_DIR search QUERY    prints the best hits, one per line:
//                                     score <tab> id <tab> text
//
// Everything it needs comes from <msp/...>: Options, MemoryLayer, Status.
#include <cstdio>
#include <string>

#include <msp/memory.h>
#include <msp/version.h>

namespace {

int Fail(const msp::Status& status) {
  std::fprintf(stderr, "remember: %s\n", status.ToString().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: remember DATA_DIR write TEXT... | remember DATA_DIR search QUERY\n");
    return 2;
  }
  msp::Options options;
  options.store.data_dir = argv[1];
  // Settings with fixed choices are enums (msp/options.h): the SQLite store
  // in data_dir (the default; StoreBackend::kPostgres with
  // options.store.postgres_url for PostgreSQL).
  options.store.backend = msp::StoreBackend::kSqlite;
  msp::Result<std::unique_ptr<msp::MemoryLayer>> opened = msp::MemoryLayer::Open(options);
  if (!opened.ok()) return Fail(opened.status());
  msp::MemoryLayer& memory = **opened;

  msp::Namespace ann;
  ann.user = "ann";
  const std::string verb = argv[2];
  if (verb == "write") {
    for (int i = 3; i < argc; ++i) {
      msp::WriteRequest request;
      request.ns = ann;
      request.kind = msp::Kind::kFact;
      request.text = argv[i];
      // The write policy keeps a semantic fact only with a stable tag
      // (preference, constraint, profile, goal or note); without one the write is
      // refused (StatusCode::kRefused, the rule in the message).
      request.tags = {"profile"};
      request.actor = "remember";
      msp::Result<msp::WriteResult> written = memory.Write(request);
      if (!written.ok()) return Fail(written.status());
      std::printf("%s\n", written->id.c_str());
    }
    return 0;
  }
  if (verb == "search") {
    msp::RetrieveRequest request;
    request.scope = ann;
    request.query = argv[3];
    request.top_k = 3;
    msp::Result<msp::RetrieveResult> found = memory.Search(request);
    if (!found.ok()) return Fail(found.status());
    for (const msp::SearchHit& hit : found->hits) {
      std::printf("%.3f\t%s\t%s\n", hit.score, hit.memory.id.c_str(), hit.memory.text.c_str());
    }
    std::fprintf(stderr, "remember: libmsp %s (built with <msp/version.h> %s)\n", msp::LibraryVersion(),
                 MSP_VERSION_STRING);
    return 0;
  }
  std::fprintf(stderr, "remember: unknown verb '%s' (write or search)\n", verb.c_str());
  return 2;
}
