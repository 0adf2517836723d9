# The interpreted hostile plugins of tests/dpp/hostile/interpreted_cases.list.
# Each case is one script, bin/dpp-hostile-<CASE>: "#!" this machine's
# python3, then `CASE = "<name>"`, then dot_plugin (inlined: the isolated
# interpreter reads no folder but its own runtime), then this file. Each is
# the honest hello plugin (what dot-hello writes) but for one act, done where
# the act's verdict is decided; "py_honest" does none. The workspace around
# the stage (tests/dpp/test_hostile.cpp) holds home/.ssh/id_ed25519, a key the
# plugin was never given.
import time

dot_plugin = sys.modules[__name__]

CONTENT = {"hello.txt": b"Hello, world!\n",
           "welcome.txt": b"Welcome to dot-core: this file was planned by org.dot.hello.\n"}


def beside(stage, *names):
    """A path in the workspace around the stage: outside what it may touch."""
    return os.path.join(os.path.dirname(os.path.abspath(stage)), *names)


class Hostile(dot_plugin.HelloPlugin):
    def initialize(self, ctx, params):
        if CASE == "py_reads_ssh_key":
            with open(beside(os.environ["DOT_STAGE_ROOT"], "home", ".ssh", "id_ed25519")) as f:
                sys.stderr.write("read a key of %d bytes\n" % len(f.read()))
        if CASE == "py_garbage_before_header":  # the request was read: bytes before the answer's header
            os.write(1, b"garbage")
        if CASE == "py_wrong_nonce":  # the echo is made from these params
            params["nonce"] = params["nonce"][::-1]

    def plan(self, ctx):
        if CASE == "py_sleep_past_deadline":
            time.sleep(3600)
        if CASE == "py_names_outside_allowlist":
            return ["hello.txt", "other.txt"]
        return list(dot_plugin.HELLO_NAMES)

    def materialize(self, ctx, stage):
        if CASE == "py_writes_beside_stage":
            with open(beside(stage, "beside.txt"), "w") as f:
                f.write("written beside the stage\n")
        if CASE == "py_exits_mid_session":
            os._exit(0)
        arts = [dot_plugin.write_hello_file(stage, name, CONTENT[name]) for name in dot_plugin.HELLO_NAMES]
        return arts[:1] if CASE == "py_artifact_missing" else arts


if CASE == "py_execs_shell":
    os.execv("/bin/sh", ["sh", "-c", "touch '%s'" % beside(os.environ["DOT_STAGE_ROOT"], "sh-ran")])
if CASE == "py_opens_socket":
    import socket  # here only: the module's import itself makes a call containment refuses

    socket.socket(socket.AF_INET, socket.SOCK_STREAM).close()
    sys.stderr.write("opened a socket\n")
if CASE == "py_stderr_flood":
    sys.stderr.write("e" * 9 * 1024)
    sys.stderr.flush()
dot_plugin.run(Hostile())
