#!/bin/sh
# Make every capture of tests/fixtures/captures/ on the GPU machine, one
# process each (a failure in one does not stop the others), then pack them
# into $OUT/captures.tar with the log and a summary (summarize.py).
# Run from the repository root: sh tools/capture/run_all.sh
set -u
d=$(dirname "$0")
out=${OUT:-/tmp/captures-out}/captures
mkdir -p "$out"
export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false HF_HUB_OFFLINE=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/gpu.txt" 2>&1
for job in "cuda_graphs.py" "compile_default.py" "hf_gpt2.py $out sdpa" "hf_gpt2.py $out eager" \
           "hf_gpt2.py $out sdpa gpt2_sdpa_run2" "hf_gpt2.py $out sdpa gpt2_sdpa_run3" "hf_gpt2.py $out sdpa gpt2_sdpa_rerun" "resnet50.py $out nchw"; do
    set -- $job
    s=$1; shift
    [ $# -eq 0 ] && set -- "$out"
    echo "== $s $*"
    (cd "$d" && timeout 240 python3 "$s" "$@") || echo "FAILED: $s $* (exit $?)"
done
python3 "$d/summarize.py" "$out"/*.pt.trace.json.gz | tee "$out/summary.txt"
tar -C "$out/.." -cf "${OUT:-/tmp/captures-out}/captures.tar" captures
