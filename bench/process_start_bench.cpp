// What it costs to start and end a job in its sandbox and cgroups (process runner): start() to
// the end of wait() for a trivial job (`true`), median of N, for three runners in the same run:
// the named baseline, the bare runner (job code trusted, no cgroups: the supervisor as subreaper
// and rlimits only); the same with cgroups (the host's v2 membership and kill, pids and memory
// limits); and the default runner, cgroups and the bubblewrap sandbox (runners/job_sandbox.hpp).
// Runs alternate, so load from other work on the machine falls on all alike. prepare() (a git
// clone, and the sandbox's probe once) is not timed. Usage: process_start_bench [N (30)]; as
// root where cgroups are to be measured.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "runners/job_cgroup.hpp"
#include "runners/process_runner.hpp"

using namespace reverify;
namespace fs = std::filesystem;

namespace {

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// start() + wait() of one trivial job, in milliseconds.
double run_once(ProcessRunner& runner, RebuildSpec spec, const std::string& id) {
  spec.rebuild_id = id;
  if (auto prepared = runner.prepare(spec); !prepared.ok()) {
    std::fprintf(stderr, "prepare: %s\n", prepared.error().to_string().c_str());
    std::exit(1);
  }
  const auto t0 = std::chrono::steady_clock::now();
  auto job = runner.start(spec);
  if (!job.ok()) {
    std::fprintf(stderr, "start: %s\n", job.error().to_string().c_str());
    std::exit(1);
  }
  auto exit = runner.wait(*job, {});
  const auto t1 = std::chrono::steady_clock::now();
  if (!exit.ok() || exit->exit_code != 0) {
    std::fprintf(stderr, "wait: the job failed\n");
    std::exit(1);
  }
  runner.cleanup(*job);
  return std::chrono::duration<double, std::milli>(t1 - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 30;
  char pattern[] = "/tmp/reverify-start-bench.XXXXXX";
  const fs::path dir = ::mkdtemp(pattern);
  const fs::path repo = dir / "repo";
  fs::create_directories(repo);
  const std::string git = "git -C '" + repo.string() + "' -c user.name=b -c user.email=b@b ";
  if (std::system((git + "init -q && " + git + "commit -q --allow-empty -m empty").c_str()) != 0 ||
      std::system((git + "rev-parse HEAD > '" + (dir / "head").string() + "'").c_str()) != 0) {
    std::fprintf(stderr, "git failed\n");
    return 1;
  }
  std::string commit(40, '0');
  if (FILE* head = std::fopen((dir / "head").c_str(), "r")) {
    if (std::fread(commit.data(), 1, 40, head) != 40)
      return 1;
    std::fclose(head);
  }
  RebuildSpec spec;
  spec.manifest.model = "bench";
  spec.manifest.version = "1";
  spec.manifest.code.repo = repo.string();
  spec.manifest.code.commit = commit;
  spec.manifest.run.entrypoint = {"true"};
  spec.manifest_location = (dir / "manifest.json").string();
  spec.timeout = std::chrono::seconds(60);

  ProcessRunnerConfig with;
  with.scratch_root = dir / "scratch";
  with.poll_interval = std::chrono::milliseconds(1);  // wait() notices the end within 1 ms
  with.memory_bytes = 1ULL << 30;
  with.space.min_free_bytes = 0;
  ProcessRunnerConfig without = with;
  without.cgroups = false;
  const JobIsolation trusted{true, {}};
  ProcessRunner sandboxed(with), cgrouped(with, trusted), baseline(without, trusted);

  std::vector<double> boxed, ours, base;
  for (int i = 0; i < n; ++i) {
    boxed.push_back(run_once(sandboxed, spec, "bench-sandbox-" + std::to_string(i)));
    ours.push_back(run_once(cgrouped, spec, "bench-cg-" + std::to_string(i)));
    base.push_back(run_once(baseline, spec, "bench-base-" + std::to_string(i)));
  }
  const double m_boxed = median(boxed), m_ours = median(ours), m_base = median(base);
  std::string cgroups;
  if (auto probe = JobCgroup::create("bench-probe", {}); probe.ok()) {
    for (const auto& d : probe->dirs()) {
      cgroups += (cgroups.empty() ? "" : ", ") + std::string(d.version == 2 ? "v2" : "v1") +
                 (d.pids ? " pids" : "") + (d.memory ? " memory" : "") +
                 (d.version == 2 ? " membership" : "");
    }
    probe->remove();
  }
  std::printf("start() to the end of wait(), trivial job, median of %d:\n", n);
  std::printf("  sandbox and cgroups (the default): %.2f ms\n", m_boxed);
  std::printf("  cgroups, job code trusted (%s): %.2f ms\n",
              cgroups.empty() ? JobCgroup::host_notes().c_str() : cgroups.c_str(), m_ours);
  std::printf("  baseline, bare runner (trusted, subreaper and rlimits only): %.2f ms\n", m_base);
  std::printf("  sandbox and cgroups / bare: ratio %.3f (+%.2f ms a job)\n", m_boxed / m_base,
              m_boxed - m_base);
  std::printf("  cgroups / bare: ratio %.3f (+%.2f ms a job)\n", m_ours / m_base, m_ours - m_base);
  std::printf("  the sandbox alone, sandbox and cgroups / cgroups: ratio %.3f (+%.2f ms a job)\n",
              m_boxed / m_ours, m_boxed - m_ours);
  fs::remove_all(dir);
  return 0;
}
