#pragma once
// Short text for places that hold one line: a log line's field, a terminal table's cell, a
// page's summary. UTF-8 aware: a cut never splits a character.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace reverify {

// At most max_bytes, cut at a UTF-8 character boundary, "…" marking a cut.
std::string truncate_utf8(std::string_view text, std::size_t max_bytes);

// The first sentence of `text` (up to the first ". ", or its first line), whitespace runs made
// one space, at most max_bytes (cut as truncate_utf8 cuts). "" for an empty text. A suggested
// command (a `backtick-quoted` span) is never split, folded or cut: it ends the text whole, even
// past max_bytes, so what a person copies from the line runs as printed.
std::string one_line(std::string_view text, std::size_t max_bytes);

// The items separated by ", " ("a, b, c"); "" for none.
std::string joined(const std::vector<std::string>& items);

// `word` as one shell word: as it is when it holds only [A-Za-z0-9_./@=:,+-] (and is not empty),
// else in single quotes ('it'\''s'), so a command built with it runs as printed.
std::string shell_word(std::string_view word);

// The entry of `known` closest to `given` by edit distance (insert, delete, substitute, or swap
// two neighbours: "lnit" is one edit from "lint"), when close enough to be a typo: at most a
// third of the candidate's length in edits, at least 1 and at most 3; nullopt otherwise. For the
// did-you-mean of an unknown command, option or query parameter.
std::optional<std::string> closest_match(std::string_view given,
                                         const std::vector<std::string>& known);

}  // namespace reverify
