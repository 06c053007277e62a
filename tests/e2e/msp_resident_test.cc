// End-to-end tests of the `msp` command line next to a running server: the
// resident path (a command's read answered by `msp serve` on the data
// directory's socket) and the vector file a server writes for the next
// process. The fixture is msp_e2e_fixture.h.
#include "tests/e2e/msp_e2e_fixture.h"

namespace {

using namespace msp_e2e;  // NOLINT: the fixture's helpers
namespace fs = std::filesystem;
using nlohmann::json;

// The resident path (docs/cli.md): with `msp serve` on the data directory, a
// command's read-only operation is answered by the server, as the command
// would answer it itself: same hits, same caller rules (tenant, the
// operator's clearance), same errors; a command with other answering
// settings, or after the server is killed, answers itself.
TEST_F(MspTest, ResidentServerAnswersReadsAsTheCommandWould) {
  Ok({"init"});
  Ok({"write", "The user paints a sunrise over the lake every spring", "--tag", "note"});
  Ok({"write", "Deploys happen on Tuesdays after the standup meeting", "--tag", "constraint"});
  const std::string secret =
      WriteId({"decision", "add", "--mission", "m1", "--title", "Sunrise launch over the lake", "--context",
               "the lake launch needs a date", "--decision", "launch at sunrise", "--access-level", "5"});
  ASSERT_FALSE(secret.empty());
  Ok({"write", "Another tenant also paints the sunrise over a lake", "--tag", "note", "--tenant", "other"});
  Ok({"operator", "set", "guest", "--clearance", "2"});
  Ok({"event", "add", "The tide gauge failed at noon", "--mission", "m1", "--type", "incident", "--component", "harbour"});

  // Answers without a server, for comparison (the resident path off).
  auto ids = [](const json& hits) {
    std::vector<std::string> out;
    for (const json& h : hits) out.push_back(h["memory"]["id"].get<std::string>());
    return out;
  };
  const std::vector<std::string> q = {"search", "sunrise lake", "--record-access", "false"};
  auto with = [](std::vector<std::string> args, std::vector<std::string> more) {
    args.insert(args.end(), more.begin(), more.end());
    return args;
  };
  const json alone = Hits(with(q, {"--server-local-socket", "false"}));
  const std::string alone_text = Ok(with(q, {"--server-local-socket", "false"}));
  const std::string alone_json = Ok(with(q, {"--server-local-socket", "false", "--json"}));
  const Outcome alone_missing = Msp({"get", "01a00000-0000-7000-8000-000000000000"});
  ASSERT_EQ(ids(alone).size(), 2u);
  const Outcome alone_guest = Msp({"get", secret, "--operator", "guest", "--server-local-socket", "false"});
  ASSERT_NE(alone_guest.code, 0) << "a clearance-2 operator read a level-5 decision";
  // A read over the mission interface (WorkflowMemory, opened by the server
  // on first use): the mission's events and its load.
  const std::vector<std::string> events = {"event", "list", "--mission", "m1", "--json"};
  const std::vector<std::string> load = {"report", "load", "--mission", "m1", "--json"};
  const std::string alone_events = Ok(with(events, {"--server-local-socket", "false"}));
  ASSERT_TRUE(Contains(alone_events, "The tide gauge failed at noon")) << alone_events;
  const json alone_load = json::parse(Ok(with(load, {"--server-local-socket", "false"})));

  ::msp::testing::ChildProcess server = ::msp::testing::SpawnWithStderr(
      {MSP_BINARY, "--data-dir", data_, "serve", "--port", "0", "--allow-anonymous", "true", "--access-log", "false"});
  ASSERT_GT(::msp::testing::WaitForListening(server), 0) << server.err;
  ::msp::testing::ReadStderrUntil(server, [](const std::string& t) { return Contains(t, "SIGTERM"); });
  const std::string socket = data_ + "/msp.sock";
  EXPECT_TRUE(Contains(server.err, "msp commands here use " + socket)) << server.err;
  ASSERT_TRUE(fs::is_socket(socket));

  // The mission interface answers over the resident path as here.
  const Outcome served_events = Msp(events);
  ASSERT_EQ(served_events.code, 0) << served_events.err;
  EXPECT_EQ(served_events.err, "");
  EXPECT_EQ(served_events.out, alone_events);
  const Outcome served_load = Msp(load);
  ASSERT_EQ(served_load.code, 0) << served_load.err;
  EXPECT_EQ(json::parse(served_load.out)["events_in_window"], alone_load["events_in_window"]);
  EXPECT_EQ(json::parse(served_load.out)["clearance"], alone_load["clearance"]);

  // --timing says who answered.
  Outcome r = Msp(with(q, {"--timing"}));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(Contains(r.err, "answered by the msp server on " + socket)) << r.err;
  const json resident = Hits(q);
  EXPECT_EQ(ids(resident), ids(alone));
  // The server prints the command's lines and its --json (answer_text.h):
  // the same bytes as the command alone.
  EXPECT_EQ(Ok(q), alone_text);
  EXPECT_TRUE(Contains(alone_text, "The user paints a sunrise over the lake")) << alone_text;
  EXPECT_EQ(Ok(with(q, {"--json"})), alone_json);
  ASSERT_EQ(resident.size(), alone.size());
  for (size_t i = 0; i < resident.size(); ++i) EXPECT_EQ(resident[i]["score"], alone[i]["score"]);
  // The operator's clearance and the tenant hold on the server as here.
  const json other = Hits(with(q, {"--tenant", "other"}));
  ASSERT_EQ(other.size(), 1u);
  EXPECT_TRUE(Contains(other[0]["memory"]["text"].get<std::string>(), "Another tenant"));
  const Outcome guest = Msp({"get", secret, "--operator", "guest"});
  EXPECT_EQ(guest.code, alone_guest.code);
  EXPECT_EQ(guest.err, alone_guest.err);
  EXPECT_TRUE(Contains(Ok({"get", secret, "--json"}), "launch at sunrise"));
  // An error as the command gives it.
  const Outcome missing = Msp({"get", "01a00000-0000-7000-8000-000000000000"});
  EXPECT_EQ(missing.code, alone_missing.code);
  EXPECT_EQ(missing.err, alone_missing.err);
  // A write made meanwhile by a command (in-process) is seen by the next read.
  const std::string fresh = WriteId({"write", "A sunrise regatta crosses the lake at dawn", "--tag", "note"});
  EXPECT_EQ(Ok({"get", fresh, "--json"}).find(fresh) != std::string::npos, true);
  const std::vector<std::string> after = ids(Hits(q));
  EXPECT_NE(std::find(after.begin(), after.end(), fresh), after.end());
  // Other answering settings: the command answers itself, alike.
  r = Msp(with(q, {"--timing", "--retrieval-bm25-k1", "0.9000001"}));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_FALSE(Contains(r.err, "answered by the msp server")) << r.err;
  EXPECT_TRUE(Contains(r.err, "timing: open")) << r.err;

  // Killed: its socket file stays, nobody accepts, the command answers itself.
  kill(server.pid, SIGKILL);
  EXPECT_EQ(::msp::testing::WaitExit(server), 128 + SIGKILL);
  close(server.err_fd);
  ASSERT_TRUE(fs::exists(socket));
  r = Msp(with(q, {"--timing"}));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_FALSE(Contains(r.err, "warning")) << r.err;
  EXPECT_TRUE(Contains(r.err, "timing: open")) << r.err;
  // The next server takes the socket over, and stops cleanly (removing it).
  ::msp::testing::ChildProcess next = ::msp::testing::SpawnWithStderr(
      {MSP_BINARY, "--data-dir", data_, "serve", "--port", "0", "--allow-anonymous", "true", "--access-log", "false"});
  ASSERT_GT(::msp::testing::WaitForListening(next), 0) << next.err;
  r = Msp(with(q, {"--timing"}));
  EXPECT_TRUE(Contains(r.err, "answered by the msp server")) << r.err;
  EXPECT_EQ(::msp::testing::Stop(next), 0) << next.err;
  EXPECT_FALSE(fs::exists(socket));
}

// A server writes the vector file its start caught up (commands below the
// save threshold never do), and at its stop what its requests replayed, so
// the next process opening the store replays nothing; `msp mcp` as well.
TEST_F(MspTest, ServerWritesTheVectorFileItCaughtUp) {
  Ok({"init"});
  Ok({"write", "The user paints a sunrise over the lake every spring", "--tag", "note"});
  Ok({"write", "Deploys happen on Tuesdays after the standup meeting", "--tag", "constraint"});
  const std::string file = data_ + "/vector/index.msv";
  ASSERT_FALSE(fs::exists(file)) << "a command wrote the vector file below the save threshold";

  ::msp::testing::ChildProcess server = ::msp::testing::SpawnWithStderr(
      {MSP_BINARY, "--data-dir", data_, "serve", "--port", "0", "--allow-anonymous", "true", "--access-log", "false"});
  ASSERT_GT(::msp::testing::WaitForListening(server), 0) << server.err;
  for (int i = 0; i < 200 && !fs::exists(file); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_TRUE(fs::exists(file)) << "the server did not write what its start caught up";
  const auto started = fs::last_write_time(file);

  // A command's write, which the server replays for the next read; the
  // file lacks it until the server stops.
  const std::string fresh = WriteId({"write", "A sunrise regatta crosses the lake at dawn", "--tag", "note"});
  const Outcome hits = Msp({"search", "sunrise regatta", "--json", "--timing"});
  ASSERT_EQ(hits.code, 0) << hits.err;
  EXPECT_TRUE(Contains(hits.err, "answered by the msp server")) << hits.err;
  EXPECT_TRUE(Contains(hits.out, fresh)) << hits.out;
  EXPECT_EQ(fs::last_write_time(file), started);
  EXPECT_EQ(::msp::testing::Stop(server), 0) << server.err;
  EXPECT_GT(fs::last_write_time(file), started) << "the server stopped without writing what it replayed";
  // The store answers alike without the server.
  EXPECT_TRUE(Contains(Ok({"search", "sunrise regatta", "--json"}), fresh));

  // `msp mcp` (a session of an MCP client) too: a command's write after the
  // file, then a session that ends at once writes what it caught up.
  const std::string later = WriteId({"write", "The lake freezes over in January", "--tag", "note"});
  const auto before_mcp = fs::last_write_time(file);
  const Outcome mcp = Msp({"mcp"}, "");
  ASSERT_EQ(mcp.code, 0) << mcp.err;
  EXPECT_GT(fs::last_write_time(file), before_mcp) << "msp mcp ended without writing what it caught up";
  EXPECT_TRUE(Contains(Ok({"search", "lake freezes", "--json"}), later));
}

// The `msp serve --local-only` processes on `data_dir` (by their command
// lines), zombies left out.
std::vector<pid_t> ResidentServers(const std::string& data_dir) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (fs::directory_iterator it("/proc", ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream cmdline(it->path() / "cmdline", std::ios::binary);
    const std::string args((std::istreambuf_iterator<char>(cmdline)), std::istreambuf_iterator<char>());
    if (!Contains(args, std::string("serve\0--local-only\0", 19)) ||
        !Contains(args, "--data-dir" + std::string(1, '\0') + data_dir + std::string(1, '\0'))) {
      continue;
    }
    std::ifstream stat(it->path() / "stat");
    const std::string line((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    const size_t paren = line.rfind(')');
    if (paren == std::string::npos || paren + 2 >= line.size() || line[paren + 2] == 'Z') continue;
    out.push_back(static_cast<pid_t>(std::stol(name)));
  }
  return out;
}

// Whether `done` holds within `seconds`, asked every 50 ms.
template <typename Done>
bool Within(int seconds, Done done) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return true;
}

std::string FileText(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// A read-only command that finds no server starts one (msp serve
// --local-only) when the store has seen server.resident_autostart changes;
// the commands after it are answered by it, as they would answer
// themselves. It stops after its idle time, when its socket is removed, and
// gives the socket to a user's `msp serve`.
TEST_F(MspTest, ACommandStartsAResidentServerWhereItPays) {
  Ok({"init"});
  Ok({"write", "The user paints a sunrise over the lake every spring", "--tag", "note"});
  Ok({"write", "Deploys happen on Tuesdays after the standup meeting", "--tag", "constraint"});
  const std::vector<std::string> q = {"search", "sunrise lake", "--record-access", "false"};
  auto with = [](std::vector<std::string> args, std::vector<std::string> more) {
    args.insert(args.end(), more.begin(), more.end());
    return args;
  };
  const std::string alone = Ok(with(q, {"--server-local-socket", "false"}));
  ASSERT_TRUE(Contains(alone, "paints a sunrise")) << alone;
  const std::string socket = data_ + "/msp.sock";
  const std::string log = data_ + "/msp-resident.log";
  auto answered_by_server = [&] {
    const Outcome o = Msp(with(q, {"--timing"}));
    return o.code == 0 && Contains(o.err, "answered by the msp server on " + socket);
  };
  auto started_pid = [](const Outcome& o) -> pid_t {
    const std::string mark = "started a resident server (pid ";
    const size_t at = o.err.find(mark);
    return at == std::string::npos ? -1 : static_cast<pid_t>(std::stol(o.err.substr(at + mark.size())));
  };

  // Below the threshold (10,000 changes by default), or with it 0: none.
  Outcome r = Msp(with(q, {"--timing"}));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, alone);
  EXPECT_FALSE(Contains(r.err, "started a resident server")) << r.err;
  EXPECT_TRUE(ResidentServers(data_).empty());
  env_["MSP_SERVER_RESIDENT_AUTOSTART"] = "0";
  r = Msp(with(q, {"--timing"}));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_FALSE(Contains(r.err, "started a resident server")) << r.err;
  EXPECT_TRUE(ResidentServers(data_).empty());
  // Bad values: a clear error, nothing started.
  r = Msp(with(q, {"--server-resident-autostart", "-1"}));
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_TRUE(Contains(r.err, "--server-resident-autostart must be >= 0")) << r.err;
  r = Msp(with(q, {"--server-resident-idle-seconds", "0"}));
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_TRUE(Contains(r.err, "--server-resident-idle-seconds must be >= 1")) << r.err;
  r = Msp({"serve", "--idle-exit", "5"});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_TRUE(Contains(r.err, "--idle-exit is for a server with --local-only")) << r.err;
  r = Exec({"--data-dir", (dir_ / "none").string(), "serve", "--local-only"});
  EXPECT_NE(r.code, 0);
  EXPECT_TRUE(Contains(r.err, "no msp store in data directory")) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "none"));
  EXPECT_TRUE(ResidentServers(data_).empty());
  EXPECT_FALSE(fs::exists(socket));

  // One change short of the threshold (two writes: change sequence 2):
  // none. At the threshold: the command answers itself and starts one; the
  // commands after it are answered by it once it has opened the store
  // (those before answer themselves), with the same lines.
  env_["MSP_SERVER_RESIDENT_AUTOSTART"] = "3";
  r = Msp(with(q, {"--timing"}));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_FALSE(Contains(r.err, "started a resident server")) << r.err;
  EXPECT_TRUE(ResidentServers(data_).empty());
  // A server that cannot start (here: a directory where its socket would
  // be) is not started again by every command: one start at most every
  // 10 s, marked by the time of the socket's lock file.
  const std::string lock = socket + ".lock";
  env_["MSP_SERVER_RESIDENT_AUTOSTART"] = "2";
  fs::create_directory(socket);
  r = Msp(with(q, {"--timing"}));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, alone);
  ASSERT_GT(started_pid(r), 0) << r.err;
  EXPECT_TRUE(Within(30, [&] { return ResidentServers(data_).empty(); }));
  r = Msp(with(q, {"--timing"}));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, alone);
  EXPECT_EQ(started_pid(r), -1) << r.err;
  EXPECT_TRUE(Contains(r.err, "timing: not starting a resident server: one was started")) << r.err;
  fs::remove(socket);
  // The lock file's time set back, as when the last start is long past.
  auto long_ago = [&] { fs::last_write_time(lock, fs::file_time_type::clock::now() - std::chrono::hours(1)); };
  long_ago();
  r = Msp(with(q, {"--timing"}));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, alone);
  EXPECT_TRUE(Contains(r.err, "timing: open")) << r.err;
  const pid_t pid = started_pid(r);
  ASSERT_GT(pid, 0) << r.err;
  ASSERT_TRUE(Within(60, answered_by_server)) << FileText(log);
  EXPECT_EQ(Ok(q), alone);
  // One server, however many commands started one while it opened.
  EXPECT_TRUE(Within(30, [&] { return ResidentServers(data_) == std::vector<pid_t>{pid}; }));
  EXPECT_TRUE(Contains(FileText(log), "answering msp commands on " + socket)) << FileText(log);
  // A write by a command is in the server's next answer; a command finding
  // the server starts no other.
  const std::string fresh = WriteId({"write", "A sunrise regatta crosses the lake at dawn", "--tag", "note"});
  r = Msp({"search", "sunrise regatta", "--json", "--timing"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(Contains(r.err, "answered by the msp server")) << r.err;
  EXPECT_FALSE(Contains(r.err, "started a resident server")) << r.err;
  EXPECT_TRUE(Contains(r.out, fresh)) << r.out;

  // A user's `msp serve` takes the socket over: the started one stops.
  ::msp::testing::ChildProcess server = ::msp::testing::SpawnWithStderr(
      {MSP_BINARY, "--data-dir", data_, "serve", "--port", "0", "--allow-anonymous", "true", "--access-log", "false"});
  ASSERT_GT(::msp::testing::WaitForListening(server), 0) << server.err;
  ::msp::testing::ReadStderrUntil(server, [](const std::string& t) { return Contains(t, "SIGTERM"); });
  EXPECT_TRUE(Contains(server.err, "msp commands here use " + socket)) << server.err;
  EXPECT_TRUE(Within(30, [&] { return ResidentServers(data_).empty(); }));
  EXPECT_TRUE(Contains(FileText(log), "a server started on the directory takes the socket: stopping")) << FileText(log);
  EXPECT_TRUE(answered_by_server());
  // A user's server does not give the socket up: the next `msp serve`
  // serves HTTP without it.
  ::msp::testing::ChildProcess second = ::msp::testing::SpawnWithStderr(
      {MSP_BINARY, "--data-dir", data_, "serve", "--port", "0", "--allow-anonymous", "true", "--access-log", "false"});
  ASSERT_GT(::msp::testing::WaitForListening(second), 0) << second.err;
  EXPECT_TRUE(Contains(second.err, "no resident path for msp commands")) << second.err;
  EXPECT_EQ(::msp::testing::Stop(second), 0) << second.err;
  EXPECT_TRUE(answered_by_server());
  EXPECT_EQ(::msp::testing::Stop(server), 0) << server.err;
  EXPECT_FALSE(fs::exists(socket));

  // Its socket removed: it stops.
  long_ago();
  r = Msp(with(q, {"--timing"}));
  ASSERT_GT(started_pid(r), 0) << r.err;
  ASSERT_TRUE(Within(60, answered_by_server)) << FileText(log);
  fs::remove(socket);
  EXPECT_TRUE(Within(30, [&] { return ResidentServers(data_).empty(); }));
  EXPECT_TRUE(Contains(FileText(log), socket + " was removed: stopping")) << FileText(log);

  // Idle for server.resident_idle_seconds: it stops, and removes its socket.
  env_["MSP_SERVER_RESIDENT_IDLE_SECONDS"] = "1";
  fs::remove(log);
  long_ago();
  r = Msp(with(q, {"--timing"}));
  ASSERT_GT(started_pid(r), 0) << r.err;
  EXPECT_TRUE(Within(30, [&] { return ResidentServers(data_).empty(); }));
  EXPECT_TRUE(Contains(FileText(log), "1 s without a call: stopping")) << FileText(log);
  EXPECT_FALSE(fs::exists(socket));
}

// A secret given to the command as a flag (here the store's key) reaches
// the server it starts through its environment, not its command line,
// which every user can read: the server answers, and its command line
// holds the data directory but not the key.
TEST_F(MspTest, AStartedServerGetsSecretFlagsThroughItsEnvironment) {
  const std::string key(64, 'a');
  Ok({"init", "--encryption-key", key});
  Ok({"write", "The user paints a sunrise over the lake every spring", "--tag", "note", "--encryption-key", key});
  env_["MSP_SERVER_RESIDENT_AUTOSTART"] = "1";
  const std::vector<std::string> q = {"search", "sunrise lake", "--encryption-key", key, "--timing"};
  const Outcome first = Msp(q);
  ASSERT_EQ(first.code, 0) << first.err;
  ASSERT_TRUE(Contains(first.err, "started a resident server")) << first.err;
  ASSERT_TRUE(Within(60, [&] {
    const Outcome o = Msp(q);
    return o.code == 0 && Contains(o.err, "answered by the msp server") && Contains(o.out, "paints a sunrise");
  }));
  const std::vector<pid_t> servers = ResidentServers(data_);
  ASSERT_EQ(servers.size(), 1u);
  std::ifstream in("/proc/" + std::to_string(servers[0]) + "/cmdline", std::ios::binary);
  const std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(Contains(cmdline, data_)) << cmdline;
  EXPECT_FALSE(Contains(cmdline, key)) << cmdline;
  EXPECT_FALSE(Contains(cmdline, "--encryption-key")) << cmdline;
  // Without the key a command is not answered by it (its settings differ):
  // it answers itself, and fails as it would without a server.
  const Outcome keyless = Msp({"search", "sunrise lake"});
  EXPECT_NE(keyless.code, 0);
  EXPECT_TRUE(Contains(keyless.err, "encrypted")) << keyless.err;
  kill(servers[0], SIGTERM);
  EXPECT_TRUE(Within(30, [&] { return ResidentServers(data_).empty(); }));
}

}  // namespace
