"""A submission's folder as one archive: packed the same way every time, hashed, and unpacked safely.

The archive is a gzipped tar with sorted entries, no owners, no times and
normalised modes, so the same folder always gives the same bytes and the same
SHA-256 (a version's *source hash*). Version-control and cache folders are left
out; symbolic links, devices and anything over the size limits are refused with
a message saying which file.

An upload may also be a ``.zip`` (what a desktop's "compress" makes): it is unpacked under the same
limits and refusals, and the arena packs the files its own way after, so a folder has one source hash
whichever archive it came in.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import stat
import tarfile
import zipfile
import zlib
from pathlib import Path, PurePosixPath

MAX_PACKED = 8 << 20
"""Largest archive accepted (bytes, compressed)."""
MAX_UNPACKED = 64 << 20
"""Largest total of the files' sizes."""
MAX_FILES = 2000
SKIPPED = frozenset(
    {".git", ".hg", ".svn", "__pycache__", ".venv", ".mypy_cache", ".pytest_cache", ".ruff_cache"}
    | {"node_modules", "build"}
)
"""Folders never packed: what a checkout or a local run leaves behind, the packages the arena lends
(``node_modules``) and build output (the arena builds it again, in its sandbox)."""


class SourceError(ValueError):
    """A folder that cannot be submitted, or an archive that cannot be unpacked."""


def pack(folder: str | Path) -> tuple[bytes, str]:
    """The folder's archive and its SHA-256 (hex)."""
    root = Path(folder)
    if not root.is_dir():
        raise SourceError(f"{folder} is not a folder")
    files: list[tuple[str, Path]] = []
    total = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED)
        for d in dirnames:
            if (Path(dirpath) / d).is_symlink():
                raise SourceError(f"{Path(dirpath, d)} is a symbolic link: submit the files themselves")
        for name in sorted(filenames):
            path = Path(dirpath) / name
            rel = path.relative_to(root).as_posix()
            if path.is_symlink():
                raise SourceError(f"{path} is a symbolic link: submit the file itself")
            if not path.is_file():
                raise SourceError(f"{path} is not a regular file")
            total += path.stat().st_size
            files.append((rel, path))
            if len(files) > MAX_FILES:
                raise SourceError(f"{folder} holds more than {MAX_FILES} files")
            if total > MAX_UNPACKED:
                raise SourceError(f"{folder} holds more than {MAX_UNPACKED >> 20} MB (limit reached at {rel})")
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0) as gz, tarfile.open(fileobj=gz, mode="w") as tar:
        for rel, path in sorted(files):
            info = tarfile.TarInfo(rel)
            info.size = path.stat().st_size
            info.mode = 0o755 if os.access(path, os.X_OK) else 0o644
            with path.open("rb") as fh:
                tar.addfile(info, fh)
    data = buf.getvalue()
    if len(data) > MAX_PACKED:
        raise SourceError(f"{folder} packs to {len(data) >> 20} MB; the limit is {MAX_PACKED >> 20} MB")
    return data, hashlib.sha256(data).hexdigest()


def unpack(data: bytes, into: str | Path) -> None:
    """Unpack an uploaded archive (a gzipped tar, as :func:`pack` makes, or a zip) into the (empty or new)
    folder ``into``.

    Only regular files and folders are taken, each inside ``into``: an absolute
    name, a ``..``, a link or a device is refused (and tarfile's ``data`` filter
    checks the same again as it writes).
    """
    target = Path(into)
    target.mkdir(parents=True, exist_ok=True)
    if data[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        _unzip(data, target)
        return
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            members, total = [], 0
            for m in tar:  # one header at a time: a bomb of empty entries stops at the limit, not in memory
                members.append(m)
                total += m.size
                if len(members) > MAX_FILES or total > MAX_UNPACKED:
                    raise _too_large()
            for m in members:
                _check_name(m.name)
                if not (m.isfile() or m.isdir()):
                    raise SourceError(f"the archive holds {m.name}, which is not a regular file")
            tar.extractall(target, members=members, filter="data")
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise SourceError(f"cannot unpack the source: {exc}") from None


def _too_large() -> SourceError:
    return SourceError(
        f"the archive holds more than {MAX_FILES} entries or {MAX_UNPACKED >> 20} MB: larger than a submission may be"
    )


def _check_name(name: str) -> None:
    if name.startswith("/") or ".." in PurePosixPath(name).parts:
        raise SourceError(f"the archive holds {name}, which lies outside its folder")


def _unzip(data: bytes, target: Path) -> None:
    """A zip's files into ``target``, under :func:`unpack`'s limits. A member's size is the one its header
    declares (zipfile stops reading a member there, and its checksum catches a header that lies)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            infos = archive.infolist()
            if len(infos) > MAX_FILES or sum(i.file_size for i in infos) > MAX_UNPACKED:
                raise _too_large()
            for info in infos:
                _check_name(info.filename)
                if "\\" in info.filename:  # a Windows path: its folders would be lost
                    raise SourceError(f"the archive holds {info.filename}: zip it again with a tool that writes '/'")
                mode = info.external_attr >> 16  # the Unix mode, where the zip was made on Unix
                if mode and not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                    raise SourceError(f"the archive holds {info.filename}, which is not a regular file")
            for info in infos:
                path = target / info.filename
                if info.is_dir():
                    path.mkdir(parents=True, exist_ok=True)
                    continue
                path.parent.mkdir(parents=True, exist_ok=True)
                with archive.open(info) as src, path.open("wb") as out:
                    while chunk := src.read(1 << 16):
                        out.write(chunk)
                path.chmod(0o755 if (info.external_attr >> 16) & 0o111 else 0o644)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, RuntimeError, zlib.error, OSError) as exc:
        raise SourceError(f"cannot unpack the source: {exc}") from None
