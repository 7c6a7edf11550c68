#!/usr/bin/env python3
"""Corpus test: tracegate's numbers against `nsys stats` 2022.4 (issue 38).

On every export of ../shared/traces (h200-nsys, h200-torch, public) nsys
runs its own report scripts (gpukernsum, cudaapisum, gpumemtimesum,
gpumemsizesum, nvtxsum, kernexecsum) and tracegate checks the rules of
peers.yaml, whose values and grouped evidence give the same quantities:

  kernels per name: count, total time          gpukernsum
  API calls per name: count, total time        cudaapisum
  copies per kind, memsets: count, time, bytes gpumemtimesum, gpumemsizesum
  NVTX ranges per name: count, total time      nvtxsum
  launch groups (thread, device, call, kernel):
    count, queued count, kernel time, queue    kernexecsum
  per device: kernels with a matched launch
    and clamped ones against `tracegate metrics` kernexecsum

Counts must be equal and times within 0.1% (or the rounding of nsys's
averages, 0.05 ns a row). Each known difference of definition is one row
of KNOWN below (trace, quantity, reason), the same list as docs/peers.md;
any other difference fails, and so does a row of KNOWN that no export
shows any more (in the plain run, which reads every export). A report nsys
skips ("does not contain ... data") and a rule tracegate cannot evaluate
for missing data both count as no rows, so that one saying "none" where
the other has rows is a difference too.

NVTX: grouped evidence cites at most 1000 groups, so two exports with
about 18,000 distinct range names (an op_id in each) are compared per
name for the 1000 names with most ranges and in total for all of them.

Usage: peers_test.py NSYS TRACEGATE TRACES_DIR (tests/corpus/peers/
peers_test.sh finds nsys and decides whether a skip fails). With
TG_CORPUS_QUICK=1 (ci/test.sh's sanitizer run) only the exports of QUICK.
Exports are read, never written: nsys reads a private copy.
"""
import csv
import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
REPORTS = ["gpukernsum", "cudaapisum", "gpumemtimesum", "gpumemsizesum", "nvtxsum", "kernexecsum"]
FOLDERS = ["h200-nsys", "h200-torch", "public"]
QUICK = ["h200-nsys/drv_sync_memcpy", "h200-nsys/drv_steady", "public/saxpy-mpi-cuda_nsys_perlmutter0",
         "public/dlprof-pytorch-rtx2070s-pyprof-nvtx-nsys2022.1"]
NVTX_CAP = 1000  # grouped evidence's limit (docs/rule-language.md)

# Known differences of definition: (trace glob, quantity glob, reason).
# A quantity is "REPORT KEY FIELD" as the failures print it.
KNOWN = [
    ("public/saxpy-mpi-cuda_nsys_perlmutter0", "cudaapisum *",
     "twinned API rows: the export records each runtime call twice under one correlation id "
     "(cudaMalloc and cudaMalloc_v3020); nsys counts and times both rows, tracegate the call once"),
    ("public/saxpy-mpi-cuda_nsys_perlmutter0", "kernexecsum *",
     "twinned API rows: nsys joins each kernel to both rows of its launch, tracegate to the call once"),
    ("*", "kernexecsum clamped median * queue_p50",
     "a kernel that starts before its launch call returns: nsys leaves it out of its queue statistics, "
     "tracegate counts it with queue 0 (clamped; the median over the others is compared exactly)"),
    ("*", "cudaapisum *_v[0-9]* name", "API names: nsys strips one version suffix of 4 digits (_v3020), "
     "tracegate every version suffix (_v2, _v2_v12000) and the per-thread-stream ones (_ptsz, _ptds)"),
    ("*", "kernexecsum *_v[0-9]* name", "API names: as cudaapisum"),
    ("*", "nvtxsum * name", "NVTX domains whose definition the capture lacks (a windowed export): "
     "tracegate names them 'domain N', nsys gives the bare range text"),
]


def fail(failures, trace, quantity, detail):
    failures.append((trace, quantity, detail))


