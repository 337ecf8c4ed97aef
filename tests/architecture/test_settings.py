"""One settings object for every process: defaults, derived values, and clear errors for bad values."""

from __future__ import annotations

import pytest

from config import ArenaSettings, SettingsError, load_settings


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    for name in list(os.environ):
        if name.startswith("TABLANETTE_") or name == "REDIS_URL":
            monkeypatch.delenv(name)


def test_defaults_and_derived_values() -> None:
    s = load_settings()
    assert (s.redis_url, s.prefix, s.port, s.grace_ms) == ("redis://127.0.0.1:6379/0", "tablanette", 50051, 10_000)
    assert s.broker_url == s.redis_url and s.advertise == "127.0.0.1:50051"
    assert s.task_time_limit == 7200 - 300 and s.queue == "tablanette.matches"


def test_the_environment_and_overrides(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REDIS_URL", "redis://127.0.0.1:7000/2")
    monkeypatch.setenv("TABLANETTE_PREFIX", "spring")
    monkeypatch.setenv("TABLANETTE_VISIBILITY_TIMEOUT", "100")
    s = load_settings(port=0, host="0.0.0.0")
    assert s.redis_url == "redis://127.0.0.1:7000/2" and s.prefix == "spring" and s.queue == "spring.matches"
    assert s.task_time_limit == 60 and s.port == 0
    assert not s.advertise.startswith("0.0.0.0")  # a wildcard is no address to dial
    monkeypatch.setenv("TABLANETTE_REDIS_URL", "redis://127.0.0.1:7001/0")
    assert load_settings().redis_url == "redis://127.0.0.1:7001/0"  # the arena's own name wins


def test_a_time_limit_at_or_above_the_visibility_timeout_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TABLANETTE_VISIBILITY_TIMEOUT", "60")
    monkeypatch.setenv("TABLANETTE_TASK_TIME_LIMIT", "60")
    with pytest.raises(ValueError, match="below the visibility timeout"):
        load_settings()


@pytest.mark.parametrize(
    ("name", "value", "needle"),
    [
        ("TABLANETTE_PORT", "abc", "TABLANETTE_PORT (got 'abc'): Input should be a valid integer"),
        ("TABLANETTE_PORT", "70000", "TABLANETTE_PORT (got '70000'): Input should be less than or equal to 65535"),
        ("TABLANETTE_GRACE_MS", "-1", "TABLANETTE_GRACE_MS (got '-1')"),
        ("TABLANETTE_PREFIX", "a b", "TABLANETTE_PREFIX (got 'a b')"),
        ("TABLANETTE_TLS_CERT", "cert.pem", "TLS needs both TABLANETTE_TLS_CERT and TABLANETTE_TLS_KEY"),
    ],
)
def test_a_bad_value_names_the_variable(monkeypatch: pytest.MonkeyPatch, name: str, value: str, needle: str) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(SettingsError) as info:
        load_settings()
    assert needle in str(info.value)
    assert str(info.value).startswith("invalid settings: ")


def test_settings_are_one_type_for_every_process() -> None:
    import engine_service.server
    import worker.league_match

    assert engine_service.server.ArenaSettings is worker.league_match.ArenaSettings is ArenaSettings
