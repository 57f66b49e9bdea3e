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
  const std::size_t sentence_end = text.find(". ");
  if (sentence_end != std::string_view::npos)
    text = text.substr(0, sentence_end + 1);
  std::string line;
  bool space = false;
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\r') {
      space = !line.empty();
      continue;
    }
    if (space)
      line += ' ';
    space = false;
    line += c;
  }
  return truncate_utf8(line, max_bytes);
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
