#!/usr/bin/python3
"""A fake Kubernetes API server for the kubernetes runner's tests.

It is strict about what the runner sends: method, path, query, the bearer token, Accept and
Content-Type headers, and the Job fields the runner promises (backoffLimit 0, podFailurePolicy
ignoring DisruptionTarget, restartPolicy Never, image by digest, dropped capabilities, read-only
inputs, the out folder on the outputs claim, a deny-all NetworkPolicy created before the Job of a
pod without declared network, ...). Anything else is answered like a real API
server would (401/404/409/415/422 with a Status body) AND recorded as a violation, which the tests
read from GET /_fake/violations and require to be empty.

It simulates the Job controller per scenario (POST /_fake/scenario {"scenario": S} applies to the
next created Job). Each watch request sends the events newer than its resourceVersion; when there
are none, the Job advances one step of its scenario and that event is sent; then the stream ends
(like a watch timeout), so a test never waits on the clock. Scenarios:
  success      pod runs, Job Complete; result.json written into the out folder on the claim
  failure      the container exits 3, Job Failed (BackoffLimitExceeded)
  deadline     Job Failed (DeadlineExceeded)
  preemption   pod 1 gets DisruptionTarget and dies; pod 2 runs and completes
  expired      the first watch gets an ERROR event with code 410; then success
  expired-http the first watch gets HTTP 410 Gone; then success
  image-pull   the container waits forever in ImagePullBackOff
  deleted      the Job disappears while running
  hang         the pod runs forever

Usage: fake_apiserver.py --port-file F --token-file T --namespace NS --out-claim C=DIR
                         [--cert PEM --key PEM]
"""

import argparse
import json
import os
import re
import ssl
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DIGEST_IMAGE = re.compile(r"^[^@\s]+@sha256:[0-9a-f]{64}$")
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
CONTAINER = "rebuild"
SCENARIOS = {"success", "failure", "deadline", "preemption", "expired", "expired-http", "image-pull",
             "deleted", "hang"}


class State:
    def __init__(self, args):
        self.lock = threading.Lock()
        self.namespace = args.namespace
        self.token_file = args.token_file
        claim, _, directory = args.out_claim.partition("=")
        self.out_claim, self.out_dir = claim, directory
        self.rv = 100
        self.jobs = {}        # name -> Job record
        self.network_policies = {}  # name -> NetworkPolicy
        self.history = []     # (rv, type, name, job snapshot)
        self.violations = []
        self.requests = []    # "METHOD path?query"
        self.next_scenario = "success"
        self.expired_rvs = set()

    def bump(self):
        self.rv += 1
        return str(self.rv)


def now():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def status(code, reason, message):
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": message, "reason": reason, "code": code}


def check_network_policy(body, namespace):
    """A deny-all policy for one rebuild's pod; returns a list of problems."""
    p = []
    if body.get("apiVersion") != "networking.k8s.io/v1" or body.get("kind") != "NetworkPolicy":
        p.append("not a networking.k8s.io/v1 NetworkPolicy")
    meta, spec = body.get("metadata", {}), body.get("spec", {})
    if meta.get("namespace") != namespace:
        p.append(f"metadata.namespace must be {namespace}")
    selector = spec.get("podSelector", {}).get("matchLabels", {})
    if not selector.get("reverify.rebuild-id"):
        p.append("spec.podSelector must select the pod by reverify.rebuild-id")
    if sorted(spec.get("policyTypes", [])) != ["Egress", "Ingress"]:
        p.append("spec.policyTypes must be [Ingress, Egress]")
    if spec.get("ingress") or spec.get("egress"):
        p.append("a deny-all policy has no ingress or egress rules")
    return p


