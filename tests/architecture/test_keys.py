"""Every Redis key is spelled in store/keys.py, and every Lua script is registered with its keys in KEYS.

Keys one script touches share a Redis Cluster hash slot, so the scripts are safe on a cluster.
"""

from __future__ import annotations

import re
from pathlib import Path

from redis.crc import key_slot

from store.keys import Keys
from store.ledger import commit_keys, state_keys

ROOT = Path(__file__).resolve().parents[2]
CODE = [
    p
    for room in ("engine_service", "config", "store", "worker", "scheduler", "web", "hosting", "cli", "bots", "bench")
    for p in sorted((ROOT / room).rglob("*.py"))
]


def test_no_key_is_spelled_outside_the_key_layout() -> None:
    spelled = re.compile(r"""f["'][^"']*\{[^}]*prefix\}:(?!bench:)""")
    bad = [
        f"{p.relative_to(ROOT)}:{n}: {line.strip()}"
        for p in CODE
        if p != ROOT / "store/keys.py"
        for n, line in enumerate(p.read_text().splitlines(), 1)
        if spelled.search(line)
    ]
    assert not bad, "keys spelled outside store/keys.py:\n" + "\n".join(bad)


def test_lua_runs_only_through_registered_scripts() -> None:
    bad = [
        f"{p.relative_to(ROOT)}:{n}"
        for p in CODE
        for n, line in enumerate(p.read_text().splitlines(), 1)
        if re.search(r"\.eval(sha)?\(", line)
    ]
    assert not bad, "use client.register_script (keys in KEYS), not eval: " + ", ".join(bad)


def test_the_keys_of_each_script_share_one_cluster_slot() -> None:
    keys = Keys("arena").league("spring-2026")
    commit = commit_keys(keys, "r1/p2/g1", ["greedy", "node-bot", "strong"])
    assert len({key_slot(k.encode()) for k in commit}) == 1
    assert len({key_slot(k.encode()) for k in state_keys(keys, "r1/p2/g1")}) == 1
    slots = [Keys("arena").slots(b) for b in ("greedy", "node-bot", "strong", "x" * 64)]
    assert len({key_slot(k.encode()) for k in slots}) == 1
    assert key_slot(Keys("arena").league("a").meta.encode()) != key_slot(Keys("arena").league("b").meta.encode())


def test_a_prefix_keeps_arenas_apart() -> None:
    a, b = Keys("a"), Keys("b")
    assert a.session("x") != b.session("x") and a.slots("x") != b.slots("x")
    assert a.league("l").match("m").startswith("a:") and a.queue == "a.matches"
