"""Snapshots of paths, file by file: what was created, changed or deleted in between."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from finesse.support.snapshot import TooManyFiles, changed, snapshot
from tests.helpers.repo import write


def test_created_changed_and_deleted_files_are_named(tmp_path: Path) -> None:
    write(tmp_path, "src/billing/a.py", "a\n")
    write(tmp_path, "src/billing/b.py", "b\n")
    write(tmp_path, "src/other.py", "x\n")
    before = snapshot(tmp_path, ["src/billing", "missing"])
    assert [key.split("\t")[0] for key in before] == ["src/billing/a.py", "src/billing/b.py"]
    write(tmp_path, "src/billing/a.py", "a changed, longer\n")
    (tmp_path / "src" / "billing" / "b.py").unlink()
    write(tmp_path, "src/billing/new/c.py", "c\n")
    write(tmp_path, "src/other.py", "not protected\n")
    assert changed(before, snapshot(tmp_path, ["src/billing", "missing"])) == [
        "src/billing/a.py", "src/billing/b.py", "src/billing/new/c.py"]


def test_a_single_file_and_a_path_created_later(tmp_path: Path) -> None:
    before = snapshot(tmp_path, ["config.toml"])
    assert before == []
    write(tmp_path, "config.toml", "x = 1\n")
    assert changed(before, snapshot(tmp_path, ["config.toml"])) == ["config.toml"]


def test_a_touch_with_the_same_content_counts(tmp_path: Path) -> None:
    write(tmp_path, "a.txt", "a\n")
    before = snapshot(tmp_path, ["a.txt"])
    os.utime(tmp_path / "a.txt", ns=(1, 1))
    assert changed(before, snapshot(tmp_path, ["a.txt"])) == ["a.txt"]


def test_links_are_recorded_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write(outside, "big.txt", "x\n")
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "linked").symlink_to(outside, target_is_directory=True)
    keys = snapshot(project, ["src"])
    assert [key.split("\t")[:2] for key in keys] == [["src/linked", "link"]]


def test_too_many_files_is_refused_in_one_line(tmp_path: Path) -> None:
    for number in range(6):
        write(tmp_path, f"many/{number}.txt", "x")
    with pytest.raises(TooManyFiles) as caught:
        snapshot(tmp_path, ["many"], limit=5)
    assert str(caught.value) == "many holds over 5 files: protect narrower paths"
