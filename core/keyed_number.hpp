#pragma once
// "KEY=NUMBER" as the command line takes a per-check setting (capture --detect, --floor). The key
// is a check's name, which may itself hold '=' (segment:market=de:ndcg@k,
// parity:threshold=0.5:segment:region=west), while a number never does: the key is everything
// before the LAST '=', the number everything after it.

#include <optional>
#include <string>
#include <string_view>

namespace reverify {

struct KeyedNumber {
  std::string key;
  double value = 0;
};

// nullopt unless the key is not empty and the text after the last '=' is one whole finite
// number (no sign or space around it but the number's own).
std::optional<KeyedNumber> parse_keyed_number(std::string_view item);

}  // namespace reverify
