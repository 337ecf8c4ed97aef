"""deploy/compose.rabbitmq.yaml, laid over deploy/compose.yaml as ``docker compose -f A -f B`` does, runs the
arena on RabbitMQ: every arena service is given the same amqp:// broker (the vhost and user the RabbitMQ
service makes), the workers and the scheduler wait for it, and its ``consumer_timeout`` outlasts the
longest match a worker may hold unacknowledged (the league on RabbitMQ itself: tests/league/test_rabbitmq.py).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from config import load_settings
from worker.metrics import amqp_broker

ROOT = Path(__file__).resolve().parents[2]
ARENA_SERVICES = ("engine-1", "engine-2", "worker", "scheduler")


def load(name: str) -> dict[str, Any]:
    return dict(yaml.safe_load((ROOT / "deploy" / name).read_text()))


def merged() -> dict[str, Any]:
    """compose.yaml with the override on top: a service's mappings (environment, depends_on) merge key by
    key, anything else is replaced, as Compose merges files."""
    base, over = load("compose.yaml"), load("compose.rabbitmq.yaml")
    services = {name: dict(s) for name, s in base["services"].items()}
    for name, extra in over["services"].items():
        service = services.setdefault(name, {})
        for key, value in extra.items():
            old = service.get(key)
            service[key] = {**old, **value} if isinstance(old, dict) and isinstance(value, dict) else value
    return {"services": services, "volumes": {**base.get("volumes", {}), **over.get("volumes", {})}}


def expand(value: str) -> str:
    """``${VAR:-default}`` as Compose fills it when VAR is not set."""
    return re.sub(r"\$\{\w+:-([^}]*)\}", r"\1", value)


def test_every_arena_service_gets_the_rabbitmq_broker_the_rabbitmq_service_makes() -> None:
    services = merged()["services"]
    rabbit = services["rabbitmq"]["environment"]
    urls = {name: expand(services[name]["environment"]["TABLANETTE_BROKER_URL"]) for name in ARENA_SERVICES}
    assert len(set(urls.values())) == 1, urls
    url = urlsplit(next(iter(urls.values())))
    assert amqp_broker(url.geturl()), "the workers would take a non-amqp URL for Redis"
    assert (url.hostname, url.port) == ("rabbitmq", 5672)
    assert url.username == rabbit["RABBITMQ_DEFAULT_USER"]
    assert url.password == expand(rabbit["RABBITMQ_DEFAULT_PASS"])
    assert url.path.removeprefix("/") == rabbit["RABBITMQ_DEFAULT_VHOST"]
    for name in ARENA_SERVICES:  # the base file's environment is kept, not replaced
        assert services[name]["environment"]["TABLANETTE_REDIS_URL"] == "redis://redis:6379/0", name


def test_the_workers_and_the_scheduler_wait_for_rabbitmq_and_it_keeps_its_queue() -> None:
    services = merged()["services"]
    for name in ("worker", "scheduler"):
        assert services[name]["depends_on"]["rabbitmq"] == {"condition": "service_healthy"}, name
        assert services[name]["depends_on"]["redis"] == {"condition": "service_healthy"}, name
    rabbit = services["rabbitmq"]
    assert "healthcheck" in rabbit and "ports" not in rabbit  # reached on the compose network only
    assert rabbit["hostname"] == "rabbitmq"  # the node name, hence the data directory, survives re-creation
    assert "rabbitmq-data:/var/lib/rabbitmq" in rabbit["volumes"] and "rabbitmq-data" in merged()["volumes"]


def test_rabbitmq_lets_a_worker_hold_the_longest_match_unacknowledged() -> None:
    mounts = [v.split(":") for v in merged()["services"]["rabbitmq"]["volumes"]]
    conf = next(src for src, dst, *_ in mounts if dst.startswith("/etc/rabbitmq/conf.d/"))
    text = (ROOT / "deploy" / conf).read_text()
    found = re.search(r"^consumer_timeout\s*=\s*(\d+)\s*$", text, re.M)
    assert found, "consumer_timeout is not set: RabbitMQ's 30 minutes would cut matches the arena allows"
    assert int(found.group(1)) > 1000 * load_settings().task_time_limit  # the default hard limit of one match
