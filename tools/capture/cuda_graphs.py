"""CUDA-graph captures (issue 35, item 1a): a small MLP training step
(Linear-GELU-Linear-GELU-Linear, batch 256, width 1024, AdamW) replayed as
CUDA graphs two ways:

  graph_reduce_overhead  torch.compile(model, mode="reduce-overhead"): the
                         forward and the backward each become one CUDA graph
                         (cudagraph trees record them in the untraced steps
                         and replay them in the traced ones); the AdamW
                         step (foreach) stays eager, outside the graphs;
  graph_manual           torch.cuda.CUDAGraph capture of forward + backward +
                         optimizer.step (capturable AdamW), as in PyTorch's
                         "whole network capture" example, replayed each step
                         with g.replay() after copying the batch in.

Run: python3 tools/capture/cuda_graphs.py OUTDIR  (PyTorch 2.11+cu130,
Triton 3.x, one H100/H200). Writes OUTDIR/graph_*.pt.trace.json.gz.
"""
import torch

from _harness import capture, out_dir_arg

B, W = 256, 1024


def model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(W, W), torch.nn.GELU(), torch.nn.Linear(W, W),
                               torch.nn.GELU(), torch.nn.Linear(W, 10)).cuda()


def reduce_overhead(out):
    m = model()
    cm = torch.compile(m, mode="reduce-overhead")  # forward and backward each become a graph
    opt = torch.optim.AdamW(m.parameters(), lr=1e-3, foreach=True)  # eager, outside the graphs
    x = torch.randn(B, W, device="cuda")
    y = torch.randint(0, 10, (B,), device="cuda")

    def step():
        torch.compiler.cudagraph_mark_step_begin()
        opt.zero_grad(set_to_none=True)
        torch.nn.functional.cross_entropy(cm(x), y).backward()
        opt.step()

    capture("graph_reduce_overhead", step, out, untraced=8, active=10)


def manual(out):
    m = model()
    opt = torch.optim.AdamW(m.parameters(), lr=1e-3, capturable=True, foreach=True)
    sx = torch.randn(B, W, device="cuda")
    sy = torch.randint(0, 10, (B,), device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):  # warm-up on a side stream, as the docs ask
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            torch.nn.functional.cross_entropy(m(sx), sy).backward()
            opt.step()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(g):
        torch.nn.functional.cross_entropy(m(sx), sy).backward()
        opt.step()
    batch = [torch.randn(B, W, device="cuda") for _ in range(4)]
    i = [0]

    def step():
        sx.copy_(batch[i[0] % 4])
        i[0] += 1
        g.replay()

    capture("graph_manual", step, out, active=10)


if __name__ == "__main__":
    out = out_dir_arg()
    reduce_overhead(out)
    manual(out)
