"""The generated torch code traces whole: no graph break, no recompilation per step."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from torch_cases import EXAMPLES  # noqa: E402

import schedlang  # noqa: E402

SOURCES = [
    "warmup(linear, 500) >> cosine(0.001, 1e-4, 500)",
    "cosine_restarts(1, 0.1, 10, mult=2)",
    'cyclic(0.1, 1, 4, 6, mode="triangular2")',
    "onecycle(0.1, 1000)",
    "multistep(0.1, 0.1, [30, 60, 90])",
    "warmup(linear, 100) >> inverse_sqrt(1e-3)",
    "max(0.1, 1 - t / 100)",
]


class CountingBackend:
    """A ``torch.compile`` backend that counts compilations and runs the graph as is."""

    def __init__(self):
        self.compiles = 0

    def __call__(self, graph_module, example_inputs):
        self.compiles += 1
        return graph_module.forward


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


#: A Megatron batch ramp of 40 stages under a warmup and a cosine in tokens (SPEC §12): the
#: torch code reads the count with a branch per stage, still one graph.
RAMP = ("param seq_len: int = 4\nbatch = megatron.rampup_batch_size(1, 1, 16400, global_batch_size=41)\n"
        "schedule lr = warmup(linear, 100) >> cosine(1e-3, 1e-4, 1e6tok) >> constant(1e-4)\n")


def _schedules():
    found = [(path.name, s) for path in EXAMPLES for s in schedlang.load(path)]
    found += [(source, schedlang.compile(source)["lr"]) for source in SOURCES]
    found.append(("a 40-stage batch ramp", schedlang.compile(RAMP)["lr"]))
    return found


def test_fullgraph_no_break_no_recompile():
    steps = torch.tensor([0, 1, 99, 100, 499, 500, 999, 1000, 2**31 - 1, 2**40])
    for name, schedule in _schedules():
        function = schedule.torch  # generated and cached
        from schedlang.runtime.arrays import function as array_function

        generated = array_function(schedule, "torch")
        backend = CountingBackend()
        compiled = torch.compile(generated, fullgraph=True, backend=backend, dynamic=False)
        for shift in range(3):  # new values, same shape: no recompilation
            assert torch.equal(compiled(steps + shift), function(steps + shift)), name
        assert backend.compiles == 1, name


def test_compiled_optimizer_step_with_scheduler_does_not_recompile():
    program = schedlang.load(next(p for p in EXAMPLES if p.name == "gpt_pretrain.sched"))
    reference = schedlang.load(next(p for p in EXAMPLES if p.name == "gpt_pretrain.sched"),
                               params={"total": 150, "warmup": 20})
    model = torch.nn.Linear(8, 1)
    for p in model.parameters():
        p.grad = torch.full_like(p, 0.01)
    optimizer = torch.optim.AdamW(model.parameters(), lr=torch.tensor(0.01), weight_decay=torch.tensor(0.0))
    scheduler = program.scheduler_class("GPT")(optimizer, total=150, warmup=20)
    backend = CountingBackend()

    @torch.compile(backend=backend)
    def train_step():
        optimizer.step()
        scheduler.step()

    warmup = 3
    seen = []
    for step in range(200):
        seen.append(float(optimizer.param_groups[0]["lr"]))
        train_step()
        if step == warmup - 1:
            after_warmup = backend.compiles
    assert backend.compiles == after_warmup, "recompiled after warm-up"
    assert seen == pytest.approx([reference["lr"](s) for s in range(200)], rel=1e-6, abs=1e-12)
    assert scheduler.last_epoch == 200
