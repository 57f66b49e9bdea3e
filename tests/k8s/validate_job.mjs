// Validates the Job objects written by k8s_dump_jobs against the official Kubernetes OpenAPI
// schema (kubernetes-models, generated from it), then runs negative controls: broken copies of
// each Job and tests/k8s/broken_job.json MUST fail validation, so a validator that accepts
// everything cannot make this test pass.
//   node validate_job.mjs DIR BROKEN_JOB_JSON
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { Job } from "kubernetes-models/batch/v1/Job";

const [dir, brokenFile] = process.argv.slice(2);
if (!dir || !brokenFile) {
  console.error("usage: node validate_job.mjs DIR BROKEN_JOB_JSON");
  process.exit(2);
}

function problem(obj) {
  try {
    new Job(obj).validate();
    return null;
  } catch (e) {
    return e.message;
  }
}

// Each mutation breaks one field the runner sets, in a way the schema must reject.
const mutations = {
  "backoffLimit as a string": (j) => { j.spec.backoffLimit = "0"; },
  "GPU limit not a quantity": (j) => { j.spec.template.spec.containers[0].resources = { limits: { "nvidia.com/gpu": "8 GPUs" } }; },
  "podFailurePolicy action unknown": (j) => { j.spec.podFailurePolicy.rules[0].action = "Skip"; },
  "no containers": (j) => { delete j.spec.template.spec.containers; },
  "env value not a string": (j) => { j.spec.template.spec.containers[0].env[0].value = 42; },
  "command not an array": (j) => { j.spec.template.spec.containers[0].command = "python3 train.py"; },
};

let failures = 0;
const files = readdirSync(dir).filter((f) => f.endsWith(".json")).sort();
if (files.length === 0) {
  console.error(`no Job files in ${dir}`);
  process.exit(1);
}
for (const file of files) {
  const job = JSON.parse(readFileSync(join(dir, file), "utf8"));
  const p = problem(job);
  if (p) {
    failures++;
    console.log(`INVALID ${file}: ${p}`);
  } else {
    console.log(`valid   ${file}`);
  }
  for (const [what, mutate] of Object.entries(mutations)) {
    const broken = structuredClone(job);
    mutate(broken);
    if (!problem(broken)) {
      failures++;
      console.log(`NEGATIVE CONTROL ACCEPTED ${file} with ${what}`);
    }
  }
}
const brokenProblem = problem(JSON.parse(readFileSync(brokenFile, "utf8")));
if (!brokenProblem) {
  failures++;
  console.log(`NEGATIVE CONTROL ACCEPTED ${brokenFile}`);
} else {
  console.log(`rejected ${brokenFile} as expected: ${brokenProblem}`);
}
console.log(`${files.length} generated Jobs checked, ${Object.keys(mutations).length} broken variants each, ${failures} failure(s)`);
process.exit(failures ? 1 : 0);
