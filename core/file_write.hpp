#pragma once
// Writing a whole file (created or truncated) from bytes in memory, with an error that names it.

#include <filesystem>
#include <string_view>

#include "core/result.hpp"

namespace reverify {

// ErrorCode::io "<path>: cannot write" when it cannot be opened or written completely.
Status write_file(const std::filesystem::path& path, std::string_view bytes);

}  // namespace reverify
