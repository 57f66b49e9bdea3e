#pragma once
// What moved in a version's manifest since its latest conclusive verdict, found once per new
// manifest: the registry sync (reverifyd, off its loop) compares the manifest that verdict
// verified (kept by the store at verification) with the version's current one and keeps
// policies/manifest_diff's one-screen summary, which the pages show beside "the manifest changed
// since verification N". Blocking: reads manifests (file or URL) and SQLite.

#include <cstdint>
#include <string>
#include <vector>

#include "store/store.hpp"

namespace reverify {

struct MoveLogLine {
  bool failed = false;
  std::string text;
  // The version and the verification whose manifest it compares with ("" when the store failed).
  std::string model, version;
  std::int64_t verification_id = 0;
};

// Describes every change Store::manifests_to_compare lists. Returns one line per version for the
// log ("m@v: the manifest changed since verification 7: inputs moved: code; 3 line(s) on its
// page"), failed for a version it could not compare (its current manifest unreadable or invalid
// now, the kept one unparseable): that one is tried again at the next sync.
std::vector<MoveLogLine> describe_manifest_moves(Store& store);

}  // namespace reverify
