#!/usr/bin/env bash
# The release check: build the sdist and the wheel, let twine check them, install the wheel (not the source tree)
# into a fresh environment and, from a directory outside the repository, run the demo's pipeline (a smaller
# synthetic run), export its LAREV evaluator as a bundle and score the run's test rationales through
# evaluate.load(larev_hf.metric_path("larev")) and, in a fresh process that imports only evaluate, evaluate.load("larev")
# by name (the wheel's larev_hf-evaluate-names.pth start-up hook).
# Everything the package reads at run time (the evaluate modules, the model-card template, citations.bib) must
# therefore come from the wheel. Run alone: .ci/wheel_check.sh [WORK_DIR]  (default: a new temporary directory).
set -euo pipefail
cd "$(dirname "$0")/.."
source_tree="$PWD"
# HF_EVALUATE_OFFLINE: evaluate's own switch (it does not read HF_HUB_OFFLINE) for looking a bare name up on the Hub
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 HF_EVALUATE_OFFLINE=1 TOKENIZERS_PARALLELISM=false PIP_DISABLE_PIP_VERSION_CHECK=1
work="${1:-$(mktemp -d)}"
mkdir -p "$work"
export HF_HOME="$work/hf-home"          # evaluate copies the loaded module here; keep it out of the user's cache
start=$SECONDS

# 1. Build and check the distributions: with the active environment's build and twine (the dev extra), or in a new one.
if python3 -c "import build, twine" 2>/dev/null; then
    builder=python3
else
    python3 -m venv "$work/build-venv"
    "$work/build-venv/bin/pip" install -q build twine
    builder="$work/build-venv/bin/python"
