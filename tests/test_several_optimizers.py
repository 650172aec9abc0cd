"""One scheduler class driving several optimizers on one clock (issue 41, item 4).

Muon for the 2-D weights and AdamW for the rest is the common set-up of 2025-26; two bugs
of it are what these tests guard against: tenstorrent/tt-metal#56027 (``MuonWithAdamW.set_lr``
scheduled only Muon, "the AdamW LR is silently never scheduled") and DeepSpeed #7713 (one
``scheduler`` block overwrote both optimizers' lrs).  The class takes a dict of named
optimizers; a schedule ``KEY__NAME`` drives the groups of the optimizer named NAME; every
group is driven or the constructor refuses, naming the optimizer and the group.
"""

from __future__ import annotations

import importlib.util
import io
import math
import sys

import pytest

torch = pytest.importorskip("torch")

import schedlang  # noqa: E402
from schedlang.codegen.emit import emit  # noqa: E402

STEPS = 60
#: Muon's lr and momentum, AdamW's lr, weight decay (none for its norm and bias group) and beta2.
FILE = """\
param total: int = 60
schedule lr__muon = warmup(linear, 5) >> cosine(0.02, 0.002, total - 5)
schedule momentum__muon = linear(0.85, 0.95, 20)
schedule weight_decay__muon = constant(0.01)
schedule lr__adamw = warmup(linear, 5) >> cosine(3e-3, 3e-4, total - 5)
schedule weight_decay__adamw = linear(0.1, 0.05, total)
schedule weight_decay__adamw__no_decay = constant(0)
schedule beta2__adamw = linear(0.95, 0.99, 30)
"""
#: The schedule each (optimizer, group index) takes for each key.
DRIVEN = {
    ("muon", 0): {"lr": "lr__muon", "momentum": "momentum__muon", "weight_decay": "weight_decay__muon"},
    ("adamw", 0): {"lr": "lr__adamw", "weight_decay": "weight_decay__adamw", "beta2": "beta2__adamw"},
    ("adamw", 1): {"lr": "lr__adamw", "weight_decay": "weight_decay__adamw__no_decay",
                   "beta2": "beta2__adamw"},
}
MUON = hasattr(torch.optim, "Muon")  # torch 2.13 has it; a second AdamW stands in otherwise


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.embed = torch.nn.Embedding(16, 8)
        self.hidden = torch.nn.Linear(8, 8)
        self.norm = torch.nn.LayerNorm(8)
        self.out = torch.nn.Linear(8, 16)

    def forward(self, tokens):
        return self.out(self.norm(torch.relu(self.hidden(self.embed(tokens)))))


def _optimizers(model):
    """Muon for the 2-D weights of the hidden layers; AdamW for the embedding and the head
    (decayed) and for the norm and the biases (tagged ``no_decay``)."""
    matrices = [model.hidden.weight]
    decayed = [model.embed.weight, model.out.weight]
    rest = [model.hidden.bias, model.norm.weight, model.norm.bias, model.out.bias]
    muon = (torch.optim.Muon(matrices, lr=1.0, momentum=0.5, weight_decay=0.0) if MUON
            else torch.optim.AdamW(matrices, lr=1.0, weight_decay=0.0))
    adamw = torch.optim.AdamW([{"params": decayed},
                               {"params": rest, "tags": "no_decay"}], lr=1.0, weight_decay=0.5)
    return {"muon": muon, "adamw": adamw}


def _read(group, key):
    return group["betas"][1] if key == "beta2" else group[key]


def _batch(step):
    generator = torch.Generator().manual_seed(step)
    tokens = torch.randint(0, 16, (4, 6), generator=generator)
    return tokens, tokens.roll(1, dims=1)


def _train(model, optimizers, scheduler, steps, first=0):
    """The loop as written: forward, backward, every optimizer's step, the one scheduler's
    step.  Returns what every group held for every driven key at each step, read before
    the step's update (the value the update uses)."""
    seen = []
    for step in range(first, first + steps):
        seen.append({(name, index, key): float(_read(group, key))
                     for name, optimizer in optimizers.items()
                     for index, group in enumerate(optimizer.param_groups)
                     for key in DRIVEN.get((name, index), {}) if MUON or key != "momentum"})
        tokens, targets = _batch(step)
        loss = torch.nn.functional.cross_entropy(model(tokens).flatten(0, 1), targets.flatten())
        for optimizer in optimizers.values():
            optimizer.zero_grad()
        loss.backward()
        for optimizer in optimizers.values():
            optimizer.step()
        scheduler.step()
    return seen


