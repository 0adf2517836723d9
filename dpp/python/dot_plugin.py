"""dot_plugin: the plugin side of dot-core's plugin protocol in standard
Python, the same runtime the C++ plugins link (dot/dpp/runtime.h): the
general profile org.dot.dpp/v1 (subclass Plugin) and the closed hello
profile org.dot.hello/v1 (subclass HelloPlugin, docs/spec/dpp-hello.md).

Every rule here is a section of docs/spec/dpp-general.md (cited by its
heading in quotes). The author writes two handlers; serve() does the rest:

    import dot_plugin

    class Motd(dot_plugin.Plugin):
        id = "org.example.motd"
        wants_log = True

        def plan(self, ctx, managed):
            return [dot_plugin.write("motd", 0o644)]

        def materialize(self, ctx, stage):
            return [dot_plugin.write_staged_file(stage, "motd", b"Welcome.\\n")]

    dot_plugin.run(Motd())

serve() reads frames of up to 16 MiB with the framing rules, checks each
body (UTF-8, one JSON value, no key twice, depth 16), expects dot.initialize,
dot.plan, dot.materialize, dot.validate, dot.shutdown with ids 1 to 5,
checks the params against the profile (a hello plugin: frames of up to
64 KiB and the hello profile's params, answers and artifacts), echoes dot.initialize (adding "log"
when the plugin wants it and core offered it), adds the one root-sync effect
to every plan, and answers what it cannot accept instead of stopping:

    a body that is not one JSON value            -32700, "id": null
    not a request object with "jsonrpc": "2.0",
      a string method and a positive integer id  -32600 (id echoed when valid)
    an id out of the order 1..5                  -32600
    an unknown method, or one out of order       -32601
    params that fail the method's schema         -32602
    a handler's PluginError (or any exception)   -32000, "Plugin error: <detail>"
    a handler's InvalidParams                    -32602, "Invalid params: <detail>"
    a result it cannot send                      -32603

Every message is valid UTF-8 of at most 4096 bytes; the reason also goes to
stderr. End of input after the dot.shutdown answer: exit status 0; before it:
1. A frame that breaks the framing rules cannot be answered: 1 at once,
nothing more written. While serve() runs, sys.stdout is sys.stderr, so a
stray print() in a handler cannot corrupt the protocol stream.
"""
import hashlib
import json
import os
import stat
import sys
from dataclasses import dataclass

__all__ = ["PROFILE", "PROTOCOL", "LIMITS", "CAPABILITIES", "ROOT_SYNC", "MODES", "Operation", "Artifact",
           "PluginError", "InvalidParams", "StageError", "Context", "Plugin", "write", "remove", "link", "serve", "run",
           "write_staged_file", "copy_staged_file", "HELLO_PROFILE", "HELLO_ID", "HELLO_NAMES", "HelloArtifact",
           "HelloPlugin", "write_hello_file"]

PROFILE = "org.dot.dpp/v1"
PROTOCOL = 1
# "Negotiation": the limits core sends, every value exactly.
LIMITS = {"deadline_ms": 60000, "max_frame_bytes": 16777216, "max_stdout_bytes": 67108864,
          "max_stderr_bytes": 65536, "max_operations": 100000, "max_file_bytes": 16777216,
          "max_total_bytes": 1073741824, "max_log_messages": 1000}
# What core offers, in this order; then "log", "digests", "cache" and
# "batches", each only sometimes, in that order.
CAPABILITIES = ("materialize", "plan", "post-commit-effects", "validate")
_OPTIONAL = ("log", "digests", "cache", "batches")
# "Batches": how many operations or artifacts go in one dot.operations or
# dot.artifacts notification (1024 paths of at most 4095 bytes fit a frame).
_BATCH = 1024
# "Plan": the one effect every plan carries (an fsync of the root after commit).
ROOT_SYNC = {"failure_policy": "required", "kind": "sync", "target": "managed-root"}
# "Plan": the four modes a write may ask for, as the integers the wire carries.
MODES = (0o600, 0o644, 0o700, 0o755)
LOG_LEVELS = ("debug", "info", "warning", "error")
# docs/spec/dpp-hello.md: the closed profile, its one id and its two files.
HELLO_PROFILE = "org.dot.hello/v1"
HELLO_ID = "org.dot.hello"
HELLO_NAMES = ("hello.txt", "welcome.txt")
_HELLO_MAX_FRAME = 65536        # "Session limits": one frame body
_HELLO_MAX_FILE = 65536         # "Materialize and the stage": 1 to 65536 bytes a file

