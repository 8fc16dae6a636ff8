"""Attack: a small file handed to `aimos import` that holds, or unzips to, gigabytes.

Before: a 1 MB zip whose conversations.json unzips to 1 GiB of spaces took 2.1 GB of memory (the
member read whole, then decoded whole) and, after a `[`, 189 s, before a format error; a zip whose
headers say the member is 100 bytes unzipped all of it in one read just the same; a bzip2 member
of a few hundred bytes unzipped to gigabytes however small its header said it was; a zip listing a
million files took half a gigabyte to open; a file or a device was read whole, however big.

Now what an import reads is counted as it is read and refused at the first byte over its cap:
512 MiB, and from a zip 100 times the member's compressed size (its header is checked first, then
the member unzipped once, counted and its CRC checked, before a byte of it is kept); only deflate
and stored members are read, and a zip listing over 8 MiB of names is not opened. The refusal
names the cap and `--max-inflated SIZE`, which replaces both; exit 2, nothing saved."""

from __future__ import annotations

import io
import json
import os
import random
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from support.cli import Result, assert_unchanged, hint_of, run_aimos, run_aimos_peak_rss, snapshot
from support.zip_bombs import MiB, bzip2_bomb, deflate_bomb, many_members, stored, write_zip

from aimos.actions.imports import MAX_INFLATED, MAX_NOTES, MAX_ZIP_DIRECTORY, parse_size, zip_directory_size
from aimos.errors import UsageError

pytestmark = pytest.mark.timeout(300)

USAGE = 2
MOST_RSS_KIB = 300 * 1024
EXPORT = Path(__file__).resolve().parent.parent / "fixtures" / "import" / "chatgpt" / "conversations.json"


def refused(result: Result, *words: str, hint: str = "") -> None:
    """Exit 2, the error naming ``words``, a hint naming ``hint``, no traceback, nothing on stdout."""
    assert result.code == USAGE, result.describe()
    assert "Traceback" not in result.both and "internal error" not in result.both, result.describe()
    assert result.out == "" and hint_of(result), result.describe()
    for word in words:
        assert word in result.err, f"stderr does not name {word!r}\n{result.describe()}"
    assert hint in hint_of(result), result.describe()


@contextmanager
def unchanged(home: Path) -> Iterator[None]:
    """Nothing in the brain changes in the block (rows, files, bytes, keys)."""
    before = snapshot(home)
    yield
    assert_unchanged(home, before)


@pytest.mark.real_process
@pytest.mark.parametrize("fill", [b" ", b"\0"], ids=["spaces", "zeros"])
def test_a_deflate_bomb_is_refused_at_once_in_little_memory(
    installed: Path, tmp_path: Path, fill: bytes
) -> None:
    bomb = deflate_bomb(tmp_path / "export.zip", 1024, fill=fill, head=b"[")  # ~1 MB, 1 GiB unzipped
    assert bomb.stat().st_size < 1.2 * MiB
    with unchanged(installed):
        result, peak = run_aimos_peak_rss("import", str(bomb))
    words = ("export.zip/conversations.json unzips to over 100 times its", "zip bomb cap")
    refused(result, *words, hint="--max-inflated SIZE")
    assert peak < MOST_RSS_KIB, f"peak RSS {peak} KiB"


@pytest.mark.real_process
def test_a_zip_whose_header_says_the_bomb_is_small_is_refused_in_little_memory(
    installed: Path, tmp_path: Path
) -> None:
    """Its headers say 100 bytes: unzipped a chunk at a time, it stops there and its CRC fails
    (read whole, as before, zipfile inflated the whole gigabyte first)."""
    bomb = deflate_bomb(tmp_path / "export.zip", 1024, declared=100)
    with unchanged(installed):
        result, peak = run_aimos_peak_rss("import", str(bomb))
    refused(result, "export.zip: cannot read this zip")
    assert peak < MOST_RSS_KIB, f"peak RSS {peak} KiB"


