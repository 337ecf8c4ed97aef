"""``python -m engine_service``: the same as ``tablanette serve`` (settings from the environment)."""

from engine_service.config import Settings
from engine_service.server import run

run(Settings.from_env())
