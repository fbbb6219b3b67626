"""The zygote is given the font list this user's matplotlib has cached, when it is to import matplotlib:
read from matplotlib's own folder, never written there, and nothing that is not a plain, small file."""

from __future__ import annotations

from autograder.isolation.sandbox import FONT_LIST_BYTES, matplotlib_font_list

PRELOAD = ["math", "matplotlib.pyplot", "torch"]


def test_the_cached_font_list_is_read_and_left_as_it_was(tmp_path, monkeypatch):
    (tmp_path / "fontlist-v3.11.0.json").write_text('{"_version": 390}')
    (tmp_path / "other.json").write_text("{}")
    monkeypatch.setenv("MPLCONFIGDIR", str(tmp_path))
    before = sorted((p.name, p.stat().st_mtime_ns) for p in tmp_path.iterdir())
    assert matplotlib_font_list(PRELOAD) == {"fontlist-v3.11.0.json": b'{"_version": 390}'}
    assert sorted((p.name, p.stat().st_mtime_ns) for p in tmp_path.iterdir()) == before


def test_the_cache_folder_is_matplotlibs_own(tmp_path, monkeypatch):
    (tmp_path / "matplotlib").mkdir()
    (tmp_path / "matplotlib" / "fontlist-v1.json").write_text("[]")
    monkeypatch.delenv("MPLCONFIGDIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert matplotlib_font_list(PRELOAD) == {"fontlist-v1.json": b"[]"}


def test_nothing_without_matplotlib_to_import_nor_what_is_not_a_small_plain_file(tmp_path, monkeypatch):
    monkeypatch.setenv("MPLCONFIGDIR", str(tmp_path))
    (tmp_path / "fontlist-v1.json").write_text("[]")
    assert matplotlib_font_list(["math", "torch"]) == {}
    (tmp_path / "fontlist-v1.json").unlink()
    (tmp_path / "fontlist-v2.json").symlink_to("/etc/passwd")
    (tmp_path / "fontlist-v3.json").write_bytes(b" " * (FONT_LIST_BYTES + 1))
    (tmp_path / "fontlist-v4.json").mkdir()
    assert matplotlib_font_list(PRELOAD) == {}