_MAX_SAFE = 2**53 - 1           # "Transport": the largest integer
_MAX_DEPTH = 16                 # "Transport": nesting, the envelope is depth 1
_MAX_MESSAGE_BYTES = 4096       # "Error responses" and "Notifications: dot.log"
_ORDER = ("dot.initialize", "dot.plan", "dot.materialize", "dot.validate", "dot.shutdown")
_PARSE_ERROR, _INVALID_REQUEST, _METHOD_NOT_FOUND, _INVALID_PARAMS = -32700, -32600, -32601, -32602
_INTERNAL_ERROR, _HANDLER_ERROR = -32603, -32000
_COPY_CHUNK = 64 * 1024


@dataclass(frozen=True)
class Operation:
    """One change of a plan ("dot.plan result"): action "write" with one of
    MODES, "remove" with mode 0, or "link" with mode 0 and link_text (the
    text of the symbolic link core creates; None for the other actions);
    path relative to the managed root."""
    action: str
    mode: int
    path: str
    link_text: str = None
    # "Declared digests": a write's SHA-256 (64 lowercase hex digits) and
    # size, sent when the plugin declares_digests and core offered them.
    sha256: str = None
    size: int = None


@dataclass(frozen=True)
class Artifact:
    """One staged file ("dot.materialize result"): its path, SHA-256 (64
    lowercase hex digits) and size in bytes."""
    path: str
    sha256: str
    size: int


@dataclass(frozen=True)
class HelloArtifact:
    """One staged file of the hello profile ("dot.materialize"): its name,
    SHA-256 (64 lowercase hex digits) and size (1 to 65536 bytes)."""
    name: str
    sha256: str
    size: int


def write(path, mode, data=None):
    """A write operation: create or replace `path` with `mode` (0o600, 0o644, 0o700 or 0o755); with
    `data` (bytes) its SHA-256 and size are declared ("Declared digests")."""
    if data is None:
        return Operation("write", mode, path)
    return Operation("write", mode, path, sha256=hashlib.sha256(data).hexdigest(), size=len(data))


def remove(path):
    """A remove operation: delete `path`, which this plugin wrote earlier."""
    return Operation("remove", 0, path)


def link(path, link_text):
    """A link operation: make `path` a symbolic link holding `link_text`
    (1 to 4095 bytes of UTF-8 without NUL; relative or absolute, never
    followed). Nothing is staged for it."""
    return Operation("link", 0, path, link_text)


class PluginError(Exception):
    """A handler's refusal: answered -32000 "Plugin error: <detail>", with
    `data` (any JSON value of at most 4096 bytes) as the error's data."""

    def __init__(self, detail, data=None):
        super().__init__(detail)
        self.detail = str(detail)
        self.data = data


class InvalidParams(PluginError):
    """Params the plugin refuses beyond the profile's schema (one input where
    it takes exactly one): answered -32602 "Invalid params: <detail>"."""


class StageError(PluginError):
    """A staged file that cannot be written safely; `code` is the DOT_E_* code
    the C++ runtime gives (DOT_E_PATH_ESCAPE for a symlink or a path that is
    not plain relative names, DOT_E_IO for the rest)."""

    def __init__(self, code, detail):
        super().__init__("%s: %s" % (code, detail))
        self.code = code


class _FramingError(Exception):
    """A frame that breaks the framing rules: nothing can be answered."""


class _Unsendable(TypeError):
    """A handler's result the wire cannot carry: answered -32603."""


class _Refusal(Exception):
    """A request answered with an error response instead of a result."""

    def __init__(self, code, message, data=None):
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


def _bounded(text):
    """Text as a message may carry it: valid UTF-8, at most 4096 bytes, cut at
    a character boundary (a detail may quote bytes that are not UTF-8)."""
    raw = text.encode("utf-8", "replace")[:_MAX_MESSAGE_BYTES]
    return raw.decode("utf-8", "ignore")


def _excerpt(value):
    """Plugin- or host-supplied text in a detail: its first 80 characters."""
    text = str(value)
    return json.dumps(text[:80], ensure_ascii=False)[1:-1] + ("..." if len(text) > 80 else "")


def _is_uint(value):
    return type(value) is int and 0 <= value <= _MAX_SAFE


