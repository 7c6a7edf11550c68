"""Shared harness of the tools/capture/ scripts: run a step function under
torch.profiler with a schedule, so that the trace holds ProfilerStep#N ranges
(the iterations tracegate reads) and one record_function("train_step") range
per step, then write it gzip-compressed as export_chrome_trace does.

Each capture script calls capture(name, step, ...). The versions that made a
trace are written into it (prof.add_metadata: top-level keys "capture_script",
"capture_versions") so that a fixture says what made it.

Made for (and run on): PyTorch 2.11 + CUDA 13, Triton 3.x, transformers 5.x,
torchvision 0.26, on one H100 or H200 (tests/fixtures/captures/README.md says
which card made each committed file).
"""
import gzip
import json
import os
import platform
import shutil
import sys

import torch
from torch.profiler import ProfilerActivity, profile, record_function, schedule


def versions():
    v = {"python": platform.python_version(), "torch": torch.__version__,
         "cuda": torch.version.cuda, "gpu": torch.cuda.get_device_name(0)}
    for mod in ("triton", "transformers", "torchvision"):
        try:
            v[mod] = __import__(mod).__version__
        except Exception:  # not every script needs each one
            pass
    try:
        v["cudnn"] = str(torch.backends.cudnn.version())
    except Exception:
        pass
    return v


def capture(name, step, out_dir, untraced=5, wait=1, warmup=2, active=5, script=None):
    """Run step() `untraced` times (compilation, graph capture, cudnn autotune
    happen there), then wait+warmup+active times under the profiler; the
    active steps are exported to out_dir/name.pt.trace.json.gz."""
    for _ in range(untraced):
        step()
    torch.cuda.synchronize()
    os.makedirs(out_dir, exist_ok=True)
    plain = os.path.join(out_dir, name + ".pt.trace.json")
    done = []

    def ready(prof):
        prof.export_chrome_trace(plain)
        done.append(True)

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 schedule=schedule(wait=wait, warmup=warmup, active=active, repeat=1),
                 on_trace_ready=ready) as prof:
        prof.add_metadata_json("capture_script", json.dumps(script or os.path.basename(sys.argv[0])))
        prof.add_metadata_json("capture_versions", json.dumps(versions()))
        for _ in range(wait + warmup + active):
            with record_function("train_step"):
                step()
            prof.step()
    torch.cuda.synchronize()
    if not done:
        raise SystemExit(name + ": the profiler wrote no trace")
    with open(plain, "rb") as src, gzip.open(plain + ".gz", "wb", compresslevel=9) as dst:
        shutil.copyfileobj(src, dst)
    os.remove(plain)
    size = os.path.getsize(plain + ".gz")
    print(f"{name}: {plain}.gz, {size} bytes{' (OVER 2 MiB)' if size > 2 << 20 else ''}", flush=True)
    return plain + ".gz"


def out_dir_arg():
    return sys.argv[1] if len(sys.argv) > 1 else os.environ.get("OUT", "captures")
