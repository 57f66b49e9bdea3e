#pragma once
// Remote inputs (docs/job-guide.md "Remote inputs"): what preflight downloads into the
// verification's scratch and hashes before any job starts, so that no job runs on an input
// nobody checked. Blocking (libcurl, the disk): preflight calls it on a worker thread.
//
// A data snapshot of kind "files" at an http(s) URI: the URI names the snapshot's file manifest
// (the lines `reverify hash DIR` prints, "<sha256>  <size>  <path>\n" sorted by path), whose
// SHA-256 is the snapshot's root hash by definition. It is fetched first and must hash to
// data.snapshot.sha256 before anything else is fetched; then each line's file is fetched from the
// listing's folder (the URI with its last segment replaced by the line's path, each segment
// percent-encoded) into <into>/<path>, and must be exactly its listed size and sha256. A line
// whose path has an empty, "." or ".." segment or a backslash would leave the folder: refused.
// Limits: the listing kMaxListingBytes; the files kMaxRemoteSnapshotBytes in all, and no more
// than the scratch's file system has free less kScratchReserveBytes (checked before the first
// file); a transfer slower than kLowSpeedBytes a second for kLowSpeedSeconds is cut.
//
// One remote file (an eval set or the released predictions at an http(s) URI) is fetched into
// <into_dir>/<its last path segment>, at most kMaxRemoteFileBytes; its caller hashes it as it
// hashes a local one.
//
// Errors name the URL or the file, with the class the verification takes for them:
// ErrorCode::input_drift (the listing or a file is not what was recorded, or is gone: HTTP 404
// or 410), ErrorCode::manifest_invalid (the recorded listing is not a file manifest, or names a
// path outside its folder), ErrorCode::provision (the server cannot be reached or answers another
// status, a limit is reached, the scratch is short of space or cannot be written).

#include <cstdint>
#include <filesystem>
#include <string>

#include "core/hashing.hpp"
#include "core/result.hpp"

namespace reverify {

inline constexpr std::uint64_t kMaxListingBytes = 64ULL << 20;
inline constexpr std::uint64_t kMaxRemoteSnapshotBytes = 64ULL << 30;
inline constexpr std::uint64_t kMaxRemoteFileBytes = 16ULL << 30;
inline constexpr std::uint64_t kScratchReserveBytes = 64ULL << 20;
inline constexpr long kLowSpeedBytes = 1024;
inline constexpr long kLowSpeedSeconds = 60;

struct FetchedSnapshot {
  FileManifest listing;          // as recorded (its root is data.snapshot.sha256)
  std::filesystem::path folder;  // the files, each checked against its line
};

// REQUIRES: `listing_url` is http(s); `into` does not exist yet or is empty.
Result<FetchedSnapshot> fetch_file_snapshot(const std::string& listing_url,
                                            const std::string& recorded_root,
                                            const std::filesystem::path& into);

// The file at `url` (http or https) in `into_dir`; its path.
Result<std::filesystem::path> fetch_remote_file(const std::string& url,
                                                const std::filesystem::path& into_dir);

// Where fetch_remote_file puts the file of `url` in `into_dir`.
std::filesystem::path fetched_file_path(const std::string& url,
                                        const std::filesystem::path& into_dir);

}  // namespace reverify