class Context:
    """What a handler gets: the dot.initialize params as received and log()."""

    def __init__(self, runtime):
        self._rt = runtime

    @property
    def initialize_params(self):
        return self._rt.params

    @property
    def log_negotiated(self):
        return self._rt.log

    @property
    def digests_negotiated(self):
        return self._rt.digests

    @property
    def cache_folder(self):
        """The plugin's cache folder when "cache" was negotiated (the plugin
        keeps_cache and core offered it), else None: a folder of its own that
        stays from one run to the next, or is emptied by core
        ("The plugin's cache")."""
        return self._rt.params["cache"] if self._rt.cache else None

    @property
    def paths_to_stage(self):
        """During dot.materialize: the writes to stage, in operation order (only
        those core named when digests were negotiated; else every write)."""
        return list(self._rt.to_stage)

    def log(self, level, message):
        """Sends one dot.log notification ("Notifications: dot.log") and
        returns True; returns False and sends nothing outside a handler,
        without negotiation, or past max_log_messages. A level other than the
        four or a message over 4096 bytes of UTF-8 is the caller's mistake:
        ValueError."""
        if level not in LOG_LEVELS:
            raise ValueError("dot.log level %r is not one of %s" % (level, ", ".join(LOG_LEVELS)))
        if not isinstance(message, str) or len(message.encode("utf-8", "surrogatepass")) > _MAX_MESSAGE_BYTES:
            raise ValueError("a dot.log message is a str of at most 4096 bytes of UTF-8")
        try:
            message.encode("utf-8")
        except UnicodeEncodeError as e:
            raise ValueError("a dot.log message must be valid UTF-8: %s" % e) from None
        return self._rt.send_log(level, message)


def registered_id(fallback):
    """The id dot-core runs this plugin under (the DOT_PLUGIN_ID environment
    variable), else `fallback`: for a plugin that may be registered under
    several ids (docs/spec/dpp-general.md, "Transport"). Core checks the
    echo against its manifest either way."""
    return os.environ.get("DOT_PLUGIN_ID") or fallback


class Plugin:
    """Subclass it: set `id` (the id it is registered with), `wants_log`, and
    write plan() and materialize(); initialize() is optional."""
    id = None
    wants_log = False
    # Declare each write's sha256 and size in plan() (write(path, mode, data));
    # materialize() then stages only ctx.paths_to_stage.
    declares_digests = False
    # Ask for "cache": ctx.cache_folder is then a folder of the plugin's own
    # that stays from one run to the next.
    keeps_cache = False

    def initialize(self, ctx, params):
        """After the params passed the profile's checks, before the echo."""

    def plan(self, ctx, managed):
        """The operations (Operation) in strictly ascending order of their
        paths' UTF-8 bytes, given the paths this plugin owns ("managed"): a
        list, or a generator that yields them one at a time. The runtime adds
        the root-sync effect."""
        raise NotImplementedError("plan")

    def materialize(self, ctx, stage):
        """Write each path of ctx.paths_to_stage (every planned write unless
        digests were negotiated) into `stage` (write_staged_file,
        copy_staged_file) and return one Artifact each, in that order: a list,
        or a generator that yields each as its file is staged. With a
        generator, each batch of 1024 goes to core while the rest is still
        being staged, which is what keeps a stage of 100,000 files within the
        deadline: core waits at most deadline_ms for the plugin's next frame
        ("The run")."""
        raise NotImplementedError("materialize")


class HelloPlugin:
    """A plugin of the hello profile org.dot.hello/v1: subclass it and write
    plan() and materialize(); initialize() is optional. The profile admits
    one id (HELLO_ID), the names HELLO_NAMES in that order, files of 1 to
    65536 bytes staged with mode 0600, no inputs, no dot.log."""
    id = HELLO_ID

    def initialize(self, ctx, params):
        """After the params passed the profile's checks, before the echo."""

    def plan(self, ctx):
        """The names the plan writes (a list of str): HELLO_NAMES. The
        runtime adds the root-sync effect."""
        return list(HELLO_NAMES)

    def materialize(self, ctx, stage):
        """Write every planned name into `stage` (write_hello_file) and return
        one HelloArtifact each, in the order of the names."""
        raise NotImplementedError("materialize")


# ---- "Transport": frames and bodies ----

def _read_frame(stream, max_body):
    """The next body; None at end of input before a frame starts."""
    # Byte by byte, judged as each arrives: a broken header ends the session
    # at its first wrong byte, never waiting for bytes the host will not send.
    for i, want in enumerate(b"Content-Length: "):
        c = stream.read(1)
        if not c and i == 0:
            return None
        if c != bytes([want]):
            raise _FramingError("the frame does not start with \"Content-Length: \"")
    digits = b""
    while True:
        c = stream.read(1)
        if not c:
            raise _FramingError("stream ended inside a frame header")
        if c == b"\r":
            break
        if not c.isdigit() or (not digits and c == b"0"):
            raise _FramingError("the length is not plain digits without a leading zero")
        digits += c
        if int(digits) > max_body:
            raise _FramingError("length over the limit of %d bytes" % max_body)
    if not digits:
        raise _FramingError("no length digits")
    for want in b"\n\r\n":
        if stream.read(1) != bytes([want]):
            raise _FramingError("the header does not end with CRLF CRLF")
    body = stream.read(int(digits))
    if len(body) != int(digits):
        raise _FramingError("stream ended inside a body of %d bytes" % int(digits))
    return body


