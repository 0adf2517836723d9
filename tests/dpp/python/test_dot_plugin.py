"""Tests of dot_plugin (dpp/python/dot_plugin.py), the Python plugin runtime:
each drives serve() over in-memory streams the way dot-core would, byte for
byte, and reads back every frame it wrote (docs/spec/dpp-general.md)."""
import hashlib
import io
import os
import stat

import pytest

import dot_plugin as dp
from wire import frame, frames_of, request

NONCE = "ab" * 32
FIVE = list(dp.CAPABILITIES) + ["log"]


def init_params(**changes):
    p = {"capabilities": FIVE, "inputs": ["/in"], "limits": dict(dp.LIMITS), "nonce": NONCE,
         "profile": "org.dot.dpp/v1", "protocol": 1, "required_assurance": "process"}
    p.update(changes)
    return p


def lifecycle(stage, capabilities=None):
    """The five requests dot-core sends, as frames."""
    return [frame(request(1, "dot.initialize", init_params(capabilities=capabilities or FIVE))),
            frame(request(2, "dot.plan", {"managed": ["old.txt"]})),
            frame(request(3, "dot.materialize", {"stage": str(stage)})),
            frame(request(4, "dot.validate", {})), frame(request(5, "dot.shutdown", {}))]


def run(plugin, *frames):
    out, err = io.BytesIO(), io.BytesIO()
    status = dp.serve(plugin, io.BytesIO(b"".join(frames)), out, err)
    return status, frames_of(out.getvalue()), err.getvalue().decode()


class Two(dp.Plugin):
    id = "org.example.two"
    wants_log = True

    def __init__(self):
        self.contexts = []

    def plan(self, ctx, managed):
        self.contexts.append(ctx)
        ctx.log("info", "planning")
        return [dp.write("a/b.txt", 0o644), dp.write("bin", 0o755)] + [dp.remove(p) for p in managed]

    def materialize(self, ctx, stage):
        return [dp.write_staged_file(stage, "a/b.txt", b"hello\n"), dp.write_staged_file(stage, "bin", "x")]


def test_the_lifecycle_with_log(tmp_path):
    status, out, err = run(Two(), *lifecycle(tmp_path))
    assert status == 0 and err == ""
    echo = out[0]["result"]
    assert out[0]["id"] == 1 and echo == {
        "assurance": "process", "capabilities": FIVE, "id": "org.example.two", "inputs": ["/in"],
        "limits": dp.LIMITS, "nonce": NONCE, "profile": "org.dot.dpp/v1", "protocol": 1}
    assert out[1] == {"jsonrpc": "2.0", "method": "dot.log", "params": {"level": "info", "message": "planning"}}
    assert out[2]["result"] == {
        "effects": [{"failure_policy": "required", "kind": "sync", "target": "managed-root"}],
        "operations": [{"action": "write", "mode": 420, "path": "a/b.txt"},
                       {"action": "write", "mode": 493, "path": "bin"},
                       {"action": "remove", "mode": 0, "path": "old.txt"}]}
    assert out[3]["result"]["artifacts"] == [
        {"path": "a/b.txt", "sha256": hashlib.sha256(b"hello\n").hexdigest(), "size": 6},
        {"path": "bin", "sha256": hashlib.sha256(b"x").hexdigest(), "size": 1}]
    assert out[4:] == [{"jsonrpc": "2.0", "id": 4, "result": {"valid": True}},
                       {"jsonrpc": "2.0", "id": 5, "result": {"valid": True}}]
    assert (tmp_path / "a" / "b.txt").read_bytes() == b"hello\n"
    assert stat.S_IMODE(os.stat(tmp_path / "a").st_mode) == 0o700
    assert stat.S_IMODE(os.stat(tmp_path / "bin").st_mode) == 0o600


def test_a_link_is_sent_with_its_link_text_and_nothing_staged(tmp_path):
    class Links(Two):
        def plan(self, ctx, managed):
            return [dp.link(".vimrc", "dotfiles/vimrc"), dp.link("abs", "/etc/hostname \x1b"), dp.remove("old")]

        def materialize(self, ctx, stage):
            return []
    status, out, err = run(Links(), *lifecycle(tmp_path))
    assert status == 0 and err == ""
    assert out[1]["result"]["operations"] == [
        {"action": "link", "link_text": "dotfiles/vimrc", "mode": 0, "path": ".vimrc"},
        {"action": "link", "link_text": "/etc/hostname \x1b", "mode": 0, "path": "abs"},
        {"action": "remove", "mode": 0, "path": "old"}]
    assert out[2]["result"]["artifacts"] == []
    assert dp.link("p", "t") == dp.Operation("link", 0, "p", "t") and dp.write("p", 0o600).link_text is None


