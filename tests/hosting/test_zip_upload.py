"""An upload as a .zip (what a desktop's "compress" makes): the same files as the tar, under the same limits.

The web page takes a .zip as well as a .tar.gz, so a zip must give exactly what the tar of the same folder
gives (the arena packs both its own way: one source hash), and must refuse what a tar is refused for: a
name outside its folder, a link, more files or bytes than a submission may hold, and a header that lies.
"""

from __future__ import annotations

import io
import os
import zipfile
from pathlib import Path

import pytest

from hosting.manifest import Manifest
from hosting.source import SourceError, pack, unpack
from hosting.submit import bot_folder

FILES = {
    "bot.toml": 'protocol = "jsonlines"\nrun = ["./run.sh"]\n',
    "run.sh": "#!/bin/sh\nexec perl g.pl\n",
    "lib/g.pl": "1;\n",
}


def folder_of(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def zipped(entries: dict[str, str], modes: dict[str, int] | None = None) -> bytes:
    """A zip of ``entries`` as a Unix zip tool writes them (the mode in the high bits of external_attr)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, text in entries.items():
            info = zipfile.ZipInfo(name)
            info.external_attr = ((modes or {}).get(name, 0o100644)) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, text)
    return buf.getvalue()


def test_a_zip_unpacks_to_the_same_files_and_source_hash_as_the_folder(tmp_path: Path) -> None:
    folder = folder_of(tmp_path / "bot", FILES)
    (folder / "run.sh").chmod(0o755)
    unpack(zipped(FILES, {"run.sh": 0o100755}), tmp_path / "out")
    assert pack(tmp_path / "out") == pack(folder)  # same files, same executable bit: one source hash
    assert os.access(tmp_path / "out" / "run.sh", os.X_OK) and not os.access(tmp_path / "out" / "bot.toml", os.X_OK)


def test_a_zip_of_the_folder_itself_is_read_from_inside_its_one_folder(tmp_path: Path) -> None:
    """A desktop zips the folder, not its contents (a Mac adds __MACOSX beside it): the bot is inside."""
    wrapped = {f"mybot/{name}": text for name, text in FILES.items()}
    unpack(zipped({**wrapped, "__MACOSX/mybot/._bot.toml": ""}), tmp_path / "out")
    found = bot_folder(tmp_path / "out")
    assert found == tmp_path / "out" / "mybot"
    assert Manifest.load(found).run == ["./run.sh"]
    two = folder_of(tmp_path / "two", {"a/bot.toml": FILES["bot.toml"], "b/x.txt": "x"})
    assert bot_folder(two) == two  # two folders: which one is meant is not guessed


@pytest.mark.parametrize("name", ["../escaped.txt", "/tmp/absolute-zip.txt", "a/../../escaped.txt"])
def test_a_zip_cannot_write_outside_its_folder(tmp_path: Path, name: str) -> None:
    with pytest.raises(SourceError, match="lies outside its folder"):
        unpack(zipped({name: "x"}), tmp_path / "into")
    assert not (tmp_path / "escaped.txt").exists()
    assert not Path("/tmp/absolute-zip.txt").exists()


def test_a_zipped_link_or_a_windows_path_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="etc, which is not a regular file"):
        unpack(zipped({"bot.toml": "", "etc": "/etc"}, {"etc": 0o120777}), tmp_path / "into")
    with pytest.raises(SourceError, match="zip it again"):
        unpack(zipped({"lib\\g.pl": "1;"}), tmp_path / "into2")
    assert not any((tmp_path / "into").iterdir())  # refused before a file is written


def test_a_zip_over_the_limits_is_refused_before_anything_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("hosting.source.MAX_FILES", 3)
    with pytest.raises(SourceError, match="more than 3 entries"):
        unpack(zipped({f"f{i}": "" for i in range(4)}), tmp_path / "many")
    monkeypatch.setattr("hosting.source.MAX_FILES", 50)
    monkeypatch.setattr("hosting.source.MAX_UNPACKED", 1000)
    with pytest.raises(SourceError, match="or 0 MB"):
        unpack(zipped({"big": "0" * 2000}), tmp_path / "big")  # 2000 zeros compress to a few bytes
    assert not any((tmp_path / "many").iterdir()) and not any((tmp_path / "big").iterdir())


def test_a_zip_whose_header_understates_a_file_is_refused(tmp_path: Path) -> None:
    """A bomb that declares a small size: reading stops at the declared size, and the checksum fails."""
    data = bytearray(zipped({"bot.toml": "x" * 5000}))
    central = data.rindex(b"PK\x01\x02")
    data[central + 24 : central + 28] = (10).to_bytes(4, "little")  # the central directory's uncompressed size
    with pytest.raises(SourceError, match="cannot unpack the source"):
        unpack(bytes(data), tmp_path / "into")
    assert not (tmp_path / "into" / "bot.toml").exists() or (tmp_path / "into" / "bot.toml").stat().st_size <= 10


def test_garbage_that_starts_like_a_zip_is_not_an_archive(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="cannot unpack the source"):
        unpack(b"PK\x03\x04 and then nothing a zip holds", tmp_path / "into")