def _no_duplicates(pairs):
    obj = {}
    for key, value in pairs:
        if key in obj:
            raise ValueError("the key %s appears twice in one object" % json.dumps(key, ensure_ascii=False))
        obj[key] = value
    return obj


def _refuse_constant(name):
    raise ValueError("%s is not JSON" % name)


def _check_value(value, depth):
    """Depth and strings that are UTF-8 (a lone surrogate escape is not)."""
    if isinstance(value, str):
        value.encode("utf-8")
    elif isinstance(value, (dict, list)):
        if depth + 1 > _MAX_DEPTH:
            raise ValueError("the body nests deeper than %d" % _MAX_DEPTH)
        for key in value if isinstance(value, dict) else ():
            key.encode("utf-8")
        for item in value.values() if isinstance(value, dict) else value:
            _check_value(item, depth + 1)


def _parse_body(body):
    """One JSON value per "Transport" ("Body checks"), else _Refusal -32700."""
    try:
        text = body.decode("utf-8")
        value = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_refuse_constant)
        _check_value(value, 0)
        return value
    except (UnicodeError, ValueError, RecursionError) as e:
        raise _Refusal(_PARSE_ERROR, "Parse error: %s" % e) from None


# ---- "Answering malformed requests": the envelope and the params ----

def _envelope(req, next_method):
    """(id, method, params) of a request that may be dispatched, else _Refusal.
    The rows are judged in the page's order: the method before the id."""
    if not isinstance(req, dict):
        raise _Refusal(_INVALID_REQUEST, "Invalid request: not a request object")
    if "id" not in req:
        raise _Refusal(_INVALID_REQUEST, "Invalid request: a request needs an \"id\" (notifications are not requests)")
    rid = req["id"]
    if not _is_uint(rid) or rid == 0:
        raise _Refusal(_INVALID_REQUEST, "Invalid request: the request id is not a positive integer")
    unknown = sorted(set(req) - {"jsonrpc", "id", "method", "params"})
    if unknown:
        raise _Refusal(_INVALID_REQUEST, "Invalid request: unknown member \"%s\" in the request" % _excerpt(unknown[0]))
    if req.get("jsonrpc") != "2.0":
        raise _Refusal(_INVALID_REQUEST, "Invalid request: \"jsonrpc\" must be the string \"2.0\"")
    method = req.get("method")
    if not isinstance(method, str):
        raise _Refusal(_INVALID_REQUEST, "Invalid request: the request needs a string \"method\"")
    if method != next_method:
        expected = next_method or "nothing after dot.shutdown"
        why = "is out of the lifecycle order" if method in _ORDER else "is not implemented"
        raise _Refusal(_METHOD_NOT_FOUND,
                       "Method not found: \"%s\" %s; expected %s" % (_excerpt(method), why, expected))
    if rid != _ORDER.index(method) + 1:
        raise _Refusal(_INVALID_REQUEST, "Invalid request: id %d for %s; ids go 1..5 in method order" % (rid, method))
    if "params" not in req:
        raise _Refusal(_INVALID_PARAMS, "Invalid params: the request has no params")
    return rid, method, req["params"]


def _bad(detail):
    return _Refusal(_INVALID_PARAMS, "Invalid params: " + detail)


def _members(params, what, types):
    """`params` an object with exactly the members of `types` (name -> check)."""
    if not isinstance(params, dict):
        raise _bad("%s params is not an object" % what)
    for name in sorted(params):
        if name not in types:
            raise _bad("%s params has the unknown field \"%s\"" % (what, _excerpt(name)))
    for name, check in types.items():
        if name not in params:
            raise _bad("%s params has no \"%s\"" % (what, name))
        if not check(params[name]):
            raise _bad("%s params member \"%s\" has the wrong type" % (what, name))
    return params


def _is_str_list(value):
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _is_limits(value):
    return isinstance(value, dict) and all(_is_uint(v) for v in value.values())


def _is_str(value):
    return isinstance(value, str)


