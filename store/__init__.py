"""Every Redis key and script of the arena, in one layer.

- :mod:`store.keys`: the key layout (every key spelled once);
- :mod:`store.ledger`: the one atomic commit of a finished match, and match states;
- :mod:`store.leases`: a running match's lease (fences the commit);
- :mod:`store.slots`: per-bot game slots (``max_games``);
- :mod:`store.sessions`: the registry of connected bots;
- :mod:`store.tokens`: bot tokens;
- :mod:`store.leagues` and :mod:`store.results`: leagues, their plans, progress and results.

Lua scripts are registered once per client and name every key they touch in
``KEYS``. Nothing here imports from the services above it.
"""
