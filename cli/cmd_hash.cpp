// reverify hash PATH: the file manifest of a folder, the tensor hash of a .safetensors file, or the
// sha256 of any other file (docs/design.md, "Manifest v1"). The root hash is always stdout's last
// line.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/command.hpp"
#include "cli/hash_progress.hpp"
#include "core/hashing.hpp"
#include "core/hashing_paths.hpp"

namespace reverify::cli {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;
constexpr const char* kHashName = "hash";

int input_error(const Error& error) {
  std::cerr << "reverify hash: " << error.message << "\n";
  return 2;
}

Result<std::string> read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return make_error(ErrorCode::not_found, path.string() + ": cannot open");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Written beside the destination and renamed over it, so a reader never sees half a manifest.
Status write_text(const fs::path& path, const std::string& text) {
  const fs::path temp = path.string() + ".tmp";
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out.flush())
      return make_error(ErrorCode::io, temp.string() + ": cannot write");
  }
  std::error_code ec;
  fs::rename(temp, path, ec);
  if (ec)
    return make_error(ErrorCode::io, path.string() + ": cannot write: " + ec.message());
  return Status::success();
}

struct HashArguments {
  std::string path;
  std::optional<std::string> write, verify;
  std::string format = "manifest";  // of --write: manifest (docs/design.md's) or sha256sum
  std::string read_path = "auto";   // auto (measured per window) or one ReadPath's name
  bool io_stats = false;
  bool json = false;

  HashOptions options(ProgressFn progress) const {
    return HashOptions{0, std::move(progress), enum_from_string<ReadPath>(read_path)};
  }
};

// --io-stats: what each read path cost per byte of each page layout in this run, and how many
// windows it hashed (the choice was the cheapest; the others were tried now and then).
void print_io_stats() {
  const PathChooser& chooser = PathChooser::shared();
  for (std::size_t l = 0; l < kPageLayouts; ++l) {
    const auto layout = static_cast<PageLayout>(l);
    std::string line;
    for (std::size_t p = 0; p < kReadPaths; ++p) {
      const auto path = static_cast<ReadPath>(p);
      const auto estimate = chooser.estimate(layout, path);
      if (estimate.windows == 0)
        continue;
      char cell[96];
      std::snprintf(cell, sizeof cell, "  %s %.3f ns/B (%u windows)", to_string(path),
                    estimate.ns_per_byte, estimate.windows);
      line += cell;
    }
    if (!line.empty())
      std::cerr << "io " << to_string(layout) << ":" << line << "\n";
  }
}

int hash_folder(const fs::path& dir, const HashArguments& args) {
  std::optional<FileManifest> expected;
  if (auto verify = args.verify) {  // read first: a bad file fails before hours of hashing
    auto text = read_text(*verify);
    if (!text)
      return input_error(text.error());
    auto parsed = parse_file_manifest(*text);
    if (!parsed)
      return input_error(make_error(parsed.error().code, *verify + ": " + parsed.error().message));
    expected = std::move(parsed).value();
  }
  Result<FileManifest> manifest = [&] {
    HashProgressLine progress(stderr);
    return hash_directory(dir, args.options(progress.callback()));
  }();
  if (!manifest)
    return input_error(manifest.error());
  if (auto write = args.write) {
    Status written = write_text(
        *write, args.format == "sha256sum" ? manifest->sha256sum_text() : manifest->text());
    if (!written)
      return input_error(written.error());
  }
  FileManifestDiff diff;
  if (expected)
    diff = diff_file_manifests(*expected, *manifest);

  if (args.json) {
    json out = {{"kind", "files"},
                {"root", manifest->root},
                {"files", manifest->files.size()},
                {"bytes", manifest->total_bytes}};
    if (expected) {
      out["verify"] = {{"manifest", *args.verify},
                       {"matches", diff.empty()},
                       {"added", diff.added},
                       {"removed", diff.removed},
                       {"changed", diff.changed}};
    }
    std::cout << out.dump() << "\n";
  } else if (expected) {
    for (const auto& path : diff.added)
      std::cout << "added: " << path << "\n";
    for (const auto& path : diff.removed)
      std::cout << "removed: " << path << "\n";
    for (const auto& path : diff.changed)
      std::cout << "changed: " << path << "\n";
    std::cout << manifest->root << "\n";
  } else {
    std::cout << manifest->text() << manifest->root << "\n";
  }
  if (expected && !diff.empty()) {
    std::cerr << "reverify hash: " << dir.string() << " differs from " << *args.verify << ": "
              << diff.added.size() << " added, " << diff.removed.size() << " removed, "
              << diff.changed.size() << " changed\n";
    return 1;
  }
  return 0;
}

