#!/usr/bin/python3
"""A complete general-profile (org.dot.dpp/v1) plugin in Python on the
dot_plugin module (docs/writing-plugins.md, "A plugin in Python"): it
proposes two files, one of them executable, and says so through dot.log.

    dot-core dpp conform --id org.example.py -- /usr/bin/python3 /usr/share/doc/dot-core/examples/general_plugin.py

dot_plugin does the protocol (docs/spec/dpp-general.md): the framing, the
echo, the lifecycle, the limits, the root-sync effect and every error
answer. The test suite runs this file through every conformance case.
"""
import dot_plugin

# path -> (mode, bytes). A mode is one of the integers of dot_plugin.MODES.
FILES = {
    "bin/hello": (0o755, b"#!/bin/sh\necho hello\n"),
    "notes/hello.txt": (0o644, b"hello from python\n"),
}


def in_path_order(files):
    """Operations go in ascending order of the paths' UTF-8 bytes ("Plan")."""
    return sorted(files.items(), key=lambda item: item[0].encode())


class Hello(dot_plugin.Plugin):
    # The id it is registered with: dot-core register --id org.example.py ...
    id = "org.example.py"
    # Ask for dot.log (dot-core always offers it; conform also tries without).
    wants_log = True

    def plan(self, ctx, managed):
        # `managed`: the paths this plugin owns in the root; remove those it
        # no longer proposes.
        ops = [dot_plugin.write(path, mode) for path, (mode, _) in in_path_order(FILES)]
        ops += [dot_plugin.remove(path) for path in managed if path not in FILES]
        ops.sort(key=lambda op: op.path.encode())
        ctx.log("info", "proposing %d files" % len(FILES))  # False, and nothing sent, without log
        return ops

    def materialize(self, ctx, stage):
        # One artifact per write, in operation order, each yielded as its file
        # is staged (a list works too): with thousands of files, dot-core gets
        # them in batches while the rest are being staged.
        for path, (_, data) in in_path_order(FILES):
            yield dot_plugin.write_staged_file(stage, path, data)


if __name__ == "__main__":
    dot_plugin.run(Hello())
