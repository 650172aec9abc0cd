"""Scheduler classes under ``torch.compile`` (issue 9's matrix, CPU).

Class kind {in-process ``scheduler_class``, standalone ``compile --target torch`` module,
Cerebras class on its stand-in base} x pattern {``sched.step`` with ``fullgraph=True``,
``opt.step(); sched.step()``, a whole training step} x schedule.  For each: no
compilation after the first call over 50 steps, no graph break beyond those the same
pattern has without a scheduler (torch's own optimizer breaks twice around its step,
``zero_grad`` and ``backward`` once each), and the lr at every step equal to the
reference (float32 tensors: the rounded reference; Cerebras computes in float32).
A counting backend runs the captured graphs as they are: what is tested is Dynamo's
tracing and guarding, not inductor's code generation.
"""

from __future__ import annotations

import importlib.util
import sys

import pytest

torch = pytest.importorskip("torch")

from torch._dynamo.utils import counters  # noqa: E402

import schedlang  # noqa: E402
from schedlang.backends.emit import emit  # noqa: E402

STEPS = 50
SCHEDULES = {
    "warmup+cosine": ("warmup(linear, 8) >> cosine(0.1, 0.001, 30)", {}),
    "sgdr": ("cosine_restarts(0.1, 0.001, 5, mult=2)", {}),
    "onecycle": ("onecycle(0.1, 40)", {}),
    "multistep": ("multistep(0.1, 0.5, [5, 12, 30])", {}),
    "10 segments": (" >> ".join(f"linear({1 - k / 10}, {1 - (k + 1) / 10}, 4)" for k in range(10)), {}),
    "parameters": ("param peak: float = 1.0\nparam warmup: int = 100 where warmup >= 0\n"
                   "param total: int = 1000 where total > warmup\n"
                   "schedule lr = warmup(linear, warmup) >> cosine(peak, 0.1 * peak, total - warmup)",
                   {"peak": 0.05, "warmup": 7, "total": 40}),
}
PATTERNS = ("sched.step fullgraph", "opt.step; sched.step", "training step")


class CountingBackend:
    def __init__(self):
        self.compiles = 0

    def __call__(self, graph_module, example_inputs):
        self.compiles += 1
        return graph_module.forward


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    torch._dynamo.reset()
    counters.clear()
    yield
    torch._dynamo.reset()


def _standalone_class(program, tmp_path, name):
    path = tmp_path / f"{name.lower()}_module.py"
    path.write_text(emit(program, "torch", "matrix.sched", name))
    spec = importlib.util.spec_from_file_location(f"schedlang_matrix_{name.lower()}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # as `import` would: Dynamo looks modules up by name
    spec.loader.exec_module(module)
    return getattr(module, name)


def _make(kind, program, tmp_path):
    if kind == "in-process":
        return program.scheduler_class("Matrix")
    if kind == "standalone":
        return _standalone_class(program, tmp_path, "Matrix")
    return program.scheduler_class("MatrixCerebras", target="cerebras")


def _pattern(pattern, model, optimizer, scheduler):
    x = torch.linspace(-1, 1, 8 * 4).reshape(8, 4)
    if pattern == "sched.step fullgraph":
        return scheduler.step

    def opt_then_sched():
        optimizer.step()
        if scheduler is not None:
            scheduler.step()

    def training_step():
        optimizer.zero_grad(set_to_none=False)
        model(x).pow(2).mean().backward()
        optimizer.step()
        if scheduler is not None:
            scheduler.step()

    return opt_then_sched if pattern == "opt.step; sched.step" else training_step


def _run(pattern, kind, program, params, tmp_path):
    model = torch.nn.Linear(4, 1)
    model(torch.ones(1, 4)).sum().backward()
    optimizer = torch.optim.AdamW(model.parameters(), lr=torch.tensor(1.0), weight_decay=0.0)
    scheduler = None if kind is None else _make(kind, program, tmp_path)(optimizer, **params)
    backend = CountingBackend()
    function = _pattern(pattern, model, optimizer, scheduler)
    compiled = torch.compile(function, fullgraph=pattern == "sched.step fullgraph", backend=backend)
    seen = []
    for call in range(STEPS):
        compiled()
        if call == 0:
            first = backend.compiles
        seen.append(optimizer.param_groups[0]["lr"].clone())
    breaks = sum(counters["graph_break"].values())
    return scheduler, seen, backend.compiles - first, breaks


_BASELINE_BREAKS: dict[str, int] = {}


def _baseline_breaks(pattern, tmp_path):
    if pattern not in _BASELINE_BREAKS:
        torch._dynamo.reset()
        counters.clear()
        _BASELINE_BREAKS[pattern] = 0 if pattern == "sched.step fullgraph" else _run(
            pattern, None, None, {}, tmp_path)[3]
        torch._dynamo.reset()
        counters.clear()
    return _BASELINE_BREAKS[pattern]


@pytest.mark.parametrize("kind", ["in-process", "standalone", "cerebras"])
@pytest.mark.parametrize("pattern", PATTERNS)
@pytest.mark.parametrize("name", list(SCHEDULES))
def test_compiled_matrix(kind, pattern, name, tmp_path):
    source, params = SCHEDULES[name]
    program = schedlang.compile(source)
    reference = schedlang.compile(source, params=params or None)["lr"]
    baseline = _baseline_breaks(pattern, tmp_path)
    scheduler, seen, recompiles, breaks = _run(pattern, kind, program, params, tmp_path)
    assert recompiles == 0, f"compiled again after the first call ({recompiles}x)"
    assert breaks == baseline, f"{breaks} graph breaks, {baseline} without a scheduler"
    want = [reference(k) for k in range(1, STEPS + 1)]
    if kind == "cerebras":  # float32 arithmetic, like the Cerebras stack
        assert [float(v) for v in seen] == pytest.approx(want, rel=1e-6, abs=1e-7)
    else:
        assert [float(v) for v in seen] == [float(torch.tensor(w, dtype=torch.float64).float())
                                              for w in want]
    assert int(scheduler.last_epoch) == STEPS
    if kind != "cerebras":
        assert float(scheduler.get_last_lr()[0]) == float(seen[-1])
        assert scheduler.state_dict()["last_epoch"] == STEPS


def test_eager_steps_after_compiled_ones_continue_from_the_device_counter(tmp_path):
    program = schedlang.compile(SCHEDULES["warmup+cosine"][0])
    optimizer = torch.optim.SGD([torch.zeros(2, requires_grad=True)], lr=torch.tensor(1.0))
    scheduler = program.scheduler_class("Mixed")(optimizer)
    compiled = torch.compile(scheduler.step, fullgraph=True, backend=CountingBackend())
    for _ in range(10):
        compiled()
    assert scheduler._host_stale  # the host int was not touched by the compiled steps
    for _ in range(5):
        scheduler.step()  # eager: reads the device counter back once, then goes on
    assert scheduler.last_epoch == 15
    want = torch.tensor(program["lr"](15), dtype=torch.float64).float()
    assert torch.equal(optimizer.param_groups[0]["lr"], want)
    state = scheduler.state_dict()
    fresh = program.scheduler_class("Mixed")(torch.optim.SGD([torch.zeros(2, requires_grad=True)],
                                                             lr=torch.tensor(1.0)))
    fresh.load_state_dict(state)
    compiled_fresh = torch.compile(fresh.step, fullgraph=True, backend=CountingBackend())
    compiled_fresh()
    assert fresh.last_epoch == 16
    assert torch.equal(fresh.optimizer.param_groups[0]["lr"],
                       torch.tensor(program["lr"](16), dtype=torch.float64).float())
