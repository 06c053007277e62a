// The stdio transport (see mcp_stdio.h).
#include "mcp/mcp_stdio.h"

#include <istream>
#include <ostream>
#include <string>

#include "codec/memory_json.h"

namespace msp::mcp {

Status ServeStdio(McpServer& server, McpSession& session, std::istream& in, std::ostream& out, std::ostream& log) {
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    std::optional<std::string> reply;
    if (line.size() > kMaxStdioMessageBytes) {
      log << "msp mcp: refused a message of " << line.size() << " bytes (limit " << kMaxStdioMessageBytes << ")\n";
      reply = DumpJson(MakeError(nullptr, kParseError,
                                 "Parse error: message larger than " + std::to_string(kMaxStdioMessageBytes) + " bytes"));
    } else {
      reply = server.Handle(session, line);
    }
    if (!reply) continue;
    out << *reply << '\n';
    out.flush();
    if (!out) return Status::IoError("cannot write to standard output (the client closed it)");
  }
  return Status::Ok();
}

}  // namespace msp::mcp
