#include "core/text.hpp"

#include <algorithm>
#include <cctype>

namespace reverify {

std::string truncate_utf8(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes)
    return std::string(text);
  const std::string_view ellipsis = "…";
  if (max_bytes < ellipsis.size())
    return {};
  std::size_t cut = max_bytes - ellipsis.size();
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80)
    --cut;
  return std::string(text.substr(0, cut)) + std::string(ellipsis);
}

std::string one_line(std::string_view text, std::size_t max_bytes) {
  const std::size_t line_end = text.find('\n');
  if (line_end != std::string_view::npos)
    text = text.substr(0, line_end);
  std::string line;
  bool space = false;
  bool command = false;  // inside a `...` span: kept as written
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (!command && c == '.' && i + 1 < text.size() && text[i + 1] == ' ') {
      line += c;  // the first sentence ends here
      break;
    }
    if (!command && (c == ' ' || c == '\t' || c == '\r')) {
      space = !line.empty();
      continue;
    }
    if (space)
      line += ' ';
    space = false;
    command = command != (c == '`');
    line += c;
  }
  const std::string cut = truncate_utf8(line, max_bytes);
  if (cut == line || cut.empty())
    return cut;
  // A cut inside a command keeps the command whole instead (or, when it never closes, leaves it
  // out).
  const std::size_t kept = cut.size() - std::string_view("…").size();
  std::size_t open = std::string::npos;
  for (std::size_t i = 0; i < kept; ++i) {
    if (line[i] == '`')
      open = open == std::string::npos ? i : std::string::npos;
  }
  if (open == std::string::npos)
    return cut;
  const std::size_t close = line.find('`', open + 1);
  if (close == std::string::npos)
    return line.substr(0, open) + "…";
  return close + 1 == line.size() ? line : line.substr(0, close + 1) + "…";
}

std::string shell_word(std::string_view word) {
  const bool plain = !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           std::string_view("_./@=:,+-").find(c) != std::string_view::npos;
  });
  if (plain)
    return std::string(word);
  std::string quoted = "'";
  for (char c : word)
    quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string joined(const std::vector<std::string>& items) {
  std::string text;
  for (std::size_t i = 0; i < items.size(); ++i)
    text += (i ? ", " : "") + items[i];
  return text;
}

}  // namespace reverify