def _file():
    return FILE if MUON else FILE.replace("schedule momentum__muon", "# schedule momentum__muon")


@pytest.fixture(scope="module")
def program():
    return schedlang.compile(_file())


def test_torch_has_muon():
    """torch 2.13 (the pinned version) ships torch.optim.Muon: the loop below runs it."""
    assert MUON, "torch.optim.Muon missing: the tests ran two AdamW instead"


def test_every_group_of_both_optimizers_follows_its_schedule_at_every_step(program):
    model = Model()
    optimizers = _optimizers(model)
    before = [p.detach().clone() for p in model.parameters()]
    scheduler = program.scheduler_class("MuonAdamW")(optimizers)
    seen = _train(model, optimizers, scheduler, STEPS)
    for step, values in enumerate(seen):
        for (name, index, key), value in values.items():
            want = program[DRIVEN[name, index][key]](step)
            assert value == want, (name, index, key, step, value, want)
    # the file's values are the ones the updates used: every parameter moved, and the two
    # optimizers' lrs differ by the file's factor, not one lr written over both (DeepSpeed #7713)
    assert all(not torch.equal(a, b) for a, b in zip(before, model.parameters()))
    assert seen[10][("muon", 0, "lr")] / seen[10][("adamw", 0, "lr")] == pytest.approx(0.02 / 3e-3)
    # get_last_lr(): every group of every optimizer, in the dict's order
    assert scheduler.get_last_lr() == [program["lr__muon"](STEPS)] + [program["lr__adamw"](STEPS)] * 2
    assert [len(o.param_groups) for o in scheduler.optimizer.optimizers.values()] == [1, 2]


def test_an_optimizer_no_schedule_reaches_is_refused_naming_it(program):
    """tt-metal#56027: the AdamW lr silently never scheduled.  Here the constructor refuses."""
    muon_only = schedlang.compile("schedule lr__muon = cosine(0.02, 0.002, 60)\n"
                                  "schedule weight_decay = constant(0.1)")
    with pytest.raises(schedlang.SchedlangError) as caught:
        muon_only.scheduler_class("S")(_optimizers(Model()))
    assert str(caught.value).startswith("error: no schedule drives 'lr' in optimizer 'adamw' param group 0 "
                                        "(its tags: adamw; the file's 'lr' schedules: lr__muon)")
    assert '"unscheduled": True' in caught.value.hint


def test_a_group_no_schedule_reaches_is_refused_naming_it():
    text = "schedule lr__decay = constant(1e-3)\nschedule lr__muon = constant(0.02)"
    with pytest.raises(schedlang.SchedlangError, match="no schedule drives 'lr' in optimizer 'adamw' "
                                                       "param group 1 \\(its tags: adamw, no_decay;"):
        groups = [{"params": [torch.nn.Parameter(torch.zeros(2))], "tags": tag}
                  for tag in ("decay", "no_decay")]
        schedlang.compile(text).scheduler_class("S")(
            {"muon": _optimizers(Model())["muon"], "adamw": torch.optim.AdamW(groups)})


def test_a_key_scheduled_elsewhere_and_held_here_is_refused():
    """Weight decay scheduled for AdamW and Muon's left as constructed: refused (Muon has a
    ``weight_decay`` too); ``"unscheduled"`` keeps it on purpose."""
    program = schedlang.compile("schedule lr = constant(1e-3)\nschedule weight_decay__adamw = constant(0.1)")
    optimizers = _optimizers(Model())
    with pytest.raises(schedlang.SchedlangError, match="no schedule drives 'weight_decay' in optimizer "
                                                       "'muon' param group 0"):
        program.scheduler_class("S")(optimizers)
    optimizers["muon"].param_groups[0]["unscheduled"] = ["weight_decay"]
    scheduler = program.scheduler_class("S")(optimizers)
    assert optimizers["muon"].param_groups[0]["weight_decay"] == 0.0  # kept
    assert optimizers["muon"].param_groups[0]["lr"] == 1e-3  # the untagged lr drives it
    assert scheduler.get_last_lr() == [1e-3] * 3


