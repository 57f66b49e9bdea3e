#pragma once
// <state_dir>/reverify.store-id, the state folder's own record of its store (verify/state_dir.hpp):
// the id of the store it holds, and the highest verification and page ids any store of the folder
// ever handed out (StoreHighWater), kept outside the store's file so that a file put back from an
// older copy (a file-system snapshot, a `cp`) is told from the store that wrote them.
//
//   8f08a3bbcac0d1e2
//   verifications 52
//   pages 44
//
// The first line alone is the marker of earlier versions (no mark: nothing to compare yet).
// Blocking (file I/O, fsync): call from a worker thread or a command.

#include <filesystem>
#include <optional>
#include <string>

#include "core/result.hpp"
#include "store/store.hpp"

namespace reverify {

struct StoreMarker {
  std::string store_id;
  StoreHighWater handed_out;
};

std::filesystem::path store_marker_path(const std::filesystem::path& state_dir);

// nullopt when there is no marker.
std::optional<StoreMarker> read_store_marker(const std::filesystem::path& state_dir);

// Written whole or not at all (a temporary file, fsync, rename, the folder fsync'd): a crash
// never leaves half a marker, and a mark kept before an id is shown survives a power cut.
Status write_store_marker(const std::filesystem::path& state_dir, const StoreMarker& marker);

}  // namespace reverify
