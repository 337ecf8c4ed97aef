"""The arena's settings: one validated object for every process (``TABLANETTE_`` variables)."""

from .settings import ArenaSettings, SettingsError, load_settings

__all__ = ["ArenaSettings", "SettingsError", "load_settings"]
