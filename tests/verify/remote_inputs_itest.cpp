// Remote inputs against a real HTTP server on loopback (verify/remote_inputs.hpp, and preflight
// through it): a "files" snapshot at an http URI is fetched whole and checked file by file against
// its recorded root, or the verification stops before any job, naming data.snapshot.uri; an eval
// set and released predictions at http URIs are fetched and hashed like local ones; released
// weights at an http URI are fetched and their tensor hash checked where the level compares
// weights (bitwise), else noted as not fetched.
// Found by trying it as an operator would: such a snapshot was recorded as "remote: not re-hashed
// here" and the job started without REVERIFY_DATA.

#include <doctest/doctest.h>

#include <map>

#include "core/hashing.hpp"
#include "tests/core/hashing_test_support.hpp"
#include "tests/pager/http_receiver.hpp"
#include "tests/support/files.hpp"
#include "tests/support/free_port.hpp"
#include "tests/support/temp_dir.hpp"
#include "verify/pipeline_rebuild.hpp"
#include "verify/preflight.hpp"
#include "verify/remote_inputs.hpp"

namespace reverify {
namespace {

namespace fs = std::filesystem;

// A static file server: every GET of /<path> answers the file `files` holds for it, else 404.
struct FileServer {
  std::map<std::string, std::string> files;
  int gets = 0;
  test::HttpReceiver server{[this](const test::ReceivedRequest& request) {
    ++gets;
    auto it = files.find(request.target);
    return it == files.end() ? test::Reply{404, "not found"} : test::Reply{200, it->second};
  }};
  std::string url(const std::string& path) const { return server.url(path); }
};

// A dataset folder published at /data/ with its file manifest at /data/snapshot.sha256.
struct Published {
  test::TempDir temp{"remote-inputs-"};
  FileServer web;
  std::string root;  // the snapshot's recorded root hash

