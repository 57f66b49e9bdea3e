#include "verify/remote_inputs.hpp"

#include <fstream>
#include <optional>
#include <system_error>

#include "core/http_client.hpp"
#include "core/sha256.hpp"
#include "core/uri.hpp"

namespace reverify {
namespace {

namespace fs = std::filesystem;

struct Downloaded {
  std::string sha256;
  std::uint64_t bytes = 0;
};

// GET `url` into `dest` (through a ".part" file, renamed once whole), hashing it as it arrives.
// `expected_size`: the body must be exactly that long (a longer one is cut at once).
Result<Downloaded> download(const std::string& url, const fs::path& dest, std::uint64_t max_bytes,
                            std::optional<std::uint64_t> expected_size) {
  std::error_code ec;
  fs::create_directories(dest.parent_path(), ec);
  const fs::path part = dest.string() + ".part";
  std::ofstream out(part, std::ios::binary | std::ios::trunc);
  if (ec || !out)
    return make_error(ErrorCode::provision, "cannot write " + part.string() + " in the scratch");
  Sha256 digest;
  Downloaded got;
  bool too_long = false, write_failed = false;
  HttpRequest request;
  request.url = url;
  request.timeout_ms = 0;  // a dataset's file may take long; the low-speed limit ends a stall
  request.low_speed_bytes_per_s = kLowSpeedBytes;
  request.low_speed_time_s = kLowSpeedSeconds;
  const std::uint64_t limit = expected_size ? *expected_size : max_bytes;
  request.on_body = [&](std::string_view chunk) {
    got.bytes += chunk.size();
    if (got.bytes > limit) {
      too_long = true;
      return false;
    }
    digest.update(chunk);
    out.write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    write_failed = !out;
    return !write_failed;
  };
  auto response = http_request(request);
  out.close();
  const auto fail = [&](ErrorCode code, std::string why) {
    fs::remove(part, ec);
    return Result<Downloaded>(make_error(code, std::move(why)));
  };
  if (!response)
    return fail(ErrorCode::provision, response.error().message);
  if (response->status == 404 || response->status == 410) {
    return fail(ErrorCode::input_drift,
                "GET " + url + ": HTTP " + std::to_string(response->status) + " (gone)");
  }
  if (response->status != 200)
    return fail(ErrorCode::provision, "GET " + url + ": HTTP " + std::to_string(response->status));
  if (write_failed)
    return fail(ErrorCode::provision, "writing " + part.string() + " failed (is the disk full?)");
  if (too_long && !expected_size) {
    return fail(ErrorCode::provision, "GET " + url + ": larger than the limit of " +
                                          std::to_string(max_bytes) + " bytes");
  }
  if (too_long || (expected_size && got.bytes != *expected_size)) {
    return fail(ErrorCode::input_drift,
                "GET " + url + ": " + (too_long ? "more than" : std::to_string(got.bytes) + " of") +
                    " the " + std::to_string(*expected_size) + " bytes recorded");
  }
  fs::rename(part, dest, ec);
  if (ec)
    return fail(ErrorCode::provision, "cannot move " + part.string() + ": " + ec.message());
  got.sha256 = digest.final_hex();
  return got;
}

// A listed path that cannot leave the folder: no empty, ".", ".." segment, no backslash.
bool safe_listing_path(const std::string& path) {
  if (path.empty() || path.front() == '/' || path.find('\\') != std::string::npos)
    return false;
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t end = std::min(path.find('/', start), path.size());
    const std::string_view segment = std::string_view(path).substr(start, end - start);
    if (segment.empty() || segment == "." || segment == "..")
      return false;
    start = end + 1;
  }
  return true;
}

// The URL of a listed file: the listing's folder, then the path, each segment percent-encoded.
std::string file_url(const std::string& listing_url, const std::string& path) {
  std::string encoded;
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t end = std::min(path.find('/', start), path.size());
    encoded += (start ? "/" : "") + url_encode(std::string_view(path).substr(start, end - start));
    start = end + 1;
  }
  return resolve_uri(listing_url, encoded);
}

