// Readers of tool-call arguments shared by the MCP tool files (see tool_args.h).
#include "mcp/tool_args.h"

namespace msp::mcp {

std::vector<std::string> StringList(const nlohmann::json& args, const char* key) {
  std::vector<std::string> out;
  if (auto it = args.find(key); it != args.end()) {
    for (const nlohmann::json& v : *it) out.push_back(v.get<std::string>());
  }
  return out;
}

}  // namespace msp::mcp
