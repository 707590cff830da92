"""The build's one addition to setup.cfg (which holds all the metadata): a ``.pth`` file at the root of what is
installed, so that ``evaluate.load("larev")`` finds the shipped ``evaluate`` modules by name in any interpreter of the
environment (``larev_hf/evaluate_names.py`` says how and why)."""

from __future__ import annotations

import os

from setuptools import setup
from setuptools.command.build_py import build_py

#: installed into site-packages; its line runs at interpreter start-up and arms a hook for the first `import evaluate`
PTH_NAME = "larev_hf-evaluate-names.pth"
PTH_LINE = "import larev_hf.evaluate_names; larev_hf.evaluate_names.install()\n"


class BuildPyWithEvaluateNames(build_py):
    """``build_py`` that also writes :data:`PTH_NAME` where site-packages' top level is assembled."""

    def run(self) -> None:
        super().run()
        # A wheel installs build_lib. An editable wheel keeps the packages in the source tree and installs only its
        # own root, which setuptools' editable_wheel passes to the build as the install command's install_lib.
        root = self.get_finalized_command("install").install_lib if self.editable_mode else self.build_lib
        os.makedirs(root, exist_ok=True)
        with open(os.path.join(root, PTH_NAME), "w", encoding="utf-8") as f:
            f.write(PTH_LINE)


setup(cmdclass={"build_py": BuildPyWithEvaluateNames})
