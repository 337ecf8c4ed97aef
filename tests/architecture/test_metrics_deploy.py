"""The metrics the processes define, the deploy files that scrape them and the dashboard that reads them agree.

A dashboard query naming a series no process serves, a scrape target on a port
the compose file does not set, or a series the operations guide does not
describe is a mistake nobody sees until a graph stays empty in production.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml
from prometheus_client import REGISTRY

import engine_service.metrics
import telemetry
import worker.metrics

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
METRICS_PORT = "9100"


def served_families() -> dict[str, str]:
    """Every tablanette series a process can serve: family name -> type (the queue depth included, which a
    worker registers when it starts)."""
    assert engine_service.metrics and worker.metrics and telemetry  # imported for their series
    families = {m.name: m.type for m in REGISTRY.collect() if m.name.startswith("tablanette_")}
    for m in worker.metrics.QueueDepth("redis://127.0.0.1:1/0", "unused").describe():
        families[m.name] = m.type
    return families


def sample_names() -> set[str]:
    """The names Prometheus stores (``_total`` for counters, ``_bucket``/``_sum``/``_count`` for histograms)."""
    suffixes = {"counter": ("_total",), "histogram": ("_bucket", "_sum", "_count"), "gauge": ("",)}
    return {name + s for name, kind in served_families().items() for s in suffixes[kind]}


def test_the_series_the_issue_asks_for_are_served() -> None:
    names = sample_names()
    for wanted in (
        "tablanette_matches_queued",
        "tablanette_matches_running",
        "tablanette_matches_total",  # outcome done / failed / ...
        "tablanette_match_duration_seconds_bucket",
        "tablanette_move_latency_seconds_bucket",
        "tablanette_timeouts_total",
        "tablanette_illegal_plays_total",
        "tablanette_forfeits_total",
        "tablanette_connected_bots",
        "tablanette_redis_errors_total",
    ):
        assert wanted in names


def test_every_dashboard_query_reads_a_served_series() -> None:
    dashboard = json.loads((DEPLOY / "grafana/tablanette.json").read_text())
    datasource = yaml.safe_load((DEPLOY / "grafana/provisioning/datasources/prometheus.yml").read_text())
    uid = datasource["datasources"][0]["uid"]
    names, used = sample_names(), set()
    for panel in dashboard["panels"]:
        assert panel["datasource"]["uid"] == uid, panel["title"]
        for target in panel["targets"]:
            found = set(re.findall(r"tablanette_[a-z_]+", target["expr"]))
            assert found and found <= names, (panel["title"], found - names)
            used |= found
    assert {n.removesuffix("_bucket") for n in used} >= {"tablanette_move_latency_seconds", "tablanette_matches_queued"}


def test_compose_and_prometheus_agree_on_where_the_metrics_are() -> None:
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    services = compose["services"]
    for name in ("engine-1", "engine-2", "worker"):
        env = services[name]["environment"]
        assert (env["TABLANETTE_METRICS_PORT"], env["TABLANETTE_METRICS_HOST"]) == (METRICS_PORT, "0.0.0.0"), name
    scrape = {job["job_name"]: job for job in yaml.safe_load((DEPLOY / "prometheus.yml").read_text())["scrape_configs"]}
    targets = scrape["tablanette-engine"]["static_configs"][0]["targets"]
    assert targets == [f"engine-1:{METRICS_PORT}", f"engine-2:{METRICS_PORT}"]
    workers = scrape["tablanette-worker"]["dns_sd_configs"][0]
    assert workers["names"] == ["worker"] and str(workers["port"]) == METRICS_PORT
    mounts = services["prometheus"]["volumes"] + services["grafana"]["volumes"]
    for mounted in mounts:
        source = mounted.split(":")[0]
        if source.startswith("./"):
            assert (DEPLOY / source).exists(), mounted
    provider = yaml.safe_load((DEPLOY / "grafana/provisioning/dashboards/tablanette.yml").read_text())
    assert any(m.endswith(f":{provider['providers'][0]['options']['path']}/tablanette.json:ro") for m in mounts)


def test_kubernetes_pods_say_where_to_scrape() -> None:
    config = yaml.safe_load((DEPLOY / "k8s/configmap.yaml").read_text())["data"]
    assert (config["TABLANETTE_METRICS_PORT"], config["TABLANETTE_METRICS_HOST"]) == (METRICS_PORT, "0.0.0.0")
    for name in ("engine", "worker"):
        docs = yaml.safe_load_all((DEPLOY / f"k8s/{name}.yaml").read_text())
        pod = next(d for d in docs if d["kind"] == "Deployment")["spec"]["template"]
        assert pod["metadata"]["annotations"] == {"prometheus.io/scrape": "true", "prometheus.io/port": METRICS_PORT}
        ports = {p["name"]: p["containerPort"] for p in pod["spec"]["containers"][0]["ports"]}
        assert str(ports["metrics"]) == METRICS_PORT


def test_the_operations_guide_describes_every_series() -> None:
    guide = (DEPLOY / "README.md").read_text()
    for name in served_families():
        assert name in guide, f"deploy/README.md does not describe {name}"
