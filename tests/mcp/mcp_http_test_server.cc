// A small HTTP server for the Node tests of MCP's Streamable HTTP transport:
// MountMcpHttp on its own httplib::Server at 127.0.0.1, any free port.
//
//   mcp_http_test_server --data-dir DIR [--key KEY=TENANT]... [--allowed-origin ORIGIN]... [--page-size N]
//
// Prints "port N" on standard output once listening; serves until standard
// input closes (the test ends it so), then exits 0.
#include <httplib.h>

#include <cstdlib>
#include <iostream>
#include <map>
#include <string>
#include <thread>

#include "mcp/mcp_http.h"
#include "msp/memory.h"

int main(int argc, char** argv) {
  msp::Options options;
  options.store.synchronous = "normal";
  msp::mcp::McpHttpOptions http_options;
  std::map<std::string, std::string> keys;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const std::string value = argv[i + 1];
    if (flag == "--data-dir") {
      options.store.data_dir = value;
    } else if (flag == "--key") {
      const size_t eq = value.find('=');
      if (eq == std::string::npos) {
        std::cerr << "--key wants KEY=TENANT\n";
        return 2;
      }
      keys[value.substr(0, eq)] = value.substr(eq + 1);
    } else if (flag == "--allowed-origin") {
      http_options.mcp.allowed_origins.push_back(value);
    } else if (flag == "--page-size") {
      http_options.mcp.read_graph_page_size = std::atoi(value.c_str());
    } else {
      std::cerr << "unknown flag " << flag << "\n";
      return 2;
    }
  }
  auto engine = msp::MemoryLayer::Open(options);
  if (!engine.ok()) {
    std::cerr << engine.status().ToString() << "\n";
    return 1;
  }
  msp::mcp::McpAuthenticator auth;
  if (!keys.empty()) {
    auth = [keys](const httplib::Request& req) -> msp::Result<msp::mcp::McpCaller> {
      std::string header = req.get_header_value("Authorization");
      const std::string bearer = "Bearer ";
      if (header.rfind(bearer, 0) == 0) header = header.substr(bearer.size());
      auto it = keys.find(header);
      if (it == keys.end()) return msp::Status::NotFound("unknown API key");
      return msp::mcp::McpCaller{it->second, "test", std::nullopt};
    };
  }
  httplib::Server http;
  // httplib gives each keep-alive connection a pool thread until it idles
  // out; the SDK client opens one connection per request in flight, so a
  // short idle timeout keeps bursts of concurrent calls from queueing.
  http.set_keep_alive_timeout(1);
  if (msp::Status s = msp::mcp::MountMcpHttp(http, **engine, http_options, auth); !s.ok()) {
    std::cerr << s.ToString() << "\n";
    return 1;
  }
  const int port = http.bind_to_any_port("127.0.0.1");
  if (port <= 0) {
    std::cerr << "cannot bind 127.0.0.1\n";
    return 1;
  }
  std::thread server([&http] { http.listen_after_bind(); });
  std::cout << "port " << port << std::endl;
  std::string ignored;
  while (std::getline(std::cin, ignored)) {
  }
  http.stop();
  server.join();
  return 0;
}
