"""How the arena's own processes call one another over gRPC: the metadata that carries the internal secret,
and the options of every internal channel.

Match runners, replicas asking each other about a session, and a bot host's meter and relay all call a
replica's Dispatch service (``dispatch.proto``). Each call carries the arena's shared secret
(:func:`store.sessions.internal_secret`) in :data:`INTERNAL_METADATA`; each channel is made with
:data:`CHANNEL_OPTIONS`. Plain values, so any room may read them without the engine service's code.
"""

from __future__ import annotations

INTERNAL_METADATA = "x-tablanette-internal"
KEEPALIVE_MS = 5_000
CHANNEL_OPTIONS = (
    ("grpc.initial_reconnect_backoff_ms", 250),
    ("grpc.max_reconnect_backoff_ms", 2000),
    ("grpc.enable_retries", 0),
    # A replica whose host is cut off sends no reset: without pings, a call to it (a match played
    # there) waited for the kernel to give the connection up, 7 minutes in tests/multihost. Pinged
    # every 5 s and given 5 s to answer, a dead replica fails its calls within about 10 s (UNAVAILABLE:
    # an arena fault), and the runner goes on through the replica its bots moved to. Only while a call
    # is open: an idle channel has nothing to lose. The replicas take pings this often, data or not
    # (engine_service.server.server_options).
    ("grpc.keepalive_time_ms", KEEPALIVE_MS),
    ("grpc.keepalive_timeout_ms", KEEPALIVE_MS),
    ("grpc.keepalive_permit_without_calls", 0),
)
"""Every arena channel to a replica's Dispatch service (match runners, other replicas, the hosting
meter). A restarted replica is reached again within about 2 s (gRPC's own default backs off to
2 minutes). gRPC's retries are off: every caller has its own, and with them on (grpcio 1.85) a
bot's stream that met a replica's shutdown GOAWAY as it started was parked for good, past its
deadline and past a cancel. Dispatch calls send their request at once and were not caught so in
tests/service/test_shutdown_goaway.py, but gRPC's retries would add nothing here but that risk."""
