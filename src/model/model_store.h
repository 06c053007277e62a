// The models of the native embedder kept in the data directory
// (<data_dir>/models/<name>/): `msp model pull` downloads one over HTTP(S)
// (resumable, checksums, a manifest, and a check that it opens), `msp model
// list` and `msp model remove`. docs/embeddings.md, "Pulling a model".
#ifndef MSP_MODEL_MODEL_STORE_H_
#define MSP_MODEL_MODEL_STORE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "msp/status.h"

namespace msp {

// A model msp knows by name: where its files lie (a base URL; each file is
// base + "/" + path) and, where known, the sha256 of its weights.
struct CatalogueModel {
  std::string name;         // "all-MiniLM-L6-v2"
  std::string base_url;     // "https://huggingface.co/<repo>/resolve/main"
  std::string weights_sha256;  // of model.safetensors; "" when not known
};
const std::vector<CatalogueModel>& ModelCatalogue();

// Progress of one file of a pull.
struct PullProgress {
  std::string file;       // "model.safetensors"
  int64_t bytes = 0;      // of the file on disk so far (a resumed part included)
  int64_t total = -1;     // the file's size, -1 when the server does not say
  int64_t fetched = 0;    // bytes received by this attempt
  int64_t elapsed_ms = 0; // of this attempt
  bool done = false;      // the file is complete
};

struct PullOptions {
  std::string source;  // a catalogue name or a base URL (http or https)
  std::string name;    // the model's name; "" from the catalogue or the URL
  std::string sha256;  // expected sha256 of model.safetensors; "" the catalogue's, if any
  int retries = 3;     // per file, each resuming where the last stopped
  int retry_wait_ms = 500;  // doubled after each retry
  std::function<void(const PullProgress&)> progress;
};

struct ModelFile {
  std::string path;    // "1_Pooling/config.json"
  int64_t bytes = 0;
  std::string sha256;  // computed after the download
  bool verified = false;  // matched an expected checksum
};

struct PulledModel {
  std::string name;
  std::string dir;
  std::string source;  // the base URL
  std::vector<ModelFile> files;
  std::string embedder_id;  // what the native embedder calls itself with it
};

// Downloads the model's files into <data_dir>/models/.<name>.partial/ (each
// to <file>.part, renamed when complete; a part left by an interrupted pull
// is resumed with a Range request), verifies the sha256 it expects, opens
// the directory with the native embedder, writes model.json (the manifest)
// and renames the directory to <data_dir>/models/<name>/. A checksum
// mismatch, a required file missing (404) or a model that does not open is
// an error that leaves no model directory; a transport error keeps the
// parts for the next pull to resume.
Result<PulledModel> PullModel(const std::string& data_dir, const PullOptions& options);

struct ModelEntry {
  std::string name;
  std::string dir;
  int64_t bytes = 0;    // of every file in it
  std::string source;   // from model.json; "" without one
  std::string pulled_at;
  bool opens = false;   // the native embedder opens it
  std::string embedder_id;
  std::string error;    // why it does not open
};

// The models under <data_dir>/models, by name; empty when there is none.
// `check` opens each with the native embedder (opens, embedder_id, error).
Result<std::vector<ModelEntry>> ListModels(const std::string& data_dir, bool check);

// Deletes <data_dir>/models/<name>/ (and a partial pull of that name).
// InvalidArgument for a name that is not a plain file name, NotFound when
// there is no such model.
Status RemoveModel(const std::string& data_dir, const std::string& name);

// InvalidArgument unless `name` is a plain directory name (no '/', '\\',
// "." or "..", not starting with '.', at most 200 bytes).
Status CheckModelName(const std::string& name);

// The sha256 of a file, as 64 lowercase hex digits.
Result<std::string> Sha256OfFile(const std::string& path);

}  // namespace msp

#endif  // MSP_MODEL_MODEL_STORE_H_