def check_job(body, namespace, out_claim):
    """The Job fields the runner promises; returns a list of problems."""
    p = []

    def get(path, default=None):
        cur = body
        for key in path.split("."):
            if isinstance(cur, list):
                cur = cur[int(key)] if key.isdigit() and int(key) < len(cur) else None
            elif isinstance(cur, dict):
                cur = cur.get(key)
            else:
                cur = None
            if cur is None:
                return default
        return cur

    if body.get("apiVersion") != "batch/v1" or body.get("kind") != "Job":
        p.append("apiVersion/kind must be batch/v1 Job")
    name = get("metadata.name", "")
    if not DNS_LABEL.match(name) or len(name) > 52:
        p.append(f"metadata.name {name!r} is not a DNS-1123 label of <= 52 chars")
    if get("metadata.namespace", namespace) != namespace:
        p.append("metadata.namespace differs from the request path")
    for where in ("metadata.labels", "spec.template.metadata.labels"):
        value = (get(where, {}) or {}).get("reverify.rebuild-id")
        if value is None or not LABEL_VALUE.match(value) or len(value) > 63:
            p.append(f"{where}[reverify.rebuild-id] missing or not a valid label value: {value!r}")
    if not get("metadata.annotations", {}).get("reverify.rebuild-id"):
        p.append("metadata.annotations[reverify.rebuild-id] missing")
    if get("spec.backoffLimit") != 0:
        p.append("spec.backoffLimit must be 0")
    deadline = get("spec.activeDeadlineSeconds")
    if not isinstance(deadline, int) or deadline <= 0:
        p.append("spec.activeDeadlineSeconds must be a positive integer")
    if not isinstance(get("spec.ttlSecondsAfterFinished"), int):
        p.append("spec.ttlSecondsAfterFinished must be an integer")
    rules = get("spec.podFailurePolicy.rules", [])
    if not any(r.get("action") == "Ignore" and
               any(c.get("type") == "DisruptionTarget" for c in r.get("onPodConditions", []))
               for r in rules):
        p.append("spec.podFailurePolicy must Ignore onPodConditions DisruptionTarget")
    pod = get("spec.template.spec", {})
    if pod.get("restartPolicy") != "Never":
        p.append("spec.template.spec.restartPolicy must be Never (required by podFailurePolicy)")
    containers = pod.get("containers", [])
    if len(containers) != 1 or containers[0].get("name") != CONTAINER:
        p.append(f"exactly one container named {CONTAINER} expected")
        return p
    c = containers[0]
    if not DIGEST_IMAGE.match(c.get("image", "")):
        p.append(f"image {c.get('image')!r} is not referenced by digest")
    cmd = c.get("command")
    if not cmd or not all(isinstance(a, str) for a in cmd):
        p.append("command must be a non-empty argv array")
    sc = c.get("securityContext", {})
    if sc.get("allowPrivilegeEscalation") is not False:
        p.append("securityContext.allowPrivilegeEscalation must be false")
    if "ALL" not in sc.get("capabilities", {}).get("drop", []):
        p.append("securityContext.capabilities.drop must contain ALL")
    env = {}
    for e in c.get("env", []):
        if e.get("name") in env:
            p.append(f"env {e.get('name')} set twice")
        env[e.get("name")] = e.get("value")
    volumes = {v.get("name"): v for v in pod.get("volumes", [])}
    mounts = {m.get("mountPath"): m for m in c.get("volumeMounts", [])}
    for var, writable in (("REVERIFY_OUT", True), ("REVERIFY_DATA", False), ("REVERIFY_EVAL", False),
                          ("REVERIFY_CONFIG", False), ("REVERIFY_SEEDS", False)):
        if var not in env:
            if var in ("REVERIFY_OUT", "REVERIFY_CONFIG", "REVERIFY_SEEDS"):
                p.append(f"env {var} missing")
            continue
        path = env[var]
        mount = mounts.get(path) or mounts.get(os.path.dirname(path))
        if mount is None:
            p.append(f"{var}={path} is not a volumeMount path (or a file in one)")
            continue
        if bool(mount.get("readOnly")) == writable:
            p.append(f"the mount of {var} must be {'writable' if writable else 'readOnly'}")
        volume = volumes.get(mount.get("name"), {})
        if var == "REVERIFY_OUT" and volume.get("persistentVolumeClaim", {}).get("claimName") != out_claim:
            p.append(f"REVERIFY_OUT must be on the outputs claim {out_claim}")
    gpus = c.get("resources", {}).get("limits", {}).get("nvidia.com/gpu")
    if gpus is not None and (not isinstance(gpus, int) or gpus < 1):
        p.append("resources.limits[nvidia.com/gpu] must be a positive integer")
    return p