def _initialize_params(params, hello=False):
    """The "dot.initialize params" of the general profile, or with `hello`
    the hello profile's (no inputs or limits, never "log"); else _Refusal
    -32602."""
    members = {"capabilities": _is_str_list, "nonce": _is_str, "profile": _is_str, "protocol": _is_uint,
               "required_assurance": _is_str}
    if not hello:
        members.update({"inputs": _is_str_list, "limits": _is_limits})
        # "The plugin's cache": the folder comes exactly with the offer.
        if isinstance(params, dict) and "cache" in params:
            members["cache"] = lambda v: isinstance(v, str) and v.startswith("/")
    p = _members(params, "dot.initialize", members)
    if p["protocol"] != PROTOCOL:
        raise _bad("unsupported protocol %d" % p["protocol"])
    if p["profile"] != (HELLO_PROFILE if hello else PROFILE):
        raise _bad("unsupported profile \"%s\"" % _excerpt(p["profile"]))
    if p["required_assurance"] not in ("audit", "process"):
        raise _bad("unknown required_assurance \"%s\"" % _excerpt(p["required_assurance"]))
    nonce = p["nonce"]
    if len(nonce) != 64 or any(c not in "0123456789abcdef" for c in nonce):
        raise _bad("the nonce is not 64 lowercase hex")
    if not hello and p["limits"] != LIMITS:
        raise _bad("the limits are not the profile's")
    caps = p["capabilities"]
    rest = caps[len(CAPABILITIES):]
    # Each optional one at most once, in _OPTIONAL's order; none in hello.
    in_order = [c for c in ([] if hello else _OPTIONAL) if c in rest]
    if caps[:len(CAPABILITIES)] != list(CAPABILITIES) or rest != in_order:
        raise _bad("the capabilities are not the profile's")
    if not hello and ("cache" in rest) != ("cache" in p):
        raise _bad("\"cache\" is offered without a cache folder, or a cache folder without the offer")
    return p


# ---- the results ----

def _operation(op, digests):
    if not isinstance(op, Operation):
        raise _Unsendable("plan() returned %r; operations are dot_plugin.Operation (write(), remove())" % (op,))
    if not isinstance(op.action, str) or type(op.mode) is not int or not isinstance(op.path, str):
        raise _Unsendable("operation %r: action and path are str, mode an int" % (op,))
    if op.link_text is not None and not isinstance(op.link_text, str):
        raise _Unsendable("operation %r: link_text is a str or None" % (op,))
    out = {"action": op.action, "mode": op.mode, "path": op.path}
    if op.link_text is not None:
        out["link_text"] = op.link_text
    declared = op.sha256 is not None or op.size is not None
    if declared and op.action != "write":
        raise _Unsendable("operation %r: only a write declares sha256 and size" % (op,))
    if digests and op.action == "write":
        if not isinstance(op.sha256, str) or not _is_uint(op.size):
            raise _Unsendable("operation %r: digests were negotiated, a write declares sha256 and size" % (op,))
        out["sha256"], out["size"] = op.sha256, op.size
    return out


def _artifact(art):
    if not isinstance(art, Artifact):
        raise _Unsendable("materialize() returned %r; artifacts are dot_plugin.Artifact (write_staged_file())" % (art,))
    if not isinstance(art.path, str) or not isinstance(art.sha256, str) or not _is_uint(art.size):
        raise _Unsendable("artifact %r: path and sha256 are str, size a non-negative int" % (art,))
    return {"path": art.path, "sha256": art.sha256, "size": art.size}


def _hello_name(name):
    if not isinstance(name, str):
        raise _Unsendable("plan() returned the name %r; the hello profile's names are str" % (name,))
    return name


def _hello_artifact(art):
    if not isinstance(art, HelloArtifact):
        raise _Unsendable("materialize() returned %r; artifacts are dot_plugin.HelloArtifact (write_hello_file())"
                          % (art,))
    if not isinstance(art.name, str) or not isinstance(art.sha256, str) or not _is_uint(art.size):
        raise _Unsendable("artifact %r: name and sha256 are str, size a non-negative int" % (art,))
    return {"name": art.name, "sha256": art.sha256, "size": art.size}


def _encode(message):
    """A message's body: compact JSON, members in sorted order as the C++
    runtime writes them, UTF-8 (TypeError or UnicodeError when
    it cannot be, a lone surrogate in a path for instance)."""
    return json.dumps(message, ensure_ascii=False, separators=(",", ":"), allow_nan=False,
                      sort_keys=True).encode("utf-8")


# ---- the session ----

