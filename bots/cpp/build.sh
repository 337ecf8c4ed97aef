#!/usr/bin/env bash
# Configure and build the C++ example bot into ./build (gitignored).
# Needs: apt-get install -y libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler pkg-config cmake g++
# Arguments go to cmake, e.g. for a copy outside the repository:
#   ./build.sh -DTABLANETTE_PROTO_DIR=/path/to/tablanette-arena/proto -DTABLANETTE_BOT_NAME=my-bot
set -euo pipefail
cd "$(dirname "$0")"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build build -j2
echo "built: $(pwd)/build/tablanette-cpp-bot  (self-test: ctest --test-dir build)"