def make_pod(job, index, phase):
    name = f"{job['metadata']['name']}-{index:05d}"
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": job["metadata"]["namespace"],
                         "creationTimestamp": f"2026-11-29T00:00:{index:02d}Z",
                         "labels": {"job-name": job["metadata"]["name"],
                                    "batch.kubernetes.io/job-name": job["metadata"]["name"]}},
            "status": {"phase": phase, "conditions": [],
                       "containerStatuses": [{"name": CONTAINER,
                                              "state": {"running": {"startedAt": now()}}}]}}


def terminate(pod, code, reason):
    pod["status"]["phase"] = "Succeeded" if code == 0 else "Failed"
    started = pod["status"]["containerStatuses"][0]["state"].get("running", {}).get("startedAt", now())
    pod["status"]["containerStatuses"][0]["state"] = {"terminated": {
        "exitCode": code, "reason": reason, "startedAt": started, "finishedAt": now()}}


def condition(kind, reason="", message=""):
    return {"type": kind, "status": "True", "reason": reason, "message": message, "lastTransitionTime": now()}


class Record:
    """One Job and its scenario, advanced one step per quiet watch request."""

    def __init__(self, state, job, scenario):
        self.state, self.job, self.scenario = state, job, scenario
        self.pods = []
        self.step = 0
        self.expired_sent = False
        self.logs = {}

    def out_dir(self):
        c = self.job["spec"]["template"]["spec"]["containers"][0]
        env = {e["name"]: e.get("value") for e in c.get("env", [])}
        mount = next(m for m in c["volumeMounts"] if m["mountPath"] == env["REVERIFY_OUT"])
        return os.path.join(self.state.out_dir, mount.get("subPath", ""))

    def write_result(self):
        out = self.out_dir()
        if not os.path.isdir(out):
            raise RuntimeError(f"out folder {out} was not created before the Job")
        with open(os.path.join(out, "result.json"), "w") as f:
            json.dump({"primary": {"name": "accuracy", "value": 0.9609},
                       "steps": {"metric": "loss", "values": [2.3, 2.1]}}, f)

    def add_pod(self, attempt):
        pod = make_pod(self.job, len(self.pods) + 1, "Running")
        self.pods.append(pod)
        self.logs[pod["metadata"]["name"]] = f"attempt {attempt}: training\nattempt {attempt}: done\n"
        return pod

    def advance(self):
        """Applies the next step; returns the watch event type or None when nothing changes."""
        s, job, step = self.scenario, self.job, self.step
        status = job.setdefault("status", {})
        if step == 0:
            pod = self.add_pod(1)
            status.update({"active": 1, "startTime": now()})
            if s == "image-pull":
                pod["status"]["phase"] = "Pending"
                pod["status"]["containerStatuses"][0]["state"] = {
                    "waiting": {"reason": "ImagePullBackOff",
                                "message": "Back-off pulling image: manifest unknown"}}
        elif s in ("image-pull", "hang"):
            return None
        elif s == "deleted":
            if step > 1:
                return None
            self.step += 1
            return "DELETED"
        elif s == "preemption" and step == 1:
            first = self.pods[0]
            first["status"]["conditions"].append(condition("DisruptionTarget", "PreemptionByScheduler"))
            terminate(first, 143, "Error")
            self.logs[first["metadata"]["name"]] = "attempt 1: training\n"
            self.add_pod(2)
        elif job_done(job):
            return None
        else:
            pod = self.pods[-1]
            status["active"] = 0
            if s == "failure":
                terminate(pod, 3, "Error")
                self.logs[pod["metadata"]["name"]] += "Traceback: ValueError: boom\n"
                status["conditions"] = [condition("Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit")]
            elif s == "deadline":
                terminate(pod, 143, "Error")
                status["conditions"] = [condition("Failed", "DeadlineExceeded", "Job was active longer than specified deadline")]
            else:
                terminate(pod, 0, "Completed")
                self.write_result()
                status["succeeded"] = 1
                status["conditions"] = [condition("Complete")]
        self.step += 1
        return "MODIFIED"


