#!/bin/sh
# Executable in the source, so dot-mirror writes it with mode 0755 (or 0700).
echo "Hello from a mirrored script."
