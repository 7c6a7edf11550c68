"""torch.compile default mode (issue 35, item 1b): a small MLP training
step with LayerNorm and GELU (batch 256, width 1024, 3 blocks, AdamW fused),
compiled with torch.compile() (no CUDA graphs): Inductor writes Triton
kernels named triton_poi_fused_... / triton_per_fused_... / triton_red_...,
launched one by one (cuLaunchKernel / cudaLaunchKernel).

Run: python3 tools/capture/compile_default.py OUTDIR  (PyTorch 2.11+cu130,
Triton 3.x, one H100/H200). Writes OUTDIR/compile_default.pt.trace.json.gz.
"""
import torch

from _harness import capture, out_dir_arg

B, W = 256, 1024


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = torch.nn.LayerNorm(W)
        self.fc1 = torch.nn.Linear(W, 4 * W)
        self.fc2 = torch.nn.Linear(4 * W, W)

    def forward(self, x):
        return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.norm(x))))


def main(out):
    torch.manual_seed(0)
    m = torch.nn.Sequential(*[Block() for _ in range(3)], torch.nn.Linear(W, 10)).cuda()
    opt = torch.optim.AdamW(m.parameters(), lr=1e-3, fused=True)
    cm = torch.compile(m)
    x = torch.randn(B, W, device="cuda")
    y = torch.randint(0, 10, (B,), device="cuda")

    def step():
        opt.zero_grad(set_to_none=True)
        torch.nn.functional.cross_entropy(cm(x), y).backward()
        opt.step()

    capture("compile_default", step, out, active=10)


if __name__ == "__main__":
    main(out_dir_arg())