def test_a_padded_bomb_meets_the_zip_bomb_cap(installed: Path, tmp_path: Path) -> None:
    """Padding the zip to 8 MiB does not raise the cap: it is the member's compressed size's."""
    bomb = deflate_bomb(tmp_path / "export.zip", 1024, pad=8 * MiB)
    with unchanged(installed):
        refused(run_aimos("import", str(bomb)), "over 100 times its 1.0 MiB compressed (the zip bomb cap)")


def test_a_bomb_that_deflates_less_meets_the_import_cap(installed: Path, tmp_path: Path) -> None:
    """Each MiB of it 16 KiB of noise: it deflates some 60 times, under the zip bomb cap, and
    unzips to 600 MiB, over the import cap."""
    noise = random.Random(35).randbytes(16 << 10)
    bomb = deflate_bomb(tmp_path / "export.zip", 600, fill=noise + b" " * (MiB - len(noise)))
    assert 40 < 600 * MiB / bomb.stat().st_size < 100
    with unchanged(installed):
        result = run_aimos("import", str(bomb))
    refused(
        result, "conversations.json unzips to over 512.0 MiB (the import cap)", hint="--max-inflated SIZE"
    )


def test_a_bzip2_bomb_is_not_unzipped(installed: Path, tmp_path: Path) -> None:
    """zipfile unzips bzip2 a whole read at a time, whatever the header says: a few hundred
    bytes, 64 MiB unzipped, 100 bytes declared. Only deflate and stored members are read."""
    bomb = bzip2_bomb(tmp_path / "export.zip", 64, declared=100)
    assert bomb.stat().st_size < 4096
    with unchanged(installed):
        refused(run_aimos("import", str(bomb)), "its conversations.json is encrypted or compressed unusually")


def test_a_zip_listing_too_many_files_is_not_opened(installed: Path, tmp_path: Path) -> None:
    bomb = many_members(tmp_path / "export.zip", MAX_ZIP_DIRECTORY // 53 + 1000)  # 53 bytes an entry
    with unchanged(installed):
        refused(run_aimos("import", str(bomb)), "export.zip: its list of files is over 8.0 MiB")


@pytest.mark.parametrize("name", ["conversations.json", "memories.jsonl", "note.md"])
def test_a_file_over_the_cap_is_refused_before_it_is_read(installed: Path, tmp_path: Path, name: str) -> None:
    """A (sparse) file of 600 MiB of NULs: one JSON string, one JSONL line, one note; and a
    folder of notes that together hold it."""
    big = tmp_path / name
    with big.open("wb") as f:
        f.truncate(MAX_INFLATED + 88 * MiB)
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "big.md").symlink_to(big)  # a link is not a note
    os.link(big, folder / "big-too.md")
    with unchanged(installed):
        result = run_aimos("import", str(big))
        in_folder = run_aimos("import", str(folder))
    refused(result, f"{name} holds over 512.0 MiB (the import cap)", hint="--max-inflated SIZE")
    refused(in_folder, "the notes in", "hold over 512.0 MiB")


def test_a_device_is_read_only_to_the_cap(installed: Path) -> None:
    """/dev/zero says it holds nothing and never ends: counted as read, refused at the cap."""
    with unchanged(installed):
        result = run_aimos("import", "/dev/zero", "--format", "jsonl", "--max-inflated", "16M")
    refused(result, "zero holds over 16.0 MiB (--max-inflated 16M)")


