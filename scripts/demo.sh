#!/usr/bin/env bash
# The main job: a demo with the built-in bots on this machine.
set -euo pipefail
source "$(dirname "$0")/env.sh"
tablanette demo "$@"
