// GET /v1/events/stream: the records of the key's tenant as they change, as
// server-sent events (text/event-stream), for the web console's live view
// (src/console) and any client that would rather be told than poll.
//
// Driven by the store's change sequence (MemoryLayer::ChangesSince through
// AsCaller, so the key's tenant and clearance apply: a record above the
// clearance is never sent, and reads as `gone`). The server polls the
// sequence every kPollInterval while the stream is open; each change is one
// event whose id is its seq, so a client that reconnects with Last-Event-ID
// (or ?after=SEQ) misses nothing. Without either, the stream starts at the
// store's current end, less ?last=N changes (the newest records, read on
// the sequence's index); `event: ready` says when it has caught up to the
// seq it opened at.
//
// A stream holds one of the server's worker threads for its life, so at
// most MaxStreams() are open at once (past that: 503 with Retry-After). A
// comment line every kHeartbeat finds a client that went away (its write
// fails) and keeps proxies from closing an idle stream. Stop ends every
// stream within one poll interval (HttpServer::serving()).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include <nlohmann/json.hpp>

#include "codec/memory_json.h"
#include "msp/caller.h"
#include "rest/rest_route.h"
#include "server/http_status.h"

namespace msp {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr auto kPollInterval = std::chrono::milliseconds(250);
constexpr auto kHeartbeat = std::chrono::seconds(10);
constexpr int kPageSize = 200;

// At most a quarter of the workers, and no more than 16.
int MaxStreams(const ServerOptions& options) {
  return std::clamp(HttpServer::WorkerThreads(options) / 4, 1, 16);
}

// The state of one open stream, shared by its provider calls.
struct Stream {
  std::unique_ptr<MemoryLayer> layer;
  Namespace scope;
  int64_t after = 0;
  int64_t open_seq = 0;     // the store's last seq when the stream opened
  bool caught_up = false;   // `event: ready` sent
  Clock::time_point last_write = Clock::now();
  std::shared_ptr<std::atomic<int>> open;
  std::atomic<bool> released{false};  // the count is given back once
};

std::string Event(const char* name, int64_t id, const json& data) {
  return std::string("event: ") + name + "\nid: " + std::to_string(id) + "\ndata: " +
         data.dump(-1, ' ', false, json::error_handler_t::replace) + "\n\n";
}

// `event: ready` once the stream has sent every change up to the seq it
// opened at (at once when it starts there): what a client shows first.
std::string ReadyIfCaughtUp(Stream& s) {
  if (s.caught_up || s.after < s.open_seq) return "";
  s.caught_up = true;
  return "event: ready\ndata: " + std::to_string(s.open_seq) + "\n\n";
}

// One provider call: send what changed since `after`, or wait one poll
// interval (a heartbeat when due). False ends the stream.
bool Pump(HttpServer& server, Stream& s, httplib::DataSink& sink) {
  if (!server.serving()) {
    sink.done();
    return true;
  }
  Result<RecordChanges> page = s.layer->ChangesSince(s.scope, s.after, kPageSize);
  if (!page.ok()) {
    const std::string text = "event: error\ndata: " + DumpJson(StatusErrorJson(page.status())) + "\n\n";
    sink.write(text.data(), text.size());
    sink.done();
    return true;
  }
  if (page->up_to > s.after) {
    std::string out;
    for (const Memory& m : page->records) out += Event("record", m.seq, MemoryToJson(m));
    for (const std::string& id : page->gone) out += Event("gone", page->up_to, json{{"id", id}});
    // The page's end, so that a client resumes after it even when every
    // change of the page was out of its scope.
    out += "event: seq\nid: " + std::to_string(page->up_to) + "\ndata: " + std::to_string(page->up_to) + "\n\n";
    s.after = page->up_to;
    out += ReadyIfCaughtUp(s);
    s.last_write = Clock::now();
    if (!sink.write(out.data(), out.size())) return false;
    if (page->more) return true;
  }
  if (Clock::now() - s.last_write >= kHeartbeat) {
    static constexpr char kComment[] = ": keep-alive\n\n";
    s.last_write = Clock::now();
    if (!sink.write(kComment, sizeof(kComment) - 1)) return false;
  }
  std::this_thread::sleep_for(kPollInterval);
  return true;
}

void OpenStream(HttpServer& server, MemoryLayer& engine, const RestOptions& options,
                const std::shared_ptr<std::atomic<int>>& open, const HttpCall& call, httplib::Response& res) {
  QueryParams query = ParseQuery(call.req.target);
  if (Status st = CheckQueryNames(query, {"after", "last", "tenant"}); !st.ok()) return SendStatusError(res, st);
  auto [begin, end] = query.equal_range("tenant");
  for (auto it = begin; it != end; ++it) {
    if (it->second != call.tenant) {
      return SendError(res, 403, "forbidden",
                       "parameter 'tenant' names tenant '" + it->second + "', but this API key belongs to tenant '" +
                           call.tenant + "': a key reads only its own tenant (leave the tenant out)");
    }
  }
  auto s = std::make_shared<Stream>();
  s->layer = AsCaller(engine, Caller{call.tenant, options.actor, call.clearance});
  s->scope.tenant = call.tenant;
  // Where to start: ?after, else Last-Event-ID (an EventSource reconnecting),
  // else the store's current end less ?last changes (the records they
  // changed: what is new, read on the sequence's index).
  Result<int64_t> last_seq = s->layer->LastChangeSeq();
  if (!last_seq.ok()) return SendStatusError(res, last_seq.status());
  s->open_seq = *last_seq;
  Result<int64_t> backlog = IntParam(query, "last", 0, 1000, 0);
  if (!backlog.ok()) return SendStatusError(res, backlog.status());
  std::string after = StringParam(query, "after");
  if (!after.empty() && *backlog > 0) {
    return SendStatusError(res, Status::InvalidArgument("parameters 'after' and 'last' exclude each other: send one"));
  }
  if (after.empty()) after = call.req.get_header_value("Last-Event-ID");
  if (!after.empty()) {
    QueryParams one{{"after", after}};
    Result<int64_t> seq = IntParam(one, "after", 0, INT64_MAX, 0);
    if (!seq.ok()) return SendStatusError(res, seq.status());
    s->after = *seq;
  } else {
    s->after = std::max<int64_t>(0, *last_seq - *backlog);
  }
  const int max = MaxStreams(server.options());
  if (open->fetch_add(1) >= max) {
    open->fetch_sub(1);
    res.set_header("Retry-After", "5");
    return SendError(res, 503, "unavailable",
                     "too many event streams are open (" + std::to_string(max) + "); retry later");
  }
  s->open = open;
  res.status = 200;
  res.set_header("Cache-Control", "no-store");
  res.set_header("X-Accel-Buffering", "no");
  res.set_chunked_content_provider(
      "text/event-stream",
      [&server, s](size_t offset, httplib::DataSink& sink) {
        if (offset == 0) {
          // First: where the stream starts, and the client's retry delay.
          const std::string hello = "retry: 1000\nevent: seq\nid: " + std::to_string(s->after) +
                                    "\ndata: " + std::to_string(s->after) + "\n\n" + ReadyIfCaughtUp(*s);
          if (!sink.write(hello.data(), hello.size())) return false;
          s->last_write = Clock::now();
        }
        return Pump(server, *s, sink);
      },
      [s](bool) {
        if (!s->released.exchange(true)) s->open->fetch_sub(1);
      });
}

}  // namespace

void MountEventStream(HttpServer& server, MemoryLayer& engine, const RestOptions& options) {
  auto open = std::make_shared<std::atomic<int>>(0);
  server.Handle({"GET", "/v1/events/stream",
                 [&server, &engine, options, open](const HttpCall& call, httplib::Response& res) {
                   OpenStream(server, engine, options, open, call, res);
                 },
                 true});
}

}  // namespace msp
