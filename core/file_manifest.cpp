// The file manifest's text form, its parser and the difference of two manifests.
#include <charconv>

#include "core/hashing.hpp"

namespace reverify {
namespace {

constexpr std::string_view kSeparator = "  ";
constexpr std::size_t kHexLength = 64;

bool is_lower_hex(std::string_view text) {
  return text.size() == kHexLength &&
         text.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

Error line_error(std::size_t line, const std::string& what) {
  return make_error(ErrorCode::parse, "file manifest line " + std::to_string(line) + ": " + what);
}

Result<FileEntry> parse_line(std::string_view line, std::size_t number) {
  const std::string expected = "expected \"<64 lowercase hex>  <size>  <relative path>\"";
  if (line.size() < kHexLength + kSeparator.size() || !is_lower_hex(line.substr(0, kHexLength)) ||
      line.substr(kHexLength, kSeparator.size()) != kSeparator) {
    return line_error(number, expected);
  }
  std::string_view rest = line.substr(kHexLength + kSeparator.size());
  const std::size_t size_end = rest.find(kSeparator);
  if (size_end == std::string_view::npos)
    return line_error(number, expected);
  FileEntry entry;
  entry.sha256 = std::string(line.substr(0, kHexLength));
  const std::string_view size_text = rest.substr(0, size_end);
  const auto [end, ec] =
      std::from_chars(size_text.data(), size_text.data() + size_text.size(), entry.size);
  if (ec != std::errc() || end != size_text.data() + size_text.size() || size_text.empty()) {
    return line_error(number, "size \"" + std::string(size_text) + "\" is not a byte count");
  }
  entry.relative_path = std::string(rest.substr(size_end + kSeparator.size()));
  if (entry.relative_path.empty() || entry.relative_path.front() == '/') {
    return line_error(number,
                      "path must be relative and non-empty, got \"" + entry.relative_path + "\"");
  }
  return entry;
}

}  // namespace

std::string FileManifest::text() const {
  std::string out;
  for (const FileEntry& file : files) {
    out += file.sha256;
    out += kSeparator;
    out += std::to_string(file.size);
    out += kSeparator;
    out += file.relative_path;
    out += '\n';
  }
  return out;
}

std::string FileManifest::sha256sum_text() const {
  std::string out;
  for (const FileEntry& file : files) {
    // Paths never hold a newline (hash_directory refuses them); a backslash is doubled and
    // flagged with a leading backslash, exactly as coreutils escapes it.
    const bool escaped = file.relative_path.find('\\') != std::string::npos;
    if (escaped)
      out += '\\';
    out += file.sha256;
    out += kSeparator;
    for (char c : file.relative_path) {
      if (c == '\\')
        out += '\\';
      out += c;
    }
    out += '\n';
  }
  return out;
}

Result<FileManifest> parse_file_manifest(const std::string& text) {
  FileManifest manifest;
  if (!text.empty() && text.back() != '\n') {
    return make_error(ErrorCode::parse, "file manifest: last line must end with a newline");
  }
  std::size_t start = 0;
  for (std::size_t number = 1; start < text.size(); ++number) {
    const std::size_t end = text.find('\n', start);
    auto entry = parse_line(std::string_view(text).substr(start, end - start), number);
    if (!entry)
      return entry.error();
    if (!manifest.files.empty() && !(manifest.files.back().relative_path < entry->relative_path)) {
      return line_error(number, "path \"" + entry->relative_path + "\" must sort after \"" +
                                    manifest.files.back().relative_path +
                                    "\" (bytewise order, each path once)");
    }
    manifest.total_bytes += entry->size;
    manifest.files.push_back(std::move(entry).value());
    start = end + 1;
  }
  manifest.root = sha256_hex(manifest.text());
  return manifest;
}

FileManifestDiff diff_file_manifests(const FileManifest& expected, const FileManifest& actual) {
  FileManifestDiff diff;
  auto e = expected.files.begin();
  auto a = actual.files.begin();
  while (e != expected.files.end() || a != actual.files.end()) {
    if (a == actual.files.end() ||
        (e != expected.files.end() && e->relative_path < a->relative_path)) {
      diff.removed.push_back((e++)->relative_path);
    } else if (e == expected.files.end() || a->relative_path < e->relative_path) {
      diff.added.push_back((a++)->relative_path);
    } else {
      if (e->sha256 != a->sha256 || e->size != a->size)
        diff.changed.push_back(a->relative_path);
      ++e;
      ++a;
    }
  }
  return diff;
}

}  // namespace reverify
