"""A submission, from a folder (``tablanette bot submit``) or an uploaded archive (the JSON API, the web form).

Either way the arena reads the ``bot.toml``, packs the files its own way (so a
version's source hash depends only on its files) and keeps a new version. An
upload is unpacked into a private temporary folder first, under the same limits
and refusals as any archive (:func:`hosting.source.unpack`).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from store.versions import Version, Versions

from .manifest import Manifest
from .source import pack, unpack


def from_folder(versions: Versions, bot: str, folder: str | Path, language: str = "") -> tuple[Version, int]:
    """Submit ``folder`` as a new version of ``bot``; the version and the archive's size.

    Raises :class:`~hosting.manifest.ManifestError`, :class:`~hosting.source.SourceError`
    or :class:`~store.versions.VersionError` with a message for the author.
    """
    manifest = Manifest.load(folder)
    archive, digest = pack(folder)
    data = manifest.to_dict()
    data["language"] = data["language"] or language
    return versions.submit(bot, data, archive, digest), len(archive)


def from_archive(versions: Versions, bot: str, upload: bytes) -> tuple[Version, int]:
    """Submit an uploaded ``.tar.gz`` of a bot's folder (``bot.toml`` at its top) as a new version of ``bot``."""
    with tempfile.TemporaryDirectory(prefix="tablanette-upload-") as tmp:
        unpack(upload, tmp)
        return from_folder(versions, bot, tmp)
