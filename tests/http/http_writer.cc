// A client process for the concurrent-writers test: POSTs N records to
// /v1/memories and prints the id of every acknowledged one, one a line.
//   http_writer PORT KEY WRITER_NO N
// Exits 0 when every write was acknowledged (201), 1 otherwise (the reason
// on stderr).
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

#include <httplib.h>
#include <nlohmann/json.hpp>

int main(int argc, char** argv) {
  if (argc != 5) {
    std::cerr << "usage: http_writer PORT KEY WRITER_NO N\n";
    return 2;
  }
  const int port = std::atoi(argv[1]);
  const std::string key = argv[2];
  const std::string writer = argv[3];
  const int n = std::atoi(argv[4]);
  httplib::Client client("127.0.0.1", port);
  client.set_keep_alive(true);
  client.set_tcp_nodelay(true);
  client.set_read_timeout(120, 0);
  client.set_write_timeout(120, 0);
  const httplib::Headers headers = {{"Authorization", "Bearer " + key}};
  for (int i = 0; i < n; ++i) {
    const nlohmann::json body = {
        {"kind", "decision"},
        {"text", "Writer " + writer + " decided that item " + std::to_string(i) + " goes to queue q" + writer + "x" +
                     std::to_string(i)},
        {"tags", {"goal"}},
        {"namespace", {{"user", "writer" + writer}}},
    };
    auto res = client.Post("/v1/memories", headers, body.dump(), "application/json");
    if (!res) {
      std::cerr << "writer " << writer << " item " << i << ": " << httplib::to_string(res.error()) << "\n";
      return 1;
    }
    if (res->status != 201) {
      std::cerr << "writer " << writer << " item " << i << ": HTTP " << res->status << " " << res->body << "\n";
      return 1;
    }
    std::cout << nlohmann::json::parse(res->body).at("id").get<std::string>() << "\n";
    std::cout.flush();
  }
  return 0;
}
