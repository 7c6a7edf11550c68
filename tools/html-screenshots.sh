#!/usr/bin/env bash
# The screenshots of the HTML report in docs/img (docs/formats.md, "html"):
# two real traces from ../shared/traces, drawn by headless Chromium.
#
#   tools/html-screenshots.sh [build/tracegate] [TRACES_DIR]
#
# report-regression.png: realistic_regressed against a baseline of the two
# realistic runs (the iterations over the baseline band, what changed);
# report-gaps.png: gpu_idle_bad (its idle gaps on the device timeline,
# linked to the evidence, and the slow iterations they cause).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$root/build/tracegate}
traces=${2:-$root/../shared/traces}
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
torch="$traces/h200-torch"
"$bin" baseline record -o "$tmp/base.yaml" "$torch/realistic_baseline_run1.sqlite" "$torch/realistic_baseline_run2.sqlite"
"$bin" check --baseline "$tmp/base.yaml" -o html="$tmp/regression.html" "$torch/realistic_regressed.sqlite" >/dev/null || true
"$bin" check -o html="$tmp/gaps.html" "$torch/gpu_idle_bad.sqlite" >/dev/null || true
# shot NAME ANCHOR HEIGHT: the report scrolled to ANCHOR, 1280 wide
shot() {
    printf '<!DOCTYPE html><html><body style="margin:0"><iframe src="%s.html#%s" style="border:0;width:1280px;height:%spx"></iframe></body></html>' \
        "$1" "$2" "$3" > "$tmp/wrap-$1.html"
    timeout 60 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --allow-file-access-from-files \
        --user-data-dir="$tmp/profile" --virtual-time-budget=3000 --window-size="1280,$3" \
        --screenshot="$root/docs/img/report-$1.png" "file://$tmp/wrap-$1.html" 2>/dev/null
}
mkdir -p "$root/docs/img"
shot regression t1-iterations 1500
shot gaps t1-iterations 1000
ls -la "$root"/docs/img/report-*.png