def test_without_log_offered_the_echo_has_four_capabilities_and_log_sends_nothing(tmp_path):
    plugin = Two()
    status, out, _ = run(plugin, *lifecycle(tmp_path, list(dp.CAPABILITIES)))
    assert status == 0
    assert out[0]["result"]["capabilities"] == list(dp.CAPABILITIES)
    assert all("method" not in m for m in out) and len(out) == 5
    assert plugin.contexts[0].log_negotiated is False


def test_a_plugin_that_does_not_want_log_declines_it(tmp_path):
    plugin = Two()
    plugin.wants_log = False
    status, out, _ = run(plugin, *lifecycle(tmp_path))
    assert status == 0 and out[0]["result"]["capabilities"] == list(dp.CAPABILITIES) and len(out) == 5


def test_log_outside_a_handler_and_past_the_limit_sends_nothing(tmp_path):
    class Chatty(Two):
        def plan(self, ctx, managed):
            self.sent = sum(ctx.log("debug", "m") for _ in range(dp.LIMITS["max_log_messages"] + 5))
            self.contexts.append(ctx)
            return []

        def materialize(self, ctx, stage):
            return []
    plugin = Chatty()
    status, out, _ = run(plugin, *lifecycle(tmp_path))
    assert status == 0 and plugin.sent == 1000
    assert sum(1 for m in out if m.get("method") == "dot.log") == 1000
    assert plugin.contexts[0].log("info", "late") is False


def test_log_refuses_a_bad_level_and_a_long_message():
    ctx = dp.Context(None)
    with pytest.raises(ValueError):
        ctx.log("fatal", "x")
    with pytest.raises(ValueError):
        ctx.log("info", "é" * 2049)
    with pytest.raises(ValueError):
        ctx.log("info", "\ud800")


def error_of(out, index=0):
    return out[index]["id"], out[index]["error"]["code"], out[index]["error"]["message"]


@pytest.mark.parametrize("body,code,rid", [
    (b"{", -32700, None),
    (b"[1] 2", -32700, None),
    (b'{"a":1,"a":2}', -32700, None),
    (b'{"x":NaN}', -32700, None),
    (b'"\xff"', -32700, None),
    (b'"\\ud800"', -32700, None),
    (b"[" * 17 + b"]" * 17, -32700, None),
    (b"[1]", -32600, None),
    (b'{"jsonrpc":"2.0","method":"dot.initialize","params":{}}', -32600, None),
    (b'{"id":0,"jsonrpc":"2.0","method":"dot.initialize","params":{}}', -32600, None),
    (b'{"id":true,"jsonrpc":"2.0","method":"dot.initialize","params":{}}', -32600, None),
    (b'{"id":1.0,"jsonrpc":"2.0","method":"dot.initialize","params":{}}', -32600, None),
    (b'{"id":1,"jsonrpc":"2.0","method":"dot.initialize","params":{},"x":1}', -32600, 1),
    (b'{"id":1,"jsonrpc":"1.0","method":"dot.initialize","params":{}}', -32600, 1),
    (b'{"id":1,"method":"dot.initialize","params":{}}', -32600, 1),
    (b'{"id":1,"jsonrpc":"2.0","method":7,"params":{}}', -32600, 1),
    (b'{"id":1,"jsonrpc":"2.0","method":"dot.frobnicate","params":{}}', -32601, 1),
    (b'{"id":1,"jsonrpc":"2.0","method":"dot.plan","params":{"managed":[]}}', -32601, 1),
    (b'{"id":2,"jsonrpc":"2.0","method":"dot.initialize","params":{}}', -32600, 2),
    (b'{"id":1,"jsonrpc":"2.0","method":"dot.initialize"}', -32602, 1),
])
def test_a_malformed_request_is_answered_and_the_run_goes_on(tmp_path, body, code, rid):
    status, out, err = run(Two(), frame(body), *lifecycle(tmp_path))
    assert status == 0
    got_id, got_code, message = error_of(out)
    assert (got_id, got_code) == (rid, code), message
    assert message in err
    assert out[1]["id"] == 1 and "result" in out[1]


