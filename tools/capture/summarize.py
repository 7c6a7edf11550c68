"""Print what each Kineto trace holds, from the JSON alone (a check of the
captures, independent of tracegate): events, kernels, graph launches and how
many kernels share one correlation id, ProfilerStep ranges, GPU-busy per step.

python3 tools/capture/summarize.py FILE.pt.trace.json.gz...
"""
import collections
import gzip
import json
import sys

for path in sys.argv[1:]:
    with gzip.open(path, "rt") as f:
        t = json.load(f)
    ev = t["traceEvents"]
    k = [e for e in ev if e.get("cat") == "kernel"]
    rt = [e for e in ev if e.get("cat") in ("cuda_runtime", "cuda_driver")]
    names = collections.Counter(e["name"] for e in rt)
    per_corr = collections.Counter(e.get("args", {}).get("correlation") for e in k)
    steps = sorted((e for e in ev if e.get("name", "").startswith("ProfilerStep#")), key=lambda e: e["ts"])
    busy = sum(e["dur"] for e in k)
    print(f"{path}: {len(ev)} events, {len(k)} kernels ({busy / 1000:.2f} ms), {len(steps)} ProfilerSteps"
          f" (durations ms: {[round(s['dur'] / 1000, 2) for s in steps]})")
    print("  launches:", {n: c for n, c in names.items() if "aunch" in n or "Graph" in n})
    print("  kernels per correlation id: max", max(per_corr.values()) if per_corr else 0,
          "; ids with >1:", sum(1 for v in per_corr.values() if v > 1))
    kn = collections.Counter(e["name"][:70] for e in k)
    print("  top kernels:", kn.most_common(6))
    g = [e for e in k if "graph node id" in e.get("args", {}) or "graph id" in e.get("args", {})]
    if g:
        print("  graph kernel args:", {a: g[0]["args"][a] for a in g[0]["args"]})
