"""The one source of the BibTeX entries the library cites (``citations.bib``, shipped with the package).

The losses, the method registry, the model card and the ``evaluate`` modules all read it, so a
citation is corrected in one place.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources

_ENTRY = re.compile(r"^@\w+\{([^,]+),", re.MULTILINE)


@cache
def citations() -> dict[str, str]:
    """Citation key → its BibTeX entry, in file order."""
    text = resources.files("larev_hf").joinpath("citations.bib").read_text(encoding="utf-8")
    starts = [(match.start(), match.group(1).strip()) for match in _ENTRY.finditer(text)]
    ends = [start for start, _ in starts[1:]] + [len(text)]
    return {key: text[start:end].strip() for (start, key), end in zip(starts, ends, strict=True)}


def bibtex(*keys: str) -> str:
    """The BibTeX entries of ``keys``, one after another; an unknown key raises a ``KeyError`` naming the known ones."""
    known = citations()
    missing = [key for key in keys if key not in known]
    if missing:
        raise KeyError(f"no citation {missing}; larev_hf/citations.bib has {sorted(known)}")
    return "\n".join(known[key] for key in keys)
