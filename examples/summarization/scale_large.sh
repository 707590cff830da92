#!/usr/bin/env bash
# Steps/s and peak GPU memory of run_summarization.py with IRMProbeTrainer on t5-large and bart-large (built from
# their configs: no weights downloaded), bf16, a few hundred steps, under `accelerate launch` (docs/scale.md).
#
#   bash examples/summarization/scale_large.sh DATA_DIR [STEPS] [ACCELERATE_CONFIG]
#
# DATA_DIR holds train.json / validation.json (document, summary, environment, group_id columns; the test's
# generator in tests/training/test_summarization_example.py writes such files). Results: runs/scale-<arch>/all_results.json
# (train_steps_per_second) and runs/scale-<arch>/peak_memory_mib.txt.
set -euo pipefail
DATA=${1:?data directory}; STEPS=${2:-300}; CONFIG=${3:-examples/accelerate_configs/single_gpu.yaml}
for ARCH in t5-large bart-large; do
  INIT=runs/init-$ARCH; OUT=runs/scale-$ARCH
  python examples/summarization/model_from_config.py "$ARCH" "$INIT" --text "$DATA/train.json"
  nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 200 > "$OUT.mem" & SAMPLER=$!
  accelerate launch --config_file "$CONFIG" examples/summarization/run_summarization.py \
    --model_name_or_path "$INIT" --train_file "$DATA/train.json" --validation_file "$DATA/validation.json" \
    --text_column document --summary_column summary --output_dir "$OUT" --do_train --do_eval \
    --per_device_train_batch_size 4 --per_device_eval_batch_size 12 --max_steps "$STEPS" --learning_rate 1e-4 \
    --lambda_irm 1.0 --bf16 --max_source_length 256 --max_target_length 64 --logging_steps 50 \
    --save_strategy no --report_to none
  kill "$SAMPLER"
  sort -n "$OUT.mem" | tail -1 > "$OUT/peak_memory_mib.txt"
  python -c "import json; r = json.load(open('$OUT/all_results.json')); print('$ARCH', r['train_steps_per_second'], 'steps/s,', open('$OUT/peak_memory_mib.txt').read().strip(), 'MiB peak')"
done
