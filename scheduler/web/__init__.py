"""The web ladder: a JSON API and static pages over the league data in Redis."""
