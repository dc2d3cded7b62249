"""The byte census over a home's files: every occurrence found, across read boundaries too, and
the needle file and the model cache left out."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from memory_core.adapters.home_files import HomeFolder

NEEDLES = ["zebracrossing", "é中文 secret", "gate code 7731"]


@settings(max_examples=60, deadline=None)
@given(
    parts=st.lists(st.one_of(st.sampled_from(NEEDLES), st.binary(max_size=40).map(lambda b: b.hex())), max_size=30),
    chunk=st.integers(1, 64),
)
def test_every_occurrence_is_counted_whatever_the_read_size(tmp_path_factory, parts, chunk):
    home = tmp_path_factory.mktemp("home")
    (home / "data.bin").write_bytes("".join(parts).encode("utf-8"))
    hits, scanned = HomeFolder(home, chunk_bytes=chunk).scan(NEEDLES)
    expected = sum(1 for p in parts if p in NEEDLES)  # hex filler holds none of the needles
    assert hits.get("data.bin", 0) == expected and scanned == 1


def test_the_needle_file_and_the_model_cache_are_not_scanned(tmp_path):
    folder = HomeFolder(tmp_path)
    folder.put_needles("r1", {"needles": NEEDLES})
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "vocab.txt").write_text("zebracrossing")
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "r.md").write_text("a report quoting zebracrossing")
    assert folder.scan(NEEDLES) == ({"reports/r.md": 1}, 1)
    assert folder.drop_quoting(NEEDLES) == ["reports/r.md"] and folder.scan(NEEDLES) == ({}, 0)
    folder.drop_needles("r1")
    assert folder.needles("r1") is None and not (tmp_path / "erasures").exists()
