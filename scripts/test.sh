#!/usr/bin/env bash
# The test command: lint, format check, strict typing, then every test.
set -euo pipefail
source "$(dirname "$0")/env.sh" test
echo "== test dependencies: Chromium, the Node.js and C++ example bots"; bash scripts/setup_test_deps.sh
echo "== ruff check"; ruff check .
echo "== ruff format --check"; ruff format --check .
echo "== mypy --strict"; mypy --strict engine_service bots scheduler worker
echo "== pytest"; python -m pytest "$@"
