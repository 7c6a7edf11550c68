"""Hugging Face transformers GPT-2 (issue 35, item 1c): a GPT2LMHeadModel
random-initialised from a GPT2Config (nothing downloaded: 4 layers, width
512, 8 heads, sequence 1024, batch 8, dropout off), trained with fused AdamW
on random tokens from a DataLoader with 2 workers, bf16 autocast.

  python3 tools/capture/hf_gpt2.py OUTDIR sdpa   -> gpt2_sdpa
  python3 tools/capture/hf_gpt2.py OUTDIR eager  -> gpt2_eager  (attn_implementation="eager":
                                                  matmul + softmax attention, the regression)
  python3 tools/capture/hf_gpt2.py OUTDIR sdpa gpt2_sdpa_run2   (and _run3: the baseline's other runs)
  python3 tools/capture/hf_gpt2.py OUTDIR sdpa gpt2_sdpa_rerun  (the innocent rerun: same code,
                                                  another process)

PyTorch 2.11+cu130, transformers 5.x, one H100/H200.
"""
import sys

import torch
from transformers import GPT2Config, GPT2LMHeadModel

from _harness import capture, out_dir_arg

B, T = 8, 1024


class Tokens(torch.utils.data.Dataset):
    def __len__(self):
        return 1 << 20

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        return torch.randint(0, 50257, (T,), generator=g)


def main(out, attn, name):
    torch.manual_seed(0)
    cfg = GPT2Config(n_layer=4, n_embd=512, n_head=8, n_positions=T, resid_pdrop=0.0,
                     embd_pdrop=0.0, attn_pdrop=0.0)
    try:
        m = GPT2LMHeadModel._from_config(cfg, attn_implementation=attn)
    except (AttributeError, TypeError):  # a transformers without _from_config
        cfg._attn_implementation = attn
        m = GPT2LMHeadModel(cfg)
    m = m.cuda().train()
    if m.config._attn_implementation != attn:  # never capture the wrong variant silently
        raise SystemExit(f"asked for {attn} attention, the model has {m.config._attn_implementation}")
    opt = torch.optim.AdamW(m.parameters(), lr=1e-4, fused=True)
    loader = iter(torch.utils.data.DataLoader(Tokens(), batch_size=B, num_workers=2, pin_memory=True))

    def step():
        ids = next(loader).cuda(non_blocking=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = m(input_ids=ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    print(name, "attention:", m.config._attn_implementation, flush=True)
    capture(name, step, out, untraced=3, active=8)


if __name__ == "__main__":
    attn = sys.argv[2] if len(sys.argv) > 2 else "sdpa"
    main(out_dir_arg(), attn, sys.argv[3] if len(sys.argv) > 3 else "gpt2_" + attn)
