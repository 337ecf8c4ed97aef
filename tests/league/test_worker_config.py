"""The Celery app's time limits, as a worker process really loads them, never lose a match."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from arena_harness import ROOT

PRINT_LIMITS = (
    "import json; from worker.celery_app import app; "
    "print(json.dumps([app.conf.task_time_limit, app.conf.task_soft_time_limit, "
    "app.conf.broker_transport_options['visibility_timeout']]))"
)


@pytest.mark.parametrize(("visibility", "limit"), [("12", "10"), ("100", "60"), ("7200", "6900")])
def test_soft_time_limit_stays_below_the_hard_one_below_the_visibility_timeout(visibility: str, limit: str) -> None:
    env = {**os.environ, "TABLANETTE_VISIBILITY_TIMEOUT": visibility, "TABLANETTE_TASK_TIME_LIMIT": limit}
    out = subprocess.run(
        [sys.executable, "-c", PRINT_LIMITS], env=env, cwd=ROOT, capture_output=True, text=True, check=True
    )
    hard, soft, vis = json.loads(out.stdout)
    assert soft < hard < vis  # a soft limit above the hard one makes Celery drop every retried match
