"""A submission as the arena reads it: bot.toml, and the folder packed, hashed and unpacked safely."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from hosting.manifest import Manifest, ManifestError
from hosting.source import SourceError, pack, unpack


def test_a_minimal_manifest_gets_the_defaults_and_reads_back_the_same() -> None:
    m = Manifest.parse('protocol = "grpc"\nrun = ["node", "bot.js"]')
    assert (m.protocol, m.run, m.build, m.memory_mb, m.max_games) == ("grpc", ["node", "bot.js"], [], 256, 2)
    assert Manifest.from_dict(m.to_dict()) == m


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("run = [", "not valid TOML"),
        ('protocol = "jsonlines"', '"run" is missing'),
        ('run = "./bot"', '"run" must be a list of strings'),
        ('run = ["./bot"]\nbuild = []', '"build" must be a list of strings'),
        ('run = ["./bot"]\nprotocol = "http"', '"protocol" must be one of jsonlines, grpc'),
        ('run = ["./bot"]\nentry = "x"', "unknown key(s) entry"),
        ('run = ["./bot"]\n[resources]\nmemory_mb = 100000', "resources.memory_mb = 100000 is outside 0..1024"),
        ('run = ["./bot"]\n[resources]\npids = 1.5', "resources.pids must be a number"),
        ('run = ["./bot"]\n[resources]\ngpus = 1', "unknown resource(s) gpus"),
    ],
)
def test_a_wrong_manifest_says_what_to_write(text: str, says: str) -> None:
    with pytest.raises(ManifestError, match=None) as err:
        Manifest.parse(text)
    assert says in str(err.value)


def test_a_folder_without_a_manifest_is_refused_with_an_example(tmp_path: Path) -> None:
    with pytest.raises(ManifestError, match=r"has no bot.toml: write one"):
        Manifest.load(tmp_path)


def test_the_example_bots_manifests_are_valid() -> None:
    root = Path(__file__).resolve().parents[2]
    for folder in ("bots/jsonlines", "bots/examples/python", "bots/node", "bots/cpp"):
        m = Manifest.load(root / folder)
        assert m.run, folder


def write(folder: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder


def test_packing_is_the_same_bytes_every_time_and_leaves_out_what_a_checkout_leaves_behind(tmp_path: Path) -> None:
    a = write(tmp_path / "a", {"bot.py": "x = 1\n", "lib/util.py": "y = 2\n", ".git/HEAD": "ref", "build/a.o": "obj"})
    b = write(tmp_path / "b", {"lib/util.py": "y = 2\n", "bot.py": "x = 1\n", "node_modules/m/i.js": "z"})
    data_a, hash_a = pack(a)
    data_b, hash_b = pack(b)
    assert (data_a, hash_a) == (data_b, hash_b)  # same files, written in another order, other leftovers
    (b / "bot.py").write_text("x = 2\n")
    assert pack(b)[1] != hash_a
    unpack(data_a, tmp_path / "out")
    got = sorted(p.relative_to(tmp_path / "out").as_posix() for p in (tmp_path / "out").rglob("*") if p.is_file())
    assert got == ["bot.py", "lib/util.py"]


def test_a_symbolic_link_in_the_folder_is_refused_naming_it(tmp_path: Path) -> None:
    folder = write(tmp_path / "bot", {"bot.py": "x"})
    (folder / "secrets").symlink_to("/etc")
    with pytest.raises(SourceError, match=r"secrets is a symbolic link"):
        pack(folder)


def hostile_archive(member: tarfile.TarInfo, data: bytes = b"x") -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        member.size = len(data) if member.isfile() else 0
        tar.addfile(member, io.BytesIO(data) if member.isfile() else None)
    return buf.getvalue()


@pytest.mark.parametrize("name", ["../escaped.txt", "/tmp/absolute.txt", "a/../../escaped.txt"])
def test_an_archive_cannot_write_outside_its_folder(tmp_path: Path, name: str) -> None:
    with pytest.raises(SourceError):
        unpack(hostile_archive(tarfile.TarInfo(name)), tmp_path / "into")
    assert not (tmp_path / "escaped.txt").exists()
    assert not Path("/tmp/absolute.txt").exists()


def test_an_archive_with_a_link_or_a_device_is_refused(tmp_path: Path) -> None:
    link = tarfile.TarInfo("etc")
    link.type, link.linkname = tarfile.SYMTYPE, "/etc"
    with pytest.raises(SourceError, match="not a regular file"):
        unpack(hostile_archive(link), tmp_path / "into")
    device = tarfile.TarInfo("null")
    device.type = tarfile.CHRTYPE
    with pytest.raises(SourceError, match="not a regular file"):
        unpack(hostile_archive(device), tmp_path / "into")


def test_too_many_files_are_refused_before_anything_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("hosting.source.MAX_FILES", 3)
    folder = write(tmp_path / "big", {f"f{i}.txt": "x" for i in range(5)})
    with pytest.raises(SourceError, match="more than 3 files"):
        pack(folder)


def test_garbage_is_not_an_archive(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="cannot unpack the source"):
        unpack(b"not a tarball", tmp_path / "into")


def test_an_archive_of_too_many_entries_stops_at_the_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("hosting.source.MAX_FILES", 50)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for i in range(5000):  # empty entries compress to almost nothing: a bomb in miniature
            tar.addfile(tarfile.TarInfo(f"e{i}"), io.BytesIO(b""))
    with pytest.raises(SourceError, match="more than 50 entries"):
        unpack(buf.getvalue(), tmp_path / "into")
    assert not any((tmp_path / "into").iterdir())
