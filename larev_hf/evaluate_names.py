"""``evaluate.load("larev")`` by name: the shipped modules put where ``evaluate`` looks for a module it has loaded before.

``evaluate`` (0.4) resolves a bare name such as ``"larev"`` in this order: ``./larev/larev.py`` in the working
directory; the Hub's canonical ``evaluate-metric/larev`` (then ``evaluate-comparison/…``, ``evaluate-measurement/…``);
and, when neither is there or the Hub cannot be reached (``HF_EVALUATE_OFFLINE=1``, no network), the newest copy in
its module cache, ``$HF_MODULES_CACHE/evaluate_modules/metrics/evaluate-metric--larev/<64-hex hash>/larev.py``. It has
no registry a package could add a name to, so :func:`seed` writes each module of ``larev_hf/metric_modules`` (``larev``,
``rev``, ``rora``, ``bundle``) into that cache, the way ``evaluate`` itself caches a module it has loaded: the copy
is the module's own file, which imports :mod:`larev_hf.metric` from the installed package.

When it runs: the package installs ``larev_hf-evaluate-names.pth`` into site-packages (``setup.py``), whose one line
calls :func:`install` at interpreter start-up; that imports nothing (this module and the package's ``__init__`` only)
and puts a one-shot finder at the front of ``sys.meta_path``, which seeds the cache of the environment's
``HF_MODULES_CACHE`` the first time ``evaluate`` is imported, then steps aside. So a fresh process that only runs
``import evaluate; evaluate.load("larev", evaluator=...)`` finds it, offline, from any directory, and a local
``./larev/larev.py`` still comes first, as ``evaluate`` decides. ``LAREV_HF_EVALUATE_NAMES=0`` turns the hook off;
where ``.pth`` files are not read (``python -S``), calling :func:`seed` once does the hook's work.
"""

from __future__ import annotations

import os
import sys

#: set to 0 (or false, no, off) to keep the start-up hook from seeding evaluate's module cache
DISABLE_ENV = "LAREV_HF_EVALUATE_NAMES"
#: evaluate's namespace of canonical metrics in its module cache (``evaluate-metric/<name>`` on the Hub)
NAMESPACE = "evaluate-metric--"


def modules_cache() -> str:
    """evaluate's ``config.HF_MODULES_CACHE``: the imported value once ``evaluate`` is loaded, else
    :func:`environment_modules_cache`."""
    config = sys.modules.get("evaluate.config")
    if config is not None and getattr(config, "HF_MODULES_CACHE", None) is not None:
        return str(config.HF_MODULES_CACHE)
    return environment_modules_cache()


def environment_modules_cache() -> str:
    """evaluate's module cache as its config reads it from the environment at import: ``HF_MODULES_CACHE``, else
    ``$HF_HOME/modules``, else ``$XDG_CACHE_HOME/huggingface/modules``, else ``~/.cache/huggingface/modules``."""
    xdg = os.getenv("XDG_CACHE_HOME", "~/.cache")
    home = os.path.expanduser(os.getenv("HF_HOME", os.path.join(xdg, "huggingface")))
    return os.getenv("HF_MODULES_CACHE", os.path.join(home, "modules"))


def shipped_modules() -> dict[str, str]:
    """The module scripts in ``larev_hf/metric_modules`` (name → path of ``<name>/<name>.py``)."""
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "metric_modules")
    names = sorted(n for n in os.listdir(root) if os.path.isfile(os.path.join(root, n, f"{n}.py")))
    return {name: os.path.join(root, name, f"{name}.py") for name in names}


def _touch(path: str) -> None:
    if not os.path.exists(path):
        with open(path, "a", encoding="utf-8"):
            pass


def _fill(directory: str, name: str, source: bytes, script: str, copy: str) -> None:
    """Write a module's files into ``directory``: its script (atomically), ``__init__.py`` and evaluate's metadata."""
    import json

    partial = os.path.join(directory, f".{name}.py.{os.getpid()}.tmp")
    with open(partial, "wb") as f:
        f.write(source)
    os.replace(partial, os.path.join(directory, f"{name}.py"))
    _touch(os.path.join(directory, "__init__.py"))
    with open(os.path.join(directory, f"{name}.json"), "w", encoding="utf-8") as f:
        json.dump({"original file path": script, "local file path": copy}, f)


