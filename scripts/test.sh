#!/usr/bin/env bash
# The test command: lint, format check, strict typing, then every test.
#   bash scripts/test.sh          everything (what CI runs): unit, end-to-end, fault and browser tests
#   bash scripts/test.sh --fast   the edit-test loop: the same lint and typing, then only the tests that
#                                 need no server and start no process (tests/tiers.py), less the slow
#                                 ones (marked slow: the luck estimator's 12,000-deal unbiasedness check)
# Further arguments go to pytest, e.g. `bash scripts/test.sh --fast -k captures` (without --fast, given any,
# they alone say what runs, on one worker).
set -euo pipefail
fast=0
if [ "${1:-}" = "--fast" ]; then fast=1; shift; fi
source "$(dirname "$0")/env.sh" test
if [ "$fast" = 0 ]; then
    echo "== test dependencies: Chromium, the Node.js and C++ example bots"; bash scripts/setup_test_deps.sh
fi
echo "== ruff check"; ruff check .
echo "== ruff format --check"; ruff format --check .
echo "== mypy --strict"; mypy --strict engine_service config telemetry store worker scheduler web hosting programs cli bots
if [ "$fast" = 1 ]; then
    # on two workers: the edit-test loop in under a minute on this 2-core machine (one worker: about 75 s)
    echo "== pytest (fast tier)"; python -m pytest -n 2 -m "fast and not slow" "$@"
elif [ "$#" -gt 0 ]; then
    echo "== pytest $*"; python -m pytest "$@"
else
    # Two workers (each test file on one, so a module's arena is made once), but for the tests that watch
    # the whole machine (every run cgroup, every process, /tmp): another worker's runs would be theirs to
    # see, so they run after, alone. So does the README's quickstart, which binds the arena's default
    # ports as written: 50051 lies in the kernel's ephemeral range, where the other worker's connections
    # and free ports come from. --durations: the slowest of each, where CI's minutes go.
    # Each part ends with its wall time beside the CPU time of every process it waited for: that CPU time
    # over the cores is the floor of the part's wall time (the two-worker part kept 2 cores 60% busy in
    # the last runs, the alone part 26%: both wait on timeouts, leases, restarts and cut links).
    alone=(tests/sandbox tests/cli/test_match.py tests/cli/test_newcomer.py)
    status=0  # both parts run and report, whatever the first one found
    TIMEFORMAT="== that part: %0R s wall; CPU %0U s user + %0S s system, over $(nproc) cores"
    echo "== pytest, on two workers"
    time python -m pytest -n 2 --dist loadfile --durations=40 "${alone[@]/#/--ignore=}" || status=$?
    echo "== pytest, alone: ${alone[*]}"
    time python -m pytest --durations=15 "${alone[@]}" || status=$?
    exit "$status"
fi
