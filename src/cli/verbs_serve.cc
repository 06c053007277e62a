// `msp serve`: the REST API (/v1), MCP over HTTP (/mcp) and the web console
// (/ui) on the embedded default, until SIGINT or SIGTERM; with --local-only,
// only the resident path (<data_dir>/msp.sock), as a command starts it.
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string_view>

#include <ostream>

#include "cli/capture_command.h"
#include "cli/cli.h"
#include "cli/index_housekeeping.h"
#include "cli/resident_start.h"
#include "cli/serve_resident.h"
#include "console/console.h"
#include "local/local_socket.h"
#include "rest/rest_api.h"
#include "server/auth.h"
#include "util/data_file.h"
#include "util/owned_fd.h"
#include "server/http_server.h"
#ifdef MSP_HAVE_MCP
#include "mcp/mcp_http.h"
#endif

#ifndef MSP_VERSION
#define MSP_VERSION "unknown"
#endif

namespace msp {
namespace {

// Mounts MCP's Streamable HTTP endpoint at /mcp, authenticated by the same
// API keys as REST. Returns false when this build has no MCP part.
Result<bool> MountMcp(HttpServer& server, MemoryLayer& engine, const Settings& options) {
#ifdef MSP_HAVE_MCP
  mcp::McpHttpOptions mcp_options;
  mcp_options.path = "/mcp";
  mcp_options.server_version = MSP_VERSION;
  mcp_options.mcp = options.mcp;
  mcp_options.mission = options.mission;
  mcp_options.tokens = options.tokens;
  mcp_options.policy = options.policy;
  mcp_options.max_body_bytes = options.server.max_body_bytes;
  auto authenticate = [&server](const httplib::Request& req) -> Result<mcp::McpCaller> {
    std::optional<ApiPrincipal> key = server.Identify(req);
    if (!key) {
      return Status::InvalidArgument(
          "a valid API key is required: send `Authorization: Bearer KEY` or `X-API-Key: KEY`");
    }
    return mcp::McpCaller{key->tenant, "mcp", key->clearance};
  };
  MSP_RETURN_IF_ERROR(mcp::MountMcpHttp(server.http(), engine, mcp_options, authenticate));
  server.DeclareRoute(mcp_options.path);
  return true;
#else
  (void)server;
  (void)engine;
  (void)options;
  return false;
#endif
}

// Whether this process's program file was replaced (a rebuild or an
// upgrade): /proc/self/exe then names a deleted file.
bool ProgramReplaced() {
  char target[4096];
  const ssize_t n = readlink("/proc/self/exe", target, sizeof(target) - 1);
  if (n <= 0) return false;
  static constexpr std::string_view kDeleted = " (deleted)";
  const std::string_view t(target, static_cast<size_t>(n));
  return t.size() > kDeleted.size() && t.substr(t.size() - kDeleted.size()) == kDeleted;
}

// Blocks SIGINT and SIGTERM in this thread, and so in the threads it starts
// after, for the main thread's sigwait to take them: returns that set, the
// mask before in *previous.
sigset_t BlockStopSignals(sigset_t* previous) {
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, previous);
  return stop_signals;
}

std::string HostForUrl(const std::string& bind) {
  if (bind.find(':') != std::string::npos && bind.front() != '[') return "[" + bind + "]";
  return bind;
}

// `msp serve --local-only`: the resident path alone, no HTTP. With
// `idle_s` (--idle-exit; the server a command starts, docs/cli.md) it stops
// after that many seconds without a call, yields the socket to a server
// started after it (LocalServer::StartTakingOver), writes its messages to
// ResidentLogPath once it holds the socket, and stops when its socket or
// data directory is removed or its program file replaced.
Status ServeLocalOnly(Invocation& inv, int64_t idle_s) {
  const Settings& options = inv.config.options;
  if (!options.server.local_socket) {
    return Usage(inv, "--local-only serves <data_dir>/msp.sock, which server.local_socket = false turns off");
  }
  const std::string path = local::SocketPath(options.store.data_dir);
  if (path.empty()) {
    return Status::InvalidArgument("the data directory's path is too long for a socket address: no resident path");
  }
  MSP_ASSIGN_OR_RETURN(const std::unique_ptr<MemoryLayer> engine, OpenServedEngine(inv, /*create=*/false));
  sigset_t previous;
  const sigset_t stop_signals = BlockStopSignals(&previous);
  // It answers once its indexes are caught up and warm (IndexHousekeeping),
  // declining until then (commands answer themselves): a cold server's
  // first queries, beside its warm-up, took longer than a command's own
  // (84, 46, 329 ms at 100,000 records against ~20).
  std::atomic<const ResidentCalls*> ready{nullptr};
  std::atomic<bool> resigned{false};
  auto handler = [&ready, &resigned, idle_s](const nlohmann::json& call) {
    if (idle_s > 0 && local::IsResignCall(call)) {
      resigned = true;
      kill(getpid(), SIGTERM);  // to the process: the main thread's sigtimedwait takes it
      return local::ResignedFrame();
    }
    const ResidentCalls* resident = ready.load(std::memory_order_acquire);
    if (resident == nullptr) return nlohmann::json{{"declined", "the server is warming up"}};
    return resident->Answer(call);
  };
  Result<std::unique_ptr<local::LocalServer>> started = local::LocalServer::Start(path, handler, 4);
  if (!started.ok()) {
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    return started.status();
  }
  std::unique_ptr<local::LocalServer> server = std::move(started).value();
  if (idle_s > 0) {
    // Started by a command, with no terminal: its messages in the log.
    OwnedFd log(open(ResidentLogPath(options.store.data_dir).c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
    if (log.valid()) (void)dup2(log.get(), STDERR_FILENO);
  }
  const ResidentCalls resident(*engine, options);
  *inv.err << "msp: answering msp commands on " << path << " (no HTTP) once warm"
           << (idle_s > 0 ? "; stops after " + std::to_string(idle_s) + " s without a call" : std::string())
           << "; stop with Ctrl-C or SIGTERM" << std::endl;
  const auto opened_at = std::chrono::steady_clock::now();
  IndexHousekeeping housekeeping(*engine, *inv.err, kIdleSave, [&] {
    ready.store(&resident, std::memory_order_release);
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - opened_at);
    *inv.err << "msp: warm after " << ms.count() << " ms: answering" << std::endl;
  });
  using Clock = std::chrono::steady_clock;
  Clock::time_point last_call = Clock::now();
  uint64_t calls = 0;
  std::string why;
  while (why.empty()) {
    const timespec tick{1, 0};
    const int signal_number = sigtimedwait(&stop_signals, nullptr, &tick);
    if (signal_number > 0) {
      why = resigned ? "a server started on the directory takes the socket"
                     : signal_number == SIGINT ? "SIGINT" : "SIGTERM";
    } else if (server->Gone()) {
      why = path + " was removed";
    } else if (idle_s > 0) {
      const uint64_t now_calls = server->answered() + server->refused();
      if (now_calls != calls) {
        calls = now_calls;
        last_call = Clock::now();
      }
      if (Clock::now() - last_call >= std::chrono::seconds(idle_s)) {
        why = std::to_string(idle_s) + " s without a call";
      } else if (ProgramReplaced()) {
        why = "its program file was replaced";
      }
    }
  }
  *inv.err << "msp: " << why << ": stopping" << std::endl;
  server->Stop();
  housekeeping.Stop();
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  return Status::Ok();
}

}  // namespace

Status RunServe(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(const int64_t idle_s, inv.flags.GetInt("--idle-exit", 0, 1, 86400));
  if (inv.flags.Has("--local-only")) return ServeLocalOnly(inv, idle_s);
  if (idle_s > 0) return Usage(inv, "--idle-exit is for a server with --local-only");
  const Settings& options = inv.config.options;
  const ServerOptions& so = options.server;
  MSP_ASSIGN_OR_RETURN(ApiKeys keys, ApiKeys::Load(so.api_keys, so.api_keys_file));
  if (!so.api_keys_file.empty()) {
    if (const std::string exposed = SecretsFileExposure(so.api_keys_file, "server.api_keys_file"); !exposed.empty()) {
      *inv.err << "msp: warning: " << exposed << "\n";
    }
  }
  const size_t key_count = keys.size();
  // Declared before the server: the server's handlers use it until it stops.
  std::unique_ptr<MemoryLayer> engine;
  MSP_ASSIGN_OR_RETURN(std::unique_ptr<HttpServer> server, HttpServer::Create(so, std::move(keys), inv.err));
  MSP_ASSIGN_OR_RETURN(engine, OpenServedEngine(inv, /*create=*/true));

  RestOptions rest;
  rest.actor = options.actor.empty() ? "rest" : options.actor;
  rest.stats_cache_ms = so.stats_cache_ms;
  rest.mission = options.mission;
  rest.tokens = options.tokens;
  rest.trusted_sources = options.policy.context_trusted_sources;
  rest.orchestrate = OrchestratorConfigFrom(options);
  rest.prompt_repository = PromptRepositoryPath(options);
  MountRestApi(*server, *engine, rest);
  MSP_ASSIGN_OR_RETURN(const bool mcp, MountMcp(*server, *engine, options));
  MountConsole(*server);

  // SIGINT and SIGTERM are blocked in every thread (the server's threads
  // inherit the mask) and taken by sigwait below, which stops the server.
  sigset_t previous;
  const sigset_t stop_signals = BlockStopSignals(&previous);
  Result<int> port = server->Start();
  if (!port.ok()) {
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    return port.status();
  }
  // The resident path: msp commands on this data directory call the engine
  // here instead of opening the store (docs/cli.md).
  const ResidentCalls resident(*engine, options);
  std::unique_ptr<local::LocalServer> local_server;
  std::string local_note;
  if (so.local_socket) {
    const std::string path = local::SocketPath(options.store.data_dir);
    Result<std::unique_ptr<local::LocalServer>> started =
        path.empty() ? Result<std::unique_ptr<local::LocalServer>>(
                           Status::InvalidArgument("the data directory's path is too long for a socket address"))
                     : local::LocalServer::StartTakingOver(
                           path, [&resident](const nlohmann::json& call) { return resident.Answer(call); }, 4);
    if (started.ok()) {
      local_server = std::move(started).value();
      local_note = "; msp commands here use " + path;
    } else {
      *inv.err << "msp: warning: no resident path for msp commands (server.local_socket): "
               << started.status().message() << std::endl;
    }
  }
  const std::string base = "http://" + HostForUrl(so.bind) + ":" + std::to_string(*port);
  *inv.err << "msp: listening on " << base << " (REST " << base << "/v1"
           << (mcp ? ", MCP " + base + "/mcp" : std::string()) << ", console " << base
           << "/ui); data directory " << options.store.data_dir
           << "; " << (key_count == 0 ? std::string("anonymous access as tenant default")
                                      : std::to_string(key_count) + " API key(s)")
           << local_note << "; stop with Ctrl-C or SIGTERM" << std::endl;
  // Index housekeeping beside the listeners (index_housekeeping.h): the
  // indexes caught up now rather than by the first request (one that comes
  // first waits on the same lock and finds it done), the vector file
  // written when the store is quiet. (Started after the line above: tests
  // and scripts read that line whole.)
  IndexHousekeeping housekeeping(*engine, *inv.err);
  int signal_number = 0;
  sigwait(&stop_signals, &signal_number);
  *inv.err << "msp: " << (signal_number == SIGINT ? "SIGINT" : "SIGTERM")
           << ": stopping after the requests in flight" << std::endl;
  if (local_server) local_server->Stop();
  server->Stop();
  // What the requests replayed, in the file for the next process (the
  // engine finishes the save as it closes).
  housekeeping.Stop();
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  return Status::Ok();
}

}  // namespace msp