@pytest.mark.parametrize("changes", [
    {"profile": "org.dot.hello/v1"}, {"protocol": 2}, {"required_assurance": "none"}, {"nonce": "AB" * 32},
    {"nonce": "ab"}, {"limits": dict(dp.LIMITS, deadline_ms=1)}, {"limits": dict(dp.LIMITS, deadline_ms=60000.0)},
    {"limits": dict(dp.LIMITS, zz=1)}, {"capabilities": ["plan"]}, {"capabilities": list(reversed(FIVE))},
    {"inputs": "/in"}, {"inputs": [1]}, {"zz_unknown": 1}, {"protocol": True}, {"protocol": 1.0},
])
def test_initialize_params_off_the_profile_are_invalid(tmp_path, changes):
    status, out, _ = run(Two(), frame(request(1, "dot.initialize", init_params(**changes))), *lifecycle(tmp_path))
    assert status == 0 and error_of(out)[:2] == (1, -32602)


def test_missing_initialize_member_and_extra_params_on_later_methods(tmp_path):
    params = init_params()
    del params["nonce"]
    frames = lifecycle(tmp_path)
    status, out, _ = run(Two(), frame(request(1, "dot.initialize", params)), frames[0],
                         frame(request(2, "dot.plan", {"managed": [], "x": 1})), frames[1], frames[2],
                         frame(request(4, "dot.validate", {"x": 1})), *frames[3:])
    assert status == 0
    assert [m["error"]["code"] for m in out if "error" in m] == [-32602, -32602, -32602]


def test_nothing_is_answered_after_shutdown_but_method_not_found(tmp_path):
    status, out, _ = run(Two(), *lifecycle(tmp_path), frame(request(6, "dot.validate", {})))
    assert status == 0 and error_of(out, -1)[:2] == (6, -32601)


@pytest.mark.parametrize("stream", [
    b"Content-Length: 0\r\n\r\n", b"Content-Length: 02\r\n\r\n{}", b"Content-Length: 2\n\r\n{}",
    b"content-length: 2\r\n\r\n{}", b"Content-Length: 16777217\r\n\r\n", b"Content-Length: 5\r\n\r\n{}",
    b"Content-Length:  2\r\n\r\n{}", b"Content-Length: 2\r\nX: y\r\n\r\n{}", b"Content-Len",
])
def test_a_broken_frame_ends_the_session_with_1_and_nothing_written(stream):
    out, err = io.BytesIO(), io.BytesIO()
    assert dp.serve(Two(), io.BytesIO(stream), out, err) == 1
    assert out.getvalue() == b"" and b"DOT_E_PROTOCOL" in err.getvalue()


def test_end_of_input_before_shutdown_is_1(tmp_path):
    status, out, err = run(Two(), *lifecycle(tmp_path)[:2])
    assert status == 1 and "closed stdin before dot.materialize" in err and len(out) == 3


class Refusing(Two):
    def __init__(self, failure):
        super().__init__()
        self.failure = failure

    def plan(self, ctx, managed):
        raise self.failure


@pytest.mark.parametrize("failure,code,message", [
    (dp.PluginError("cannot read /in: permission denied", {"errno": 13}), -32000,
     "Plugin error: cannot read /in: permission denied"),
    (dp.InvalidParams("exactly one input"), -32602, "Invalid params: exactly one input"),
    (FileNotFoundError(2, "No such file or directory"), -32000,
     "Plugin error: FileNotFoundError: [Errno 2] No such file or directory"),
])
def test_a_handler_failure_is_an_error_answer_and_the_run_can_go_on(tmp_path, failure, code, message):
    frames = lifecycle(tmp_path)
    status, out, _ = run(Refusing(failure), *frames[:2], *frames[2:])
    assert error_of(out, 1) == (2, code, message)
    if isinstance(failure, dp.PluginError) and failure.data is not None:
        assert out[1]["error"]["data"] == {"errno": 13}
    assert status == 1  # the plan was never answered with a result, so stdin closed early


