"""torchvision ResNet-50 training (issue 35, item 1d): resnet50(weights=None)
(random init, nothing downloaded), batch 16 of 224x224 random images, SGD
with momentum (foreach), bf16 autocast, cudnn.benchmark on.

  python3 tools/capture/resnet50.py OUTDIR nchw           -> resnet50_nchw
  python3 tools/capture/resnet50.py OUTDIR channels_last  -> resnet50_channels_last

PyTorch 2.11+cu130, torchvision 0.26, one H100/H200.
"""
import sys

import torch
import torchvision

from _harness import capture, out_dir_arg


def main(out, layout):
    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = True
    fmt = torch.channels_last if layout == "channels_last" else torch.contiguous_format
    m = torchvision.models.resnet50(weights=None).cuda().to(memory_format=fmt).train()
    opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9, foreach=True)
    x = torch.randn(16, 3, 224, 224, device="cuda").to(memory_format=fmt)
    y = torch.randint(0, 1000, (16,), device="cuda")

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = torch.nn.functional.cross_entropy(m(x), y)
        loss.backward()
        opt.step()

    capture("resnet50_" + layout, step, out, untraced=3, active=4)


if __name__ == "__main__":
    main(out_dir_arg(), sys.argv[2] if len(sys.argv) > 2 else "nchw")
