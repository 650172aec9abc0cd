"""Guide: a run on the token clock, resumed on twice the GPUs with twice the batch.

Run: ``python docs/guides/token_clock_resume.py`` (CPU, gloo).  It launches the training
script the way ``torchrun`` launches it (``python -m torch.distributed.run --standalone``):

1. **Phase A**, 2 ranks, 4 samples each: a global batch of 8 samples of 16 tokens
   (``A`` below: ``batch = 8``).  The lr is given in tokens: a warmup over 3000 tokens and
   a cosine over 20000.  After ``SAVE_AT`` steps rank 0 saves one file holding model,
   optimizer and scheduler (the checkpoint docs/guides.md tells users to save).
2. **Phase B**, 4 ranks, 4 samples each: a global batch of 16.  ``B`` declares the batch
   the run really had: 8 until the 240 samples of phase A, then 16.  Its lr text is the
   same, so the lr as a function of tokens is unchanged; its steps are not (the cosine
   now ends at another step).  The scheduler of ``B`` loads the checkpoint and continues.
3. ``schedlang resume ckpt.pt B.sched --was A.sched`` says the run continues on the
   token clock, and prints the new step <-> token map.

Every rank checks, at every step of both phases, that the lr its optimizer used equals
the schedule's formula at the tokens consumed *before* that step, counted by the ranks
themselves (an all-reduce of the samples each rank trained), not taken from schedlang.
Exits non-zero otherwise.
"""

import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

SEQ_LEN, PER_RANK, SAVE_AT, STEPS = 16, 4, 30, 70
LR = f"""param seq_len: int = {SEQ_LEN}
{{batch}}
schedule lr = warmup(linear, 3000tok) >> cosine(0.01, 0.001, 20000tok) >> constant(0.001)
"""
A = LR.format(batch="batch = 8")
B = LR.format(batch=f"batch = stages(8, [16], [{SAVE_AT * 8}sp])")


def by_tokens(tokens: int) -> float:
    """The lr at ``tokens`` consumed before a step, written here from the text above."""
    warm = 3000
    if tokens < warm:
        return 0.01 * tokens / warm
    x = tokens - warm
    if x < 20000:
        return 0.001 + (0.01 - 0.001) * (1 + math.cos(math.pi * x / 20000)) / 2
    return 0.001


def train(phase: str, ckpt: str) -> None:
    """One rank of one phase (started by torchrun: RANK, WORLD_SIZE, MASTER_ADDR are set)."""
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel

    import schedlang

    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    try:
        prog = schedlang.compile(A if phase == "a" else B)
        torch.manual_seed(0)
        model = DistributedDataParallel(torch.nn.Linear(SEQ_LEN, 1))
        opt = torch.optim.SGD(model.parameters(), lr=0.0)
        scheduler = prog.scheduler_class("Schedule")(opt)
        start, tokens = 0, 0
        if phase == "b":
            state = torch.load(ckpt, weights_only=True)
            model.module.load_state_dict(state["model"])
            opt.load_state_dict(state["optimizer"])
            scheduler.load_state_dict(state["scheduler"])
            start, tokens = state["scheduler"]["last_epoch"], state["scheduler"]["tokens"]
        stop = SAVE_AT if phase == "a" else STEPS
        bad = []
        for k in range(start, stop):
            used = opt.param_groups[0]["lr"]
            if used != prog["lr"](k) or abs(used - by_tokens(tokens)) > 1e-15:
                bad.append((k, tokens, used, by_tokens(tokens)))
            x = torch.randn(PER_RANK, SEQ_LEN, generator=torch.Generator().manual_seed(100 * k + rank))
            loss = model(x).square().mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            scheduler.step()
            trained = torch.tensor([PER_RANK * SEQ_LEN])
            dist.all_reduce(trained)  # the tokens this step consumed, counted by the ranks
            tokens += int(trained)
        if scheduler.tokens != tokens:
            bad.append(("tokens", scheduler.tokens, tokens))
        if phase == "a" and rank == 0:
            torch.save({"model": model.module.state_dict(), "optimizer": opt.state_dict(),
                        "scheduler": scheduler.state_dict(), "step": stop}, ckpt)
        dist.barrier()
        if bad:
            raise SystemExit(f"rank {rank}/{world}, phase {phase}: {bad[:3]}")
        print(f"phase {phase}, rank {rank}/{world}: steps {start}..{stop - 1}: the lr equals the "
              "schedule at the tokens consumed, at every step")
    finally:
        dist.destroy_process_group()


def launch(phase: str, ranks: int, ckpt: str) -> int:
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone",
               f"--nproc-per-node={ranks}", __file__, phase, ckpt]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300)
    print(result.stdout, end="")
    if result.returncode:
        print(result.stderr[-3000:], file=sys.stderr)
    return result.returncode


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        ckpt = str(Path(tmp) / "ckpt.pt")
        if launch("a", 2, ckpt) or launch("b", 4, ckpt):
            return 1
        (Path(tmp) / "A.sched").write_text(A)
        (Path(tmp) / "B.sched").write_text(B)
        verdict = subprocess.run([sys.executable, "-m", "schedlang", "resume", ckpt,
                                  str(Path(tmp) / "B.sched"), "--was", str(Path(tmp) / "A.sched")],
                                 capture_output=True, text=True, timeout=120)
        print(verdict.stdout, end="")
        if verdict.returncode != 0:
            print(verdict.stderr, file=sys.stderr)
            return 1
    print("token clock: 2 ranks at 8 samples a step, then 4 ranks at 16: "
          "checked on every rank at every step")
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and "RANK" in os.environ:
        train(sys.argv[1], sys.argv[2])
    else:
        sys.exit(main())
