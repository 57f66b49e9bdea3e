#include "core/uri.hpp"

#include <cctype>
#include <fstream>
#include <system_error>
#include <vector>

#include "core/http_client.hpp"

namespace reverify {
namespace {
namespace fs = std::filesystem;

bool starts_with_ci(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size())
    return false;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(text[i])) != prefix[i])
      return false;
  }
  return true;
}

// "scheme:" per RFC 3986: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) ":". A Windows-like "C:"
// never appears here; one letter schemes are still schemes.
bool has_scheme(std::string_view uri) {
  if (uri.empty() || !std::isalpha(static_cast<unsigned char>(uri[0])))
    return false;
  for (std::size_t i = 1; i < uri.size(); ++i) {
    const char c = uri[i];
    if (c == ':')
      return true;
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '+' && c != '-' && c != '.') {
      return false;
    }
  }
  return false;
}

// RFC 3986 section 5.2.4, on a path that starts with '/'.
std::string remove_dot_segments(std::string_view path) {
  std::vector<std::string_view> kept;
  std::size_t pos = 1;
  bool trailing_slash = false;
  while (pos <= path.size()) {
    const std::size_t end = std::min(path.find('/', pos), path.size());
    const std::string_view segment = path.substr(pos, end - pos);
    trailing_slash = end == path.size() && (segment == "." || segment == "..");
    if (segment == "..") {
      if (!kept.empty())
        kept.pop_back();
    } else if (segment != ".") {
      kept.push_back(segment);
    }
    pos = end + 1;
  }
  std::string out;
  for (auto segment : kept) {
    out += '/';
    out += segment;
  }
  if (trailing_slash || out.empty())
    out += "/";
  return out;
}

std::string resolve_remote(const std::string& base, const std::string& uri) {
  const std::size_t authority = base.find("://") + 3;
  const std::size_t path_start = std::min(base.find_first_of("/?#", authority), base.size());
  const std::string origin = base.substr(0, path_start);
  if (uri.rfind("//", 0) == 0)
    return base.substr(0, authority - 2) + uri;  // scheme-relative
  if (!uri.empty() && uri[0] == '/')
    return origin + remove_dot_segments(uri);
  std::string base_path = base.substr(path_start);
  base_path = base_path.substr(0, base_path.find_first_of("?#"));
  const std::string directory = base_path.substr(0, base_path.rfind('/') + 1);
  return origin + remove_dot_segments((directory.empty() ? "/" : directory) + uri);
}

int hex_value(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

Result<std::string> read_local(const fs::path& path, std::size_t max_bytes) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  if (ec) {
    const auto code =
        ec == std::errc::no_such_file_or_directory ? ErrorCode::not_found : ErrorCode::io;
    return make_error(code, path.string() + ": " + ec.message());
  }
  if (size > max_bytes) {
    return make_error(ErrorCode::invalid_argument, path.string() + ": " + std::to_string(size) +
                                                       " bytes exceeds the limit of " +
                                                       std::to_string(max_bytes) + " bytes");
  }
  std::ifstream in(path, std::ios::binary);
  std::string data(size, '\0');
  if (!in.read(data.data(), static_cast<std::streamsize>(size))) {
    return make_error(ErrorCode::io, path.string() + ": read failed");
  }
  return data;
}

Result<std::string> read_remote(const std::string& url, const FetchLimits& limits) {
  HttpRequest request;
  request.url = url;
  request.timeout_ms = limits.timeout_s * 1000;
  request.max_body_bytes = limits.max_bytes;
  auto response = http_request(request);
  if (!response)
    return response.error();
  if (response->status != 200) {
    const auto code = response->status == 404 ? ErrorCode::not_found : ErrorCode::network;
    return make_error(code, "GET " + url + ": HTTP " + std::to_string(response->status));
  }
  return std::move(response->body);
}
}  // namespace

Result<std::string> percent_decode(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    const bool complete = i + 2 < text.size();
    const int hi = complete ? hex_value(text[i + 1]) : -1;
    const int lo = complete ? hex_value(text[i + 2]) : -1;
    if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) {
      return make_error(ErrorCode::invalid_argument,
                        "bad percent-escape in \"" + std::string(text) + "\"");
    }
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

bool path_stays_inside(std::string_view relative_path) {
  if (relative_path.empty() || relative_path.front() == '/' || has_scheme(relative_path))
    return false;
  std::size_t start = 0;
  while (start <= relative_path.size()) {
    const std::size_t end = std::min(relative_path.find('/', start), relative_path.size());
    if (relative_path.substr(start, end - start) == "..")
      return false;
    start = end + 1;
  }
  return true;
}

bool is_remote_uri(const std::string& uri) {
  return starts_with_ci(uri, "http://") || starts_with_ci(uri, "https://");
}

std::string resolve_uri(const std::string& base_location, const std::string& uri) {
  if (base_location.empty() || has_scheme(uri))
    return uri;
  if (is_remote_uri(base_location))
    return resolve_remote(base_location, uri);
  if (!uri.empty() && uri[0] == '/')
    return uri;
  const bool file_uri = starts_with_ci(base_location, "file://");
  const std::string base_path = file_uri ? base_location.substr(7) : base_location;
  const std::string resolved =
      (fs::path(base_path).parent_path() / uri).lexically_normal().generic_string();
  return file_uri ? "file://" + resolved : resolved;
}

Result<fs::path> local_path(const std::string& resolved_uri) {
  if (is_remote_uri(resolved_uri)) {
    return make_error(ErrorCode::invalid_argument,
                      "\"" + resolved_uri + "\" is remote, not a local path");
  }
  if (starts_with_ci(resolved_uri, "file://")) {
    std::string rest = resolved_uri.substr(7);
    if (starts_with_ci(rest, "localhost/"))
      rest = rest.substr(9);
    if (rest.empty() || rest[0] != '/') {
      return make_error(ErrorCode::invalid_argument,
                        "\"" + resolved_uri + "\": file URIs must name a local absolute path " +
                            "(file:///path)");
    }
    auto decoded = percent_decode(rest);
    if (!decoded)
      return decoded.error();
    return fs::path(*decoded);
  }
  if (has_scheme(resolved_uri)) {
    return make_error(ErrorCode::invalid_argument,
                      "\"" + resolved_uri + "\": unsupported URI scheme (expected a path, " +
                          "file://, http:// or https://)");
  }
  if (resolved_uri.empty())
    return make_error(ErrorCode::invalid_argument, "empty path");
  return fs::path(resolved_uri);
}

Result<std::string> read_uri(const std::string& resolved_uri, const FetchLimits& limits) {
  if (is_remote_uri(resolved_uri))
    return read_remote(resolved_uri, limits);
  auto path = local_path(resolved_uri);
  if (!path)
    return path.error();
  return read_local(*path, limits.max_bytes);
}

std::string repo_location(const std::string& repo, const std::string& manifest_location) {
  // A URL (scheme://) or scp-like (user@host:path, host:path), by git's own rule: a ':' before
  // any '/'. Anything else is a path, even with an '@' in it, and so is file://.
  if (repo.rfind("file://", 0) != 0 && repo.find(':') < repo.find('/'))
    return repo;
  const std::string resolved = resolve_uri(manifest_location, repo);
  auto path = local_path(resolved);
  return path ? path->string() : resolved;
}

}  // namespace reverify
