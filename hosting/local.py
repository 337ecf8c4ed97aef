"""A bot's folder played on this machine as the arena would host it: built, then run, in sandboxes.

``tablanette match --bot ./mybot`` takes a folder with a ``bot.toml`` (the
manifest a submission carries, :mod:`hosting.manifest`): it is packed as
``tablanette bot submit`` packs it (the same files skipped, the same limits),
unpacked and built by :func:`hosting.build.build` in the build sandbox, and each
game runs its program in a sandbox of its own with the manifest's limits and the
SDK lent at ``/sdk``, as a host runs it (:mod:`hosting.host`). Only the
JSON-lines protocol can be played so; a gRPC bot's program is played unsandboxed as
``--bot "grpc:COMMAND"`` (:mod:`scheduler.connected_programs`).

A failed build is a :class:`LocalBotError` that quotes the build log's last
error line (what the arena's version page shows its owner) and keeps the whole
log in the working folder.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from bots.base import Bot
from programs.bridge import ProgramBot
from programs.child import Running
from programs.sandbox import Limits, Sandbox, unavailable
from store.versions import build_error

from . import sdk
from .build import build, version_dir
from .manifest import FILE, Manifest, ManifestError
from .source import SourceError, pack


class LocalBotError(ValueError):
    """A folder that cannot be played here: the message names the folder and says why."""


class LocalFolderBot:
    """A built folder, ready to play: :meth:`make` a bot per game; :meth:`close` removes what was built."""

    def __init__(self, folder: str | Path, name: str, work: str | Path | None = None) -> None:
        source = Path(folder)
        if not (source / FILE).is_file():
            raise LocalBotError(f"{folder}: no {FILE} here (a bot's folder names how to run it in {FILE})")
        try:
            self.manifest = Manifest.load(source)
        except ManifestError as exc:
            raise LocalBotError(f"{folder}: {exc}") from None
        if self.manifest.protocol != "jsonlines":
            raise LocalBotError(
                f"{folder}: a {self.manifest.protocol} bot connects to an engine service: give its run command as "
                '--bot "grpc:COMMAND" (it connects to an engine inside tablanette match, unsandboxed), or play the '
                "folder in a league (tablanette up, docs/hosting.md)"
            )
        if why := unavailable():
            raise LocalBotError(f"{folder}: cannot sandbox a bot here: {why}")
        self.name = name
        self.root = Path(tempfile.mkdtemp(prefix="tablanette-match-", dir=work))
        self.root.chmod(0o755)
        self.running = Running()
        """Its programs (one a game), all stopped by :meth:`close`."""
        try:
            try:
                archive, digest = pack(source)
            except SourceError as exc:
                raise LocalBotError(f"{folder}: {exc}") from None
            self.sdk = sdk.stage(self.root / "sdk")
            built = build(self.root, "bot", self.manifest, archive, digest, sdk=self.sdk)
            (self.root / "build.log").write_text(built.log)
            if not built.ok:
                said = build_error(built.log)
                quoted = f"; its log's last error line: {said}" if said else ""
                raise LocalBotError(
                    f"{folder}: {built.why}{quoted} (the whole log: {self.root / 'build.log'})",
                )
        except BaseException:
            self.close(keep_log=True)
            raise
        self.folder = version_dir(self.root, "bot") / "bot"
        self.limits = Limits(memory_mb=self.manifest.memory_mb, pids=self.manifest.pids, cpus=self.manifest.cpus)

    def make(self, seed: str) -> Bot:
        """A bot for one game: its program run over JSON lines, sandboxed (a fresh sandbox per run)."""
        return ProgramBot(self.manifest.run, self.name, on_program=self.running.add, launcher=self._sandbox)

    def _sandbox(self) -> Sandbox:
        return Sandbox(self.folder, self.limits, self.name, binds={str(self.sdk): "/sdk"}, env=sdk.ENV)

    def close(self, keep_log: bool = False) -> None:
        """Stop its programs and remove what was built (``keep_log``: the build log stays, for a failed build)."""
        self.running.stop_all()
        if not keep_log or not (self.root / "build.log").is_file():
            shutil.rmtree(self.root, ignore_errors=True)
            return
        for child in self.root.iterdir():
            if child.name != "build.log":
                (shutil.rmtree if child.is_dir() else Path.unlink)(child)