def test_messages_are_utf8_of_at_most_4096_bytes(tmp_path):
    status, out, _ = run(Refusing(dp.PluginError("é" * 5000 + "\udcff")), *lifecycle(tmp_path)[:2])
    message = out[1]["error"]["message"]
    assert len(message.encode("utf-8")) <= 4096 and message.startswith("Plugin error: éé")


def test_error_data_over_4096_bytes_is_left_out(tmp_path):
    _, out, err = run(Refusing(dp.PluginError("big", "x" * 5000)), *lifecycle(tmp_path)[:2])
    assert "data" not in out[1]["error"] and "over 4096 bytes" in err


class Returns(Two):
    def __init__(self, ops):
        super().__init__()
        self.ops = ops

    def plan(self, ctx, managed):
        return self.ops


@pytest.mark.parametrize("ops", [
    [dp.write("\udcff", 0o644)], [{"action": "write", "mode": 420, "path": "a"}], [dp.write("a", "0644")],
    [dp.write("p%d" % i + "x" * (4 << 20), 0o644) for i in range(5)],
])
def test_a_result_that_cannot_be_sent_is_an_internal_error(tmp_path, ops):
    _, out, _ = run(Returns(ops), *lifecycle(tmp_path)[:2])
    assert error_of(out, 1)[:2] == (2, -32603)


def test_print_in_a_handler_goes_to_stderr_not_into_the_protocol(tmp_path, capsys):
    class Printing(Two):
        def plan(self, ctx, managed):
            print("debugging output")
            return []
    status, out, _ = run(Printing(), *lifecycle(tmp_path)[:2])
    assert len(out) == 2 and "result" in out[1]
    assert "debugging output" in capsys.readouterr().err


def test_a_host_that_went_away_ends_the_session_with_1(tmp_path):
    class Gone(io.BytesIO):
        def write(self, data):
            raise BrokenPipeError(32, "Broken pipe")
    assert dp.serve(Two(), io.BytesIO(b"".join(lifecycle(tmp_path))), Gone(), io.BytesIO()) == 1


def test_staging_never_goes_through_a_symlink(tmp_path):
    stage, outside = tmp_path / "stage", tmp_path / "outside"
    stage.mkdir()
    outside.mkdir()
    os.symlink(outside, stage / "link")
    with pytest.raises(dp.StageError) as e:
        dp.write_staged_file(str(stage), "link/f", b"x")
    assert e.value.code == "DOT_E_PATH_ESCAPE" and list(outside.iterdir()) == []
    os.symlink(outside / "f", stage / "last")
    with pytest.raises(dp.StageError):
        dp.write_staged_file(str(stage), "last", b"x")
    assert not (outside / "f").exists()


@pytest.mark.parametrize("path", ["/etc/passwd", "../x", "a/../b", "a//b", "./a", "", "a/"])
def test_staging_takes_plain_relative_paths_only(tmp_path, path):
    with pytest.raises(dp.StageError) as e:
        dp.write_staged_file(str(tmp_path), path, b"x")
    assert e.value.code == "DOT_E_PATH_ESCAPE" and list(tmp_path.iterdir()) == []


def test_a_staged_file_is_created_exclusively(tmp_path):
    dp.write_staged_file(str(tmp_path), "f", b"one")
    with pytest.raises(dp.StageError) as e:
        dp.write_staged_file(str(tmp_path), "f", b"two")
    assert e.value.code == "DOT_E_IO" and (tmp_path / "f").read_bytes() == b"one"


def test_copy_staged_file_streams_and_stops_past_the_limit(tmp_path):
    source = tmp_path / "source"
    source.write_bytes(os.urandom(200000))
    stage = tmp_path / "stage"
    stage.mkdir()
    with open(source, "rb") as f:
        art = dp.copy_staged_file(str(stage), "d/copy", f)
    assert art == dp.Artifact("d/copy", hashlib.sha256(source.read_bytes()).hexdigest(), 200000)
    assert (stage / "d" / "copy").read_bytes() == source.read_bytes()
    fd = os.open(source, os.O_RDONLY)
    try:
        with pytest.raises(dp.StageError) as e:
            dp.copy_staged_file(str(stage), "short", fd, max_bytes=199999)
    finally:
        os.close(fd)
    assert e.value.code == "DOT_E_IO" and "more than 199999 bytes" in str(e.value)


