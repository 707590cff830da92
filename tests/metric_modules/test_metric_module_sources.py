"""The ``evaluate`` modules have one source: ``larev_hf/metric_modules/<name>/`` (what a pip install carries) and the
repository's ``metrics/<name>/`` (what ``evaluate.load("metrics/<name>")`` reads in a checkout) must not drift."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _files(directory: Path) -> dict[str, bytes]:
    return {p.relative_to(directory).as_posix(): p.read_bytes() for p in sorted(directory.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts}


@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / "larev_hf" / "metric_modules").iterdir()
                                        if p.is_dir() and p.name != "__pycache__"))
def test_the_checkout_modules_are_byte_copies_of_the_packaged_ones(name: str) -> None:
    packaged, checkout = _files(ROOT / "larev_hf" / "metric_modules" / name), _files(ROOT / "metrics" / name)
    assert sorted(packaged) == sorted(checkout), f"metrics/{name} and larev_hf/metric_modules/{name} hold other files"
    differing = [path for path in packaged if packaged[path] != checkout[path]]
    assert not differing, (f"metrics/{name}/{differing[0]} differs from larev_hf/metric_modules/{name}/{differing[0]}: "
                           "edit the packaged copy and copy it over (cp -r larev_hf/metric_modules/* metrics/)")
