"""A submission, from a folder (``tablanette bot submit``) or an uploaded archive (the JSON API, the web form).

Either way the arena reads the ``bot.toml``, packs the files its own way (so a
version's source hash depends only on its files) and keeps a new version. An
upload is unpacked into a private temporary folder first, under the same limits
and refusals as any archive (:func:`hosting.source.unpack`). Either way the
bot's :class:`~store.versions.Quota` applies (versions an hour, source bytes
kept): a submission over it is refused with :class:`~store.versions.QuotaError`
and nothing is kept.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from store.versions import Quota, Version, Versions

from .manifest import Manifest
from .source import pack, unpack


def from_folder(
    versions: Versions, bot: str, folder: str | Path, quota: Quota, language: str = ""
) -> tuple[Version, int]:
    """Submit ``folder`` as a new version of ``bot`` within ``quota``; the version and the archive's size.

    Raises :class:`~hosting.manifest.ManifestError`, :class:`~hosting.source.SourceError`,
    :class:`~store.versions.VersionError` or :class:`~store.versions.QuotaError` with a message
    for the author.
    """
    manifest = Manifest.load(folder)
    archive, digest = pack(folder)
    data = manifest.to_dict()
    data["language"] = data["language"] or language
    return versions.submit(bot, data, archive, digest, quota), len(archive)


def from_archive(versions: Versions, bot: str, upload: bytes, quota: Quota) -> tuple[Version, int]:
    """Submit an uploaded ``.tar.gz`` or ``.zip`` of a bot's folder (``bot.toml`` at its top, or in the one
    folder it holds) as a new version of ``bot``."""
    with tempfile.TemporaryDirectory(prefix="tablanette-upload-") as tmp:
        unpack(upload, tmp)
        return from_folder(versions, bot, bot_folder(Path(tmp)), quota)


def bot_folder(unpacked: Path) -> Path:
    """The bot's folder in an unpacked archive: its top, or, when the top has no ``bot.toml`` but one folder,
    that folder (a desktop's "compress" of a folder, or ``tar czf mybot.tar.gz mybot``, wraps it so; the
    ``__MACOSX`` folder a Mac adds is no part of it)."""
    entries = [p for p in unpacked.iterdir() if p.name != "__MACOSX"]
    if not (unpacked / "bot.toml").exists() and len(entries) == 1 and entries[0].is_dir():
        return entries[0]
    return unpacked
