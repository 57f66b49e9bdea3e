#include "core/secret_file.hpp"

#include <fstream>
#include <sstream>

namespace reverify {

Result<std::string> read_secret_file(const std::filesystem::path& path, const std::string& key) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return make_error(ErrorCode::io, key + ": cannot read \"" + path.string() + "\"");
  std::ostringstream content;
  content << in.rdbuf();
  const std::string text = content.str();
  const char* space = " \t\r\n";
  const auto first = text.find_first_not_of(space);
  if (first == std::string::npos) {
    return make_error(ErrorCode::invalid_argument, key + ": \"" + path.string() + "\" is empty");
  }
  return text.substr(first, text.find_last_not_of(space) - first + 1);
}

}  // namespace reverify
