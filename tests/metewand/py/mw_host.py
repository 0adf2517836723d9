"""A Metewand version-1 host written from the public protocol description
(worker-protocol.md, worker-protocol-framing.md, worker-process-transport.md),
driving dot-core's example worker (argv[1]) through every role's whole
session: hello, the role's requests, shutdown with its acknowledgment and a
clean exit. Every response is checked against the public shapes (exact
member sets). Exits 0 when everything held, else 1 naming what did not.
"""

import hashlib
import json
import os
import subprocess
import sys
import tempfile

WORKER = sys.argv[1]
IDENTITY = "mw1-resolved-worker-" + "ab" * 32
CODES = {"invalid_request", "unsupported_operation", "operation_failed", "internal_error"}
CAPABILITIES = {"one_shot", "applicability", "fresh_sequence", "streaming_profile"}
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
    return cond


def canonical(value):
    return (json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True) + "\n").encode()


class Session:
    def __init__(self, args=()):
        req_r, self.req_w = os.pipe()
        self.resp_r, resp_w = os.pipe()
        env = {"PATH": "/usr/bin:/bin", "METEWAND_PROTOCOL_READ_FD": str(req_r),
               "METEWAND_PROTOCOL_WRITE_FD": str(resp_w)}
        self.proc = subprocess.Popen([WORKER, *args], env=env, pass_fds=(req_r, resp_w),
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE)
        os.close(req_r)
        os.close(resp_w)
        self.next_id = 0
        self.buf = b""

    def send(self, message):
        os.write(self.req_w, canonical(message))

    def read(self):
        while b"\n" not in self.buf:
            chunk = os.read(self.resp_r, 65536)
            if not chunk:
                return None
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        return json.loads(line)

    def call(self, method, **members):
        rid = str(self.next_id)
        self.next_id += 1
        self.send({"id": rid, "method": method, **members})
        response = self.read()
        check(response is not None, f"{method}: no response")
        if response is not None:
            check(response.get("id") == rid, f"{method}: id {response.get('id')!r}, want {rid!r}")
        return response

    def close(self):
        os.close(self.req_w)
        try:
            code = self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
            failures.append("the worker did not exit")
        os.close(self.resp_r)
        self.proc.stderr.close()
        return code


def success(response, method, members):
    if not check(isinstance(response, dict), f"{method}: not an object"):
        return False
    ok = check(set(response) == {"id", "ok", *members}, f"{method}: members {sorted(response)}")
    return ok and check(response["ok"] is True, f"{method}: ok is not true")


def failure(response, method, code=None):
    if not check(isinstance(response, dict) and set(response) == {"error", "id", "ok"} and response["ok"] is False,
                 f"{method}: not a failure response: {response}"):
        return
    error = response["error"]
    check(set(error) <= {"code", "message", "details"} and {"code", "message"} <= set(error),
          f"{method}: error members {sorted(error)}")
    check(error.get("code") in CODES, f"{method}: unknown code {error.get('code')}")
    check(isinstance(error.get("message"), str) and error["message"], f"{method}: empty message")
    check("details" not in error or isinstance(error["details"], dict), f"{method}: details not an object")
    if code:
        check(error.get("code") == code, f"{method}: code {error.get('code')}, want {code}")


def hello(session, role):
    response = session.call("hello", protocols=[1], role=role, worker_id=IDENTITY)
    if success(response, "hello", {"capabilities", "protocol", "sdk", "worker_id"}):
        check(response["protocol"] == 1, "hello: protocol")
        check(response["worker_id"] == IDENTITY, "hello: the identity is not echoed")
        sdk = response["sdk"]
        check(sdk is None or (set(sdk) == {"name", "version"} and sdk["name"] and sdk["version"]), "hello: sdk")
        caps = response["capabilities"]
        check(len(set(caps)) == len(caps) and set(caps) <= CAPABILITIES, "hello: capabilities")
        if role == "implementation":
            check("one_shot" in caps, "hello: an implementation reports one_shot")


def shutdown(session, what):
    response = session.call("shutdown")
    success(response, f"{what} shutdown", set())
    check(session.close() == 0, f"{what}: the worker did not exit 0 after shutdown")


def main():
    work = tempfile.mkdtemp(prefix="mw-host-")
    dataset, result = os.path.join(work, "dataset"), os.path.join(work, "result")

    s = Session()
    hello(s, "dataset_materializer")
    failure(s.call("prepare", dataset_dir=dataset, problem_contract_id="c", problem_parameters={},
                   implementation_parameters={}, implementation_seed=1), "wrong-role prepare", "unsupported_operation")
    failure(s.call("materialize", source_dir=work, dataset_parameters=[], dataset_seed=17, output_dir=dataset),
            "materialize with array parameters", "invalid_request")
    r = s.call("materialize", source_dir=work, dataset_parameters={"rows": 3}, dataset_seed=17, output_dir=dataset)
    if success(r, "materialize", {"dataset"}):
        check(r["dataset"] == {"manifest": "dataset-manifest.json"}, "materialize: manifest reference")
        with open(os.path.join(dataset, "dataset-manifest.json"), "rb") as f:
            manifest = json.load(f)
        with open(os.path.join(dataset, "data.json"), "rb") as f:
            data = f.read()
        check(manifest["files"][0]["sha256"] == hashlib.sha256(data).hexdigest(), "materialize: manifest digest")
        check(json.loads(data) == {"dataset_parameters": {"rows": 3}, "dataset_seed": 17}, "materialize: data")
    shutdown(s, "dataset_materializer")

    s = Session()
    hello(s, "implementation")
    failure(s.call("execute", result_dir=result), "execute before prepare", "operation_failed")
    success(s.call("prepare", dataset_dir=dataset, problem_contract_id="mw1-problem-contract-abc",
                   problem_parameters={"lambda": 0.5}, implementation_parameters={"solver": "fast"},
                   implementation_seed=23), "prepare", set())
    r = s.call("execute", result_dir=result)
    if success(r, "execute", {"implementation_time_ns", "result", "statistics"}):
        t = r["implementation_time_ns"]
        check(t is None or (type(t) is int and 0 <= t <= 2 ** 53 - 1), "execute: implementation_time_ns")
        check(r["result"] == {"manifest": "result.json"}, "execute: manifest reference")
        check(isinstance(r["statistics"], dict), "execute: statistics")
        check(os.path.exists(os.path.join(result, "result.json")), "execute: result.json")
    success(s.call("reset"), "reset", set())
    failure(s.call("execute", result_dir=result), "execute after reset", "operation_failed")
    failure(s.call("reset", extra=1), "reset with a member", "invalid_request")
    shutdown(s, "implementation")

    s = Session()
    hello(s, "problem_evaluator")
    failure(s.call("materialize", source_dir=work, dataset_parameters={}, dataset_seed=1, output_dir=dataset),
            "wrong-role materialize", "unsupported_operation")
    metrics = os.path.join(work, "metrics", "metrics.json")
    success(s.call("evaluate", dataset_dir=dataset, problem_contract_id="c", problem_parameters={},
                   result_dir=result, metrics_path=metrics), "evaluate", set())
    check(os.path.exists(metrics), "evaluate: metrics written")
    shutdown(s, "problem_evaluator")

    # Without shutdown the session did not end cleanly: the worker says so.
    s = Session()
    hello(s, "implementation")
    check(s.close() != 0, "a request stream ending before shutdown is not a clean end")

    for f in failures:
        print("FAIL: " + f)
    if not failures:
        print("every role's session held, shutdown included")
    return 1 if failures else 0


sys.exit(main())
