"""The default evaluators start from a plain ``pip install larev-hf``: no extra, no package the wheel does not require.

Run in the environment the wheel was installed into (``.ci/wheel_check.sh``). That environment may hold more than the
wheel asks for (CI borrows the development environment, extras included), so a successful import there proves
nothing. This check makes the environment look like a plain install first: every top-level module that only
distributions *outside* the closure of the wheel's requirements without extras provide (``importlib.metadata``,
followed recursively) is made unimportable, as it would be absent. Then, for every named evaluator
(``larev_hf.evaluators.recipes.RECIPES``), it builds the recipe's backbone — its tokenizer and a fresh model with the
pretrained weights. Code that imports an optional package inside ``try`` falls back as it would on a plain install;
code that needs one fails here, and the check names the module and its distribution.
"""

from __future__ import annotations

import importlib.abc
import importlib.metadata as metadata
import sys

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name


def requirement_closure(root: str) -> set[str]:
    """The canonical names of ``root`` and every distribution it requires, recursively, with no extra asked for."""
    seen: set[str] = set()
    todo = [root]
    while todo:
        name = canonicalize_name(todo.pop())
        if name in seen:
            continue
        seen.add(name)
        try:
            requirements = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue  # required but absent: `pip check` reports it; here it simply adds nothing
        for line in requirements:
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                todo.append(requirement.name)
    return seen


class NotInstalled(importlib.abc.MetaPathFinder):
    """Refuses the top-level modules a plain install would not have, naming the distribution that has them here."""

    def __init__(self, absent: dict[str, list[str]]) -> None:
        self.absent = absent

    def find_spec(self, fullname, path=None, target=None):  # noqa: ANN001 - the MetaPathFinder protocol
        top = fullname.partition(".")[0]
        if top in self.absent:
            raise ModuleNotFoundError(f"No module named {fullname!r} ({', '.join(self.absent[top])} is not installed "
                                      "by `pip install larev-hf`)", name=fullname)
        return None


def main() -> int:
    allowed = requirement_closure("larev-hf")
    absent = {module: sorted(distributions)
              for module, distributions in metadata.packages_distributions().items()
              if module not in sys.modules and not {canonicalize_name(d) for d in distributions} & allowed}
    sys.meta_path.insert(0, NotInstalled(absent))
    try:
        from larev_hf.evaluators import recipes
        from larev_hf.modeling import build_model, build_tokenizer, check_backbone

        backbones = sorted({chosen.backbone for chosen in recipes.RECIPES.values()})
        for backbone in backbones:
            check_backbone(backbone)
            tokenizer = build_tokenizer(backbone)
            model = build_model(backbone, tokenizer)
            print(f"the default backbone {backbone!r} loads: {type(model).__name__}, "
                  f"{sum(p.numel() for p in model.parameters()) / 1e6:.1f} M parameters")
    except ImportError as error:
        cause = f" <- {error.__cause__}" if error.__cause__ else ""
        print(f"error: the default evaluators need what `pip install larev-hf` does not install: {error}{cause} (add "
              "it to install_requires in setup.cfg)", file=sys.stderr)
        return 1
    print(f"the default evaluators' backbones ({', '.join(backbones)}) load from a plain install: only larev-hf's "
          f"requirements without extras were importable ({len(allowed)} distributions; {len(absent)} top-level "
          "modules of others hidden)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