def job_done(job):
    return any(c["type"] in ("Complete", "Failed") for c in job.get("status", {}).get("conditions", []))


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"  # every response ends with the connection: simple streaming
    state: State = None

    def log_message(self, fmt, *args):
        pass

    # -- plumbing --------------------------------------------------------------------------
    def violation(self, text):
        with self.state.lock:
            self.state.violations.append(f"{self.command} {self.path}: {text}")

    def send_json(self, code, body):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def reject(self, code, reason, message):
        self.violation(message)
        self.send_json(code, status(code, reason, message))

    def read_body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def authorized(self):
        with open(self.state.token_file) as f:
            token = f.read().strip()
        if self.headers.get("Authorization") != f"Bearer {token}":
            self.reject(401, "Unauthorized", "missing or wrong bearer token")
            return False
        if "application/json" not in (self.headers.get("Accept") or ""):
            self.reject(406, "NotAcceptable", "Accept must include application/json")
            return False
        return True

    def json_body(self):
        raw = self.read_body()
        if self.headers.get("Content-Type") != "application/json":
            self.reject(415, "UnsupportedMediaType", "Content-Type must be application/json")
            return None
        try:
            return json.loads(raw)
        except ValueError:
            self.reject(400, "BadRequest", "body is not JSON")
            return None

    def route(self):
        url = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(url.query, keep_blank_values=True))
        ns = re.escape(self.state.namespace)
        patterns = {
            "jobs": rf"^/apis/batch/v1/namespaces/{ns}/jobs$",
            "job": rf"^/apis/batch/v1/namespaces/{ns}/jobs/([a-z0-9-]+)$",
            "pods": rf"^/api/v1/namespaces/{ns}/pods$",
            "log": rf"^/api/v1/namespaces/{ns}/pods/([a-z0-9-]+)/log$",
            "netpols": rf"^/apis/networking.k8s.io/v1/namespaces/{ns}/networkpolicies$",
            "netpol": rf"^/apis/networking.k8s.io/v1/namespaces/{ns}/networkpolicies/([a-z0-9-]+)$",
        }
        for kind, pattern in patterns.items():
            m = re.match(pattern, url.path)
            if m:
                return kind, (m.group(1) if m.groups() else None), query
        return None, None, query

    # -- verbs -----------------------------------------------------------------------------
    def do_GET(self):
        if self.path == "/_fake/violations":
            with self.state.lock:
                return self.send_json(200, self.state.violations)
        if self.path == "/_fake/requests":
            with self.state.lock:
                return self.send_json(200, self.state.requests)
        if self.path == "/_fake/networkpolicies":
            with self.state.lock:
                return self.send_json(200, sorted(self.state.network_policies))
        self.note()
        if not self.authorized():
            return
        kind, name, query = self.route()
        if kind == "jobs" and query.get("watch") in ("1", "true"):
            return self.watch_jobs(query)
        if kind == "jobs":
            return self.list_jobs(query)
        if kind == "pods":
            return self.list_pods(query)
        if kind == "log":
            return self.pod_log(name, query)
        self.reject(404, "NotFound", "no such route in the fake (unexpected request)")

    def do_POST(self):
        if self.path == "/_fake/scenario":
            body = json.loads(self.read_body())
            assert body["scenario"] in SCENARIOS, body
            with self.state.lock:
                self.state.next_scenario = body["scenario"]
            return self.send_json(200, {})
        self.note()
        if not self.authorized():
            return
        kind, _, query = self.route()
        if kind == "netpols":
            return self.create_network_policy(query)
        if kind != "jobs":
            return self.reject(404, "NotFound", "POST only creates Jobs and NetworkPolicies")
        body = self.json_body()
        if body is None:
            return
        if query.get("fieldValidation") != "Strict":
            return self.reject(400, "BadRequest", "POST jobs without fieldValidation=Strict")
        problems = check_job(body, self.state.namespace, self.state.out_claim)
        if problems:
            return self.reject(422, "Invalid", "; ".join(problems))
        with self.state.lock:
            name = body["metadata"]["name"]
            labels = body["spec"]["template"]["metadata"].get("labels", {})
            if labels.get("reverify.network") != "allow" and not any(
                    policy["spec"]["podSelector"]["matchLabels"].get("reverify.rebuild-id") ==
                    labels.get("reverify.rebuild-id") for policy in self.state.network_policies.values()):
                self.state.violations.append(f"Job {name} (no network declared) created before a NetworkPolicy isolating its pod")
            if name in self.state.jobs:
                return self.send_json(409, status(409, "AlreadyExists", f'jobs.batch "{name}" already exists'))
            body["metadata"].update({"namespace": self.state.namespace, "uid": f"uid-{name}",
                                     "creationTimestamp": now(), "resourceVersion": self.state.bump()})
            record = Record(self.state, body, self.state.next_scenario)
            self.state.jobs[name] = record
            self.state.history.append((int(body["metadata"]["resourceVersion"]), "ADDED", name, json.loads(json.dumps(body))))
            self.send_json(201, body)

    def do_DELETE(self):
        self.note()
        if not self.authorized():
            return
        kind, name, query = self.route()
        if kind == "netpol":
            with self.state.lock:
                if self.state.network_policies.pop(name, None) is None:
                    return self.send_json(404, status(404, "NotFound", f'networkpolicies "{name}" not found'))
            return self.send_json(200, {"kind": "Status", "apiVersion": "v1", "status": "Success"})
        if kind != "job":
            return self.reject(404, "NotFound", "DELETE only deletes one Job or NetworkPolicy")
        policy = query.get("propagationPolicy")
        if self.headers.get("Content-Length"):
            body = self.json_body()
            if body is None:
                return
            if body.get("kind") != "DeleteOptions" or body.get("apiVersion") != "v1":
                return self.reject(400, "BadRequest", "the body of a DELETE must be v1 DeleteOptions")
            policy = body.get("propagationPolicy", policy)
        if policy != "Background":
            return self.reject(400, "BadRequest", f"propagationPolicy must be Background, got {policy!r}")
        with self.state.lock:
            record = self.state.jobs.pop(name, None)
            if record is None:
                return self.send_json(404, status(404, "NotFound", f'jobs.batch "{name}" not found'))
            self.state.history.append((int(self.state.bump()), "DELETED", name, record.job))
        self.send_json(200, {"kind": "Status", "apiVersion": "v1", "status": "Success"})

    # -- handlers --------------------------------------------------------------------------
    def create_network_policy(self, query):
        body = self.json_body()
        if body is None:
            return
        if query.get("fieldValidation") != "Strict":
            return self.reject(400, "BadRequest", "POST networkpolicies without fieldValidation=Strict")
        problems = check_network_policy(body, self.state.namespace)
        if problems:
            return self.reject(422, "Invalid", "; ".join(problems))
        with self.state.lock:
            name = body["metadata"]["name"]
            if name in self.state.network_policies:
                return self.send_json(409, status(409, "AlreadyExists", f'networkpolicies "{name}" already exists'))
            self.state.network_policies[name] = body
        self.send_json(201, body)

    def note(self):
        with self.state.lock:
            self.state.requests.append(f"{self.command} {self.path}")

    def selected(self, query):
        selector = query.get("labelSelector", "")
        key, _, value = selector.partition("=")
        if key != "reverify.rebuild-id" or not value:
            self.reject(400, "BadRequest", f"jobs must be listed by reverify.rebuild-id, got {selector!r}")
            return None
        return [r for r in self.state.jobs.values()
                if r.job["metadata"]["labels"].get("reverify.rebuild-id") == value]

    def list_jobs(self, query):
        with self.state.lock:
            if "limit" in query and "labelSelector" not in query:  # prepare()'s reachability probe
                items = []
            else:
                records = self.selected(query)
                if records is None:
                    return
                items = [r.job for r in records]
            self.send_json(200, {"kind": "JobList", "apiVersion": "batch/v1",
                                 "metadata": {"resourceVersion": str(self.state.rv)}, "items": items})

    def watch_jobs(self, query):
        rv = query.get("resourceVersion", "")
        if not rv.isdigit() or "timeoutSeconds" not in query:
            return self.reject(400, "BadRequest", "a watch needs resourceVersion and timeoutSeconds")
        with self.state.lock:
            records = self.selected(query)
            if records is None:
                return
            if int(rv) in self.state.expired_rvs:
                self.state.violations.append(f"watch retried with expired resourceVersion {rv} instead of re-listing")
            record = records[0] if records else None
            if record and record.scenario in ("expired", "expired-http") and not record.expired_sent:
                record.expired_sent = True
                self.state.expired_rvs.add(int(rv))
                self.state.bump()  # history was compacted past rv: a new list returns a newer one
                gone = status(410, "Expired", f"too old resource version: {rv}")
                if record.scenario == "expired-http":
                    return self.send_json(410, gone)
                return self.stream([{"type": "ERROR", "object": gone}])
            names = {r.job["metadata"]["name"] for r in records}
            events = [(t, snap) for (v, t, n, snap) in self.state.history if v > int(rv) and n in names]
            if not events and record is not None:
                kind = record.advance()
                if kind is not None:
                    record.job["metadata"]["resourceVersion"] = self.state.bump()
                    if kind == "DELETED":
                        self.state.jobs.pop(record.job["metadata"]["name"], None)
                    snap = json.loads(json.dumps(record.job))
                    self.state.history.append((self.state.rv, kind, record.job["metadata"]["name"], snap))
                    events = [(kind, snap)]
        if not events:
            time.sleep(0.05)  # a quiet watch that timed out; keeps a looping client from spinning
        self.stream([{"type": t, "object": snap} for t, snap in events])

    def stream(self, events):
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        for event in events:  # one line per event, flushed: how the real server streams
            self.wfile.write((json.dumps(event) + "\n").encode())
            self.wfile.flush()

    def list_pods(self, query):
        selector = query.get("labelSelector", "")
        key, _, job_name = selector.partition("=")
        if key not in ("job-name", "batch.kubernetes.io/job-name"):
            return self.reject(400, "BadRequest", f"pods must be listed by job-name, got {selector!r}")
        with self.state.lock:
            record = self.state.jobs.get(job_name)
            items = list(record.pods) if record else []
            self.send_json(200, {"kind": "PodList", "apiVersion": "v1",
                                 "metadata": {"resourceVersion": str(self.state.rv)}, "items": items})

    def pod_log(self, pod_name, query):
        if query.get("container") != CONTAINER or not query.get("tailLines", "").isdigit():
            return self.reject(400, "BadRequest", f"pod logs need container={CONTAINER} and tailLines")
        with self.state.lock:
            text = next((r.logs[pod_name] for r in self.state.jobs.values() if pod_name in r.logs), None)
        if text is None:
            return self.send_json(404, status(404, "NotFound", f'pods "{pod_name}" not found'))
        lines = text.splitlines(keepends=True)[-int(query["tailLines"]):]
        data = "".join(lines).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--token-file", required=True)
    parser.add_argument("--namespace", required=True)
    parser.add_argument("--out-claim", required=True)
    parser.add_argument("--cert")
    parser.add_argument("--key")
    args = parser.parse_args()
    Handler.state = State(args)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    if args.cert:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.cert, args.key)
        server.socket = context.wrap_socket(server.socket, server_side=True)
    tmp = args.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(tmp, args.port_file)  # readers never see a half-written port
    server.serve_forever()


if __name__ == "__main__":
    main()
