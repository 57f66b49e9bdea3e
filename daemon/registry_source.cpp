#include "daemon/registry_source.hpp"

#include <algorithm>
#include <atomic>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "core/hashing.hpp"
#include "core/http_client.hpp"
#include "core/manifest_parse.hpp"
#include "core/names.hpp"
#include "core/uri.hpp"

namespace reverify {

namespace fs = std::filesystem;

namespace {

class DirectorySource final : public RegistrySource {
 public:
  explicit DirectorySource(RegistrySourceConfig config) : config_(std::move(config)) {}
  const std::string& name() const override { return config_.name; }

  Result<SourceListing> list() override {
    SourceListing listing;
    std::error_code ec;
    if (!fs::is_directory(config_.root, ec)) {
      return make_error(ErrorCode::not_found, "sources." + config_.name + ": root " +
                                                  config_.root.string() + " is not a directory");
    }
    struct Item {
      std::string model, version;
      fs::path path;
    };
    std::vector<Item> items;
    for (const auto& model_dir : fs::directory_iterator(config_.root, ec)) {
      const auto model = model_dir.path().filename().string();
      if (!model_dir.is_directory(ec))
        continue;
      if (!is_valid_name(model)) {
        listing.warnings.push_back(model_dir.path().string() + ": not a valid model name, skipped");
        continue;
      }
      for (const auto& version_dir : fs::directory_iterator(model_dir.path(), ec)) {
        const auto version = version_dir.path().filename().string();
        if (!version_dir.is_directory(ec))
          continue;
        if (!is_valid_name(version)) {
          listing.warnings.push_back(version_dir.path().string() +
                                     ": not a valid version name, skipped");
          continue;
        }
        auto manifest = version_dir.path() / "manifest.json";
        // A symlink could point the daemon at any file; manifests must be regular files.
        if (!fs::is_regular_file(fs::symlink_status(manifest, ec)))
          continue;
        items.push_back({model, version, manifest});
      }
    }
    if (ec) {
      return make_error(ErrorCode::io, "sources." + config_.name + ": cannot list " +
                                           config_.root.string() + ": " + ec.message());
    }
    listing.rows.resize(items.size());
    // Parsing dominates a large sync: spread it over the cores, each row written by one thread.
    std::atomic<std::size_t> next{0};
    auto work = [&] {
      for (std::size_t i = next++; i < items.size(); i = next++) {
        const auto& item = items[i];
        listing.rows[i] = describe_file(item.model, item.version, item.path);
      }
    };
    const unsigned threads = std::max(1u, std::min(8u, std::thread::hardware_concurrency()));
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < threads; ++t)
      pool.emplace_back(work);
    work();
    for (auto& t : pool)
      t.join();
    return listing;
  }

 private:
  ModelVersionRow describe_file(const std::string& model, const std::string& version,
                                const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::string document;
    if (in) {
      std::ostringstream buffer;
      buffer << in.rdbuf();
      document = std::move(buffer).str();
    }
    ModelVersionRow row;
    if (!in) {
      row.model = model;
      row.version = version;
      row.location = path.string();
      row.manifest_error = "cannot read " + path.string();
    } else {
      row = describe_manifest(model, version, path.string(), document);
    }
    row.source = config_.name;
    return row;
  }

  RegistrySourceConfig config_;
};

// http-index: the index and each manifest are fetched with If-None-Match; a 304 reuses the row
// described last time, so a periodic sync of an unchanged registry transfers almost nothing.
class HttpIndexSource final : public RegistrySource {
 public:
  explicit HttpIndexSource(RegistrySourceConfig config) : config_(std::move(config)) {}
  const std::string& name() const override { return config_.name; }