def close(a, b, rows):
    """Times agree: within 0.1% or nsys's rounding of its averages."""
    return abs(a - b) <= max(0.001 * max(abs(a), abs(b)), 0.05 * rows + 1)


def read_csv(path):
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def renamed(failures, trace, report, theirs, ours):
    """A name nsys and tracegate spell differently: compared under
    tracegate's, the renaming recorded as a difference KNOWN must list."""
    if theirs != ours:
        fail(failures, trace, f"{report} {theirs} name", f"tracegate {ours}")
    return ours


def api_name(failures, trace, report, name):
    """nsys strips one 6-character suffix _vNNNN; tracegate every trailing
    _v<digits>, _ptsz and _ptds, stacked or not (engine/model/model.c,
    base_name_len: cudaGetDeviceProperties_v2_v12000 is
    cudaGetDeviceProperties)."""
    n = name
    while True:
        m = re.fullmatch(r"(.+?)(_ptsz|_ptds|_v[0-9]+)", n)
        if not m:
            return renamed(failures, trace, report, name, n)
        n = m.group(1)


def run_nsys(nsys, export, tmp):
    copy = os.path.join(tmp, "export.sqlite")
    shutil.copyfile(export, copy)
    out = os.path.join(tmp, "r")
    p = subprocess.run([nsys, "stats", "--report", ",".join(REPORTS), "--format", "csv:mem=B",
                        "--force-overwrite", "true", "--output", out, copy],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
    log = p.stdout
    if p.returncode != 0:
        raise RuntimeError(f"nsys stats exited {p.returncode}: {log[-600:]}")
    reports = {}
    for r in REPORTS:
        # a CSV (empty for an empty table), or "SKIPPED: ... does not contain"
        if not os.path.exists(f"{out}_{r}.csv") and not re.search(rf"{r}\.py\] to \[[^\]]*\]\.\.\. SKIPPED", log):
            raise RuntimeError(f"nsys stats wrote no {r} report: {log[-600:]}")
        reports[r] = read_csv(f"{out}_{r}.csv")
    return reports


def run_tracegate(binary, export, tmp):
    out = os.path.join(tmp, "tg.json")
    p = subprocess.run([binary, "check", "--rules", os.path.join(HERE, "peers.yaml"), "-o", f"json={out}", export],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=600)
    if p.returncode not in (0, 3) or not os.path.exists(out):
        raise RuntimeError(f"tracegate check exited {p.returncode}: {p.stderr[-600:]}")
    results = {}
    for r in json.load(open(out))["traces"][0]["results"]:
        if r["status"] == "error" and not r.get("missing_data"):
            raise RuntimeError(f"rule {r['rule']}: {r['message']}")
        results[r["rule"]] = r  # missing data: no values, no evidence, i.e. no rows
    p = subprocess.run([binary, "metrics", "--format", "json", export],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600)
    if p.returncode not in (0, 3):
        raise RuntimeError(f"tracegate metrics exited {p.returncode}: {p.stderr[-600:]}")
    metrics = json.loads(p.stdout)["traces"][0] if p.stdout.strip() else {}
    return results, metrics


def groups(result, keyf, fields):
    """A rule's grouped evidence as {key: {field: value}}."""
    out = {}
    for e in (result or {}).get("evidence", []):
        f = e["fields"]
        out[keyf(f)] = {k: f[k] for k in fields}
    return out


def add(table, key, **vals):
    row = table.setdefault(key, {k: 0 for k in vals})
    for k, v in vals.items():
        row[k] += v


def compare(trace, report, ours, theirs, failures, times=("time", "queue_time"), only=None):
    """Each key's fields equal (counts) or close (times)."""
    for key in sorted(set(ours) | set(theirs), key=repr):
        if only is not None and key not in only:
            continue
        a, b = ours.get(key), theirs.get(key)
        for field in (a or b):
            x, y = (a or {}).get(field, 0), (b or {}).get(field, 0)
            rows = max((a or {}).get("calls", 0), (b or {}).get("calls", 0))
            ok = close(x, y, rows) if field in times else x == y
            if not ok:
                fail(failures, trace, f"{report} {key} {field}", f"tracegate {x}, nsys {y}")


def check_export(nsys, binary, traces, name):
    failures = []
    export = os.path.join(traces, name + ".sqlite")
    with tempfile.TemporaryDirectory(prefix="tg-peers-") as tmp:
        nv = run_nsys(nsys, export, tmp)
        tg, metrics = run_tracegate(binary, export, tmp)

    # kernels per name
    theirs = {}
    for r in nv["gpukernsum"]:
        add(theirs, r["Name"], calls=int(r["Instances"]), time=int(r["Total Time (ns)"]))
    ours = groups(tg["peer-kernels"], lambda f: f["name"], ["calls", "time"])
    compare(name, "gpukernsum", ours, theirs, failures)

    # API calls per name
    theirs = {}
    for r in nv["cudaapisum"]:
        add(theirs, api_name(failures, name, "cudaapisum", r["Name"]), calls=int(r["Num Calls"]), time=int(r["Total Time (ns)"]))
    ours = groups(tg["peer-api"], lambda f: f["name"], ["calls", "time"])
    compare(name, "cudaapisum", ours, theirs, failures)

    # copies per kind, memsets: count and time (gpumemtimesum), bytes (gpumemsizesum)
    theirs = {}
    for r in nv["gpumemtimesum"]:
        add(theirs, r["Operation"], calls=int(r["Count"]), time=int(r["Total Time (ns)"]))
    for r in nv["gpumemsizesum"]:
        theirs.setdefault(r["Operation"], {"calls": 0, "time": 0})["bytes"] = int(r["Total (B)"])
        if int(r["Count"]) != theirs[r["Operation"]]["calls"]:
            fail(failures, name, f"gpumemsizesum {r['Operation']} calls", "nsys's two reports disagree")
    ours = groups(tg["peer-memcpy"], lambda f: f"[CUDA memcpy {f['kind']}]", ["calls", "time", "bytes"])
    v = tg["peer-memset"].get("values", {})
    if v.get("count"):
        ours["[CUDA memset]"] = {"calls": v["count"], "time": v["sum_duration_ns"], "bytes": v["sum_bytes"]}
    compare(name, "gpumemtimesum", ours, theirs, failures)

    # NVTX ranges per name (nsys: "domain:text"; summed over its styles)
    theirs = {}
    for r in nv["nvtxsum"]:
        add(theirs, r["Range"], calls=int(r["Instances"]), time=int(r["Total Time (ns)"]))
    def nvtx_key(f):
        # a domain whose definition the capture lacks: "domain N" in
        # tracegate, no prefix in nsys
        if not f["domain"]:
            return f["name"]
        ours = f"{f['domain']}:{f['name']}"
        if re.fullmatch(r"domain [0-9]+", f["domain"]):
            return renamed(failures, name, "nvtxsum", f["name"], ours) and f["name"]
        return ours
    ours = groups(tg["peer-nvtx"], nvtx_key, ["calls", "time"])
    cited = None
    if len(ours) >= NVTX_CAP:
        cited = set(ours)
        v = tg["peer-nvtx"]["values"]
        compare(name, "nvtxsum", {"(all)": {"calls": v["count"], "time": v["sum_duration_ns"]}},
                {"(all)": {"calls": sum(t["calls"] for t in theirs.values()),
                           "time": sum(t["time"] for t in theirs.values())}}, failures)
        cited.add("(all)")
    compare(name, "nvtxsum", ours, theirs, failures, only=cited)

    # launch groups: nsys's count(QueDur) is the kernels not clamped, its
    # QAvg * QCount the sum of the non-negative queues, which is
    # tracegate's sum of clamped queues
    theirs, devices, medians = {}, {}, {}
    for r in nv["kernexecsum"]:
        c, q = int(r["Count"]), int(r["QCount"])
        qsum = round(float(r["QAvg (ns)"]) * q) if q else 0
        key = (int(r["TID"]), int(r["DevId"]), api_name(failures, name, "kernexecsum", r["API Name"]), r["Kernel Name"])
        if key in theirs:  # another process's thread of the same id: a median per group is lost
            medians[key] = None
        else:
            medians[key] = {"calls": q, "queue_p50": float(r["QMed (ns)"]) if q else 0.0}
        add(theirs, key, calls=c, queued=q, time=round(float(r["KAvg (ns)"]) * c), queue_time=qsum)
        add(devices, int(r["DevId"]), calls=c, queued=q)
    key = lambda f: (f["tid"], f["device"], f["api"], f["name"])
    ours = groups(tg["peer-launches"], key, ["calls", "queued", "time", "queue_time", "queue_p50"])
    clamped = {k: {"calls": v["queued"], "queue_p50": v.pop("queue_p50")} for k, v in ours.items()}
    compare(name, "kernexecsum", ours, theirs, failures)
    # the median queue: nsys's over the kernels not clamped (peer-queued)
    # equals tracegate's over the same kernels; tracegate's own median
    # (clamped kernels at 0) differs where clamped kernels move it
    kept = {k: m for k, m in medians.items() if m is not None}
    queued = groups(tg["peer-queued"], key, ["calls", "queue_p50"])
    compare(name, "kernexecsum median", {k: v for k, v in queued.items() if k in kept},
            kept, failures, times=("queue_p50",))
    compare(name, "kernexecsum clamped median", {k: v for k, v in clamped.items() if k in kept and kept[k]["calls"]},
            {k: v for k, v in kept.items() if v["calls"]}, failures, times=("queue_p50",))
    # per device, against `tracegate metrics`: kernels with a matched
    # launch (queue_kernels) and those not clamped
    ours = {d["device"]: {"calls": d["queue_kernels"], "queued": d["queue_kernels"] - d["queue_clamped"]}
            for d in metrics.get("devices", []) if d.get("queue_kernels")}
    compare(name, "kernexecsum device", ours, devices, failures)
    return failures


def known(trace, quantity):
    for i, (t, q, _) in enumerate(KNOWN):
        if fnmatch.fnmatchcase(trace, t) and fnmatch.fnmatchcase(quantity, q):
            return i
    return None


def main():
    nsys, binary, traces = sys.argv[1:4]
    quick = os.environ.get("TG_CORPUS_QUICK") == "1"
    names = sorted(os.path.relpath(os.path.join(d, f), traces)[:-len(".sqlite")]
                   for folder in FOLDERS
                   for d, _, files in os.walk(os.path.join(traces, folder)) for f in files if f.endswith(".sqlite"))
    if quick:
        names = [n for n in names if n in QUICK]
    if not names:
        print(f"peers: FAILED: no exports under {traces}/{{{','.join(FOLDERS)}}}")
        return 1
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {n: pool.submit(check_export, nsys, binary, traces, n) for n in names}
    unexplained, seen, errors = [], set(), 0
    for n in names:
        try:
            found = futures[n].result()
        except Exception as e:  # one export that cannot be compared fails the test
            print(f"peers: FAILED: {n}: {e}")
            errors += 1
            continue
        for trace, quantity, detail in found:
            i = known(trace, quantity)
            if i is None:
                unexplained.append(f"{trace}: {quantity}: {detail}")
            else:
                seen.add(i)
                print(f"peers: known: {trace}: {quantity}: {detail} ({KNOWN[i][2]})")
        print(f"peers: {n}: {len(found)} differences")
    for u in unexplained:
        print(f"peers: FAILED: {u}")
    stale = [] if quick else [k for i, k in enumerate(KNOWN) if i not in seen]
    for t, q, why in stale:
        print(f"peers: FAILED: known difference no export shows any more: {t} {q} ({why})")
    print(f"peers: {len(names)} exports compared with {os.path.basename(nsys)} stats"
          f"{' (TG_CORPUS_QUICK: a few)' if quick else ''}: {len(unexplained)} unexplained differences,"
          f" {errors} exports not compared, {len(stale)} stale known differences")
    return 1 if unexplained or errors or stale else 0


if __name__ == "__main__":
    sys.exit(main())
