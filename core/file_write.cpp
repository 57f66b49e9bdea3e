#include "core/file_write.hpp"

#include <fstream>

namespace reverify {

Status write_file(const std::filesystem::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out)
    return make_error(ErrorCode::io, path.string() + ": cannot write");
  return Status::success();
}

}  // namespace reverify
