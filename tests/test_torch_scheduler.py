"""Generated scheduler classes: values per step, tensor lr, relative mode, resume, errors."""

from __future__ import annotations

import ast
import copy
import inspect

import pytest

torch = pytest.importorskip("torch")

from torch_cases import EXAMPLES  # noqa: E402

import schedlang  # noqa: E402
from schedlang.codegen.emit import emit  # noqa: E402

GPT = next(p for p in EXAMPLES if p.name == "gpt_pretrain.sched")
SMALL = {"total": 300, "warmup": 40}


def _optimizer(lr=1.0, weight_decay=0.01, groups=1, cls=None):
    params = [torch.nn.Parameter(torch.zeros(2)) for _ in range(groups)]
    cls = cls or torch.optim.AdamW
    return cls([{"params": [p]} for p in params], lr=lr, weight_decay=weight_decay)


def _run(scheduler, optimizer, steps, keys=("lr", "weight_decay")):
    seen = []
    for _ in range(steps):
        seen.append([[float(g[k]) for k in keys] for g in optimizer.param_groups])
        optimizer.step()
        scheduler.step()
    return seen


@pytest.fixture(scope="module")
def gpt():
    return schedlang.load(GPT)


def test_constructor_signature(gpt):
    cls = gpt.scheduler_class("GPT")
    assert issubclass(cls, torch.optim.lr_scheduler.LRScheduler)
    assert str(inspect.signature(cls)) == \
        "(optimizer, *, peak=0.0006, warmup=2000, total=100000, last_epoch=-1)"
    required = schedlang.compile("param total: int\nschedule lr = linear(1, 0, total)")
    assert str(inspect.signature(required.scheduler_class("R"))) == "(optimizer, *, total, last_epoch=-1)"


@pytest.mark.parametrize("lr", [1.0, "tensor"])
def test_every_step_matches_reference(gpt, lr):
    reference = schedlang.load(GPT, params=SMALL)
    optimizer = _optimizer(lr=torch.tensor(1.0, dtype=torch.float64) if lr == "tensor" else lr, groups=2)
    scheduler = gpt.scheduler_class("GPT")(optimizer, **SMALL)
    seen = _run(scheduler, optimizer, 320)
    for step, groups in enumerate(seen):
        for lr_value, wd in groups:
            assert lr_value == pytest.approx(reference["lr"](step), rel=1e-13, abs=1e-19)
            assert wd == pytest.approx(0.1)
    last = scheduler.get_last_lr()
    assert len(last) == 2 and float(last[0]) == pytest.approx(reference["lr"](320), rel=1e-13)
    if lr == "tensor":
        assert all(isinstance(g["lr"], torch.Tensor) for g in optimizer.param_groups)
        assert last[0] is not optimizer.param_groups[0]["lr"]


def test_float32_tensor_lr_is_rounded_reference(gpt):
    reference = schedlang.load(GPT, params=SMALL)
    optimizer = _optimizer(lr=torch.tensor(1.0))
    scheduler = gpt.scheduler_class("GPT")(optimizer, **SMALL)
    for step in range(60):
        want = torch.tensor(reference["lr"](step), dtype=torch.float64).float()
        assert torch.equal(optimizer.param_groups[0]["lr"], want)
        optimizer.step()
        scheduler.step()


@pytest.mark.parametrize("tensor", [False, True])
def test_relative_multiplies_initial_values(gpt, tensor):
    reference = schedlang.load(GPT, params=SMALL)
    wrap = (lambda v: torch.tensor(v, dtype=torch.float64)) if tensor else (lambda v: v)
    optimizer = _optimizer(lr=wrap(2.0), weight_decay=wrap(0.5))
    scheduler = gpt.scheduler_class("GPT", relative=True)(optimizer, **SMALL)
    for step, ((lr_value, wd),) in enumerate(_run(scheduler, optimizer, 60)):
        assert lr_value == pytest.approx(2.0 * reference["lr"](step), rel=1e-13, abs=1e-19)
        assert wd == pytest.approx(0.05)


