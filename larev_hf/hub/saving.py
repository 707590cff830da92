"""A bundle's directory: written (:meth:`BundleHubMixin.save_pretrained`), uploaded as one Hub repo
(:meth:`~BundleHubMixin.push_to_hub`) and read back from a directory or a Hub repo id
(:meth:`~BundleHubMixin.from_pretrained`), the model card included.

``save_pretrained`` stays our own rather than ``huggingface_hub.ModelHubMixin``'s: it writes the bundle atomically
(assembled beside the target, renamed into place) with file checksums, which the mixin's hooks do not offer. The
three methods keep ``ModelHubMixin``'s names and arguments, so a bundle travels like any Hub model.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Self

from huggingface_hub import HfApi, ModelCard

from larev_hf import __version__
from larev_hf.hub.config import (
    CONFIG_NAME,
    MODEL_CARD_NAME,
    RECIPE_NAME,
    REPORT_NAME,
    BundleConfig,
    read_bundle_config,
)
from larev_hf.hub.files import replace_directory, resolve_bundle_dir, verify_checksums
from larev_hf.hub.model_card import make_model_card
from larev_hf.io import read_json, shareable, write_json, write_text


class BundleHubMixin:
    """Save, push and load for :class:`~larev_hf.hub.EvaluatorBundle`: what travels is its ``config``
    (``config_larev.json``), ``report`` (``report.json``), the directories of ``sources``, a published named
    evaluator's ``recipe`` (``recipe.json``) and the card (``README.md``)."""

    config: BundleConfig
    report: dict[str, Any]
    sources: dict[str, Path]
    recipe: dict[str, Any] | None

    @classmethod
    def from_pretrained(
        cls,
        path_or_repo_id: str | os.PathLike,
        *,
        revision: str | None = None,
        cache_dir: str | os.PathLike | None = None,
        token: str | bool | None = None,
        local_files_only: bool = False,
        device: str | None = None,
        verify: bool = True,
    ) -> Self:
        """Load a bundle from a local directory or a Hub repo id (downloaded with ``snapshot_download``).

        Args:
            path_or_repo_id (`str` or `os.PathLike`): a directory written by :meth:`save_pretrained` /
                ``larev-hf export``, or a Hub model repo id such as ``"user/larev-esnli-t5-large"``.
            revision (`str`, *optional*): Hub branch, tag or commit.
            cache_dir (`str`, *optional*): Hub cache directory.
            token (`str` or `bool`, *optional*): Hub token.
            local_files_only (`bool`, *optional*, defaults to `False`): use the Hub cache only.
            device (`str`, *optional*): where ``score`` puts the models.
            verify (`bool`, *optional*, defaults to `True`): check every model and tokenizer file against the SHA-256
                sums recorded at export (reads each file once).

        Raises:
            FileNotFoundError: neither a bundle directory nor a reachable Hub repo, or a file the config names is missing.
            ValueError: ``config_larev.json`` is malformed, or (``verify``) a file differs from its recorded checksum.
        """
        root = resolve_bundle_dir(path_or_repo_id, revision=revision, cache_dir=cache_dir, token=token,
                                  local_files_only=local_files_only)
        config = read_bundle_config(root)
        sources = {}
        for name in config.directories():
            if not (root / name).is_dir():
                raise FileNotFoundError(f"{root}: no {name}/ directory, which {CONFIG_NAME} lists; the bundle is incomplete "
                                        "(export it again with `larev-hf export`)")
            sources[name] = root / name
        if not (root / REPORT_NAME).is_file():
            raise FileNotFoundError(f"{root}: no {REPORT_NAME}; the bundle is incomplete (export it again with `larev-hf export`)")
        if verify:
            judge = config.judge_dir
            verify_checksums(root, {k: v for k, v in sources.items() if k != judge}, config.files_sha256)
            if judge:
                verify_checksums(root, {judge: sources[judge]}, config.nli_judge["files_sha256"])
        bundle = cls(config, read_json(root / REPORT_NAME), sources, device=device)
        if (root / RECIPE_NAME).is_file():
            bundle.recipe = read_json(root / RECIPE_NAME)
        return bundle

    def model_card(self, repo_id: str | None = None) -> ModelCard:
        """The README.md model card (see :mod:`larev_hf.hub.model_card`)."""
        return make_model_card(self, repo_id)

    def save_pretrained(self, save_directory: str | os.PathLike, *, repo_id: str | None = None) -> Path:
        """Write the bundle to ``save_directory``, atomically: it is assembled in a temporary directory
        beside the target and renamed into place, so an interrupted save leaves no half-written bundle.

        Args:
            save_directory (`str` or `os.PathLike`): the bundle directory; an existing bundle there is
                replaced, any other non-empty directory is refused.
            repo_id (`str`, *optional*): the Hub repo the model card is written for.

        Returns:
            `Path`: ``save_directory``.
        """
        target = Path(save_directory)
        if target.is_file():
            raise FileExistsError(f"{target} is a file; expected a directory for the bundle")
        if target.is_dir() and any(target.iterdir()) and not (target / CONFIG_NAME).is_file():
            raise FileExistsError(f"{target} is a non-empty directory without {CONFIG_NAME}; refusing to overwrite it "
                                  "(choose a new directory)")
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
        shareable(tmp, directory=True)  # mkdtemp's 0700 would keep the bundle from a colleague or a web server
        try:
            for name, source in sorted(self.sources.items()):
                shutil.copytree(source, tmp / name)
            write_json(tmp / CONFIG_NAME, self.config.to_dict())
            write_json(tmp / REPORT_NAME, self.report)
            if self.recipe is not None:
                write_json(tmp / RECIPE_NAME, self.recipe)
            write_text(tmp / MODEL_CARD_NAME, self.model_card(repo_id).content)
            replace_directory(tmp, target)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
        return target

    def push_to_hub(
        self,
        repo_id: str,
        *,
        commit_message: str = "Upload evaluator bundle (larev-hf)",
        private: bool | None = None,
        token: str | None = None,
        revision: str | None = None,
        create_pr: bool = False,
        api: HfApi | None = None,
    ) -> Any:
        """Upload the bundle as one Hub model repo (created if needed), model card included.

        Args:
            repo_id (`str`): ``"user/name"`` or ``"name"`` (your namespace).
            commit_message (`str`, *optional*): the commit message.
            private (`bool`, *optional*): visibility of a newly created repo (the Hub's default when `None`).
            token (`str`, *optional*): Hub token (defaults to the logged-in one).
            revision (`str`, *optional*): an existing branch to commit to.
            create_pr (`bool`, *optional*, defaults to `False`): open a pull request instead of committing.
            api (`HfApi`, *optional*): the client to use (e.g. one with another ``endpoint``); defaults to ``HfApi(token=token)``.

        Returns:
            The ``CommitInfo`` of the upload.
        """
        if api is None:
            api = HfApi(token=token, library_name="larev-hf", library_version=__version__)
        repo_id = api.create_repo(repo_id, private=private, exist_ok=True, token=token).repo_id
        with tempfile.TemporaryDirectory() as tmp:
            folder = self.save_pretrained(Path(tmp) / "bundle", repo_id=repo_id)
            return api.upload_folder(repo_id=repo_id, folder_path=folder, commit_message=commit_message, token=token,
                                     revision=revision, create_pr=create_pr)
