"""Hosted bots: a bot author submits a folder; the arena builds it, preflights it, and runs it sandboxed.

    manifest    ``bot.toml``: language, protocol, run and build commands, resources
    source      a submission's folder packed into one archive with its hash, and unpacked safely
    build       a version's build, in a sandbox, with a time limit and a kept log
    preflight   a few games against reference bots before a version may join a rated league
    host        the hosting service: builds, preflights and runs every version it is given

The versions themselves (``NAME@N``, their state, logs and reports) are kept in
Redis by :mod:`store.versions`, so any machine's host can build and run them.
"""
