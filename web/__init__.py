"""The web ladder: the FastAPI app, its read models (through :mod:`store`) and static pages."""
