"""Playing matches: the Celery app and its task, and the match runner (one match through the engine service)."""