def test_a_schedule_for_an_optimizer_not_given_is_refused(program):
    """A typo in an optimizer's name would leave its schedule driving nothing."""
    optimizers = _optimizers(Model())
    with pytest.raises(schedlang.SchedlangError, match="schedule 'lr__adamw' drives no param group: no "
                                                       "group has the tags \\['adamw'\\] "
                                                       "\\(optimizers: muon, adam\\)"):
        program.scheduler_class("S")({"muon": optimizers["muon"], "adam": optimizers["adamw"]})


@pytest.mark.parametrize("bad, message", [
    ({}, "no optimizer to drive"),
    ({"no__tag": "muon"}, "an optimizer's name is an identifier without '__'"),
    ({"muon": "not an optimizer"}, "str is not an optimizer"),
])
def test_a_bad_dict_of_optimizers_is_refused(program, bad, message):
    optimizers = _optimizers(Model())
    bad = {name: optimizers.get(value, value) for name, value in bad.items()}
    with pytest.raises(schedlang.SchedlangError, match=message):
        program.scheduler_class("S")(bad)


def test_two_schedules_as_specific_for_one_group_are_refused():
    program = schedlang.compile("schedule lr__adamw = constant(1)\nschedule lr__no_decay = constant(2)\n"
                                "schedule lr__muon = constant(3)")
    with pytest.raises(schedlang.SchedlangError, match="pick two schedules for 'lr': 'lr__adamw' and "
                                                       "'lr__no_decay'"):
        program.scheduler_class("S")(_optimizers(Model()))


def test_resumed_mid_run_equals_the_uninterrupted_run(program):
    cls = program.scheduler_class("MuonAdamW")
    model = Model()
    optimizers = _optimizers(model)
    straight = _train(model, optimizers, cls(optimizers), STEPS)
    final = [p.detach().clone() for p in model.parameters()]

    model = Model()
    optimizers = _optimizers(model)
    scheduler = cls(optimizers)
    first = _train(model, optimizers, scheduler, 25)
    checkpoint = io.BytesIO()
    torch.save({"model": model.state_dict(),
                "optimizers": {name: o.state_dict() for name, o in optimizers.items()},
                "scheduler": scheduler.state_dict()}, checkpoint)
    checkpoint.seek(0)
    saved = torch.load(checkpoint, weights_only=True)
    assert saved["scheduler"]["_optimizer_names"] == ["muon", "adamw"]

    model = Model()
    model.load_state_dict(saved["model"])
    optimizers = _optimizers(model)
    resumed = cls(optimizers)
    for name, optimizer in optimizers.items():  # the optimizers first, then the scheduler
        optimizer.load_state_dict(saved["optimizers"][name])
    resumed.load_state_dict(saved["scheduler"])
    rest = _train(model, optimizers, resumed, STEPS - 25, first=25)
    assert first + rest == straight
    assert all(torch.equal(a, b) for a, b in zip(final, model.parameters()))


def test_a_state_saved_for_other_optimizers_is_refused(program):
    optimizers = _optimizers(Model())
    state = program.scheduler_class("S")(optimizers).state_dict()
    alone = schedlang.compile("schedule lr = constant(1e-3)\nschedule weight_decay = constant(0)")
    single = alone.scheduler_class("One")(optimizers["adamw"])
    with pytest.raises(ValueError, match="saved driving the optimizers \\['muon', 'adamw'\\]; this "
                                         "scheduler drives one, unnamed"):
        single.load_state_dict(state)
    swapped = program.scheduler_class("S")({"adamw": optimizers["adamw"], "muon": optimizers["muon"]})
    with pytest.raises(ValueError, match="saved driving the optimizers"):
        swapped.load_state_dict(state)


def test_a_resumed_class_keeps_its_own_group_mapping():
    """The group-to-schedule choice is the constructor's, as its parameters are (SPEC §14):
    a state saved by a file whose tagged schedule NEW dropped does not leave that group
    undriven (before: the saved ``_drivers`` replaced the constructor's, and the group kept
    its old value for ever)."""
    old = schedlang.compile("schedule lr = constant(1)\nschedule lr__head = constant(2)")
    new = schedlang.compile("schedule lr = linear(3, 4, 10)")
    optimizer = torch.optim.SGD([{"params": [torch.nn.Parameter(torch.zeros(1))]},
                                 {"params": [torch.nn.Parameter(torch.zeros(1))], "tags": "head"}], lr=0.5)
    state = old.scheduler_class("Old")(optimizer).state_dict()
    resumed = new.scheduler_class("New")(optimizer)
    resumed.load_state_dict(state)
    for _ in range(5):
        resumed.step()
    assert [g["lr"] for g in optimizer.param_groups] == [new["lr"](5)] * 2 == [3.5, 3.5]


