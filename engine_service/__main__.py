"""``python -m engine_service``: the same as ``tablanette serve`` (settings from the environment)."""

import sys

from config import SettingsError, load_settings
from engine_service.server import run

try:
    settings = load_settings()
except SettingsError as exc:
    sys.exit(f"tablanette serve: {exc}")
run(settings)