def _seed_one(metrics_dir: str, name: str, script: str) -> str:
    """Write one module's copy and make it the newest copy of that name, the one evaluate picks. A new copy is built
    under a temporary name and renamed into place, so a process that lists the cache meanwhile never sees half."""
    import hashlib
    import shutil
    import tempfile

    with open(script, "rb") as f:
        source = f.read()
    module_dir = os.path.join(metrics_dir, NAMESPACE + name)
    target = os.path.join(module_dir, hashlib.sha256(source).hexdigest())
    copy = os.path.join(target, f"{name}.py")
    os.makedirs(module_dir, exist_ok=True)
    _touch(os.path.join(module_dir, "__init__.py"))
    if not os.path.isfile(copy):
        staging = tempfile.mkdtemp(prefix=".seed-", dir=module_dir)  # not 64 characters: evaluate never lists it
        try:
            _fill(staging, name, source, script, copy)
            os.rename(staging, target)
        except OSError:
            if not os.path.isfile(copy):  # not another process that got there first: a damaged copy, rewritten
                _fill(target, name, source, script, copy)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    others = []
    for entry in os.listdir(module_dir):
        other = os.path.join(module_dir, entry, f"{name}.py")
        if len(entry) == 64 and entry != os.path.basename(target) and os.path.isfile(other):
            others.append(os.stat(other).st_mtime_ns)
    if others and os.stat(copy).st_mtime_ns <= max(others):  # another version's copy (an upgrade, another env) is newer
        newest = max(max(others) + 1_000_000, os.stat(copy).st_mtime_ns)
        os.utime(copy, ns=(newest, newest))
    return copy


def seed(cache: str | os.PathLike | None = None) -> dict[str, str]:
    """Copy every shipped module into evaluate's module cache (``cache``, default :func:`modules_cache`) where
    ``evaluate.load("<name>")`` finds it; idempotent and cheap once done (a hash and a few ``stat`` calls).

    Returns:
        name → path of the copy evaluate will load.
    """
    root = os.fspath(cache) if cache is not None else modules_cache()
    metrics_dir = os.path.join(root, "evaluate_modules", "metrics")
    os.makedirs(metrics_dir, exist_ok=True)
    for package in (root, os.path.dirname(metrics_dir), metrics_dir):  # evaluate imports it as a package
        _touch(os.path.join(package, "__init__.py"))
    return {name: _seed_one(metrics_dir, name, script) for name, script in shipped_modules().items()}


class _SeedOnEvaluateImport:
    """A one-shot meta path finder: the first import of ``evaluate`` seeds the module cache, then the finder leaves
    ``sys.meta_path``. It finds nothing itself, so every import proceeds as it would without it."""

    @classmethod
    def find_spec(cls, fullname: str, path: object = None, target: object = None) -> None:
        if fullname == "evaluate":
            uninstall()
            try:
                seed()
            except Exception:  # noqa: BLE001 - a cache it cannot write must never break `import evaluate`
                pass
        return None


def install() -> None:
    """Arm the hook (the ``.pth`` line calls this at start-up): seed now if ``evaluate`` is already imported, else
    on its first import. Does nothing when ``LAREV_HF_EVALUATE_NAMES`` is 0, false, no or off."""
    if os.getenv(DISABLE_ENV, "1").strip().lower() in ("0", "false", "no", "off"):
        return
    if "evaluate" in sys.modules:
        try:
            seed()
        except Exception:  # noqa: BLE001 - see _SeedOnEvaluateImport
            pass
    elif _SeedOnEvaluateImport not in sys.meta_path:
        sys.meta_path.insert(0, _SeedOnEvaluateImport)


def uninstall() -> None:
    """Take the hook out of ``sys.meta_path`` (seeding stays possible with :func:`seed`)."""
    while _SeedOnEvaluateImport in sys.meta_path:
        sys.meta_path.remove(_SeedOnEvaluateImport)