def _standalone(program, tmp_path, name):
    path = tmp_path / f"{name.lower()}.py"
    path.write_text(emit(program, "torch", "several.sched", name))
    spec = importlib.util.spec_from_file_location(f"schedlang_several_{name.lower()}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # as `import` would: Dynamo looks modules up by name
    spec.loader.exec_module(module)
    return getattr(module, name)


def test_the_standalone_module_drives_and_refuses_the_same(program, tmp_path):
    """``schedlang compile --target torch``: the same class without schedlang installed."""
    cls = _standalone(program, tmp_path, "MuonAdamW")
    model = Model()
    optimizers = _optimizers(model)
    seen = _train(model, optimizers, cls(optimizers), 20)
    for step, values in enumerate(seen):
        for (name, index, key), value in values.items():
            assert value == program[DRIVEN[name, index][key]](step)
    muon_only = _standalone(schedlang.compile("schedule lr__muon = constant(0.02)"), tmp_path, "MuonOnly")
    with pytest.raises(ValueError, match="no schedule drives 'lr' in optimizer 'adamw' param group 0"):
        muon_only(_optimizers(Model()))


def _compiled_run(program, backend, steps, scheduled=True):
    """``steps`` compiled training steps (both optimizers' steps, then the scheduler's, when
    ``scheduled``), the lrs held as 0-d float64 tensors.  Returns (every group's lr before
    each step, the scheduler, the compilations so far after each step, the graph breaks)."""
    from torch._dynamo.utils import counters

    torch._dynamo.reset()
    counters.clear()
    model = Model()
    optimizers = _optimizers(model)
    for optimizer in optimizers.values():
        for group in optimizer.param_groups:
            group["lr"] = torch.tensor(float(group["lr"]), dtype=torch.float64)
    scheduler = program.scheduler_class("MuonAdamW")(optimizers) if scheduled else None
    graphs = []

    def counting(graph_module, example_inputs):
        graphs.append(graph_module)
        return torch._dynamo.lookup_backend(backend)(graph_module, example_inputs)

    @torch.compile(backend=counting)
    def training_step(tokens, targets):
        loss = torch.nn.functional.cross_entropy(model(tokens).flatten(0, 1), targets.flatten())
        for optimizer in optimizers.values():
            optimizer.zero_grad()
        loss.backward()
        for optimizer in optimizers.values():
            optimizer.step()
        if scheduler is not None:
            scheduler.step()

    seen, compiles = [], []
    for step in range(steps):
        seen.append({name: [float(group["lr"]) for group in optimizer.param_groups]
                     for name, optimizer in optimizers.items()})
        training_step(*_batch(step))
        compiles.append(len(graphs))
    breaks = sum(counters["graph_break"].values())
    torch._dynamo.reset()
    return seen, scheduler, compiles, breaks


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_compiled_training_step_with_two_optimizers(program, backend):
    """A whole training step (both optimizers and the scheduler) under ``torch.compile``: the
    lrs held as 0-d tensors are computed on the device counter, no compilation after the
    warm-up calls, no graph break the same step without a scheduler does not have, every
    group's lr at every step within 4 ulp of the reference."""
    steps = 30 if backend == "aot_eager" else 16
    seen, scheduler, compiles, breaks = _compiled_run(program, backend, steps)
    for step, values in enumerate(seen):
        for name, lrs in values.items():
            want = program[f"lr__{name}"](step)
            assert all(abs(lr - want) <= 4 * math.ulp(0.02) for lr in lrs), (backend, name, step, lrs)
    assert scheduler.last_epoch == steps
    assert compiles[-1] == compiles[9], f"compiled {compiles[-1] - compiles[9]}x after the first 10 steps"
    if backend == "aot_eager":  # graph breaks are Dynamo's, whatever the backend
        assert breaks == _compiled_run(program, "eager", 3, scheduled=False)[3]


def test_the_cerebras_class_drives_one_optimizer(program):
    """cstorch's scheduler takes one optimizer: a dict is refused, saying what to do."""
    with pytest.raises(schedlang.SchedlangError, match="the Cerebras class drives one optimizer") as caught:
        schedlang.compile("schedule lr = constant(1e-3)").scheduler_class("C", target="cerebras")(
            _optimizers(Model()))
    assert "one Cerebras class per optimizer" in caught.value.hint
