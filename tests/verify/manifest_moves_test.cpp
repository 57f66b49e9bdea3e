// verify/manifest_moves: a version's manifest changed after its verdict; the sync describes what
// moved against the manifest that verdict verified, once, and the store hands it to the pages.

#include <doctest/doctest.h>

#include "core/manifest_json.hpp"
#include "store/inventory_row.hpp"
#include "store/store.hpp"
#include "tests/support/files.hpp"
#include "tests/support/manifest_fixture.hpp"
#include "tests/support/temp_dir.hpp"
#include "verify/manifest_moves.hpp"

namespace reverify::test {
namespace {

Verdict passed() {
  Verdict v;
  v.cls = VerdictClass::passed;
  v.explanation = "all checks passed";
  return v;
}

struct Fixture {
  TempDir dir;
  std::unique_ptr<Store> store;
  std::filesystem::path manifest = dir.path / "manifest.json";

  Fixture() {
    auto opened = Store::open(dir.path / "reverify.db", [] { return UnixSeconds{1000}; });
    REQUIRE(opened.ok());
    store = std::move(*opened);
  }
  // The version as a sync lists it, its manifest `m` written where the row says; returns the
  // document's sha256.
  std::string list(const Manifest& m) {
    const std::string document = to_json(m).dump();
    write_file(manifest, document);
    ModelVersionRow row = describe_manifest(m.model, m.version, manifest.string(), document);
    row.source = "local";
    REQUIRE(store->sync_model_versions("local", {row}).ok());
    return row.manifest_sha256;
  }
  // A verification of the version's current manifest `m` (whose sha256 is `sha`) that passed.
  std::int64_t verify(const Manifest& m, const std::string& sha) {
    auto id = store->enqueue(QueuedVerification{m.model, m.version});
    REQUIRE(id.ok());
    REQUIRE(store->keep_verified_manifest(sha, to_json(m).dump()).ok());
    REQUIRE(store->record_verdict(*id, passed(), {}, "", {}).ok());
    return *id;
  }
};

}  // namespace

TEST_CASE("manifest moves: described once per new manifest, against the verified one") {
  Fixture f;
  Manifest released = manifest_fixture("valid_full.json");
  const std::string old_sha = f.list(released);
  const auto id = f.verify(released, old_sha);
  CHECK(f.store->manifests_to_compare()->empty());  // the verified manifest is the current one
  CHECK(describe_manifest_moves(*f.store).empty());

  Manifest moved = released;
  moved.code.commit = std::string(40, 'b');
  moved.evaluation.primary.value += 0.01;
  const std::string new_sha = f.list(moved);
  auto lines = describe_manifest_moves(*f.store);
  REQUIRE(lines.size() == 1);
  CHECK_FALSE(lines[0].failed);
  CHECK(lines[0].text.find(": the manifest changed since verification " + std::to_string(id) +
                           ": inputs moved: code;") != std::string::npos);
  auto described = f.store->manifests_moved();
  REQUIRE(described.ok());
  REQUIRE(described->size() == 1);
  const ManifestMoved& m = described->front();
  CHECK(m.verification_id == id);
  CHECK(m.from_sha256 == old_sha);
  CHECK(m.to_sha256 == new_sha);
  CHECK(m.inputs_moved == std::vector<std::string>{"code"});
  const auto has = [&m](const std::string& prefix) {
    for (const auto& line : m.lines)
      if (line.rfind(prefix, 0) == 0)
        return true;
    return false;
  };
  CHECK(has("code.commit: "));
  CHECK(has("evaluation.primary.value: "));
  // Once: the next sync has nothing new to compare.
  CHECK(describe_manifest_moves(*f.store).empty());

  // A verdict of the new manifest makes the description history.
  f.verify(moved, new_sha);
  CHECK(f.store->manifests_moved()->size() == 1);   // still the current manifest's row...
  CHECK(f.store->manifests_to_compare()->empty());  // ...but nothing to compare any more
}

TEST_CASE("manifest moves: an unreadable manifest is a failed line, tried again next sync") {
  Fixture f;
  Manifest released = manifest_fixture("valid_full.json");
  f.verify(released, f.list(released));
  Manifest moved = released;
  moved.seeds["global"] = 99;
  f.list(moved);
  write_file(f.manifest, "{ not json");
  auto lines = describe_manifest_moves(*f.store);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].failed);
  CHECK(lines[0].text.find("cannot say what moved in its manifest since verification") !=
        std::string::npos);
  CHECK(f.store->manifests_moved()->empty());
  Manifest again = moved;
  again.seeds["global"] = 100;
  write_file(f.manifest, to_json(again).dump());  // readable, but not the bytes synced
  lines = describe_manifest_moves(*f.store);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].failed);
  CHECK(lines[0].text.find("changed again since the sync") != std::string::npos);
  write_file(f.manifest, to_json(moved).dump());  // the bytes synced: described
  lines = describe_manifest_moves(*f.store);
  REQUIRE(lines.size() == 1);
  CHECK_FALSE(lines[0].failed);
  CHECK(lines[0].text.find("inputs moved: seeds") != std::string::npos);
  REQUIRE(f.store->manifests_moved()->size() == 1);
}

}  // namespace reverify::test
