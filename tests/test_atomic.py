"""Atomic writes: a failed write leaves the old file (or none) and no temporary behind."""

import pytest

from isonorm.atomic import atomic_write, write_text_atomically


def test_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path):
    target = write_text_atomically(tmp_path / "out.txt", "old")
    with pytest.raises(RuntimeError):
        with atomic_write(target) as tmp:
            tmp.write_text("half")
            raise RuntimeError("killed")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def test_written_files_are_readable_by_others(tmp_path):
    target = write_text_atomically(tmp_path / "sub" / "page.html", "<p>")
    assert target.stat().st_mode & 0o044  # not mkstemp's 0600
