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

namespace {

// Edits that turn a into b: the optimal string alignment distance.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i)
    d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j)
    d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

}  // namespace

std::optional<std::string> closest_match(std::string_view given,
                                         const std::vector<std::string>& known) {
  std::optional<std::string> best;
  std::size_t best_distance = 0;
  for (const auto& candidate : known) {
    const std::size_t distance = edit_distance(given, candidate);
    const std::size_t allowed = std::clamp<std::size_t>(candidate.size() / 3, 1, 3);
    if (distance > allowed)
      continue;
    if (!best || distance < best_distance) {
      best = candidate;
      best_distance = distance;
    }
  }
  return best;
}

}  // namespace reverify