  Published() {
    test::write_file(temp.path / "data/a.csv", "id,label\n1,3\n");
    test::write_file(temp.path / "data/sub dir/b 100%.csv", "id,label\n2,5\n");
    auto listing = hash_directory(temp.path / "data");
    REQUIRE(listing.ok());
    root = listing->root;
    web.files["/data/snapshot.sha256"] = listing->text();
    web.files["/data/a.csv"] = "id,label\n1,3\n";
    web.files["/data/sub%20dir/b%20100%25.csv"] = "id,label\n2,5\n";
  }
  std::string listing_url() const { return web.url("/data/snapshot.sha256"); }
};

}  // namespace

TEST_CASE("a served snapshot is fetched whole, each file checked, and hashes as recorded") {
  Published p;
  auto fetched = fetch_file_snapshot(p.listing_url(), p.root, p.temp.path / "fetched");
  REQUIRE(fetched.ok());
  CHECK(fetched->listing.root == p.root);
  CHECK(test::read_file(p.temp.path / "fetched/sub dir/b 100%.csv") == "id,label\n2,5\n");
  // The copy is the folder the recorded root describes, byte for byte.
  CHECK(hash_directory(p.temp.path / "fetched").value().root == p.root);
}

TEST_CASE("a snapshot that moved on its server is drift, named, and nothing else is fetched") {
  Published p;
  SUBCASE("the listing changed") {
    p.web.files["/data/snapshot.sha256"] += std::string(64, 'a') + "  3  c.csv\n";
    auto fetched = fetch_file_snapshot(p.listing_url(), p.root, p.temp.path / "fetched");
    REQUIRE_FALSE(fetched.ok());
    CHECK(fetched.error().code == ErrorCode::input_drift);
    CHECK(fetched.error().message.find("hashes to") != std::string::npos);
    CHECK(p.web.gets == 1);
  }
  SUBCASE("a file changed, its size kept") {
    p.web.files["/data/a.csv"] = "id,label\n1,4\n";
    auto fetched = fetch_file_snapshot(p.listing_url(), p.root, p.temp.path / "fetched");
    REQUIRE_FALSE(fetched.ok());
    CHECK(fetched.error().code == ErrorCode::input_drift);
    CHECK(fetched.error().message.find("a.csv (changed)") == 0);
  }
  SUBCASE("a file grew") {
    p.web.files["/data/a.csv"] += "3,3\n";
    auto fetched = fetch_file_snapshot(p.listing_url(), p.root, p.temp.path / "fetched");
    REQUIRE_FALSE(fetched.ok());
    CHECK(fetched.error().code == ErrorCode::input_drift);
    CHECK(fetched.error().message.find("more than the 13 bytes recorded") != std::string::npos);
  }
  SUBCASE("a file is gone") {
    p.web.files.erase("/data/a.csv");
    auto fetched = fetch_file_snapshot(p.listing_url(), p.root, p.temp.path / "fetched");
    REQUIRE_FALSE(fetched.ok());
    CHECK(fetched.error().code == ErrorCode::input_drift);
    CHECK(fetched.error().message.find("HTTP 404 (gone)") != std::string::npos);
  }
}

TEST_CASE("a recorded listing that is no file manifest, or leaves its folder, is the manifest's") {
  Published p;
  SUBCASE("an HTML index page") {
    p.web.files["/data/snapshot.sha256"] = "<html><a href=a.csv>a.csv</a></html>\n";
  }
  SUBCASE("a line climbing out") {
    p.web.files["/data/snapshot.sha256"] = std::string(64, 'a') + "  3  ../../etc/passwd\n";
  }
  const std::string recorded = sha256_hex(p.web.files["/data/snapshot.sha256"]);
  auto fetched = fetch_file_snapshot(p.listing_url(), recorded, p.temp.path / "fetched");
  REQUIRE_FALSE(fetched.ok());
  CHECK(fetched.error().code == ErrorCode::manifest_invalid);
  CHECK_FALSE(fs::exists(p.temp.path / "etc"));
}

TEST_CASE("preflight: remote inputs fetched into the verification's scratch, or it stops, named") {
  Published p;
  p.web.files["/eval.csv"] = "id,label\n9,1\n";
  Manifest m;
  m.model = "m";
  m.version = "1";
  m.data = Data{Snapshot{SnapshotKind::files, p.listing_url(), p.root, std::nullopt}, std::nullopt,
                std::nullopt};
  m.evaluation.set = FileRef{p.web.url("/eval.csv"), sha256_hex("id,label\n9,1\n")};
  const fs::path scratch = p.temp.path / "work/v1/inputs";
  const std::string location = (p.temp.path / "registry/m/1/manifest.json").string();

  PreflightReport report = run_preflight(m, location, scratch);
  CHECK_FALSE(report.refusal);
  CHECK_FALSE(report.drifted());
  CHECK(report.data_path == scratch / "data");
  CHECK(report.eval_path == scratch / "eval/eval.csv");
  CHECK(report.checks.size() == 2);
  CHECK(report.evidence["dataset"]["url"] == p.listing_url());
  CHECK(report.unverified.empty());
  // The runner is told these are fetched copies (a runner that cannot show them refuses).
  VerificationRequest request;
  request.manifest = m;
  request.manifest_location = location;
  request.work_root = p.temp.path / "work";
  request.verification_id = "v1";
  const RebuildSpec spec = rebuild_spec(request, report);
  CHECK(spec.data_path == scratch / "data");
  CHECK(spec.data_fetched);
  CHECK(spec.eval_fetched);

  SUBCASE("the server gone: error:provision naming data.snapshot.uri, no check run") {
    m.data->snapshot->uri = "http://127.0.0.1:" + std::to_string(test::free_port()) + "/x.sha256";
    report = run_preflight(m, location, p.temp.path / "work/v2/inputs");
    REQUIRE(report.refusal);
    CHECK(report.refusal->cls == VerdictClass::error_provision);
    CHECK(report.refusal->explanation.find("data.snapshot.uri: ") == 0);
    CHECK(report.refusal->explanation.find("no job was started") != std::string::npos);
  }
  SUBCASE("the eval set changed on its server: input drift naming evaluation.set") {
    p.web.files["/eval.csv"] = "id,label\n9,0\n";
    report = run_preflight(m, location, p.temp.path / "work/v3/inputs");
    CHECK(report.drifted());
    CHECK_FALSE(report.refusal);
  }
}

TEST_CASE("preflight: released weights at an http URI, fetched and tensor-hashed at bitwise") {
  Published p;
  const std::string header = R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  const std::string released = test::safetensors_bytes(header, "AAAABBBB");
  test::write_file(p.temp.path / "released.safetensors", released);
  p.web.files["/model.safetensors"] = released;
  Manifest m;
  m.model = "m";
  m.version = "1";
  m.level = ReproLevel::bitwise;
  m.weights = Weights{p.web.url("/model.safetensors"), "safetensors",
                      hash_safetensors(p.temp.path / "released.safetensors").value().root};
  const std::string location = (p.temp.path / "registry/m/1/manifest.json").string();
  const fs::path scratch = p.temp.path / "work/v1/inputs";

  SUBCASE("as recorded: checked, and the pipeline reads that copy") {
    PreflightReport report = run_preflight(m, location, scratch);
    CHECK_FALSE(report.refusal);
    CHECK_FALSE(report.drifted());
    REQUIRE(report.checks.size() == 1);
    CHECK(report.checks[0].name == "input:weights");
    CHECK(report.evidence["weights"]["actual"] == *m.weights->tensor_sha256);
    CHECK(released_weights(m, location, scratch) == scratch / "weights/model.safetensors");
  }
  SUBCASE("other tensors on the server: input drift naming the weights") {
    p.web.files["/model.safetensors"] = test::safetensors_bytes(header, "AAAABBBC");
    PreflightReport report = run_preflight(m, location, scratch);
    CHECK(report.drifted());
    CHECK(report.checks[0].explanation.find("changed since release") != std::string::npos);
  }
  SUBCASE("the server gone: error:provision naming weights.uri") {
    m.weights->uri = "http://127.0.0.1:" + std::to_string(test::free_port()) + "/w.safetensors";
    PreflightReport report = run_preflight(m, location, scratch);
    REQUIRE(report.refusal);
    CHECK(report.refusal->cls == VerdictClass::error_provision);
    CHECK(report.refusal->explanation.find("weights.uri: ") == 0);
  }
  SUBCASE("a scheme reverify cannot fetch: error:manifest-invalid naming weights.uri") {
    m.weights->uri = "s3://bucket/model.safetensors";
    PreflightReport report = run_preflight(m, location, scratch);
    REQUIRE(report.refusal);
    CHECK(report.refusal->cls == VerdictClass::error_manifest_invalid);
    CHECK(report.refusal->explanation.find("weights.uri: ") == 0);
  }
  SUBCASE("a level that compares no weights: not fetched, and said so") {
    m.level = ReproLevel::equivalent;
    PreflightReport report = run_preflight(m, location, scratch);
    CHECK_FALSE(report.refusal);
    CHECK(report.checks.empty());
    CHECK(p.web.gets == 0);
    REQUIRE_FALSE(report.unverified.empty());
    CHECK(report.unverified.back().find("weights.uri: ") == 0);
  }
}

}  // namespace reverify
