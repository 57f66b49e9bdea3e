#pragma once
// JSON paths as reverify prints them in validation errors and diffs: identifier keys are dotted
// ("environment.image"), other keys are quoted in brackets ("evaluation.segments[\"digit=8\"]"),
// array elements are indexed ("run.entrypoint[0]"). The document itself is "".

#include <cstddef>
#include <string>
#include <string_view>

namespace reverify {

std::string json_path_key(const std::string& parent, std::string_view key);
std::string json_path_index(const std::string& parent, std::size_t index);

}  // namespace reverify