class _Runtime:
    def __init__(self, plugin, stdin, stdout, stderr):
        self.plugin, self.stdin, self.stdout, self.stderr = plugin, stdin, stdout, stderr
        self.next = 1             # the id (and method) expected next; 6 after dot.shutdown
        self.params = None        # the dot.initialize params as received
        self.log = False          # log negotiated
        self.digests = False      # digests negotiated
        self.cache = False        # cache negotiated
        self.batches = False      # batches negotiated
        self.writes = []          # the plan's writes, in order
        self.to_stage = []        # what dot.materialize asks for
        self.in_request = False   # dot.log is allowed only while a handler runs
        self.logs_sent = 0
        self.hello = isinstance(plugin, HelloPlugin)
        self.max_frame = _HELLO_MAX_FRAME if self.hello else LIMITS["max_frame_bytes"]

    def note(self, line):
        try:
            self.stderr.write((line + "\n").encode("utf-8", "replace"))
            self.stderr.flush()
        except OSError:
            pass

    def send(self, message):
        body = _encode(message)
        self.stdout.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.stdout.flush()

    def send_batches(self, method, member, items):
        """"Batches": the elements of the iterable `items` in `method`
        notifications of _BATCH each, every full batch sent as soon as the
        next element shows it is not the last (so a generator's batches go
        out while it still works); returns the last 1 to _BATCH elements, or
        all of them without batches, for the result."""
        if not self.batches:
            return list(items)
        batch = []
        for item in items:
            if len(batch) == _BATCH:
                self.send_batch(method, member, batch)
                batch = []
            batch.append(item)
        return batch

    def send_batch(self, method, member, batch):
        try:
            body = _encode({"jsonrpc": "2.0", "method": method, "params": {member: batch}})
        except (TypeError, ValueError) as e:
            raise _Unsendable("a %s batch cannot be sent: %s" % (method, e)) from None
        if len(body) > self.max_frame:
            raise _Unsendable("a %s batch has %d bytes; a frame carries at most %d"
                              % (method, len(body), self.max_frame))
        self.stdout.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.stdout.flush()

    def send_log(self, level, message):
        if not self.in_request or not self.log or self.logs_sent >= LIMITS["max_log_messages"]:
            return False
        self.send({"jsonrpc": "2.0", "method": "dot.log", "params": {"level": level, "message": message}})
        self.logs_sent += 1
        return True

    def answer_error(self, rid, refusal):
        message = _bounded(refusal.message)
        self.note(message)
        error = {"code": refusal.code, "message": message}
        if refusal.data is not None:
            try:
                if len(_encode(refusal.data)) <= _MAX_MESSAGE_BYTES:
                    error["data"] = refusal.data
                else:
                    self.note("the error's data is over 4096 bytes; sent without it")
            except (TypeError, ValueError) as e:
                self.note("the error's data is not JSON (%s); sent without it" % e)
        self.send({"jsonrpc": "2.0", "id": rid, "error": error})

    def run(self):
        while True:
            try:
                body = _read_frame(self.stdin, self.max_frame)
            except _FramingError as e:
                self.note("DOT_E_PROTOCOL: %s" % e)
                return 1
            if body is None:
                if self.next > len(_ORDER):
                    return 0
                self.note("DOT_E_PROTOCOL: the host closed stdin before %s" % _ORDER[self.next - 1])
                return 1
            rid = None
            try:
                req = _parse_body(body)
                if isinstance(req, dict) and _is_uint(req.get("id")) and req["id"] > 0:
                    rid = req["id"]
                next_method = _ORDER[self.next - 1] if self.next <= len(_ORDER) else None
                rid, method, params = _envelope(req, next_method)
                self.answer(rid, method, params)
            except _Refusal as refusal:
                self.answer_error(rid, refusal)

    def answer(self, rid, method, params):
        """The result of a request that passed the envelope, sent; or _Refusal."""
        self.in_request = True
        try:
            result = self.handle(method, params)
        except _Refusal:
            raise
        except _Unsendable as e:
            raise _Refusal(_INTERNAL_ERROR, "Internal error: the %s result cannot be sent: %s" % (method, e)) from None
        except InvalidParams as e:
            raise _Refusal(_INVALID_PARAMS, "Invalid params: " + e.detail, e.data) from None
        except PluginError as e:
            raise _Refusal(_HANDLER_ERROR, "Plugin error: " + e.detail, e.data) from None
        except Exception as e:  # a handler's own failure is its answer, never the end of the session
            raise _Refusal(_HANDLER_ERROR, "Plugin error: %s: %s" % (type(e).__name__, e)) from None
        finally:
            self.in_request = False
        try:
            body = _encode({"jsonrpc": "2.0", "id": rid, "result": result})
        except (TypeError, ValueError) as e:
            raise _Refusal(_INTERNAL_ERROR, "Internal error: the %s result cannot be sent: %s" % (method, e)) from None
        if len(body) > self.max_frame:
            raise _Refusal(_INTERNAL_ERROR, "Internal error: the %s result has %d bytes; a frame carries at most %d"
                           % (method, len(body), self.max_frame))
        self.stdout.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.stdout.flush()
        self.next += 1

    def handle(self, method, params):
        ctx = Context(self)
        if self.hello:
            return self.handle_hello(ctx, method, params)
        if method == "dot.initialize":
            p = _initialize_params(params)
            self.params = p
            self.log = bool(self.plugin.wants_log) and "log" in p["capabilities"]
            self.digests = bool(getattr(self.plugin, "declares_digests", False)) and "digests" in p["capabilities"]
            self.cache = bool(getattr(self.plugin, "keeps_cache", False)) and "cache" in p["capabilities"]
            # Batches change nothing a plugin sees: the runtime cuts its lists.
            self.batches = "batches" in p["capabilities"]
            try:
                self.plugin.initialize(ctx, p)
            except BaseException:
                self.log = self.digests = self.cache = self.batches = False
                raise
            taken = {"log": self.log, "digests": self.digests, "cache": self.cache, "batches": self.batches}
            echo = list(CAPABILITIES) + [c for c in _OPTIONAL if taken[c]]
            # "dot.initialize result: the echo": note `assurance`, not required_assurance.
            return {"assurance": p["required_assurance"], "capabilities": echo,
                    "id": self.plugin.id, "inputs": p["inputs"], "limits": p["limits"], "nonce": p["nonce"],
                    "profile": p["profile"], "protocol": p["protocol"]}
        if method == "dot.plan":
            p = _members(params, method, {"managed": _is_str_list})
            self.writes = []

            def checked(ops):
                for op in ops:
                    op = _operation(op, self.digests)
                    if op["action"] == "write":
                        self.writes.append(op["path"])
                    yield op
            ops = checked(self.plugin.plan(ctx, list(p["managed"])))
            return {"effects": [dict(ROOT_SYNC)], "operations": self.send_batches("dot.operations", "operations", ops)}
        if method == "dot.materialize":
            members = {"stage": lambda v: isinstance(v, str)}
            if self.digests:
                members["paths"] = _is_str_list
            p = _members(params, method, members)
            self.to_stage = _asked_paths(self.writes, p["paths"]) if self.digests else list(self.writes)
            arts = (_artifact(a) for a in self.plugin.materialize(ctx, p["stage"]))
            return {"artifacts": self.send_batches("dot.artifacts", "artifacts", arts)}
        _members(params, method, {})
        return {"valid": True}

    def handle_hello(self, ctx, method, params):
        """The hello profile's answers ("Methods" of docs/spec/dpp-hello.md)."""
        if method == "dot.initialize":
            p = _initialize_params(params, hello=True)
            self.params = p
            self.plugin.initialize(ctx, p)
            return {"assurance": p["required_assurance"], "capabilities": p["capabilities"], "id": self.plugin.id,
                    "nonce": p["nonce"], "profile": p["profile"], "protocol": p["protocol"]}
        if method == "dot.plan":
            _members(params, method, {})
            names = self.plugin.plan(ctx)
            if not isinstance(names, (list, tuple)):
                raise _Unsendable("plan() returned %r; a hello plan is a list of names" % (names,))
            return {"effects": [dict(ROOT_SYNC)], "names": [_hello_name(n) for n in names]}
        if method == "dot.materialize":
            p = _members(params, method, {"stage": lambda v: isinstance(v, str)})
            return {"artifacts": [_hello_artifact(a) for a in self.plugin.materialize(ctx, p["stage"])]}
        _members(params, method, {})
        return {"valid": True}


