#include "cli/capture_release.hpp"

#include <fstream>
#include <system_error>

#include "core/hashing.hpp"
#include "core/names.hpp"
#include "core/predictions.hpp"
#include "core/scoring_inputs.hpp"
#include "policies/scoring.hpp"

namespace reverify::cli {

namespace fs = std::filesystem;

namespace {

// A scoring flag's column (cli/scoring_flags.hpp column_source): a file is copied into the
// release folder and recorded by name and sha256.
Result<RecordColumn> record_column(const std::string& text, const std::string& option,
                                   const CaptureArguments& args, const fs::path& out_dir,
                                   ReleaseNames& names) {
  auto source = column_source(text, option, args.eval);
  if (!source.ok())
    return source.error();
  if (!source->file)
    return RecordColumn{std::nullopt, std::nullopt, source->column};
  if (Status claimed = names.claim(*source->file, option); !claimed.ok())
    return claimed.error();
  auto ref = release_file(*source->file, out_dir);
  if (!ref.ok())
    return make_error(ref.error().code, option + " " + text + ": " + ref.error().message);
  return RecordColumn{ref->uri, ref->sha256, source->column};
}

}  // namespace

Result<nlohmann::json> read_json_file(const fs::path& path) {
  std::ifstream in(path);
  if (!in)
    return make_error(ErrorCode::io, path.string() + ": cannot open");
  auto doc = nlohmann::json::parse(in, nullptr, false);
  if (doc.is_discarded())
    return make_error(ErrorCode::parse, path.string() + ": not valid JSON");
  return doc;
}

std::string file_uri(const fs::path& path) {
  return "file://" + fs::absolute(path).lexically_normal().string();
}

Result<FileRef> release_file(const fs::path& source, const fs::path& out_dir,
                             const fs::path& under) {
  std::error_code ec;
  fs::create_directories(out_dir / under, ec);
  fs::copy_file(source, out_dir / under / source.filename(), fs::copy_options::overwrite_existing,
                ec);
  if (ec)
    return make_error(ErrorCode::io, source.string() + ": cannot copy: " + ec.message());
  auto digest = sha256_file(source);
  if (!digest.ok())
    return digest.error();
  return FileRef{(under / source.filename()).generic_string(), *digest};
}

Status ReleaseNames::claim(const fs::path& source, const std::string& option) {
  std::error_code ec;
  const fs::path real = fs::weakly_canonical(source, ec);
  auto [it, fresh] = by_name_.emplace(source.filename().string(), real);
  if (!fresh && it->second != real)
    return make_error(ErrorCode::invalid_argument,
                      option + " " + source.string() + ": the release folder already holds " +
                          it->second.string() + " under the name " + it->first);
  return Status::success();
}

Result<ScoringSpec> release_scoring_spec(const CaptureArguments& args, const fs::path& out_dir,
                                         ReleaseNames& names) {
  return scoring_spec(args.scoring, [&](const std::string& text, const std::string& option) {
    return record_column(text, option, args, out_dir, names);
  });
}

}  // namespace reverify::cli
