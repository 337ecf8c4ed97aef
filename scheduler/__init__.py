"""Tournaments and leagues: planning (Berger tables), feeding the workers, resuming; self-play."""