@pytest.mark.parametrize("lr", [1.0, "tensor"])
def test_resume_is_exact(gpt, lr):
    """1000 steps == 400 steps, save, load into fresh objects, 600 steps."""
    make_lr = (lambda: torch.tensor(1.0, dtype=torch.float64)) if lr == "tensor" else (lambda: lr)
    cls = gpt.scheduler_class("GPT")
    optimizer = _optimizer(lr=make_lr())
    straight = _run(cls(optimizer, **SMALL), optimizer, 1000)

    optimizer = _optimizer(lr=make_lr())
    first = cls(optimizer, **SMALL)
    head = _run(first, optimizer, 400)
    saved = copy.deepcopy((optimizer.state_dict(), first.state_dict()))
    optimizer = _optimizer(lr=make_lr())
    second = cls(optimizer, **SMALL)  # before optimizer.load_state_dict, as PyTorch advises
    optimizer.load_state_dict(saved[0])
    second.load_state_dict(saved[1])
    tail = _run(second, optimizer, 600)
    assert second.last_epoch == 1000
    assert head + tail == straight


@pytest.mark.parametrize("replace", ["optimizer.load_state_dict", "group list", "group dict"])
def test_plain_step_follows_groups_replaced_after_construction(gpt, replace):
    """The optimizer's groups replaced after the class is built (Accelerate's ``prepare``
    calls ``optimizer.load_state_dict`` to move the state to the device: new group dicts in a
    new list) get every later step's value, as the general path gives."""
    reference = schedlang.load(GPT, params=SMALL)
    optimizer = _optimizer(groups=2)
    scheduler = gpt.scheduler_class("GPT")(optimizer, **SMALL)
    scheduler.step()  # a plain step before the replacement
    if replace == "optimizer.load_state_dict":
        optimizer.load_state_dict(copy.deepcopy(optimizer.state_dict()))
    elif replace == "group list":
        optimizer.param_groups = [dict(group) for group in optimizer.param_groups]
    else:
        optimizer.param_groups[1] = dict(optimizer.param_groups[1])
    for step in range(2, 60):
        scheduler.step()
        for group in optimizer.param_groups:
            assert group["lr"] == pytest.approx(reference["lr"](step), rel=1e-13, abs=1e-19)
            assert group["weight_decay"] == pytest.approx(0.1)


def test_state_dict_is_plain(gpt):
    optimizer = _optimizer(lr=torch.tensor(1.0))
    scheduler = gpt.scheduler_class("GPT")(optimizer, **SMALL)
    state = scheduler.state_dict()
    assert "optimizer" not in state and "_device_steps" not in state
    assert state["last_epoch"] == 0 and state["params"] == {"peak": 0.0006, **SMALL}


def test_step_with_epoch(gpt):
    reference = schedlang.load(GPT, params=SMALL)
    optimizer = _optimizer(lr=torch.tensor(1.0, dtype=torch.float64))
    scheduler = gpt.scheduler_class("GPT")(optimizer, **SMALL)
    scheduler.step(150)
    assert float(optimizer.param_groups[0]["lr"]) == pytest.approx(reference["lr"](150), rel=1e-13)
    scheduler.step()
    assert float(optimizer.param_groups[0]["lr"]) == pytest.approx(reference["lr"](151), rel=1e-13)


def test_other_hyperparameters():
    program = schedlang.compile("schedule lr = linear(0.1, 0.01, 10)\n"
                                "schedule momentum = linear(0.85, 0.95, 10)\n")
    cls = program.scheduler_class("WithMomentum")
    optimizer = _optimizer(cls=torch.optim.SGD, lr=0.1, weight_decay=0.0)
    optimizer.param_groups[0]["momentum"] = 0.9
    scheduler = cls(optimizer)
    seen = _run(scheduler, optimizer, 12, keys=("lr", "momentum"))
    assert seen[5][0] == pytest.approx([program["lr"](5), program["momentum"](5)])
    with pytest.raises(schedlang.SchedlangError, match="has no 'momentum'"):
        cls(_optimizer())  # AdamW has betas, not momentum