def test_staged_folders_are_0700_whatever_the_umask(tmp_path):
    old = os.umask(0o277)
    try:
        dp.write_staged_file(str(tmp_path), "x/y/z", b"")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "x").st_mode) == 0o700
    assert stat.S_IMODE(os.stat(tmp_path / "x" / "y").st_mode) == 0o700


@pytest.mark.parametrize("stream", [b"Content-Lx", b"Content-Length: 2\rX", b"Content-Length: 2\r\nX",
                                    b"Content-Length: a"])
def test_a_broken_header_is_judged_at_its_first_wrong_byte_without_waiting_for_more(stream):
    class HostWaits(io.BytesIO):
        """A host that sent these bytes and now waits: reading past them would block."""
        def read(self, n=-1):
            # A pipe's buffered read(n) returns only once n bytes came (or the end).
            if n < 0 or self.tell() + n > len(self.getvalue()):
                raise AssertionError("read past what the host sent: the plugin would hang")
            return super().read(n)
    out = io.BytesIO()
    assert dp.serve(Two(), HostWaits(stream), out, io.BytesIO()) == 1
    assert out.getvalue() == b""


class Declaring(dp.Plugin):
    """Declares its writes' digests ("Declared digests") and stages only what core asks for."""
    id = "org.example.declaring"
    declares_digests = True
    FILES = {"a/b.txt": b"hello\n", "bin": b"x"}

    def plan(self, ctx, managed):
        return [dp.write(p, 0o644, data) for p, data in sorted(self.FILES.items())]

    def materialize(self, ctx, stage):
        return [dp.write_staged_file(stage, p, self.FILES[p]) for p in ctx.paths_to_stage]


def declared_lifecycle(stage, paths, capabilities=None):
    frames = lifecycle(stage, capabilities or FIVE + ["digests"])
    materialize = {"stage": str(stage)} if paths is None else {"paths": paths, "stage": str(stage)}
    frames[2] = frame(request(3, "dot.materialize", materialize))
    return frames


