"""The wire form of the rules engine's values: protobuf messages to and from cards, plays, observations and
records (:mod:`engine_service.wire.convert`).

It sits just above the pure rules engine (``engine_service.rules``) and the generated protocol code
(``tablanette.v1``), and imports nothing else: the Python SDK (``bots``) is built on these three alone, and a
hosted bot's sandbox is lent just them (:data:`hosting.sdk.ENGINE_PARTS`).
"""
