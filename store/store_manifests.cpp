// Verified manifests and what moved since: the manifest each verification verified, and the
// registry sync's description of a version's newer manifest against it.
#include <sqlite3.h>

#include "store/store_rows.hpp"

namespace reverify {

using sql::Statement;
using store_rows::collect_rows;
using store_rows::parse_json_column;

namespace {

std::vector<std::string> strings_of(const nlohmann::json& list) {
  std::vector<std::string> out;
  if (list.is_array())
    for (const auto& item : list)
      if (item.is_string())
        out.push_back(item.get<std::string>());
  return out;
}

}  // namespace

Status Store::keep_verified_manifest(const std::string& sha256, const std::string& manifest_json) {
  std::lock_guard lock(mutex_);
  Statement s(db_,
              "INSERT INTO verified_manifests (sha256, manifest_json) VALUES (?1, ?2) "
              "ON CONFLICT (sha256) DO NOTHING");
  s.bind(1, sha256).bind(2, manifest_json);
  return s.run();
}

Result<std::vector<ManifestToCompare>> Store::manifests_to_compare() {
  std::lock_guard lock(mutex_);
  Statement s(db_, R"sql(
SELECT mv.model, mv.version, mv.location, mv.manifest_sha256, v.manifest_sha256, v.id,
       vm.manifest_json
FROM model_versions AS mv
JOIN verifications AS v
  ON v.id = (SELECT MAX(id) FROM verifications
             WHERE model = mv.model AND version = mv.version AND state = 'done'
               AND class NOT LIKE 'error:%')
JOIN verified_manifests AS vm ON vm.sha256 = v.manifest_sha256
WHERE mv.removed = 0 AND mv.manifest_error IS NULL AND v.manifest_sha256 != mv.manifest_sha256
  AND NOT EXISTS (SELECT 1 FROM manifest_moves AS mm
                  WHERE mm.model = mv.model AND mm.version = mv.version
                    AND mm.to_sha256 = mv.manifest_sha256 AND mm.verification_id = v.id)
ORDER BY mv.model, mv.version
)sql");
  return collect_rows<ManifestToCompare>(s, [](Statement& r) {
    return ManifestToCompare{r.text(0), r.text(1),  r.text(2), r.text(3),
                             r.text(4), r.int64(5), r.text(6)};
  });
}

Status Store::put_manifest_moved(const ManifestMoved& moved) {
  std::lock_guard lock(mutex_);
  Statement s(db_, R"sql(
INSERT INTO manifest_moves (model, version, to_sha256, from_sha256, verification_id, summary_json)
VALUES (?1, ?2, ?3, ?4, ?5, ?6)
ON CONFLICT (model, version, to_sha256) DO UPDATE SET
  from_sha256 = excluded.from_sha256, verification_id = excluded.verification_id,
  summary_json = excluded.summary_json
)sql");
  const nlohmann::json summary = {{"inputs_moved", moved.inputs_moved}, {"lines", moved.lines}};
  s.bind(1, moved.model)
      .bind(2, moved.version)
      .bind(3, moved.to_sha256)
      .bind(4, moved.from_sha256)
      .bind(5, moved.verification_id)
      .bind(6, summary.dump());
  return s.run();
}

Result<std::vector<ManifestMoved>> Store::manifests_moved() {
  std::lock_guard lock(mutex_);
  Statement s(db_, R"sql(
SELECT mm.model, mm.version, mm.to_sha256, mm.from_sha256, mm.verification_id, mm.summary_json
FROM manifest_moves AS mm
JOIN model_versions AS mv
  ON mv.model = mm.model AND mv.version = mm.version AND mv.manifest_sha256 = mm.to_sha256
ORDER BY mm.model, mm.version
)sql");
  return collect_rows<ManifestMoved>(s, [](Statement& r) {
    const nlohmann::json summary = parse_json_column(r.text(5));
    ManifestMoved moved{r.text(0), r.text(1), r.text(2), r.text(3), r.int64(4), {}, {}};
    if (summary.is_object()) {
      moved.inputs_moved = strings_of(summary.value("inputs_moved", nlohmann::json()));
      moved.lines = strings_of(summary.value("lines", nlohmann::json()));
    }
    return moved;
  });
}

}  // namespace reverify