def test_bad_parameter_values_are_schedlang_errors(gpt):
    cls = gpt.scheduler_class("GPT")
    with pytest.raises(schedlang.SchedlangError, match="total > warmup"):
        cls(_optimizer(), total=10, warmup=100)
    with pytest.raises(schedlang.SchedlangError, match="is an int"):
        cls(_optimizer(), total=1000.5)


def test_class_name_is_checked(gpt):
    for bad in ("1x", "class", "float", "lr", "_x", "a-b"):
        with pytest.raises(schedlang.SchedlangError):
            gpt.scheduler_class(bad)


# -- the cerebras shape --------------------------------------------------------------------------


CEREBRAS_CASES = [
    ("warmup(linear, 500) >> cosine(0.001, 1e-4, 500)", 1000),
    ("cosine_restarts(1e-3, 1e-5, 10, mult=2)", None),
    ("step(0.1, 0.5, 7)", None),
    ('cyclic(1e-4, 1e-3, 4, 6, mode="triangular2")', None),
]


@pytest.mark.parametrize("source, total", CEREBRAS_CASES)
def test_cerebras_class_against_stand_in(source, total):
    program = schedlang.compile(source)
    cls = program.scheduler_class("Cs", target="cerebras")
    assert hasattr(cls, "_get_closed_form_lr") and hasattr(cls, "_get_closed_form")
    optimizer = _optimizer()
    scheduler = cls(optimizer)
    assert scheduler.total_iters == total
    assert scheduler.last_epoch.dtype == torch.int64 and int(scheduler.last_epoch) == 0
    for step in range(200):
        value = optimizer.param_groups[0]["lr"]
        assert isinstance(value, torch.Tensor) and value.dtype == torch.float32
        assert float(value) == pytest.approx(program["lr"](step), rel=1e-6, abs=2e-9)  # float32
        assert torch.equal(scheduler._get_closed_form(), scheduler._get_closed_form_lr())
        optimizer.step()
        scheduler.step()
    scheduler.last_epoch.fill_(2**40)  # far steps: integer arithmetic keeps the boundaries exact
    assert float(scheduler._get_closed_form_lr()) == pytest.approx(program["lr"](2**40), rel=1e-6)


def test_cerebras_total_iters_follows_parameters(gpt):
    cls = gpt.scheduler_class("GPTC", target="cerebras")
    scheduler = cls(_optimizer(), **SMALL)
    assert scheduler.total_iters == 300
    state = scheduler.state_dict()
    scheduler.step()
    assert int(state["last_epoch"]) == 0


_TENSOR_FREE_CALLS = {"float", "int", "bool", "item", "tolist", "numpy", "cpu"}


def _branching(tree: ast.AST) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.If, ast.IfExp, ast.While, ast.For, ast.comprehension, ast.BoolOp,
                             ast.Try, ast.Match)):
            found.append(type(node).__name__)
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            if name in _TENSOR_FREE_CALLS or name in ("min", "max", "abs", "round"):
                found.append(name)
    return found


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_cerebras_code_has_no_python_branching(path):
    program = schedlang.load(path)
    tree = ast.parse(emit(program, "cerebras", path.name))
    checked = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and (
                node.name in {s for s in program.schedules} or node.name.startswith("_get_closed_form")):
            assert _branching(node) == [], node.name
            checked += 1
    assert checked >= 2 + len(program.schedules) - 1


def test_cerebras_stand_in_resumes():
    program = schedlang.compile("warmup(linear, 5) >> cosine(1e-3, 1e-5, 20)")
    cls = program.scheduler_class("Cs", target="cerebras")
    optimizer = _optimizer()
    first = cls(optimizer)
    for _ in range(12):
        first.step()
    state = first.state_dict()
    first.step()  # the saved state must not move with the live scheduler
    second = cls(_optimizer())
    second.load_state_dict(state)
    second.step()
    assert int(second.last_epoch) == 13
    assert torch.equal(second.get_last_lr()[0], first.get_last_lr()[0])
