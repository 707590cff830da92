#!/usr/bin/env bash
# The `esnli` named evaluator's recipe on one GPU at more training rows than a 2-core CPU allows: what a bundle built
# on a GPU and published on the Hub would give. Two builds side by side on the one GPU, each the recipe's documented
# steps (`larev-hf run`, `larev-hf human --calibrate`, whose report gives the held half's agreement with people and
# VARSuite on the test split, and `larev-hf export`'s trust check):
#   small: the recipe as it is (500 training rows), the GPU twin of the CPU build;
#   large: the same recipe at ROWS training rows (default 2000; every shared row, 9,842, needs about 30 minutes here).
# Everything lands in <OUT>: <build>.tgz (each build directory without its models) and logs.tgz, re-packed every 30 s
# and at the end, so what finished comes back even when the budget runs out.
# Usage (repository root, after benchmarks/gpu/prepare_payload.sh): benchmarks/gpu/esnli_recipe_rows.sh OUT [BUDGET_S]
set -uo pipefail
RESULTS=${1:?OUT}; BUDGET=${2:-500}; T0=$(date +%s)
OUT=/tmp/gpu-results; mkdir -p "$OUT/builds" "$RESULTS"
elapsed() { echo $(( $(date +%s) - T0 )); }
log() { echo "[$(elapsed)s] $*" | tee -a "$OUT/log.txt"; }
pack() {
    local build
    for build in "$OUT"/builds/*/; do
        build=$(basename "$build")
        tar czf "$RESULTS/.$build.tgz" --exclude=models --exclude=tokenizer --exclude=data --exclude=bundle \
            -C "$OUT/builds" "$build" && mv "$RESULTS/.$build.tgz" "$RESULTS/$build.tgz"
    done
    tar czf "$RESULTS/.logs.tgz" --exclude=builds -C /tmp gpu-results && mv "$RESULTS/.logs.tgz" "$RESULTS/logs.tgz"
}
( while sleep 30; do pack; done ) & PACKER=$!
trap 'kill $PACKER 2>/dev/null; pack' EXIT

ROWS=${ROWS:-2000}; D=${DATA:-/tmp/shared/data}; L="python3 -m larev_hf.cli"
# the recipe's settings (larev_hf.evaluators.RECIPES["esnli"]), as flags
RUN_FLAGS=${RUN_FLAGS:-"--method larev --backbone minilm2minilm --max-eval-examples 500 --seed 0 --bf16 --leakage-term verbalization"}
CALIBRATE=${CALIBRATE:-larev,explanation_lm,copied_span}

source "$(dirname "$0")/payload_env.sh"
log "environment ready"

build_one() {  # name train_rows
    local dir=$OUT/builds/$1 t
    t=$(date +%s)
    $L run --dataset esnli --data-dir $D/esnli $RUN_FLAGS --max-train-examples "$2" --output-dir "$dir/run" \
        > "$OUT/$1.run.log" 2>&1
    echo "$1 run rc=$? $(( $(date +%s) - t ))s" >> "$OUT/times.txt"; t=$(date +%s)
    $L human --run-dir "$dir/run" --judgments $D/human/snli_accept_train.jsonl --calibrate "$CALIBRATE" --half held \
        --methods "$CALIBRATE" --baseline-columns gpt3_nll:lower --output-dir "$dir/human" > "$OUT/$1.human.log" 2>&1
    echo "$1 human rc=$? $(( $(date +%s) - t ))s" >> "$OUT/times.txt"; t=$(date +%s)
    $L export --run-dir "$dir/run" --method larev --calibration "$dir/human/calibration.json" \
        --output-dir "$dir/bundle" > "$OUT/$1.export.log" 2>&1
    echo "$1 export rc=$? $(( $(date +%s) - t ))s" >> "$OUT/times.txt"
}

nvidia-smi --query-gpu=name,memory.total --format=csv,noheader 2>/dev/null | tee -a "$OUT/log.txt"
build_one "esnli-500" 500 &
build_one "esnli-$ROWS" "$ROWS" &
while [ "$(elapsed)" -lt "$BUDGET" ] && [ -n "$(jobs -rp | grep -vx "$PACKER")" ]; do sleep 5; done
if [ -n "$(jobs -rp | grep -vx "$PACKER")" ]; then
    log "budget reached: stopping what still runs"; pkill -TERM -f "larev_hf.cli"
fi
log "done: $(tr '\n' ';' < "$OUT/times.txt")"
