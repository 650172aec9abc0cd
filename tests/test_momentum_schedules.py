"""Momentum and Adam betas from schedules (issue 9, item 4).

``torch.OneCycleLR.momentum`` / ``torch.CyclicLR.momentum`` are the curves torch's
OneCycleLR / CyclicLR write beside the lr; a schedule named ``beta1`` (``beta2``) sets
``betas[0]`` (``betas[1]``) of an Adam-family optimizer, float or tensor.
"""

import pytest

torch = pytest.importorskip("torch")

import schedlang  # noqa: E402

L = torch.optim.lr_scheduler
STEPS = 130

CASES = [
    ("OneCycleLR", dict(max_lr=0.1, total_steps=100), "max_lr=0.1, total_steps=100"),
    ("OneCycleLR", dict(max_lr=0.1, total_steps=100, three_phase=True, anneal_strategy="linear",
                        base_momentum=0.8, max_momentum=0.9),
     'max_lr=0.1, total_steps=100, three_phase=true, anneal_strategy="linear", '
     "base_momentum=0.8, max_momentum=0.9"),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=10, step_size_down=15),
     "base_lr=0.01, max_lr=0.1, step_size_up=10, step_size_down=15"),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=7, mode="exp_range", gamma=0.99),
     'base_lr=0.01, max_lr=0.1, step_size_up=7, mode="exp_range", gamma=0.99'),
]


def _torch_run(name, kwargs, adam):
    param = torch.zeros(2, requires_grad=True)
    optimizer = (torch.optim.Adam([param], lr=0.1) if adam else
                 torch.optim.SGD([param], lr=0.1, momentum=0.9))
    scheduler = getattr(L, name)(optimizer, **kwargs)
    lrs, momenta = [], []
    for _ in range(STEPS if name != "OneCycleLR" else kwargs["total_steps"]):
        group = optimizer.param_groups[0]
        lrs.append(group["lr"])
        momenta.append(group["betas"][0] if adam else group["momentum"])
        optimizer.step()
        scheduler.step()
    return lrs, momenta


@pytest.mark.parametrize("name, kwargs, args", CASES)
@pytest.mark.parametrize("adam", [False, True])
def test_momentum_preset_matches_torch(name, kwargs, args, adam):
    key = "beta1" if adam else "momentum"
    program = schedlang.compile(f"schedule lr = torch.{name}({args})\n"
                                f"schedule {key} = torch.{name}.momentum({args})")
    lrs, momenta = _torch_run(name, kwargs, adam)
    assert [program[key](k) for k in range(len(momenta))] == pytest.approx(momenta, rel=1e-12)
    # the generated class drives both, on the optimizer's own entry
    param = torch.zeros(2, requires_grad=True)
    optimizer = (torch.optim.Adam([param], lr=0.1) if adam else
                 torch.optim.SGD([param], lr=0.1, momentum=0.9))
    scheduler = program.scheduler_class("Cyc")(optimizer)
    for k in range(len(momenta)):
        group = optimizer.param_groups[0]
        got = group["betas"][0] if adam else group["momentum"]
        assert got == pytest.approx(momenta[k], rel=1e-12), k
        assert group["lr"] == pytest.approx(lrs[k], rel=1e-12), k
        optimizer.step()
        scheduler.step()


def test_tensor_betas_are_filled_in_place_and_compile():
    program = schedlang.compile("schedule lr = linear(0.1, 0.01, 20)\n"
                                "schedule beta1 = linear(0.95, 0.85, 20)\n"
                                "schedule beta2 = constant(0.99)")
    param = torch.zeros(2, requires_grad=True)
    betas = (torch.tensor(0.9), torch.tensor(0.999))
    optimizer = torch.optim.Adam([param], lr=torch.tensor(0.1), betas=betas)
    scheduler = program.scheduler_class("Betas")(optimizer)
    compiled = torch.compile(scheduler.step, fullgraph=True, backend="eager")
    for k in range(1, 25):
        compiled()
        beta1, beta2 = optimizer.param_groups[0]["betas"]
        assert beta1 is betas[0] and beta2 is betas[1]
        assert float(beta1) == float(torch.tensor(program["beta1"](k)).float())
        assert float(beta2) == pytest.approx(0.99)


def test_momentum_needs_cycle_momentum_and_a_betas_entry():
    with pytest.raises(schedlang.SchedlangError, match="cycle_momentum=false"):
        schedlang.compile("torch.OneCycleLR.momentum(max_lr=1, total_steps=10, cycle_momentum=false)")
    program = schedlang.compile("schedule beta1 = constant(0.9)")
    with pytest.raises(schedlang.SchedlangError, match="no 'beta1'"):
        program.scheduler_class("B")(torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1))
