#include "runners/job_contract.hpp"

#include "core/file_write.hpp"
#include "core/subsample_rule.hpp"
#include "runners/job_sandbox.hpp"

namespace reverify {
namespace {

Status write_json(const std::filesystem::path& path, const nlohmann::json& doc) {
  return write_file(path, doc.dump(2) + '\n');
}

bool is_valid_rebuild_id(const std::string& id) {
  if (id.empty() || id == "." || id == ".." || id.size() > 200)
    return false;
  for (char c : id) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok)
      return false;
  }
  return true;
}

}  // namespace

Status write_contract_inputs(const RebuildSpec& spec, const std::filesystem::path& in_dir) {
  std::error_code ec;
  std::filesystem::create_directories(in_dir, ec);
  if (ec)
    return make_error(ErrorCode::io, in_dir.string() + ": cannot create: " + ec.message());
  const nlohmann::json config = spec.manifest.config.value_or(nlohmann::json::object());
  if (auto s = write_json(in_dir / "config.json", config); !s)
    return s;
  return write_json(in_dir / "seeds.json", nlohmann::json(spec.manifest.seeds));
}

std::map<std::string, std::string> contract_environment(const RebuildSpec& spec,
                                                        const ContractPaths& paths) {
  std::map<std::string, std::string> env;
  if (spec.manifest.environment)
    env = spec.manifest.environment->env;
  env["REVERIFY_MODE"] = to_string(spec.mode);
  if (spec.mode == RebuildMode::steps)
    env["REVERIFY_MAX_STEPS"] = std::to_string(spec.max_steps);
  else
    env.erase("REVERIFY_MAX_STEPS");
  // The subsample rule's parameters (docs/job-guide.md "Subsample mode"); the verification refuses
  // a subsample rebuild of a manifest without them before any runner starts.
  const auto& subsample = spec.manifest.subsample;
  if (spec.mode == RebuildMode::subsample && subsample) {
    // The rule's text of the fraction (core/subsample_rule.hpp); the manifest's validation
    // refuses a fraction without one.
    auto fraction = subsample_fraction_of(subsample->fraction);
    env["REVERIFY_SUBSAMPLE_FRACTION"] = fraction.ok() ? fraction->text : std::string();
    env["REVERIFY_SUBSAMPLE_SALT"] = subsample->salt;
  } else {
    env.erase("REVERIFY_SUBSAMPLE_FRACTION");
    env.erase("REVERIFY_SUBSAMPLE_SALT");
  }
  env["REVERIFY_CONFIG"] = paths.config;
  env["REVERIFY_SEEDS"] = paths.seeds;
  env["REVERIFY_OUT"] = paths.out;
  const auto set_or_erase = [&env](const char* name, const std::string& value) {
    if (value.empty())
      env.erase(name);
    else
      env[name] = value;
  };
  set_or_erase("REVERIFY_DATA", paths.data);
  set_or_erase("REVERIFY_EVAL", paths.eval);
  set_or_erase("REVERIFY_SEED_OVERRIDE",
               spec.seed_override ? std::to_string(*spec.seed_override) : "");
  if (spec.manifest.run.source_date_epoch) {
    env["SOURCE_DATE_EPOCH"] = std::to_string(*spec.manifest.run.source_date_epoch);
  }
  return env;
}

std::filesystem::path job_workdir(const RebuildSpec& spec, const std::filesystem::path& checkout) {
  const auto& workdir = spec.manifest.run.workdir;
  if (workdir && !workdir->empty() && std::filesystem::path(*workdir).is_relative())
    return checkout / *workdir;
  return checkout;
}

Result<std::filesystem::path> resolved_job_workdir(const RebuildSpec& spec,
                                                   const std::filesystem::path& checkout) {
  std::error_code ec;
  const auto root = std::filesystem::weakly_canonical(checkout, ec);
  const auto resolved = ec ? std::filesystem::path()
                           : std::filesystem::weakly_canonical(job_workdir(spec, checkout), ec);
  if (ec) {
    return make_error(ErrorCode::provision, "run.workdir: cannot resolve it in the checkout " +
                                                checkout.string() + ": " + ec.message());
  }
  const auto relative = resolved.lexically_relative(root);
  if (relative.empty() || *relative.begin() == "..") {
    return make_error(ErrorCode::manifest_invalid,
                      "run.workdir: \"" + spec.manifest.run.workdir.value_or("") +
                          "\" leads through a symlink to " + resolved.string() +
                          ", outside the checkout " + root.string() +
                          "; a job runs only inside its own checkout");
  }
  return resolved;
}

Result<std::filesystem::path> scratch_dir(const std::string& rebuild_id,
                                          const std::filesystem::path& work_dir,
                                          const std::filesystem::path& scratch_root) {
  if (!is_valid_rebuild_id(rebuild_id)) {
    return make_error(ErrorCode::invalid_argument,
                      "rebuild id: expected [A-Za-z0-9._-]{1,200}, got \"" + rebuild_id + "\"");
  }
  if (!work_dir.empty())
    return work_dir;
  return scratch_root / rebuild_id;
}

std::array<JobInput, 2> job_inputs(const RebuildSpec& spec) {
  return {JobInput{"REVERIFY_DATA", "data.snapshot.uri", spec.data_path, spec.data_fetched},
          JobInput{"REVERIFY_EVAL", "evaluation.set.uri", spec.eval_path, spec.eval_fetched}};
}

Error fetched_input_unseen(const JobInput& input, const std::string& runner,
                           const std::string& why) {
  return make_error(ErrorCode::provision, std::string(input.field) + ": the " + runner +
                                              " runner cannot show the job (" + input.variable +
                                              ") the copy preflight fetched from that URI into " +
                                              input.path.value_or("").string() + ": " + why);
}

Status check_inputs_not_verifier_own(const RebuildSpec& spec,
                                     const std::vector<std::filesystem::path>& verifier_paths) {
  for (const JobInput& input : job_inputs(spec)) {
    if (!input.path)
      continue;
    if (auto own = check_not_verifier_own(*input.path, input.variable, verifier_paths); !own)
      return own;
  }
  return {};
}

}  // namespace reverify