int hash_safetensors_file(const fs::path& file, const HashArguments& args) {
  Result<TensorHash> hash = [&] {
    HashProgressLine progress(stderr);
    return hash_safetensors(file, args.options(progress.callback()));
  }();
  if (!hash)
    return input_error(hash.error());
  if (args.json) {
    json tensors = json::array();
    for (const TensorDigest& t : hash->tensors) {
      tensors.push_back(
          {{"name", t.name}, {"dtype", t.dtype}, {"shape", t.shape}, {"sha256", t.sha256}});
    }
    std::cout << json{{"kind", "safetensors"},
                      {"root", hash->root},
                      {"files", 1},
                      {"bytes", hash->total_bytes},
                      {"tensors", tensors}}
                     .dump()
              << "\n";
    return 0;
  }
  std::cout << hash->text() << hash->root << "\n";
  return 0;
}

int hash_plain_file(const fs::path& file, const HashArguments& args) {
  auto digest = sha256_file(file, enum_from_string<ReadPath>(args.read_path));
  if (!digest)
    return input_error(digest.error());
  if (args.json) {
    std::error_code ec;
    const auto size = fs::file_size(file, ec);
    std::cout
        << json{{"kind", "file"}, {"root", *digest}, {"files", 1}, {"bytes", ec ? 0 : size}}.dump()
        << "\n";
  } else {
    std::cout << *digest << "\n";
  }
  return 0;
}

int hash_path(const HashArguments& args) {
  if (args.format != "manifest" && !args.write)
    return usage_error(kHashName, "--format says what --write writes; give --write FILE too");
  const fs::path path = args.path;
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (!fs::exists(status))
    return input_error(make_error(ErrorCode::not_found, path.string() + ": does not exist"));
  if (fs::is_directory(status))
    return hash_folder(path, args);
  if (args.write || args.verify) {
    return usage_error(kHashName, "--write and --verify apply to a folder's file manifest");
  }
  if (!fs::is_regular_file(status)) {
    return input_error(make_error(ErrorCode::invalid_argument,
                                  path.string() + ": not a folder or a regular file"));
  }
  if (path.extension() == ".safetensors")
    return hash_safetensors_file(path, args);
  return hash_plain_file(path, args);
}

int run_hash(const HashArguments& args) {
  const int status = hash_path(args);
  if (args.io_stats)
    print_io_stats();
  return status;
}

Action define_hash(CLI::App& app) {
  auto o = std::make_shared<HashArguments>();
  app.add_option("PATH", o->path,
                 "a folder (its file manifest), a .safetensors file (its tensor hash) or any "
                 "other file (its sha256)")
      ->required();
  app.add_option("--write", o->write,
                 "folders: also write the file manifest to FILE (atomically: written beside it, "
                 "then renamed)")
      ->type_name("FILE");
  app.add_option(
         "--format", o->format,
         "what --write writes: manifest (the file manifest, \"<sha256>  <size>  <path>\" "
         "lines, whose sha256 is the root hash; what --verify reads) or sha256sum "
         "(\"<sha256>  <path>\" lines: check the folder with `cd DIR && sha256sum -c FILE`)")
      ->type_name("manifest|sha256sum")
      ->check(one_of({"manifest", "sha256sum"}))
      ->capture_default_str();
  app.add_option("--verify", o->verify,
                 "folders: compare against the file manifest in FILE; name every added, removed "
                 "and changed file and exit 1 if any")
      ->type_name("FILE");
  std::vector<std::string> read_paths = enum_choices<ReadPath>();
  read_paths.insert(read_paths.begin(), "auto");
  app.add_option("--read-path", o->read_path,
                 "how file bytes are got: auto (per 8 MiB window, the path measured cheapest in "
                 "this run for how the window sits in the page cache), or always one: map (a "
                 "read-only mapping) or read_64k/read_256k/read_1m (pread() into a buffer of "
                 "that size); for benchmarks")
      ->check(one_of(read_paths))
      ->capture_default_str();
  app.add_flag("--io-stats", o->io_stats,
               "print to stderr what each read path cost per byte in this run, by page layout");
  add_json_flag(app, o->json);
  return [o] { return run_hash(*o); };
}

const Registrar kHash{{kHashName,
                       "file manifest of a folder, tensor hash of a .safetensors file, sha256 of "
                       "any other file; the root hash is the last line",
                       define_hash}};

}  // namespace
}  // namespace reverify::cli
