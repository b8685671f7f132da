#!/bin/sh
# The project's build, as kptprof.json's "build" runs it at the root of a
# checkout (gate --against builds the base revision with it). CUDAARCHS
# (e.g. 90) overrides the default, the GPU of this machine.
set -e
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j