  Result<SourceListing> list() override {
    auto response = fetch(config_.url, index_etag_);
    if (!response.ok())
      return response.error();
    if (response->status == 304 && last_listing_) {
      // The index is unchanged, but manifests it names may have changed: re-check them.
      return list_manifests(*last_listing_);
    }
    if (response->status != 200) {
      return make_error(ErrorCode::network, "sources." + config_.name + ": GET " + config_.url +
                                                " answered " + std::to_string(response->status));
    }
    auto index = nlohmann::json::parse(response->body, nullptr, false);
    if (index.is_discarded() || !index.is_object() || !index.contains("manifests") ||
        !index["manifests"].is_array()) {
      return make_error(ErrorCode::parse, "sources." + config_.name + ": " + config_.url +
                                              ": expected {\"manifests\": [\"<url>\", ...]}");
    }
    std::vector<std::string> urls;
    for (const auto& entry : index["manifests"]) {
      if (entry.is_string())
        urls.push_back(resolve_uri(config_.url, entry.get<std::string>()));
    }
    index_etag_ = response->header("etag");
    last_listing_ = urls;
    return list_manifests(urls);
  }

 private:
  struct Cached {
    std::string etag;
    ModelVersionRow row;
  };

  Result<HttpResponse> fetch(const std::string& url, const std::string& etag) {
    HttpRequest request;
    request.url = url;
    request.ca_file = config_.ca_file;
    request.bearer_token = config_.token;
    request.timeout_ms = long(config_.timeout_ms);
    request.max_body_bytes = kMaxManifestBytes;
    if (!etag.empty())
      request.headers.emplace_back("If-None-Match", etag);
    return http_request(request);
  }

  // <anything>/<model>/<version>/manifest.json, the same layout as a directory source.
  static std::optional<std::pair<std::string, std::string>> names_from_url(const std::string& url) {
    auto path = url.substr(0, url.find('?'));
    auto last = path.rfind('/');
    if (last == std::string::npos)
      return std::nullopt;
    auto version_end = last;
    auto version_start = path.rfind('/', version_end - 1);
    if (version_start == std::string::npos || version_start == 0)
      return std::nullopt;
    auto model_start = path.rfind('/', version_start - 1);
    if (model_start == std::string::npos)
      return std::nullopt;
    std::string model = path.substr(model_start + 1, version_start - model_start - 1);
    std::string version = path.substr(version_start + 1, version_end - version_start - 1);
    if (!is_valid_name(model) || !is_valid_name(version))
      return std::nullopt;
    return std::make_pair(model, version);
  }

  Result<SourceListing> list_manifests(const std::vector<std::string>& urls) {
    SourceListing listing;
    std::map<std::string, Cached> next_cache;
    for (const auto& url : urls) {
      auto names = names_from_url(url);
      if (!names) {
        listing.warnings.push_back(url + ": expected .../<model>/<version>/manifest.json, skipped");
        continue;
      }
      auto cached = cache_.find(url);
      auto response = fetch(url, cached == cache_.end() ? "" : cached->second.etag);
      if (!response.ok() || (response->status != 200 && response->status != 304)) {
        if (cached != cache_.end()) {
          // Unreachable for now: keep what we knew rather than marking the version removed.
          listing.rows.push_back(cached->second.row);
          next_cache.insert(*cached);
        }
        listing.warnings.push_back(url + ": " +
                                   (response.ok() ? "HTTP " + std::to_string(response->status)
                                                  : response.error().message));
        continue;
      }
      if (response->status == 304 && cached != cache_.end()) {
        listing.rows.push_back(cached->second.row);
        next_cache.insert(*cached);
        continue;
      }
      auto row = describe_manifest(names->first, names->second, url, response->body);
      row.source = config_.name;
      listing.rows.push_back(row);
      next_cache[url] = Cached{response->header("etag"), std::move(row)};
    }
    cache_ = std::move(next_cache);
    return listing;
  }

  RegistrySourceConfig config_;
  std::string index_etag_;
  std::optional<std::vector<std::string>> last_listing_;
  std::map<std::string, Cached> cache_;
};

}  // namespace

std::unique_ptr<RegistrySource> make_registry_source(const RegistrySourceConfig& config) {
  if (config.kind == SourceKind::http_index)
    return std::make_unique<HttpIndexSource>(config);
  return std::make_unique<DirectorySource>(config);
}

}  // namespace reverify
