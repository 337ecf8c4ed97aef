"""Match running: the library match runner now, the Celery app and tasks next."""
