"""A Metewand version-1 worker written from the public protocol description
(worker-protocol.md, worker-protocol-framing.md, worker-process-transport.md),
for dot-core's tests. It serves whichever role the hello asks for and can be
told to misbehave in one way at a time:

  --hang PHASE            never answer the request of PHASE (hello, materialize,
                          prepare, execute, reset, evaluate, shutdown)
  --fail METHOD:CODE      answer METHOD with a structured failure of CODE
  --no-shutdown-ack       exit 0 at shutdown without answering it
  --exit-after-shutdown N acknowledge shutdown, then exit N
  --wrong-identity        echo another resolved-worker identity at hello
  --out-of-order          answer the first operation with the next request's id
  --unknown-member METHOD add a member the schema does not have to METHOD's success
  --lenient-framing       read requests with json.loads alone (no framing checks)
  --sdk NAME:VERSION      report this SDK instead of null
  --capabilities A,B      report these (default: one_shot for implementation)
"""

import json
import os
import sys
import time

MAX_LINE = 1024 * 1024
SAFE = 2 ** 53 - 1
ROLE_METHODS = {
    "dataset_materializer": {"materialize"},
    "implementation": {"prepare", "execute", "reset"},
    "problem_evaluator": {"evaluate"},
}
MEMBERS = {
    "materialize": {"source_dir": "S", "dataset_parameters": "O", "dataset_seed": "N", "output_dir": "S"},
    "prepare": {"dataset_dir": "S", "problem_contract_id": "S", "problem_parameters": "O",
                "implementation_parameters": "O", "implementation_seed": "N"},
    "execute": {"result_dir": "S"},
    "reset": {},
    "evaluate": {"dataset_dir": "S", "problem_contract_id": "S", "problem_parameters": "O",
                 "result_dir": "S", "metrics_path": "S"},
    "shutdown": {},
}


class FramingError(Exception):
    pass


def options(argv):
    o = {"hang": None, "fail": {}, "no_ack": False, "exit": 0, "wrong_identity": False,
         "out_of_order": False, "unknown_member": None, "lenient": False, "sdk": None, "caps": None}
    i = 0
    while i < len(argv):
        a = argv[i]
        val = argv[i + 1] if i + 1 < len(argv) else None
        if a == "--hang": o["hang"] = val; i += 1
        elif a == "--fail":
            method, code = val.split(":"); o["fail"][method] = code; i += 1
        elif a == "--no-shutdown-ack": o["no_ack"] = True
        elif a == "--exit-after-shutdown": o["exit"] = int(val); i += 1
        elif a == "--wrong-identity": o["wrong_identity"] = True
        elif a == "--out-of-order": o["out_of_order"] = True
        elif a == "--unknown-member": o["unknown_member"] = val; i += 1
        elif a == "--lenient-framing": o["lenient"] = True
        elif a == "--sdk":
            name, version = val.split(":"); o["sdk"] = {"name": name, "version": version}; i += 1
        elif a == "--capabilities": o["caps"] = [c for c in val.split(",") if c]; i += 1
        else:
            print("mw_worker: unknown switch " + a, file=sys.stderr); sys.exit(2)
        i += 1
    return o


class Lines:
    """LF-terminated lines from a descriptor, at most MAX_LINE bytes each."""

    def __init__(self, fd):
        self.fd, self.buf = fd, b""

    def next(self):
        while b"\n" not in self.buf:
            if len(self.buf) >= MAX_LINE:
                raise FramingError("LineTooLong")
            chunk = os.read(self.fd, 65536)
            if not chunk:
                if self.buf:
                    raise FramingError("EarlyEof")
                return None
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        if len(line) + 1 > MAX_LINE:
            raise FramingError("LineTooLong")
        return line


def no_duplicates(pairs):
    seen = {}
    for k, v in pairs:
        if k in seen:
            raise FramingError("DuplicateKey")
        seen[k] = v
    return seen


def reject_constant(name):
    raise FramingError("MalformedJson")


def parse(line, lenient):
    if lenient:
        return json.loads(line)
    if line.startswith(b"\xef\xbb\xbf"):
        raise FramingError("ByteOrderMark")
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        raise FramingError("InvalidUtf8")
    try:
        return json.loads(text, object_pairs_hook=no_duplicates, parse_constant=reject_constant)
    except ValueError:
        raise FramingError("MalformedJson")


def canonical(value):
    return (json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True,
                       allow_nan=False) + "\n").encode("utf-8")