def _asked_paths(writes, paths):
    """`paths` of dot.materialize: a subsequence of the plan's writes, or _Refusal -32602."""
    it = iter(writes)
    for path in paths:
        if not any(w == path for w in it):
            raise _bad("paths names \"%s\", which is not a later write of the plan" % _excerpt(path))
    return list(paths)


def serve(plugin, stdin=None, stdout=None, stderr=None):
    """The whole session over binary streams (default: the process's stdin,
    stdout and stderr); returns the exit status. sys.stdout is sys.stderr
    while it runs."""
    if not isinstance(plugin.id, str):
        raise TypeError("the plugin's id is the str it is registered with")
    rt = _Runtime(plugin, stdin or sys.stdin.buffer, stdout or sys.stdout.buffer, stderr or sys.stderr.buffer)
    saved = sys.stdout
    sys.stdout = sys.stderr
    try:
        return rt.run()
    except (BrokenPipeError, ConnectionResetError) as e:  # the host went away
        rt.note("DOT_E_PROTOCOL: cannot write the answer: %s" % e)
        return 1
    finally:
        sys.stdout = saved


def run(plugin):
    """serve() on the process's streams, then exit with its status."""
    sys.exit(serve(plugin))


# ---- "Materialize and validate": staging ----

def _check_relative(path):
    """A plain relative path: names separated by single "/", none empty, "." or ".."."""
    if not isinstance(path, str) or not path:
        raise StageError("DOT_E_PATH_ESCAPE", "a staged path is a non-empty str")
    if path.startswith("/") or any(c in ("", ".", "..") for c in path.split("/")):
        raise StageError("DOT_E_PATH_ESCAPE", "\"%s\" is not a plain relative path" % _excerpt(path))


