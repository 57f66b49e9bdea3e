// `reverify hash` end to end through the built binary: output contract, --write/--verify, --json,
// exit codes and error messages.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "core/hashing.hpp"
#include "tests/core/hashing_test_support.hpp"

namespace fs = std::filesystem;
using namespace reverify::test;
using nlohmann::json;

namespace {
Ran reverify_hash(std::vector<std::string> args, const fs::path& scratch) {
  args.insert(args.begin(), "hash");
  return run_cli(std::move(args), scratch);
}

void make_folder(const fs::path& dir) {
  write_file(dir / "a.txt", "abc");
  write_file(dir / "sub" / "b.bin", std::string(1000, 'b'));
  write_file(dir / "sub" / "c", "");
}
}  // namespace

TEST_CASE(
    "hash DIR prints the file manifest and the root alone on the last line, nothing on stderr") {
  TempDir scratch, dir;
  make_folder(dir.path);
  Ran ran = reverify_hash({dir.path.string()}, scratch.path);
  CHECK(ran.exit_code == 0);
  auto manifest = reverify::hash_directory(dir.path);
  REQUIRE(manifest.ok());
  CHECK(ran.out == manifest->text() + manifest->root + "\n");
  CHECK(last_line(ran.out) == manifest->root);
  CHECK(ran.err.empty());  // no progress line when stderr is not a terminal
}

TEST_CASE("hash DIR --json reports kind, root, files and bytes") {
  TempDir scratch, dir;
  make_folder(dir.path);
  Ran ran = reverify_hash({dir.path.string(), "--json"}, scratch.path);
  CHECK(ran.exit_code == 0);
  const json out = json::parse(ran.out);
  CHECK(out["kind"] == "files");
  CHECK(out["root"] == reverify::hash_directory(dir.path).value().root);
  CHECK(out["files"] == 3);
  CHECK(out["bytes"] == 1003);
}

TEST_CASE("--write then --verify: same folder passes, added/removed/changed files are named") {
  TempDir scratch, dir;
  make_folder(dir.path);
  const std::string manifest_file = (scratch.path / "files.sha256").string();
  Ran wrote = reverify_hash({dir.path.string(), "--write", manifest_file}, scratch.path);
  REQUIRE(wrote.exit_code == 0);
  CHECK(read_file(manifest_file) + last_line(wrote.out) + "\n" == wrote.out);

  Ran same = reverify_hash({dir.path.string(), "--verify", manifest_file}, scratch.path);
  CHECK(same.exit_code == 0);
  CHECK(same.out == last_line(wrote.out) + "\n");

  write_file(dir.path / "a.txt", "abd");
  write_file(dir.path / "new", "x");
  fs::remove(dir.path / "sub" / "c");
  Ran differs = reverify_hash({dir.path.string(), "--verify", manifest_file}, scratch.path);
  CHECK(differs.exit_code == 1);
  const std::string root = reverify::hash_directory(dir.path).value().root;
  CHECK(differs.out == "added: new\nremoved: sub/c\nchanged: a.txt\n" + root + "\n");
  CHECK(differs.err.find("1 added, 1 removed, 1 changed") != std::string::npos);

  Ran as_json =
      reverify_hash({dir.path.string(), "--verify", manifest_file, "--json"}, scratch.path);
  CHECK(as_json.exit_code == 1);
  const json out = json::parse(as_json.out);
  CHECK(out["verify"]["matches"] == false);
  CHECK(out["verify"]["added"] == json::array({"new"}));
  CHECK(out["verify"]["removed"] == json::array({"sub/c"}));
  CHECK(out["verify"]["changed"] == json::array({"a.txt"}));
}

TEST_CASE("hash FILE.safetensors --json lists the tensors; other files get their sha256") {
  TempDir scratch, dir;
  const fs::path weights = dir.path / "model.safetensors";
  write_file(
      weights,
      safetensors_bytes(R"({"w":{"dtype":"F32","shape":[2,1],"data_offsets":[0,8]}})", "12345678"));
  Ran ran = reverify_hash({weights.string(), "--json"}, scratch.path);
  CHECK(ran.exit_code == 0);
  const json out = json::parse(ran.out);
  const auto expected = reverify::hash_safetensors(weights).value();
  CHECK(out["kind"] == "safetensors");
  CHECK(out["root"] == expected.root);
  CHECK(out["bytes"] == 8);
  CHECK(out["tensors"] == json::parse(R"([{"name":"w","dtype":"F32","shape":[2,1],"sha256":")" +
                                      reverify::sha256_hex("12345678") + "\"}]"));
  Ran text = reverify_hash({weights.string()}, scratch.path);
  CHECK(text.out ==
        "w\tF32\t2,1\t" + reverify::sha256_hex("12345678") + "\n" + expected.root + "\n");

  write_file(dir.path / "eval.npy", "abc");
  Ran plain = reverify_hash({(dir.path / "eval.npy").string()}, scratch.path);
  CHECK(plain.exit_code == 0);
  CHECK(plain.out == reverify::sha256_hex("abc") + "\n");
}

