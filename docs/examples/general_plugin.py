#!/usr/bin/python3
"""A general-profile (org.dot.dpp/v1) DPP plugin in plain Python, written from
docs/spec/dpp-general.md alone, with no SDK: it proposes two files and
passes every case of `dot-core dpp conform`.

    dot-core dpp conform --id org.example.py -- /usr/bin/python3 general_plugin.py

Standard library only. Every rule it follows is cited by its section of the
contract page.
"""
import hashlib
import json
import os
import sys

PLUGIN_ID = "org.example.py"
# path -> (mode, bytes); modes are one of 0600, 0644, 0700, 0755 ("Plan").
FILES = {
    "bin/hello": (0o755, b"#!/bin/sh\necho hello\n"),
    "notes/hello.txt": (0o644, b"hello from python\n"),
}
# "Negotiation": the values dot-core sends, which the plugin must accept
# exactly (anything else is answered with -32602).
LIMITS = {"deadline_ms": 60000, "max_frame_bytes": 16777216, "max_stdout_bytes": 67108864,
          "max_stderr_bytes": 65536, "max_operations": 10000, "max_file_bytes": 16777216,
          "max_total_bytes": 1073741824, "max_log_messages": 1000}
CAPABILITIES = ["materialize", "plan", "post-commit-effects", "validate"]
ORDER = ["dot.initialize", "dot.plan", "dot.materialize", "dot.validate", "dot.shutdown"]
PARAMS = {"dot.initialize": {"capabilities", "inputs", "limits", "nonce", "profile", "protocol",
                             "required_assurance"},
          "dot.plan": {"managed"}, "dot.materialize": {"stage"}, "dot.validate": set(), "dot.shutdown": set()}


def send(obj):
    """One frame ("Transport"): Content-Length, CRLF CRLF, the UTF-8 body."""
    body = json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()
    sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    sys.stdout.buffer.flush()


def read_body():
    """The next frame's body; None at end of input. A broken frame cannot be
    answered: exit 1 ("Answering malformed requests")."""
    line = sys.stdin.buffer.readline()
    if not line:
        return None
    digits = line[len(b"Content-Length: "):-2]
    if not line.startswith(b"Content-Length: ") or not line.endswith(b"\r\n") or not digits.isdigit():
        sys.exit(1)
    if sys.stdin.buffer.readline() != b"\r\n":
        sys.exit(1)
    return sys.stdin.buffer.read(int(digits))


def error(rid, code, message):
    send({"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}})


def is_id(value):
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def in_path_order(files):
    """Operations go in ascending order of the paths' UTF-8 bytes ("Plan")."""
    return sorted(files.items(), key=lambda item: item[0].encode())


def answer(method, params, state):
    """The result of one well-formed request, or None for invalid params."""
    if method == "dot.initialize":
        offered = params["capabilities"]
        if (params["profile"] != "org.dot.dpp/v1" or params["protocol"] != 1 or params["limits"] != LIMITS
                or offered not in (CAPABILITIES, CAPABILITIES + ["log"])):
            return None
        state["log"] = offered == CAPABILITIES + ["log"]
        # The echo ("dot.initialize result"): note `assurance`, not required_assurance.
        return {"assurance": params["required_assurance"], "capabilities": offered, "id": PLUGIN_ID,
                "inputs": params["inputs"], "limits": params["limits"], "nonce": params["nonce"],
                "profile": params["profile"], "protocol": params["protocol"]}
    if method == "dot.plan":
        if state["log"]:
            send({"jsonrpc": "2.0", "method": "dot.log",
                  "params": {"level": "info", "message": "proposing %d files" % len(FILES)}})
        return {"effects": [{"failure_policy": "required", "kind": "sync", "target": "managed-root"}],
                "operations": [{"action": "write", "mode": mode, "path": path}
                               for path, (mode, _) in in_path_order(FILES)]}
    if method == "dot.materialize":
        artifacts = []
        for path, (_, data) in in_path_order(FILES):
            staged = os.path.join(params["stage"], path)
            os.makedirs(os.path.dirname(staged), exist_ok=True)
            with open(staged, "wb") as f:
                f.write(data)
            artifacts.append({"path": path, "sha256": hashlib.sha256(data).hexdigest(), "size": len(data)})
        return {"artifacts": artifacts}
    return {"valid": True}  # dot.validate, dot.shutdown


def main():
    state = {"next": 1, "log": False}
    while True:
        body = read_body()
        if body is None:  # end of input: 0 only after dot.shutdown was answered
            sys.exit(0 if state["next"] > len(ORDER) else 1)
        try:
            req = json.loads(body)
        except ValueError:
            error(None, -32700, "Parse error")
            continue
        if (not isinstance(req, dict) or req.get("jsonrpc") != "2.0" or not is_id(req.get("id"))
                or not isinstance(req.get("method"), str) or set(req) - {"jsonrpc", "id", "method", "params"}):
            rid = req.get("id") if isinstance(req, dict) and is_id(req.get("id")) else None
            error(rid, -32600, "Invalid request")
            continue
        rid, method, params = req["id"], req["method"], req.get("params")
        # The method is judged before the id; only an answered result moves on.
        if state["next"] > len(ORDER) or method != ORDER[state["next"] - 1]:
            error(rid, -32601, "Method not found")
            continue
        if rid != state["next"]:
            error(rid, -32600, "Invalid request: ids go 1..5 in method order")
            continue
        result = answer(method, params, state) if isinstance(params, dict) and set(params) == PARAMS[method] else None
        if result is None:
            error(rid, -32602, "Invalid params")
            continue
        state["next"] += 1
        send({"jsonrpc": "2.0", "id": rid, "result": result})


main()
