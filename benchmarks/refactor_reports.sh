#!/usr/bin/env bash
# The reports a refactor must leave bitwise equal, produced by the tree TREE into OUT:
#   the demo run (REV and LAREV), a synthetic run of every method (RoRA, LAS/RQ too), VARSuite's meta report on the
#   demo, a robust human calibration on it, a calibrated bundle exported from it scoring a file (CLI and evaluate glue),
#   a small VARIF and a small FRAME run.
# Run it once on a worktree of the base commit and once on the change, then compare:
#   git worktree add /tmp/base main && benchmarks/refactor_reports.sh /tmp/base /tmp/reports/before
#   benchmarks/refactor_reports.sh . /tmp/reports/after
#   python benchmarks/compare_reports.py --all-keys --ignore 'run_dir' --ignore '*/run_dir' \
#       $(for r in demo/report.json all/report.json demo-meta/meta_report.json demo-human/human_report.json \
#           varif/varif_report.json frame/frame_report.json; do echo /tmp/reports/before/$r /tmp/reports/after/$r; done)
# and bundle-scores/* byte for byte (cmp). About 6 minutes alone on 2 cores. ONLY=demo,all,... runs a subset (meta,
# human and bundle read the demo, bundle the human calibration).
set -euo pipefail
tree=$(cd "$1" && pwd)
out=$(mkdir -p "$2" && cd "$2" && pwd)
data=${LAREV_HF_DATA:-$(cd "$(dirname "$0")/../.." && pwd)/shared/data}
only=${ONLY:-demo,all,meta,human,bundle,varif,frame}
export PYTHONPATH="$tree" OMP_NUM_THREADS=2 MKL_NUM_THREADS=2 HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
cli=(python -m larev_hf.cli --quiet)
has() { [[ ",$only," == *",$1,"* ]]; }
cd "$out"
if has demo; then "${cli[@]}" demo --output-dir demo --seed 0 >/dev/null; fi
if has all; then
  "${cli[@]}" run --dataset synthetic --method all --backbone t5-tiny --seed 0 --output-dir all >/dev/null
fi
if has meta; then "${cli[@]}" meta --run-dir demo --output-dir demo-meta >/dev/null; fi
if has human; then
  python - <<'EOF'
import numpy as np
from larev_hf.io import write_jsonl
from larev_hf.pipeline import Run

rng, lines = np.random.default_rng(0), []
for r in Run.load("demo", progress=False).split_records("test")[:80]:
    for k, (rationale, acceptable) in enumerate(((r["rationale"], 1.0), (f"The answer is {r['label']}.", 0.5),
                                                 ("Birds can fly.", 0.0))):
        lines.append({"id": f"{r['id']}#{k}", "instance_id": r["id"], "question": r["question"], "choices": list(r["choices"]), "label": r["label"],
                      "rationale": rationale, "acceptable": acceptable, "nll": -acceptable + 0.01 * rng.random()})
write_jsonl("judged_demo.jsonl", lines)
EOF
  "${cli[@]}" human --run-dir demo --judgments judged_demo.jsonl --output-dir demo-human --baseline-columns nll:lower \
    --calibrate larev,length --robustness-examples 100 --n-boot 200 >/dev/null
fi
if has bundle; then  # a calibrated bundle exported from the demo, scoring the judged file by path and by evaluate glue
  "${cli[@]}" export --run-dir demo --method larev --output-dir bundle --calibration demo-human/calibration.json --force >/dev/null
  "${cli[@]}" evaluate --evaluator bundle --data-file judged_demo.jsonl --output-dir bundle-scores >/dev/null
  python - <<'EOF'
import json

import evaluate

import larev_hf

rows = [json.loads(line) for line in open("judged_demo.jsonl")]
metric = evaluate.load(larev_hf.metric_path("larev"), evaluator="bundle")
result = metric.compute(rationales=[r["rationale"] for r in rows], labels=[r["label"] for r in rows],
                        inputs=[{"question": r["question"], "choices": r["choices"]} for r in rows])
json.dump(result, open("bundle-glue.json", "w"), default=str, indent=1)
EOF
fi
if has varif; then
  "${cli[@]}" varif --dataset esnli --data-dir "$data/esnli" --output-dir varif \
    --generators gold,vacuous,leak,tfidf,random,self_rationalizer --max-train-examples 100 --max-eval-examples 20 \
    --nli-train-examples 100 --nli-eval-examples 20 --num-train-epochs 1 --ig-steps 4 --other-inputs 5 --n-boot 100 >/dev/null
fi
if has frame; then
  "${cli[@]}" frame --dataset esnli --data-dir "$data/esnli" --output-dir frame --seeds 0 --max-train-examples 60 \
    --max-eval-examples 30 --train-shares 1.0,0.5 --noise-shares 0.0,0.3 --capacity-backbones t5-tiny \
    --task-backbone t5-tiny --pretrained-simulator t5-tiny --scratch-simulator bart-tiny --num-train-epochs 2 \
    --n-boot 100 >/dev/null
fi
echo "reports of $tree in $out"