def test_a_folder_of_too_many_notes_is_refused_before_one_is_read(installed: Path, tmp_path: Path) -> None:
    folder = tmp_path / "vault"
    for shelf in range(MAX_NOTES // 10_000 + 1):
        (folder / str(shelf)).mkdir(parents=True)
        for n in range(10_000):
            os.close(os.open(folder / str(shelf) / f"{n}.md", os.O_CREAT | os.O_WRONLY, 0o600))
    with unchanged(installed):
        refused(run_aimos("import", str(folder)), "holds over 100,000 notes", hint="one at a time")


def test_max_inflated_lets_a_trusted_export_in(installed: Path, tmp_path: Path) -> None:
    """A real export followed by 32 MiB of spaces (deflated over 100 times): refused by default,
    over a --max-inflated smaller than it, imported under a larger one."""
    zipped = deflate_bomb(tmp_path / "export.zip", 32, head=EXPORT.read_bytes())
    with unchanged(installed):
        refused(run_aimos("import", str(zipped)), "100 times its", "zip bomb cap")
        refused(
            run_aimos("import", str(zipped), "--max-inflated", "16M"), "over 16.0 MiB (--max-inflated 16M)"
        )
        refused(
            run_aimos("import", str(zipped), "--max-inflated", "lots"), "--max-inflated 'lots' is not a size"
        )
    summary = run_aimos("import", str(zipped), "--max-inflated", "40M", "--json").json()
    assert summary["formats"] == ["chatgpt"] and summary["saved"] > 0


def test_an_export_zip_as_delivered_still_imports(installed: Path, tmp_path: Path) -> None:
    """ChatGPT's zip as it comes, deflated with other files beside conversations.json."""
    archive = tmp_path / "chatgpt-export.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as z:
        z.write(EXPORT, "conversations.json")
        z.writestr("user.json", json.dumps({"id": "user-1"}))
        z.writestr("chat.html", "<html></html>")
    summary = run_aimos("import", str(archive), "--json").json()
    assert summary["path"] == "chatgpt-export.zip" and summary["formats"] == ["chatgpt"]
    assert summary["saved"] > 0
    listed = run_aimos("list", "--limit", "100", "--json").json()["memories"]
    assert len([m for m in listed if m["memory_type"] == "dialog_turn"]) == summary["saved"]
    stored_zip = stored(tmp_path / "stored.zip", "export/conversations.json", EXPORT.read_bytes())
    assert run_aimos("import", str(stored_zip), "--json").json()["occurrences"] == summary["saved"]


def test_write_zip_makes_what_zipfile_reads(tmp_path: Path) -> None:
    """The bomb builder's zips are zips: what zipfile unzips from them is what they hold."""
    zipped = deflate_bomb(tmp_path / "a.zip", 2, head=b"[1]")
    with zipfile.ZipFile(zipped) as z:
        assert z.read("conversations.json") == b"[1]" + b" " * 2 * MiB
    plain = write_zip(tmp_path / "b.zip", [], pad=10)
    with zipfile.ZipFile(plain) as z:
        assert z.namelist() == []


@pytest.mark.parametrize(
    ("members", "comment"),
    [(3, b""), (70_000, b""), (1, b"x" * 65_535), (1, b"PK\x05\x06" + b"x" * 30), (1, b"PK\x05\x06 cut")],
)
def test_the_zip_directory_size_is_read_as_zipfile_reads_it(members: int, comment: bytes) -> None:
    """zip_directory_size finds the end record zipfile finds (zip64 past 65,535 members, a
    comment, an end signature inside the comment, one too short to be a record) and gives the
    size zipfile will read, or None where zipfile finds no zip."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        for i in range(members):
            z.writestr(str(i), b"")
        z.comment = comment
    data = b"\0" * 100 + buffer.getvalue()
    end = zipfile._EndRecData(io.BytesIO(data))  # type: ignore[attr-defined]
    expected = None if end is None else end[zipfile._ECD_SIZE]  # type: ignore[attr-defined]
    assert zip_directory_size(data[-70_000:]) == expected
    assert zip_directory_size(b"no zip here" * 100) is None


@pytest.mark.parametrize(
    ("text", "size"),
    [("100", 100), ("64k", 64 << 10), ("512M", 512 << 20), ("1.5GiB", 3 << 29), ("2 gb", 2 << 30)],
)
def test_a_size_reads_as_people_write_it(text: str, size: int) -> None:
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["0", "-1", "1e9", "2X", "", "M", "1" * 400 + "T"])
def test_a_size_that_is_none_is_refused(text: str) -> None:
    with pytest.raises(UsageError, match="is not a size"):
        parse_size(text)
