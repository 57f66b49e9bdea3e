#include "core/manifest_json.hpp"

namespace reverify {
namespace {
using nlohmann::json;

template <class T>
void put(json& object, const char* key, const std::optional<T>& value) {
  if (value)
    object[key] = *value;
}

template <class Map>
void put_map(json& object, const char* key, const Map& map) {
  if (!map.empty())
    object[key] = map;
}

json file_ref(const FileRef& ref) {
  json j = {{"uri", ref.uri}};
  put(j, "sha256", ref.sha256);
  return j;
}

json environment(const Environment& e) {
  json j = json::object();
  put(j, "image", e.image);
  if (e.lockfile) {
    j["lockfile"] = {{"path", e.lockfile->path}};
    put(j["lockfile"], "sha256", e.lockfile->sha256);
  }
  put(j, "python", e.python);
  if (e.framework)
    j["framework"] = {{"name", e.framework->name}, {"version", e.framework->version}};
  if (e.accelerator) {
    json& a = j["accelerator"] = {{"model", e.accelerator->model}, {"count", e.accelerator->count}};
    put(a, "driver", e.accelerator->driver);
    put(a, "cuda", e.accelerator->cuda);
    put(a, "cudnn", e.accelerator->cudnn);
  }
  put_map(j, "env", e.env);
  if (e.determinism) {
    json& d = j["determinism"] = json::object();
    put(d, "deterministic_algorithms", e.determinism->deterministic_algorithms);
    put(d, "cudnn_benchmark", e.determinism->cudnn_benchmark);
    put(d, "tf32", e.determinism->tf32);
    put(d, "cudnn_deterministic", e.determinism->cudnn_deterministic);
  }
  if (e.threads) {
    json& t = j["threads"] = json::object();
    put(t, "intra_op", e.threads->intra_op);
    put(t, "inter_op", e.threads->inter_op);
    put(t, "dataloader_workers", e.threads->dataloader_workers);
  }
  put(j, "world_size", e.world_size);
  return j;
}

json data(const Data& d) {
  json j = json::object();
  if (d.snapshot) {
    json& s = j["snapshot"] = {{"kind", to_string(d.snapshot->kind)}, {"uri", d.snapshot->uri}};
    put(s, "sha256", d.snapshot->sha256);
    put(s, "id", d.snapshot->id);
  }
  if (d.split) {
    j["split"] = {{"rule", d.split->rule}};
    put(j["split"], "salt", d.split->salt);
  }
  if (d.labels) {
    json& l = j["labels"] = json::object();
    put(l, "version", d.labels->version);
    put(l, "guidance_rev", d.labels->guidance_rev);
  }
  return j;
}

json run(const Run& r) {
  json j = {{"entrypoint", r.entrypoint}};
  put(j, "workdir", r.workdir);
  put(j, "started_at", r.started_at);
  put(j, "duration_s", r.duration_s);
  put(j, "runner", r.runner);
  put(j, "source_date_epoch", r.source_date_epoch);
  return j;
}

json record_column(const RecordColumn& c) {
  json j = json::object();
  put(j, "uri", c.uri);
  put(j, "sha256", c.sha256);
  put(j, "column", c.column);
  return j;
}

json scoring(const ScoringSpec& s) {
  json j = {{"task", to_string(s.task)}, {"labels", record_column(s.labels)}};
  put(j, "classes", s.classes);
  if (!s.metrics.empty()) {
    json& metrics = j["metrics"] = json::array();
    for (ScoringMetric metric : s.metrics)
      metrics.push_back(to_string(metric));
  }
  if (!s.segments.empty()) {
    json& segments = j["segments"] = json::array();
    for (const SegmentKeySpec& key : s.segments) {
      json k = record_column(key.values);
      k["name"] = key.name;
      segments.push_back(std::move(k));
    }
  }
  put_map(j, "thresholds", s.thresholds);
  put(j, "k", s.k);
  if (s.query)
    j["query"] = record_column(*s.query);
  return j;
}

json evaluation(const Evaluation& e) {
  json j = json::object();
  if (e.set)
    j["set"] = file_ref(*e.set);
  j["primary"] = {{"name", e.primary.name},
                  {"value", e.primary.value},
                  {"higher_is_better", e.primary.higher_is_better}};
  put(j["primary"], "examples", e.primary.examples);
  put_map(j, "segments", e.segments);
  put_map(j, "segment_examples", e.segment_examples);
  if (e.predictions)
    j["predictions"] = file_ref(*e.predictions);
  if (e.steps)
    j["steps"] = {{"metric", e.steps->metric}, {"values", e.steps->values}};
  if (e.scoring)
    j["scoring"] = scoring(*e.scoring);
  return j;
}

json tolerance(const ToleranceSpec& t) {
  json j = json::object();
  put_map(j, "seed_runs", t.seed_runs);
  put_map(j, "segment_seed_runs", t.segment_seed_runs);
  put_map(j, "seed_overrides", t.seed_overrides);
  put_map(j, "distribution_seed_runs", t.distribution_seed_runs);
  put_map(j, "parity_seed_runs", t.parity_seed_runs);
  put_map(j, "steps_same_seed_runs", t.steps_same_seed_runs);
  if (!t.same_seed_scores.empty()) {
    json runs = json::array();
    for (const auto& run : t.same_seed_scores) {
      json one = {{"predictions_sha256", run.predictions_sha256}};
      put(one, "primary", run.primary);
      put_map(one, "segments", run.segments);
      runs.push_back(std::move(one));
    }
    j["same_seed_scores"] = std::move(runs);
  }
  put_map(j, "floor", t.floor);
  put_map(j, "detect", t.detect);
  return j;
}
json weights(const Weights& w) {
  json j = {{"uri", w.uri}, {"format", w.format}};
  put(j, "tensor_sha256", w.tensor_sha256);
  return j;
}

json subsample(const SubsampleReference& s) {
  json j = {{"fraction", s.fraction}, {"salt", s.salt}};
  put(j, "key", s.key);
  j["evaluation"] = evaluation(s.evaluation);
  if (s.weights)
    j["weights"] = weights(*s.weights);
  if (s.tolerance)
    j["tolerance"] = tolerance(*s.tolerance);
  put(j, "duration_s", s.duration_s);
  if (s.drawn) {
    j["drawn"] = {{"records", s.drawn->records},
                  {"keys", s.drawn->keys},
                  {"keys_sha256", s.drawn->keys_sha256}};
    put(j["drawn"], "candidates", s.drawn->candidates);
  }
  return j;
}
}  // namespace

json to_json(const Manifest& m) {
  json j = json::object();
  for (const auto& [key, value] : m.extra)
    j[key] = value;
  j["schema"] = m.schema;
  j["model"] = m.model;
  j["version"] = m.version;
  j["owner"] = m.owner;
  j["level"] = to_string(m.level);
  j["code"] = {{"commit", m.code.commit}, {"dirty", m.code.dirty}};
  put(j["code"], "repo", m.code.repo);
  put(j["code"], "diff_sha256", m.code.diff_sha256);
  if (m.environment)
    j["environment"] = environment(*m.environment);
  if (m.data)
    j["data"] = data(*m.data);
  put(j, "config", m.config);
  put_map(j, "seeds", m.seeds);
  j["run"] = run(m.run);
  j["evaluation"] = evaluation(m.evaluation);
  if (m.weights)
    j["weights"] = weights(*m.weights);
  if (m.tolerance)
    j["tolerance"] = tolerance(*m.tolerance);
  if (m.subsample)
    j["subsample"] = subsample(*m.subsample);
  return j;
}

}  // namespace reverify
