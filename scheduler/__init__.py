"""Tournaments, leagues, ratings and the ``tablanette`` command line."""
