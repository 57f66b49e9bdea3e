#pragma once
// Where released model versions come from (docs/design.md "Data flow": registry source). A source
// lists every model version it knows, each with its manifest's location, hash and the fields the
// scheduler needs. A manifest that does not validate is listed WITH its error (never dropped,
// never a crash), so the status page and the gate can say why.
//   directory:  <root>/<model>/<version>/manifest.json
//   http-index: GET <url> -> {"manifests": ["<manifest URL>", ...]} (relative URLs resolve
//               against the index URL); ETag-aware for the index and each manifest.
// Blocking (file system, libcurl): call from a worker thread. One listing at a time per source.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "settings/config.hpp"
#include "store/inventory_row.hpp"
#include "store/store.hpp"

namespace reverify {

struct SourceListing {
  std::vector<ModelVersionRow> rows;
  std::vector<std::string> warnings;  // entries skipped (bad names, unreachable URLs), with why
  bool unchanged = false;             // http-index answered 304: keep what the store has
};

class RegistrySource {
 public:
  virtual ~RegistrySource() = default;
  virtual const std::string& name() const = 0;
  virtual Result<SourceListing> list() = 0;
};

std::unique_ptr<RegistrySource> make_registry_source(const RegistrySourceConfig& config);

}  // namespace reverify