def test_with_digests_offered_a_declaring_plugin_echoes_them_and_stages_only_what_is_asked(tmp_path):
    status, out, err = run(Declaring(), *declared_lifecycle(tmp_path, ["bin"]))
    assert status == 0, err
    assert out[0]["result"]["capabilities"] == FIVE[:4] + ["digests"]
    ops = out[1]["result"]["operations"]
    assert ops[0] == {"action": "write", "mode": 0o644, "path": "a/b.txt",
                      "sha256": hashlib.sha256(b"hello\n").hexdigest(), "size": 6}
    assert [a["path"] for a in out[2]["result"]["artifacts"]] == ["bin"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bin"]


def test_a_no_change_plan_stages_nothing(tmp_path):
    status, out, err = run(Declaring(), *declared_lifecycle(tmp_path, []))
    assert status == 0, err
    assert out[2]["result"] == {"artifacts": []} and list(tmp_path.iterdir()) == []


def test_without_digests_offered_nothing_is_declared_and_every_write_is_staged(tmp_path):
    status, out, err = run(Declaring(), *declared_lifecycle(tmp_path, None, capabilities=FIVE))
    assert status == 0, err
    assert out[0]["result"]["capabilities"] == FIVE[:4]
    assert all("sha256" not in op for op in out[1]["result"]["operations"])
    assert [a["path"] for a in out[2]["result"]["artifacts"]] == ["a/b.txt", "bin"]


@pytest.mark.parametrize("paths", [["zzz"], ["bin", "a/b.txt"], None])
def test_materialize_paths_that_are_not_the_plans_writes_in_order_are_invalid_params(tmp_path, paths):
    status, out, err = run(Declaring(), *declared_lifecycle(tmp_path, paths))
    assert out[2]["error"]["code"] == -32602, out[2]


def test_a_plugin_that_does_not_declare_declines_digests(tmp_path):
    status, out, err = run(Two(), *lifecycle(tmp_path, FIVE + ["digests"]))
    assert status == 0, err
    assert out[0]["result"]["capabilities"] == FIVE
    staged = next(m for m in out if m.get("id") == 3)
    assert [a["path"] for a in staged["result"]["artifacts"]] == ["a/b.txt", "bin"]


def test_registered_id_is_the_one_core_gives_else_the_fallback(monkeypatch):
    monkeypatch.delenv("DOT_PLUGIN_ID", raising=False)
    assert dp.registered_id("org.example.mirror") == "org.example.mirror"
    monkeypatch.setenv("DOT_PLUGIN_ID", "")
    assert dp.registered_id("org.example.mirror") == "org.example.mirror"
    monkeypatch.setenv("DOT_PLUGIN_ID", "org.example.work-dotfiles")
    assert dp.registered_id("org.example.mirror") == "org.example.work-dotfiles"


class Caching(Two):
    keeps_cache = True

    def plan(self, ctx, managed):
        # What an earlier run left, then this run's mark.
        self.found = sorted(os.listdir(ctx.cache_folder)) if ctx.cache_folder else None
        if ctx.cache_folder:
            with open(os.path.join(ctx.cache_folder, "seen"), "w") as f:
                f.write("x")
        return super().plan(ctx, managed)


def cache_lifecycle(tmp, cache, capabilities):
    """The lifecycle into a fresh stage below `tmp`, offering `cache` (a folder or None)."""
    stage = tmp / ("stage%d" % len(list(tmp.glob("stage*"))))
    stage.mkdir()
    frames = lifecycle(stage, capabilities)
    params = init_params(capabilities=capabilities)
    if cache is not None:
        params["cache"] = cache
    frames[0] = frame(request(1, "dot.initialize", params))
    return frames


def test_with_cache_offered_a_plugin_that_keeps_one_echoes_it_last_and_finds_its_folder(tmp_path):
    stage, cache = tmp_path, tmp_path / "cache"
    cache.mkdir()
    plugin = Caching()
    status, out, err = run(plugin, *cache_lifecycle(stage, str(cache), FIVE + ["digests", "cache"]))
    assert status == 0, err
    assert out[0]["result"]["capabilities"] == FIVE + ["cache"]
    assert "cache" not in out[0]["result"]
    assert plugin.found == [] and (cache / "seen").read_text() == "x"
    again = Caching()
    status, out, err = run(again, *cache_lifecycle(stage, str(cache), FIVE + ["cache"]))
    assert status == 0, err
    assert again.found == ["seen"]
    # A plugin that keeps none declines it; one offered none finds no folder.
    status, out, err = run(Two(), *cache_lifecycle(stage, str(cache), FIVE + ["cache"]))
    assert status == 0, err
    assert out[0]["result"]["capabilities"] == FIVE
    unoffered = Caching()
    status, out, err = run(unoffered, *cache_lifecycle(stage, None, FIVE))
    assert status == 0, err
    assert out[0]["result"]["capabilities"] == FIVE and unoffered.found is None


@pytest.mark.parametrize("cache,capabilities", [
    (None, FIVE + ["cache"]),                 # offered without a folder
    ("/c", FIVE),                             # a folder without the offer
    ("c", FIVE + ["cache"]),                  # not an absolute path
    ("/c", FIVE + ["cache", "digests"]),      # out of order
    ("/c", FIVE + ["cache", "cache"]),        # twice
])
def test_a_cache_offer_that_is_not_the_profiles_is_invalid_params(tmp_path, cache, capabilities):
    status, out, err = run(Caching(), *cache_lifecycle(tmp_path, cache, capabilities))
    assert out[0]["error"]["code"] == -32602, out[0]


# ---- "Batches" ----

class Many(dp.Plugin):
    """2,500 writes of one byte each: more than two batches of 1024."""
    id = "org.example.many"
    COUNT = 2500

    def plan(self, ctx, managed):
        return [dp.write("f%04d" % i, 0o644) for i in range(self.COUNT)]

    def materialize(self, ctx, stage):
        return [dp.write_staged_file(stage, p, b"x") for p in ctx.paths_to_stage]


def test_with_batches_offered_long_lists_go_out_in_batches_of_1024_before_the_result(tmp_path):
    status, out, err = run(Many(), *lifecycle(tmp_path, FIVE + ["batches"]))
    assert status == 0, err
    assert out[0]["result"]["capabilities"] == FIVE[:4] + ["batches"]
    # dot.plan: two notifications of 1024 operations, then the result with the 452 left.
    assert [m.get("method") for m in out[1:4]] == ["dot.operations", "dot.operations", None]
    assert [set(m["params"]) for m in out[1:3]] == [{"operations"}, {"operations"}]
    ops = out[1]["params"]["operations"] + out[2]["params"]["operations"] + out[3]["result"]["operations"]
    assert [len(out[1]["params"]["operations"]), len(out[3]["result"]["operations"])] == [1024, 452]
    assert [op["path"] for op in ops] == ["f%04d" % i for i in range(Many.COUNT)]
    # dot.materialize likewise, with dot.artifacts.
    assert [m.get("method") for m in out[4:7]] == ["dot.artifacts", "dot.artifacts", None]
    arts = out[4]["params"]["artifacts"] + out[5]["params"]["artifacts"] + out[6]["result"]["artifacts"]
    assert [a["path"] for a in arts] == ["f%04d" % i for i in range(Many.COUNT)]
    assert out[7:] == [{"jsonrpc": "2.0", "id": 4, "result": {"valid": True}},
                       {"jsonrpc": "2.0", "id": 5, "result": {"valid": True}}]


def test_without_batches_offered_a_long_list_is_one_result(tmp_path):
    status, out, err = run(Many(), *lifecycle(tmp_path, FIVE))
    assert status == 0, err
    assert out[0]["result"]["capabilities"] == FIVE[:4]
    assert len(out[1]["result"]["operations"]) == Many.COUNT
    assert len(out[2]["result"]["artifacts"]) == Many.COUNT


def test_a_list_of_exactly_one_batch_is_sent_in_the_result(tmp_path):
    class Full(Many):
        COUNT = 1024
    status, out, err = run(Full(), *lifecycle(tmp_path, FIVE + ["batches"]))
    assert status == 0, err
    assert "method" not in out[1] and len(out[1]["result"]["operations"]) == 1024


class Streaming(dp.Plugin):
    """Yields its operations and artifacts one at a time, noting before each
    how many batches of it had already gone out on `out`."""
    id = "org.example.streaming"
    COUNT = 2500

    def __init__(self, out):
        self.out, self.sent = out, {"dot.operations": [], "dot.artifacts": []}

    def note(self, method):
        self.sent[method].append(self.out.getvalue().count(method.encode()))

    def plan(self, ctx, managed):
        for i in range(self.COUNT):
            self.note("dot.operations")
            yield dp.write("f%04d" % i, 0o644)

    def materialize(self, ctx, stage):
        for p in ctx.paths_to_stage:
            self.note("dot.artifacts")
            yield dp.write_staged_file(stage, p, b"x")


def test_a_generators_batches_go_out_while_it_still_works(tmp_path):
    # "The run": core waits at most deadline_ms for the next frame, so a long
    # stage must report as it goes. Element k is asked for once the batches
    # before it are out: each full batch leaves when the next element arrives.
    out = io.BytesIO()
    plugin = Streaming(out)
    status = dp.serve(plugin, io.BytesIO(b"".join(lifecycle(tmp_path, FIVE + ["batches"]))), out, io.BytesIO())
    assert status == 0
    expected = [max(0, (k - 1) // 1024) for k in range(Streaming.COUNT)]
    assert plugin.sent == {"dot.operations": expected, "dot.artifacts": expected}
    msgs = frames_of(out.getvalue())
    assert [m.get("method") for m in msgs[1:4]] == ["dot.operations", "dot.operations", None]
    assert len(msgs[3]["result"]["operations"]) == Streaming.COUNT - 2048
    assert [m.get("method") for m in msgs[4:7]] == ["dot.artifacts", "dot.artifacts", None]
    arts = msgs[4]["params"]["artifacts"] + msgs[5]["params"]["artifacts"] + msgs[6]["result"]["artifacts"]
    assert [a["path"] for a in arts] == ["f%04d" % i for i in range(Streaming.COUNT)]


def test_without_batches_a_generators_list_is_one_result(tmp_path):
    out = io.BytesIO()
    status = dp.serve(Streaming(out), io.BytesIO(b"".join(lifecycle(tmp_path))), out, io.BytesIO())
    assert status == 0
    msgs = frames_of(out.getvalue())
    assert len(msgs[1]["result"]["operations"]) == Streaming.COUNT
    assert len(msgs[2]["result"]["artifacts"]) == Streaming.COUNT