TEST_CASE("errors exit 2 with a message naming the path") {
  TempDir scratch, dir;
  make_folder(dir.path);
  fs::create_symlink("/etc/hostname", dir.path / "sub" / "escape");
  Ran escape = reverify_hash({dir.path.string()}, scratch.path);
  CHECK(escape.exit_code == 2);
  CHECK(escape.out.empty());
  CHECK(escape.err.find("sub/escape: symlink leaves the folder") != std::string::npos);

  write_file(
      scratch.path / "bad.safetensors",
      safetensors_bytes(R"({"w":{"dtype":"F33","shape":[1],"data_offsets":[0,4]}})", "1234"));
  Ran bad = reverify_hash({(scratch.path / "bad.safetensors").string()}, scratch.path);
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("unknown dtype \"F33\"") != std::string::npos);

  Ran missing = reverify_hash({(dir.path / "nope").string()}, scratch.path);
  CHECK(missing.exit_code == 2);
  CHECK(missing.err.find("nope: does not exist") != std::string::npos);

  write_file(scratch.path / "garbage.sha256", "not a manifest\n");
  fs::remove(dir.path / "sub" / "escape");
  Ran garbage = reverify_hash(
      {dir.path.string(), "--verify", (scratch.path / "garbage.sha256").string()}, scratch.path);
  CHECK(garbage.exit_code == 2);
  CHECK(garbage.err.find("garbage.sha256: file manifest line 1: expected") != std::string::npos);

  Ran usage = reverify_hash({(dir.path / "a.txt").string(), "--verify", "x"}, scratch.path);
  CHECK(usage.exit_code == 2);
  CHECK(usage.err.find("apply to a folder") != std::string::npos);
}

TEST_CASE("--write --format sha256sum: coreutils `sha256sum -c` checks the folder with it") {
  TempDir scratch, dir;
  make_folder(dir.path);
  write_file(dir.path / "odd\\name.txt", "backslash");  // sha256sum escapes it; so must we
  const std::string sums = (scratch.path / "files.sha256sum").string();
  Ran wrote =
      reverify_hash({dir.path.string(), "--write", sums, "--format", "sha256sum"}, scratch.path);
  REQUIRE(wrote.exit_code == 0);
  const auto manifest = reverify::hash_directory(dir.path).value();
  CHECK(wrote.out ==
        manifest.text() + manifest.root + "\n");  // stdout keeps the docs/design.md form
  // What coreutils itself writes for the same files, in the same order.
  Ran coreutils = run_program(
      {"sh", "-c",
       "cd '" + dir.path.string() + "' && sha256sum 'a.txt' 'odd\\name.txt' 'sub/b.bin' 'sub/c'"},
      scratch.path);
  REQUIRE(coreutils.exit_code == 0);
  CHECK(read_file(sums) == coreutils.out);
  Ran check = run_program(
      {"sh", "-c", "cd '" + dir.path.string() + "' && sha256sum -c '" + sums + "'"}, scratch.path);
  CHECK(check.exit_code == 0);
  CHECK(check.out.find("sub/b.bin: OK") != std::string::npos);

  write_file(dir.path / "a.txt", "changed");
  Ran changed = run_program(
      {"sh", "-c", "cd '" + dir.path.string() + "' && sha256sum -c '" + sums + "'"}, scratch.path);
  CHECK(changed.exit_code == 1);
  CHECK(changed.out.find("a.txt: FAILED") != std::string::npos);

  Ran alone = reverify_hash({dir.path.string(), "--format", "sha256sum"}, scratch.path);
  CHECK(alone.exit_code == 2);
  CHECK(alone.err.find("give --write FILE too") != std::string::npos);
}
