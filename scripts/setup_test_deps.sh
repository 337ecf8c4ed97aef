#!/usr/bin/env bash
# What the tests need beyond Python packages: Debian's Chromium (browser tests), bubblewrap (sandboxes),
# iproute2, nftables and curl (the namespace hosts of tests/multihost), a JDK (the Java example bot is
# built from source in its sandbox), the Node.js bot's packages (npm ci) and the C++ bot (Debian's gRPC
# packages + CMake).
# Installs missing Debian packages when run as root; builds only what is out of date.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"

DEBS=(libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler pkg-config cmake g++ chromium bubblewrap perl
    iproute2 nftables curl openjdk-17-jdk-headless)
missing=()
for pkg in "${DEBS[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "installing Debian packages: ${missing[*]}" >&2
        apt-get update -qq >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2
    else
        echo "missing Debian packages for the tests: ${missing[*]} (apt-get install them)" >&2
        exit 1
    fi
fi

if [ ! -d "$ROOT/bots/node/node_modules" ] || [ "$ROOT/bots/node/package-lock.json" -nt "$ROOT/bots/node/node_modules" ]; then
    echo "installing the Node.js bot's packages (npm ci)" >&2
    (cd "$ROOT/bots/node" && npm ci --no-audit --no-fund --loglevel=error >&2)
fi

exe="$ROOT/bots/cpp/build/tablanette-cpp-bot"
if [ ! -x "$exe" ] || [ -n "$(find "$ROOT/bots/cpp" "$ROOT/proto" -newer "$exe" \( -name '*.cpp' -o -name '*.h' -o -name '*.proto' -o -name CMakeLists.txt \) -print -quit)" ]; then
    echo "building the C++ bot" >&2
    (cd "$ROOT/bots/cpp" && cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >&2 && cmake --build build -j2 >&2)
fi
