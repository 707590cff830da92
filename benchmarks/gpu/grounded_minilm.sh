#!/usr/bin/env bash
# LAREV and LAREV-G on minilm2minilm at more rows than a 2-core CPU allows, on one GPU, inside a time budget.
#   A. seed 0 at 500 train / 300 test rows (the CPU runs' size: a GPU timing against them), then its meta and human;
#   B. seeds 0, 1, 2 side by side on the same GPU at N train rows, N chosen from A's timings to fit what is left of
#      the budget (linear in rows, so conservative), 1,000 test rows; each then `meta` (13 families) and `human`
#      (SNLI acceptability, held half; new_supporting on the fine file), then, while 2 minutes are left, the
#      robust calibration (benchmarks/robust_calibration.py).
# Everything lands in <OUT>: <run>.tgz (each run directory without its models) and logs.tgz (logs, times.txt),
# re-packed every 30 s and at the end, so what finished comes back even when the budget runs out.
# Usage (repository root, after benchmarks/gpu/prepare_payload.sh): benchmarks/gpu/grounded_minilm.sh OUT [BUDGET_S]
set -uo pipefail
RESULTS=${1:?OUT}; BUDGET=${2:-520}; T0=$(date +%s)
OUT=/tmp/gpu-results; mkdir -p "$OUT/runs" "$RESULTS"
elapsed() { echo $(( $(date +%s) - T0 )); }
log() { echo "[$(elapsed)s] $*" | tee -a "$OUT/log.txt"; }
pack() {  # one archive a run directory (a transfer takes 8 files of 16 MiB at most), one for the logs
    local run
    for run in "$OUT"/runs/*/; do
        run=$(basename "$run")
        tar czf "$RESULTS/.$run.tgz" --exclude=models --exclude=tokenizer --exclude=data -C "$OUT/runs" "$run" \
            && mv "$RESULTS/.$run.tgz" "$RESULTS/$run.tgz"
    done
    tar czf "$RESULTS/.logs.tgz" --exclude=runs -C /tmp gpu-results && mv "$RESULTS/.logs.tgz" "$RESULTS/logs.tgz"
}
( while sleep 30; do pack; done ) & PACKER=$!
trap 'kill $PACKER 2>/dev/null; pack' EXIT

# Sizes (environment, for a dry run on CPU): A_ROWS/A_EVAL (500/300), B_EVAL (1000), B_ROWS (chosen), B_MIN_ROWS (700),
# HUMAN_ARGS (extra human flags, e.g. --max-instances 6), RUN_ARGS (extra run flags, e.g. --grounding-target mixed),
# DATA (/tmp/shared/data).
A_ROWS=${A_ROWS:-500}; A_EVAL=${A_EVAL:-300}; B_EVAL=${B_EVAL:-1000}; HUMAN_ARGS=${HUMAN_ARGS:-}
RUN_ARGS=${RUN_ARGS:-}; D=${DATA:-/tmp/shared/data}; L="python3 -m larev_hf.cli"

# -- environment: carried wheels and packages, fp32 MiniLM weights, data (SKIP_PAYLOAD=1: the current one) --
source "$(dirname "$0")/payload_env.sh"
log "environment ready"

run_one() {  # name seed train_rows eval_rows
    local dir=$OUT/runs/$1 t
    t=$(date +%s)
    $L run --method larev,larev_grounded --backbone minilm2minilm --dataset esnli --data-dir $D/esnli \
        --max-train-examples "$3" --max-eval-examples "$4" --seed "$2" --output-dir "$dir" $RUN_ARGS > "$OUT/$1.run.log" 2>&1
    echo "$1 run rc=$? $(( $(date +%s) - t ))s" >> "$OUT/times.txt"; t=$(date +%s)
    $L meta --run-dir "$dir" > "$OUT/$1.meta.log" 2>&1
    echo "$1 meta rc=$? $(( $(date +%s) - t ))s" >> "$OUT/times.txt"; t=$(date +%s)
    $L human --run-dir "$dir" --judgments $D/human/snli_accept_train.jsonl --baseline-columns gpt3_nll:lower \
        --half held $HUMAN_ARGS > "$OUT/$1.human.log" 2>&1
    $L human --run-dir "$dir" --judgments $D/human/snli_fine_select.jsonl --human-columns new_supporting,new_info \
        --half all $HUMAN_ARGS >> "$OUT/$1.human.log" 2>&1
    echo "$1 human rc=$? $(( $(date +%s) - t ))s" >> "$OUT/times.txt"; t=$(date +%s)
    # the robust calibration on this evaluator, when 2 minutes of the budget are left: the robust fit and the fit by agreement alone
    if [ "${5:-}" = calibrate ] && [ $(( BUDGET - $(elapsed) )) -gt 120 ]; then
        python3 benchmarks/robust_calibration.py --run-dir "$dir" --judgments $D/human/snli_accept_train.jsonl \
            --features larev,grounding larev,length,rouge_l --robustness-examples "$4" \
            --json "$OUT/$1.robust_calibration.json" > "$OUT/$1.calibrate.log" 2>&1
        echo "$1 calibrate rc=$? $(( $(date +%s) - t ))s" >> "$OUT/times.txt"
    fi
}
seconds_of() { grep "^$1 $2 " "$OUT/times.txt" | tail -1 | sed 's/.* \([0-9]*\)s$/\1/'; }

# -- A: the CPU runs' size --
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader 2>/dev/null | tee -a "$OUT/log.txt"
A=minilm-$A_ROWS-s0
run_one "$A" 0 "$A_ROWS" "$A_EVAL"
log "A done: $(tr '\n' ';' < "$OUT/times.txt")"
grep -q "$A run rc=0" "$OUT/times.txt" || { tail -40 "$OUT/$A.run.log"; exit 4; }
grep -q "$A meta rc=0" "$OUT/times.txt" || tail -20 "$OUT/$A.meta.log"
grep -q "$A human rc=0" "$OUT/times.txt" || tail -20 "$OUT/$A.human.log"

# -- B: three seeds side by side at N rows --
N=$(python3 - "$(seconds_of "$A" run)" "$(seconds_of "$A" meta)" "$(seconds_of "$A" human)" \
    "$BUDGET" "$(elapsed)" "$A_ROWS" "$A_EVAL" "$B_EVAL" <<'PY'
import sys
run, meta, human, budget, now, a_rows, a_eval, b_eval = (float(v or 0) for v in sys.argv[1:])
side_by_side = 1.2  # three processes on one H100 (measured: 1,000-row runs 167 s each side by side, 500 rows 86 s alone)
after = side_by_side * (meta * b_eval / a_eval + human)
left = budget - now - after - 20
rows = int(left / (side_by_side * run / a_rows) // 100 * 100)
print(max(0, min(rows, 9800)))
PY
)
N=${B_ROWS:-$N}; log "B: N=$N"
if [ "$N" -ge "${B_MIN_ROWS:-700}" ]; then
    for s in 0 1 2; do run_one "minilm-${N}-s$s" "$s" "$N" "$B_EVAL" calibrate & done
    while [ "$(elapsed)" -lt "$BUDGET" ] && [ -n "$(jobs -rp | grep -vx "$PACKER")" ]; do sleep 5; done
    if [ -n "$(jobs -rp | grep -vx "$PACKER")" ]; then
        log "budget reached: stopping what still runs"; pkill -TERM -f "larev_hf.cli|robust_calibration.py"
    fi
fi
log "B done: $(tr '\n' ';' < "$OUT/times.txt")"
