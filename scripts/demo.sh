#!/usr/bin/env bash
# The main job: a demo with the built-in bots on this machine.
set -euo pipefail
source "$(dirname "$0")/env.sh" local
# The Node.js bot joins the demo when Node.js is installed.
if command -v npm >/dev/null && [ ! -d bots/node/node_modules ]; then
    (cd bots/node && npm ci --no-audit --no-fund --loglevel=error) || echo "(npm ci failed: the demo runs without the Node.js bot)" >&2
fi
tablanette demo "$@"
