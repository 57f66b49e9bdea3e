// Remote inputs against a real HTTP server on loopback (verify/remote_inputs.hpp, and preflight
// through it): a "files" snapshot at an http URI is fetched whole and checked file by file against
// its recorded root, or the verification stops before any job, naming data.snapshot.uri; an eval
// set and released predictions at http URIs are fetched and hashed like local ones.
// Found by trying it as an operator would: such a snapshot was recorded as "remote: not re-hashed
// here" and the job started without REVERIFY_DATA.

#include <doctest/doctest.h>

#include <map>

#include "core/hashing.hpp"
#include "tests/pager/http_receiver.hpp"
#include "tests/support/files.hpp"
#include "tests/support/free_port.hpp"
#include "tests/support/temp_dir.hpp"
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

}  // namespace reverify