def _open_stage_file(stage, path):
    """`path` created exclusively (0600) beneath `stage`, its missing folders
    made (0700) one component at a time through descriptors, never through a
    symlink; the open descriptor."""
    _check_relative(path)
    names = path.split("/")
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
    try:
        folder = os.open(stage, flags)
    except OSError as e:
        raise StageError("DOT_E_IO", "cannot open the stage %s: %s" % (_excerpt(stage), e.strerror)) from None
    try:
        for name in names[:-1]:
            made = True
            try:
                os.mkdir(name, 0o700, dir_fd=folder)
            except FileExistsError:
                made = False
            try:
                sub = os.open(name, flags | os.O_NOFOLLOW, dir_fd=folder)
            except OSError as e:
                if stat.S_ISLNK(os.lstat(name, dir_fd=folder).st_mode):
                    raise StageError("DOT_E_PATH_ESCAPE", "%s in the stage is a symlink; staged files are never "
                                     "written through one" % _excerpt(name)) from None
                raise StageError("DOT_E_IO",
                                 "cannot open %s in the stage: %s" % (_excerpt(name), e.strerror)) from None
            os.close(folder)
            folder = sub
            if made:  # the umask may have taken bits core needs to read it back
                os.fchmod(folder, 0o700)
        try:
            fd = os.open(names[-1], os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                         dir_fd=folder)
            os.fchmod(fd, 0o600)  # whatever the umask took: the hello profile requires exactly 0600
            return fd
        except OSError as e:
            raise StageError("DOT_E_IO", "cannot create %s in the stage: %s" % (_excerpt(path), e.strerror)) from None
    except OSError as e:
        raise StageError("DOT_E_IO", "cannot stage %s: %s" % (_excerpt(path), e.strerror)) from None
    finally:
        os.close(folder)


def _write_all(fd, data, path):
    view = memoryview(data)
    while view:
        try:
            n = os.write(fd, view)
        except OSError as e:
            raise StageError("DOT_E_IO", "cannot write %s in the stage: %s" % (_excerpt(path), e.strerror)) from None
        view = view[n:]


def write_staged_file(stage, path, data):
    """Writes `data` (bytes, or str as UTF-8) at the relative `path` beneath
    `stage` and returns its Artifact. The folders on the way are created
    (0700), the file exclusively (0600); a symlink on the way, or a path that
    is not plain relative names, is StageError DOT_E_PATH_ESCAPE."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    fd = _open_stage_file(stage, path)
    try:
        _write_all(fd, data, path)
    finally:
        os.close(fd)
    return Artifact(path, hashlib.sha256(data).hexdigest(), len(data))


def copy_staged_file(stage, path, source, max_bytes=LIMITS["max_file_bytes"]):
    """The same with the bytes read from `source` (a binary file object or a
    descriptor, from where it is to its end) in 64 KiB chunks, hashed as they
    pass: constant memory for a file of any size. More than `max_bytes` is
    StageError DOT_E_IO."""
    read = (lambda n: os.read(source, n)) if isinstance(source, int) else source.read
    fd = _open_stage_file(stage, path)
    digest, size = hashlib.sha256(), 0
    try:
        while True:
            chunk = read(_COPY_CHUNK)
            if not chunk:
                break
            if len(chunk) > max_bytes - size:
                raise StageError("DOT_E_IO", "the source of %s has more than %d bytes" % (_excerpt(path), max_bytes))
            digest.update(chunk)
            _write_all(fd, chunk, path)
            size += len(chunk)
    finally:
        os.close(fd)
    return Artifact(path, digest.hexdigest(), size)


def write_hello_file(stage, name, data):
    """A hello-profile file: `data` (bytes, or str as UTF-8; 1 to 65536
    bytes) written as `name` directly in `stage`, created exclusively with
    mode 0600 as the profile requires; its HelloArtifact. A name with a "/"
    or a symlink on the way is StageError DOT_E_PATH_ESCAPE."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    if not isinstance(name, str) or "/" in name:
        raise StageError("DOT_E_PATH_ESCAPE", "a hello file is a plain name directly in the stage")
    if not 1 <= len(data) <= _HELLO_MAX_FILE:
        raise StageError("DOT_E_IO", "a hello file holds 1 to %d bytes, not %d" % (_HELLO_MAX_FILE, len(data)))
    art = write_staged_file(stage, name, data)
    return HelloArtifact(name, art.sha256, art.size)
