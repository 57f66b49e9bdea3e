#include "store/inventory_row.hpp"

#include "core/hashing.hpp"
#include "core/manifest_parse.hpp"
#include "core/unix_time.hpp"

namespace reverify {

namespace {
constexpr std::size_t kMaxErrorChars = 2000;  // a broken manifest's errors, as stored
}  // namespace

ModelVersionRow describe_manifest(const std::string& model, const std::string& version,
                                  const std::string& location, std::string_view document) {
  ModelVersionRow row;
  row.model = model;
  row.version = version;
  row.location = location;
  row.manifest_sha256 = sha256_hex(document);
  ManifestLimits limits;
  limits.max_bytes = kMaxManifestBytes;
  auto parsed = parse_manifest(document, limits);
  if (!parsed.ok()) {
    std::string message;
    for (const auto& e : parsed.errors) {
      if (!message.empty())
        message += "; ";
      message += e.to_string();
      if (message.size() > kMaxErrorChars) {
        message.resize(kMaxErrorChars);
        message += " ...";
        break;
      }
    }
    row.manifest_error = message;
    return row;
  }
  const Manifest& m = *parsed.manifest;
  if (m.model != model || m.version != version) {
    row.manifest_error = "model/version: the manifest says " + m.model + "@" + m.version +
                         " but is stored as " + model + "@" + version;
    return row;
  }
  row.owner = m.owner;
  row.level = to_string(m.level);
  if (m.run.started_at) {
    if (auto t = parse_rfc3339(*m.run.started_at); t.ok())
      row.released_at = *t;
  }
  if (m.environment && m.environment->accelerator)
    row.gpus = m.environment->accelerator->count;
  row.duration_s = m.run.duration_s;
  if (m.subsample) {
    row.subsample_fraction = m.subsample->fraction;
    row.subsample_duration_s = m.subsample->duration_s;
  }
  return row;
}

}  // namespace reverify
