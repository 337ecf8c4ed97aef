#!/usr/bin/env bash
# The test command: lint, format check, strict typing, then every test.
set -euo pipefail
source "$(dirname "$0")/env.sh" test
echo "== building the example bots (Node.js, C++)"; bash scripts/setup_bots.sh
echo "== ruff check"; ruff check .
echo "== ruff format --check"; ruff format --check .
echo "== mypy --strict"; mypy --strict engine_service bots scheduler worker
echo "== pytest"; python -m pytest "$@"