Status check_space(const FileManifest& listing, const fs::path& into) {
  if (listing.total_bytes > kMaxRemoteSnapshotBytes) {
    return make_error(ErrorCode::provision,
                      "the snapshot lists " + std::to_string(listing.total_bytes) +
                          " bytes, more than the limit of " +
                          std::to_string(kMaxRemoteSnapshotBytes) + " bytes reverify fetches");
  }
  std::error_code ec;
  fs::create_directories(into, ec);
  const auto space = fs::space(into, ec);
  if (ec)
    return make_error(ErrorCode::provision, "cannot read free space of " + into.string());
  if (space.available < listing.total_bytes + kScratchReserveBytes) {
    return make_error(ErrorCode::provision,
                      "the scratch " + into.string() + " has " + std::to_string(space.available) +
                          " bytes free, the snapshot needs " + std::to_string(listing.total_bytes) +
                          " and " + std::to_string(kScratchReserveBytes) + " to spare");
  }
  return Status();
}

}  // namespace

fs::path fetched_file_path(const std::string& url, const fs::path& into_dir) {
  std::string name = url.substr(0, url.find_first_of("?#"));
  name = name.substr(name.rfind('/') + 1);
  auto decoded = percent_decode(name);
  if (decoded.ok())
    name = *decoded;
  if (!safe_listing_path(name) || name.find('/') != std::string::npos)
    name = "file";
  return into_dir / name;
}

Result<fs::path> fetch_remote_file(const std::string& url, const fs::path& into_dir) {
  const fs::path dest = fetched_file_path(url, into_dir);
  auto got = download(url, dest, kMaxRemoteFileBytes, std::nullopt);
  if (!got)
    return got.error();
  return dest;
}

Result<FetchedSnapshot> fetch_file_snapshot(const std::string& listing_url,
                                            const std::string& recorded_root,
                                            const fs::path& into) {
  FetchLimits limits;
  limits.max_bytes = kMaxListingBytes;
  auto text = read_uri(listing_url, limits);
  if (!text) {
    const auto code =
        text.error().code == ErrorCode::not_found ? ErrorCode::input_drift : ErrorCode::provision;
    return make_error(code, "the snapshot's file manifest: " + text.error().message);
  }
  const std::string root = sha256_hex(*text);
  if (root != recorded_root) {
    return make_error(ErrorCode::input_drift, "the file manifest at " + listing_url +
                                                  " hashes to " + root + ", recorded " +
                                                  recorded_root);
  }
  auto listing = parse_file_manifest(*text);
  if (!listing) {
    return make_error(ErrorCode::manifest_invalid,
                      listing_url +
                          " is not a file manifest (the lines `reverify hash DIR` "
                          "prints): " +
                          listing.error().message);
  }
  for (const auto& file : listing->files) {
    if (!safe_listing_path(file.relative_path)) {
      return make_error(ErrorCode::manifest_invalid,
                        listing_url + " lists \"" + file.relative_path +
                            "\", a path that leaves the snapshot's folder");
    }
  }
  if (Status space = check_space(*listing, into); !space.ok())
    return space.error();
  for (const auto& file : listing->files) {
    const std::string url = file_url(listing_url, file.relative_path);
    auto got = download(url, into / file.relative_path, kMaxRemoteSnapshotBytes, file.size);
    if (!got)
      return make_error(got.error().code, file.relative_path + ": " + got.error().message);
    if (got->sha256 != file.sha256) {
      return make_error(ErrorCode::input_drift, file.relative_path + " (changed): " + url +
                                                    " hashes to " + got->sha256 + ", recorded " +
                                                    file.sha256);
    }
  }
  return FetchedSnapshot{std::move(listing).value(), into};
}

}  // namespace reverify
