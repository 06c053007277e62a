// api_doc: writes what the docs say of the operation table (reference.h).
//   api_doc > docs/operations.md                          the reference page
//   api_doc --openapi docs/openapi.json > /tmp/o && mv /tmp/o docs/openapi.json
// Run both after changing a declaration; api_test fails until they are.
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "api/reference.h"

int main(int argc, char** argv) {
  if (argc == 1) {
    std::cout << msp::api::ReferenceMarkdown();
    return 0;
  }
  if (argc == 3 && std::string(argv[1]) == "--openapi") {
    std::ifstream in(argv[2]);
    std::stringstream text;
    text << in.rdbuf();
    msp::Result<std::string> out = msp::api::OpenApiWithOperations(text.str());
    if (!out.ok()) {
      std::cerr << "api_doc: " << argv[2] << ": " << out.status().message() << "\n";
      return 1;
    }
    std::cout << *out;
    return 0;
  }
  std::cerr << "usage: api_doc [--openapi FILE]\n";
  return 2;
}