fi
rm -rf "$work/dist"
"$builder" -m build -q -o "$work/dist" . > "$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
"$builder" -m twine check --strict "$work"/dist/*
wheel=$(ls "$work"/dist/larev_hf-*.whl)
echo "built $(basename "$wheel") and $(basename "$(ls "$work"/dist/larev_hf-*.tar.gz)") in $((SECONDS - start)) s"

# 2. Install the wheel into a fresh environment: the CPU torch first (an unpinned torch would pull CUDA wheels).
# With WHEEL_CHECK_DEPENDENCIES_FROM=<a site-packages directory> (CI passes its own environment's, whose packages were
# installed from the same setup.cfg), the fresh environment reads the dependencies from there instead of installing
# them again (3 of this check's 5 minutes): the wheel itself is still installed alone (--no-deps), that directory's
# .pth files, the source tree's editable install among them, are not read, and `pip check` proves the installed
# packages satisfy every requirement the wheel declares.
python3 -m venv --clear "$work/wheel-venv"  # a work directory used before must not keep an older install
. "$work/wheel-venv/bin/activate"
if [[ -n "${WHEEL_CHECK_DEPENDENCIES_FROM:-}" ]]; then
    site_packages=$(python -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
    echo "$WHEEL_CHECK_DEPENDENCIES_FROM" > "$site_packages/wheel-check-dependencies.pth"
    pip uninstall -q -y setuptools 2>/dev/null || true   # the venv's own old copy would shadow the borrowed one
    pip install -q --no-deps "$wheel"
    pip check
else
    pip install -q torch==2.13.0
    pip install -q "$wheel"
fi
echo "installed the wheel at $((SECONDS - start)) s"

# 2b. The default evaluators start from the wheel without extras: their backbone's tokenizer and pretrained weights
# load, and every module that took comes from the wheel's own requirements (the environment may hold more, e.g. CI's
# borrowed development packages, so the check is where each imported module came from, not that the import worked).
(cd "$work" && python "$source_tree/.ci/plain_install_check.py")

# 3. Outside the source tree: a run of the demo's pipeline, the export, and scoring through the shipped evaluate module.
# The run is the demo's (`larev-hf demo` is this pipeline on the whole synthetic task; CI runs it from the source tree)
# on 600 training rows and LAREV alone: the same code and packaged files, in 40 s instead of 90.
outside="$work/outside"
mkdir -p "$outside" && cd "$outside"
larev-hf demo --help > /dev/null
larev-hf --quiet run --dataset synthetic --method larev --max-train-examples 600 --max-eval-examples 100 \
    --output-dir demo > demo.log 2>&1 || { cat demo.log; exit 1; }
test -s demo/report.json && test -s demo/separations.png
echo "the demo's pipeline from the wheel finished at $((SECONDS - start)) s"
larev-hf --quiet export --run-dir demo --method larev --output-dir bundle-larev > export.log 2>&1 || { cat export.log; exit 1; }
test -s bundle-larev/README.md
SOURCE_TREE="$source_tree" python - <<'EOF'
import json, math, os, subprocess, sys, sysconfig
from pathlib import Path

import evaluate

import larev_hf

package = Path(larev_hf.__file__).resolve()
print("larev_hf", larev_hf.__version__, "imported from", package)
assert "site-packages" in package.parts, "larev_hf was not imported from the installed wheel"
assert Path(os.environ["SOURCE_TREE"]).resolve() not in package.parents, "larev_hf was imported from the source tree"

records = [json.loads(line) for line in Path("demo/data/test.jsonl").read_text().splitlines() if line.strip()]
metric = evaluate.load(larev_hf.metric_path("larev"), evaluator="bundle-larev")
results = metric.compute(rationales=[r["rationale"] for r in records], labels=[r["label"] for r in records],
                         inputs=[{"id": r["id"], "question": r["question"], "choices": r["choices"]} for r in records])
scores = results["scores"]
assert len(scores) == len(records) and all(math.isfinite(s) for s in scores)
run_scores = [json.loads(line)["larev/gold"] for line in Path("demo/scores/test_scores.jsonl").read_text().splitlines()
              if line.strip()]
assert max(abs(a - b) for a, b in zip(scores, run_scores, strict=True)) < 1e-5, "the bundle's scores differ from the run's"
print(f"evaluate.load(larev_hf.metric_path('larev')) scored {len(scores)} gold rationales from the bundle: "
      f"mean LAREV {results['mean_score']:+.3f} nats, equal to the demo run's scores; hashcode {results['hashcode']}")

# By name, in a fresh process that imports evaluate and nothing of larev_hf's, from this directory outside the tree,
# with an empty Hugging Face home: the module comes from the wheel's start-up hook, which seeds evaluate's module cache.
hook = Path(sysconfig.get_paths()["purelib"]) / "larev_hf-evaluate-names.pth"
assert hook.is_file(), f"the wheel did not install {hook.name}"
fresh_home = Path("hf-home-by-name").resolve()
by_name = '''
import json, sys
from pathlib import Path
import evaluate
assert "larev_hf.metric" not in sys.modules
records = [json.loads(line) for line in Path("demo/data/test.jsonl").read_text().splitlines() if line.strip()]
metric = evaluate.load("larev", evaluator="bundle-larev")
results = metric.compute(rationales=[r["rationale"] for r in records], labels=[r["label"] for r in records],
                         inputs=[{"id": r["id"], "question": r["question"], "choices": r["choices"]} for r in records])
print(json.dumps({"module": type(metric).__module__, "file": sys.modules[type(metric).__module__].__file__,
                  "scores": results["scores"], "hashcode": results["hashcode"]}))
'''
done = subprocess.run([sys.executable, "-c", by_name], capture_output=True, text=True,
                      env={**os.environ, "HF_HOME": str(fresh_home)})
assert done.returncode == 0, done.stderr[-3000:]
named = json.loads(done.stdout.strip().splitlines()[-1])
assert named["module"].startswith("evaluate_modules.metrics.evaluate-metric--larev."), named["module"]
assert named["file"].startswith(str(fresh_home)), named["file"]  # the copy the child's own hook put in its cache
assert named["hashcode"] == results["hashcode"]
assert max(abs(a - b) for a, b in zip(named["scores"], scores, strict=True)) < 1e-6, "scores by name differ"
print(f"evaluate.load('larev') by name, in a fresh process: the same {len(scores)} scores (from {named['file']})")
EOF
echo "wheel check passed in $((SECONDS - start)) s"
