"""Tests of dot_plugin's hello profile (HelloPlugin, docs/spec/dpp-hello.md):
the example exchange of the contract page replayed byte for byte, the
profile's params, frame limit and artifacts, and staging with mode 0600."""
import hashlib
import io
import json
import os
import re
import stat

import pytest

import dot_plugin as dp
from wire import frame, frames_of, request

NONCE = "cd" * 32
SPEC_EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "docs", "spec", "examples")
CONTENT = {"hello.txt": b"Hello, world!\n",
           "welcome.txt": b"Welcome to dot-core: this file was planned by org.dot.hello.\n"}


class Hello(dp.HelloPlugin):
    """What the reference plugin dot-hello writes, in Python."""

    def materialize(self, ctx, stage):
        return [dp.write_hello_file(stage, name, CONTENT[name]) for name in dp.HELLO_NAMES]


def init_params(**changes):
    p = {"capabilities": list(dp.CAPABILITIES), "nonce": NONCE, "profile": "org.dot.hello/v1", "protocol": 1,
         "required_assurance": "audit"}
    p.update(changes)
    return p


def lifecycle(stage, **init_changes):
    return [frame(request(1, "dot.initialize", init_params(**init_changes))), frame(request(2, "dot.plan", {})),
            frame(request(3, "dot.materialize", {"stage": str(stage)})), frame(request(4, "dot.validate", {})),
            frame(request(5, "dot.shutdown", {}))]


def serve(plugin, *frames):
    out, err = io.BytesIO(), io.BytesIO()
    status = dp.serve(plugin, io.BytesIO(b"".join(frames)), out, err)
    return status, out.getvalue(), err.getvalue().decode()


def read_example(name):
    with open(os.path.join(SPEC_EXAMPLES, name), "rb") as f:
        return f.read()


def test_the_example_exchange_of_the_contract_is_answered_byte_for_byte(tmp_path):
    # What dot-core wrote in the captured run, the stage moved to tmp_path
    # (the one frame that names it gets its length again).
    sent = read_example("dpp-hello.to-plugin")
    old_stage = re.search(rb'"stage":"([^"]+)"', sent).group(1)
    requests = []
    while sent:
        header, _, rest = sent.partition(b"\r\n\r\n")
        n = int(header[len(b"Content-Length: "):])
        requests.append(rest[:n].replace(old_stage, str(tmp_path).encode()))
        sent = rest[n:]
    assert len(requests) == 5
    status, out, err = serve(Hello(), *[frame(r) for r in requests])
    assert (status, err) == (0, "")
    assert out == read_example("dpp-hello.from-plugin")
    for name, data in CONTENT.items():
        st = os.lstat(tmp_path / name)
        assert stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o600
        assert (tmp_path / name).read_bytes() == data
    assert sorted(os.listdir(tmp_path)) == ["hello.txt", "welcome.txt"]


def error_of(out, index):
    return frames_of(out)[index]["error"]


@pytest.mark.parametrize("changes, message", [
    ({"profile": "org.dot.dpp/v1"}, "Invalid params: unsupported profile \"org.dot.dpp/v1\""),
    ({"protocol": 2}, "Invalid params: unsupported protocol 2"),
    ({"required_assurance": "none"}, "Invalid params: unknown required_assurance \"none\""),
    ({"nonce": "AB" * 32}, "Invalid params: the nonce is not 64 lowercase hex"),
    ({"capabilities": list(dp.CAPABILITIES) + ["log"]}, "Invalid params: the capabilities are not the profile's"),
    ({"inputs": ["/in"]}, "Invalid params: dot.initialize params has the unknown field \"inputs\""),
])
def test_initialize_params_off_the_hello_profile_are_invalid(tmp_path, changes, message):
    status, out, _ = serve(Hello(), frame(request(1, "dot.initialize", init_params(**changes))))
    assert status == 1  # input ended before dot.shutdown
    assert error_of(out, 0) == {"code": -32602, "message": message}


def test_the_hello_plan_takes_no_params(tmp_path):
    status, out, _ = serve(Hello(), frame(request(1, "dot.initialize", init_params())),
                           frame(request(2, "dot.plan", {"managed": []})))
    assert status == 1
    assert error_of(out, 1) == {"code": -32602,
                                "message": "Invalid params: dot.plan params has the unknown field \"managed\""}


def test_a_frame_over_64_kib_breaks_the_hello_session(tmp_path):
    # 65536 is the hello profile's frame limit; the general profile's is 16 MiB.
    status, out, err = serve(Hello(), b"Content-Length: 65537\r\n\r\n" + b" " * 65537)
    assert (status, out) == (1, b"")
    assert "length over the limit of 65536 bytes" in err
    body = json.dumps(request(1, "dot.initialize", init_params())).encode()
    status, out, _ = serve(Hello(), frame(body + b" " * (65536 - len(body))))
    assert status == 1 and frames_of(out)[0]["result"]["id"] == "org.dot.hello"


class WrongArtifacts(Hello):
    def materialize(self, ctx, stage):
        return [dp.write_staged_file(stage, "hello.txt", b"x")]


class WrongNames(Hello):
    def plan(self, ctx):
        return ["hello.txt", 7]


@pytest.mark.parametrize("plugin, index, what", [
    (WrongArtifacts(), 2, "dot.materialize result cannot be sent"),
    (WrongNames(), 1, "dot.plan result cannot be sent"),
])
def test_results_of_the_other_profile_cannot_be_sent(tmp_path, plugin, index, what):
    status, out, _ = serve(plugin, *lifecycle(tmp_path))
    err = error_of(out, index)
    assert err["code"] == -32603 and what in err["message"], err


def test_hello_files_are_plain_names_of_1_to_65536_bytes(tmp_path):
    for name in ("a/hello.txt", "../hello.txt"):
        with pytest.raises(dp.StageError) as e:
            dp.write_hello_file(str(tmp_path), name, b"x")
        assert e.value.code == "DOT_E_PATH_ESCAPE"
    for data in (b"", b"x" * 65537):
        with pytest.raises(dp.StageError) as e:
            dp.write_hello_file(str(tmp_path), "hello.txt", data)
        assert e.value.code == "DOT_E_IO"
    assert os.listdir(tmp_path) == []
    art = dp.write_hello_file(str(tmp_path), "hello.txt", "x" * 65536)
    assert art == dp.HelloArtifact("hello.txt", hashlib.sha256(b"x" * 65536).hexdigest(), 65536)
    with pytest.raises(dp.StageError):  # created exclusively
        dp.write_hello_file(str(tmp_path), "hello.txt", b"again")


def test_a_hello_file_is_0600_whatever_the_umask(tmp_path):
    old = os.umask(0o277)
    try:
        dp.write_hello_file(str(tmp_path), "hello.txt", b"hi\n")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.lstat(tmp_path / "hello.txt").st_mode) == 0o600


def test_a_symlink_in_the_stage_is_never_written_through(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    stage = tmp_path / "stage"
    stage.mkdir()
    os.symlink(outside / "hello.txt", stage / "hello.txt")
    with pytest.raises(dp.StageError):
        dp.write_hello_file(str(stage), "hello.txt", b"x")
    assert os.listdir(outside) == []