def shape_error(request, method):
    want = MEMBERS[method]
    extra = set(request) - set(want) - {"id", "method"}
    if extra:
        return "unknown member " + sorted(extra)[0]
    for name, kind in want.items():
        if name not in request:
            return "missing member " + name
        v = request[name]
        if kind == "S" and not (isinstance(v, str) and v):
            return name + " must be a non-empty string"
        if kind == "O" and not isinstance(v, dict):
            return name + " must be an object"
        if kind == "N" and not (type(v) is int and 0 <= v <= SAFE):
            return name + " must be an integer 0..2^53-1"
    return None


def main():
    o = options(sys.argv[1:])
    read_fd = int(os.environ["METEWAND_PROTOCOL_READ_FD"])
    write_fd = int(os.environ["METEWAND_PROTOCOL_WRITE_FD"])
    lines = Lines(read_fd)

    def send(value):
        data = canonical(value)
        while data:
            data = data[os.write(write_fd, data):]

    def failure(rid, code, message, details=None):
        error = {"code": code, "message": message}
        if details is not None:
            error["details"] = details
        return {"error": error, "id": rid, "ok": False}

    def read():
        line = lines.next()
        if line is None:
            print("mw_worker: the request stream ended before shutdown", file=sys.stderr)
            sys.exit(1)
        return parse(line, o["lenient"])

    try:
        hello = read()
        if o["hang"] == "hello":
            time.sleep(3600)
        if not (isinstance(hello, dict) and hello.get("method") == "hello"
                and set(hello) == {"id", "method", "protocols", "role", "worker_id"}
                and 1 in hello.get("protocols", []) and hello.get("role") in ROLE_METHODS):
            if isinstance(hello, dict) and isinstance(hello.get("id"), str):
                send(failure(hello["id"], "invalid_request", "not a version-1 hello"))
            sys.exit(1)
        role = hello["role"]
        identity = hello["worker_id"]
        if o["wrong_identity"]:
            identity = "mw1-resolved-worker-" + ("f" * 64 if not identity.endswith("f" * 64) else "e" * 64)
        caps = o["caps"] if o["caps"] is not None else (["one_shot"] if role == "implementation" else [])
        send({"capabilities": caps, "id": hello["id"], "ok": True, "protocol": 1,
              "sdk": o["sdk"], "worker_id": identity})

        prepared = None
        answered = 0
        while True:
            request = read()
            if not isinstance(request, dict) or not isinstance(request.get("id"), str) or not request["id"]:
                print("mw_worker: a request without an id", file=sys.stderr)
                sys.exit(1)
            rid, method = request["id"], request.get("method")
            if method == o["hang"]:
                time.sleep(3600)
            if method == "shutdown":
                problem = shape_error(request, "shutdown")
                if problem:
                    send(failure(rid, "invalid_request", problem))
                    continue
                if o["no_ack"]:
                    sys.exit(0)
                if "shutdown" in o["fail"]:
                    send(failure(rid, o["fail"]["shutdown"], "told to fail", {"phase": "shutdown"}))
                    sys.exit(0)
                send({"id": rid, "ok": True})
                sys.exit(o["exit"])
            if method not in MEMBERS or method == "hello":
                send(failure(rid, "invalid_request", "not an operation of version 1"))
                continue
            if method not in ROLE_METHODS[role]:
                send(failure(rid, "unsupported_operation", role + " does not take " + method))
                continue
            problem = shape_error(request, method)
            if problem:
                send(failure(rid, "invalid_request", problem, {"method": method}))
                continue
            if method in o["fail"]:
                send(failure(rid, o["fail"][method], "told to fail", {"phase": method}))
                continue
            answer = {"id": rid, "ok": True}
            if o["out_of_order"] and answered == 0:
                answer["id"] = str(int(rid) + 1)
            answered += 1
            if method == "materialize":
                answer["dataset"] = {"manifest": "dataset-manifest.json"}
            elif method == "prepare":
                prepared = request
            elif method == "execute":
                if prepared is None:
                    answer = failure(rid, "operation_failed", "prepare must succeed before execute")
                else:
                    answer.update({"implementation_time_ns": None, "result": {"manifest": "result.json"},
                                   "statistics": {"seed": prepared["implementation_seed"]}})
            elif method == "reset":
                prepared = None
            if method == o["unknown_member"] and answer.get("ok"):
                answer["unexpected"] = True
            send(answer)
    except FramingError as e:
        print("mw_worker: framing error " + str(e), file=sys.stderr)
        sys.exit(3)


main()
