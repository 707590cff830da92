"""``larev-hf evaluators list|build|path``: the named default evaluators; ``build NAME --push-to-hub REPO`` also
publishes the built one (its recipe in the card)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from larev_hf.cli.arguments import DataDirArguments, PushArguments, push
from larev_hf.cli.commands.base import Command
from larev_hf.methods.settings import help_field


@dataclass
class EvaluatorsArguments:
    """``larev-hf evaluators``: the named default evaluators."""

    action: str = help_field("list", "list: every named evaluator, whether it is built, its bundle's size; build "
                             "NAME: build it now (--push-to-hub: then publish it); path NAME: its bundle directory "
                             "(from the cache, its published Hub repo, else built on first use)", flag="action",
                             choices=("list", "build", "path"), nargs="?")
    name: str | None = help_field(None, "the evaluator's name (esnli)", flag="name", nargs="?")


class EvaluatorsCommand(Command):
    """``larev-hf evaluators``."""

    name = "evaluators"
    help_text = "the named default evaluators: list them, build one, or print where its bundle is"
    sections = ((EvaluatorsArguments, None), (DataDirArguments, None), (PushArguments, None))

    def run(self, args: argparse.Namespace, progress: bool) -> int:
        # the recipes read the bundle config (the method registry), publishing needs huggingface_hub and a build
        # trains a run: imported when used, not by --help
        from larev_hf.evaluators import loading
        from larev_hf.evaluators.published import publish
        from larev_hf.evaluators.recipes import NOT_OFFERED, RECIPES

        if args.push_to_hub and args.action != "build":
            raise ValueError(f"--push-to-hub publishes a built evaluator: `larev-hf evaluators build NAME "
                             f"--push-to-hub {args.push_to_hub}`, not `evaluators {args.action}`")
        if args.action == "list":
            for row in loading.describe():
                if row["downloaded_from"]:
                    state = f"downloaded from {row['downloaded_from']}" + (" (calibrated)" if row["calibrated"] else "")
                elif row["built"]:
                    state = f"built ({row['build_minutes']} min" + (", calibrated)" if row["calibrated"] else ")")
                else:
                    state = (f"not built (about {row['estimate_minutes']:.0f} min on first use" +
                             (f", or downloaded from {row['hub_repo']} when online)" if row["hub_repo"] else ")"))
                size = f", {row['size_mb']:.1f} MB" if row["size_mb"] is not None else ""
                print(f"{row['name']:14s} {row['description']}\n{'':14s} {state}{size}: {row['path']}")
            for name in NOT_OFFERED:
                print(f"{name:14s} no named evaluator (`larev-hf evaluators path {name}` says why)")
            return 0
        if args.name is None:
            raise ValueError(f"evaluators {args.action}: name the evaluator, one of {sorted(RECIPES)}")
        chosen = loading.recipe(args.name).name
        if args.action == "path":
            print(loading.resolve(chosen, args.data_dir, progress))
            return 0
        path = loading.bundle_path(chosen) or loading.build(chosen, args.data_dir, progress)
        print(path)
        if args.push_to_hub:
            return push(lambda: publish(path, args.push_to_hub, private=args.private),
                        f"the {chosen!r} evaluator to {args.push_to_hub}", f"it is built in {path}")
        return 0
