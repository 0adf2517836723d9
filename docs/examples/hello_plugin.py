#!/usr/bin/python3
"""A complete hello-profile (org.dot.hello/v1) plugin in Python on the
dot_plugin module (docs/writing-plugins.md, "The hello profile in Python"):
the two files of the profile, with words of your own.

    dot-core dpp conform --profile org.dot.hello/v1 -- /usr/bin/python3 /usr/share/doc/dot-core/examples/hello_plugin.py

dot_plugin does the protocol (docs/spec/dpp-hello.md): the 64 KiB frames,
the echo, the lifecycle, the root-sync effect, mode 0600 in the stage. The
test suite runs this file through every conformance case of the profile.
"""
import dot_plugin

# The profile's two names, in its order, each 1 to 65536 bytes.
TEXT = {
    "hello.txt": "Hello from Python!\n",
    "welcome.txt": "Welcome: this file was planned by a Python plugin.\n",
}


class Hello(dot_plugin.HelloPlugin):
    # id is org.dot.hello and plan() returns dot_plugin.HELLO_NAMES: the
    # profile admits nothing else, so only materialize() is yours to write.
    def materialize(self, ctx, stage):
        return [dot_plugin.write_hello_file(stage, name, TEXT[name]) for name in dot_plugin.HELLO_NAMES]


if __name__ == "__main__":
    dot_plugin.run(Hello())
