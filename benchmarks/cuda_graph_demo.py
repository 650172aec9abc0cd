"""One training step, ``scheduler.step()`` included, captured in a CUDA graph and replayed.

Run on demand: ``python benchmarks/cuda_graph_demo.py``.  It shows that a generated scheduler
with a tensor lr needs no host involvement per step: the step counter lives on the device,
the lr is computed by branch-free torch code and written in place, so replaying the graph
1000 times walks the schedule exactly.  The lr of each replay is logged into a device buffer
(indexed by the device step counter) and compared with the plain-Python reference at the end.
It also runs ``torch.compile(fullgraph=True)`` of the generated function.

Without CUDA it runs the same step eagerly on the CPU (no graph) and checks the same values,
so the logic can be exercised anywhere.  Never part of CI.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import schedlang  # noqa: E402
from schedlang.runtime.arrays import function  # noqa: E402

SOURCE = "warmup(linear, 100) >> cosine(1e-3, 1e-5, 700) >> constant(1e-5)"
REPLAYS = 1000


def main() -> int:
    cuda = torch.cuda.is_available()
    device = torch.device("cuda" if cuda else "cpu")
    print(f"torch {torch.__version__}, device {torch.cuda.get_device_name() if cuda else 'cpu'}")
    program = schedlang.compile(SOURCE)
    reference = [program["lr"](s) for s in range(REPLAYS)]

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.ReLU(), torch.nn.Linear(256, 1))
    model.to(device)
    x = torch.randn(64, 256, device=device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=torch.tensor(1.0, device=device),
                                  capturable=cuda, foreach=cuda)
    scheduler = program.scheduler_class("Demo")(optimizer)
    log = torch.zeros(REPLAYS + 1, dtype=torch.float32, device=device)
    counter = scheduler._device_step(device)  # the device-side step counter

    def train_step():
        log.index_copy_(0, counter.view(1), optimizer.param_groups[0]["lr"].view(1))
        loss = model(x).square().mean()
        loss.backward()
        optimizer.step()
        scheduler.step()

    if cuda:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # warm up autograd and the optimizer, not the schedule
            for _ in range(3):
                optimizer.zero_grad(set_to_none=True)
                model(x).square().mean().backward()
                optimizer.step()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        optimizer.zero_grad(set_to_none=True)
        with torch.cuda.graph(graph):
            train_step()
        # Capture ran the Python once (last_epoch 1) but no kernel: rewind the device state.
        scheduler.load_state_dict({**scheduler.state_dict(), "last_epoch": 0})
        optimizer.param_groups[0]["lr"].fill_(reference[0])
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(REPLAYS):
            graph.replay()
        torch.cuda.synchronize()
        elapsed = time.perf_counter() - start
        mode = "CUDA graph replay"
    else:
        start = time.perf_counter()
        for _ in range(REPLAYS):
            optimizer.zero_grad(set_to_none=True)
            train_step()
        elapsed = time.perf_counter() - start
        mode = "eager CPU (no CUDA)"

    got = log[:REPLAYS].cpu().double()
    want = torch.tensor(reference, dtype=torch.float64).float().double()
    exact = int((got == want).sum())
    worst = float(((got - want).abs() / want.abs().clamp(min=1e-30)).max())
    print(f"{mode}: {REPLAYS} steps in {elapsed * 1e3:.1f} ms ({elapsed / REPLAYS * 1e6:.1f} us/step)")
    print(f"lr sequence: {exact}/{REPLAYS} equal to the float32-rounded reference, "
          f"max rel error {worst:.2e}")
    print(f"device step counter {int(counter)}, state_dict last_epoch "
          f"{scheduler.state_dict()['last_epoch']}")

    generated = function(program["lr"], "torch")
    steps = torch.arange(0, 2_000_000, 7, device=device)
    compiled = torch.compile(generated, fullgraph=True, backend="inductor" if cuda else "eager")
    same = torch.allclose(compiled(steps), generated(steps), rtol=1e-12, atol=0)
    print(f"torch.compile(fullgraph=True) of the generated function: matches eager = {same}")
    ok = exact == REPLAYS and int(counter) == REPLAYS and same
    print("OK" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
