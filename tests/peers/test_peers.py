"""The peers' own scheduler test cases, run through schedlang's presets (issue 41).

Each ``*_cases.py`` beside this file transcribes one library's test file as data (the file and
its commit are named at its top): the scheduler's parameters, the steps the test reads and
the values it expects.  Every case here is compiled as the matching preset and compared with
the values the peer's test expects, at the peer's own tolerance, and, where the library is
installed or its source is pinned, with the library's real code at 1e-12.
"""

from __future__ import annotations

import math
import warnings

import pytest
from anchors import reference as R

import schedlang

from . import composer_cases as C
from . import deepspeed_cases as D
from . import hf_cases as H
from . import keras_cases as K
from . import megatron_cases as M
from . import olmo_core_cases as O
from . import optax_cases as X
from . import timm_cases as Y
from . import torch_cases as T

# ----------------------------------------------------------------------------------- Composer


def _composer_word(value) -> str:
    """A Composer constructor value as schedlang writes it: times are bare literals."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(map(_composer_word, value)) + "]"
    return value if isinstance(value, str) else repr(value)


def composer_source(index: int) -> str:
    cls, kwargs, ssr, _, _ = C.CASES[index]
    if index in C.SOURCES:
        call = C.SOURCES[index][0]
    else:
        call = f"composer.{cls}(" + ", ".join(f"{k}={_composer_word(v)}" for k, v in kwargs.items()) + ")"
    if ssr != 1.0:  # the Trainer's scale_schedule_ratio is scale() around the scheduler
        call = f"scale({call}, {ssr!r})"
    return (f"param max_duration: int = {C.MAX_DURATION_EPOCHS * C.STEPS_PER_EPOCH}\n"
            f"param steps_per_epoch: int = {C.STEPS_PER_EPOCH}\nschedule lr = {call}\n")


def composer_step(time: str) -> int:
    """The test's timestamp: ``Xba`` is batch X, ``Xep`` batch ``X * STEPS_PER_EPOCH``."""
    if time.endswith("ep"):
        return int(time[:-2]) * C.STEPS_PER_EPOCH
    assert time.endswith("ba"), time
    return int(time[:-2])


@pytest.mark.parametrize("index", range(len(C.CASES)),
                         ids=[f"{i}-{c[0]}-ssr{c[2]}" for i, c in enumerate(C.CASES)])
def test_composer(index):
    cls, kwargs, ssr, times, expected = C.CASES[index]
    steps = [composer_step(time) for time in times]
    lr = schedlang.compile(composer_source(index))["lr"]
    ours = lr.values(steps)
    assert ours == pytest.approx(expected, abs=C.TOLERANCE)
    if kwargs.get("scale_warmup") and ssr != 1.0:
        return  # C.SCALED_WARMUP: the peer's values hold, Composer's plateau is not followed
    try:
        real = R.composer_values(cls, kwargs, steps, max_duration=f"{int(C.MAX_DURATION_EPOCHS * ssr)}ep",
                                 dataloader_len=C.STEPS_PER_EPOCH, ssr=ssr)
    except R.AnchorUnavailable as exc:
        pytest.skip(f"Composer's source is not available: {exc}")
    assert ours == pytest.approx(real, rel=1e-12, abs=1e-15)


def test_composer_fractional_t_mult_in_dur_is_refused_saying_what_to_write():
    """The one case whose mechanical spelling is refused (``SOURCES``): its time reads a parameter."""
    source = composer_source(0).replace(
        "composer.StepScheduler(step_size=10ba)",
        "composer.CosineAnnealingWarmRestartsScheduler(t_0=0.003dur, t_mult=1.5)")
    with pytest.raises(schedlang.SchedlangError) as info:
        schedlang.compile(source)
    assert "t_0 must be a number of steps" in info.value.message and "t_0=3000ba" in info.value.hint


def test_composer_table_is_whole():
    """Every ssr the test file uses is there, so each scheduler is checked scaled and not."""
    assert len(C.CASES) == 46
    assert {c[2] for c in C.CASES} == {0.01, 0.2, 0.5, 1.0, 2.0, 4.0}
    assert not any(math.isnan(v) for c in C.CASES for v in c[4])


# ---------------------------------------------------------------------------------- DeepSpeed

_DS_TAKES_LR = ("WarmupLR", "WarmupCosineLR")  # the presets whose value reads the optimizer's lr


def deepspeed_source(case: dict) -> str:
    from frameworks.render import sched_args

    kwargs = {**case["kwargs"], **({"lr": case["lr"]} if case["cls"] in _DS_TAKES_LR else {})}
    read = ".get_mom" if case["read"] == "momentum" else ""
    return f"deepspeed.{case['cls']}{read}({sched_args(kwargs)})"


def _shape_holds(kind: str, values: list) -> bool:
    """DeepSpeed's _verify_continuous_increase / _decrease / _staircase_increase."""
    pairs = list(zip(values, values[1:]))
    if kind == "increase":
        return all(a < b for a, b in pairs)
    if kind == "decrease":
        return all(a > b for a, b in pairs)
    size = int(kind.split(":")[1])
    return all(v == values[i] for i in range(0, len(values), size) for v in values[i:i + size])


def _marked(name: str, wrong: dict, *values):
    """A row schedlang gets wrong (the table's ``WRONG``) is a strict xfail that names the difference."""
    marks = [pytest.mark.xfail(reason=wrong[name], strict=True)] if name in wrong else []
    return pytest.param(*values, id=name, marks=marks)


@pytest.mark.parametrize("case", [_marked(c["name"], D.WRONG, c) for c in D.CASES])
def test_deepspeed(case):
    from frameworks.deepspeed_cases import deepspeed_values
    from frameworks.real import real

    lr = schedlang.compile(deepspeed_source(case))["lr"]
    ours = lr.values(range(case["steps"]))
    for t, expected, tol in case["points"]:
        if case["read"] == "momentum" and t == 0 and expected == case["kwargs"]["cycle_max_mom"]:
            continue  # D.MOM_T0: the test reads get_mom(), not the group; checked on the real scheduler below
        bound = (pytest.approx(expected) if tol == "approx" else
                 pytest.approx(expected, abs=tol) if tol else pytest.approx(expected, rel=1e-15, abs=1e-18))
        assert ours[t] == bound, t
    for kind, start, stop in case["shapes"]:
        assert _shape_holds(kind, ours[start:stop]), (kind, start, stop)
    real_values = deepspeed_values(case["cls"], case["kwargs"], case["steps"], lr=case["lr"],
                                   read=case["read"])
    assert ours == pytest.approx(real_values, rel=1e-12, abs=1e-15)
    if case["read"] == "momentum" and case["points"][0][1] == case["kwargs"].get("cycle_max_mom"):
        import torch

        optimizer = torch.optim.Adam([torch.nn.Parameter(torch.zeros(1))], lr=case["lr"])
        scheduler = real("deepspeed.runtime.lr_schedules").OneCycle(optimizer, **case["kwargs"])
        assert scheduler.get_mom()[0][0] == case["points"][0][1]  # what the test reads at t = 0
        assert ours[0] == optimizer.param_groups[0]["betas"][0] == case["kwargs"]["cycle_min_mom"]


@pytest.mark.parametrize("name, source, message", D.REFUSALS, ids=[r[0] for r in D.REFUSALS])
def test_deepspeed_refusals(name, source, message):
    with pytest.raises(schedlang.SchedlangError) as info:
        schedlang.compile(source)
    assert message in str(info.value)


@pytest.mark.parametrize("name, cls, params", D.NULL_REFUSALS, ids=[r[0] for r in D.NULL_REFUSALS])
def test_deepspeed_null_refusals(name, cls, params, tmp_path):
    """A JSON ``null`` reaches DeepSpeed as None: its real scheduler raises, and the import refuses
    at the key."""
    import json

    import torch
    from frameworks.real import real

    from schedlang.importers import import_file

    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.001)
    with pytest.raises(ValueError, match="positive integer, got None"):
        getattr(real("deepspeed.runtime.lr_schedules"), cls)(optimizer, **params)
    path = tmp_path / "ds.json"
    path.write_text(json.dumps({"optimizer": {"type": "AdamW", "params": {"lr": 0.001}},
                                "scheduler": {"type": cls, "params": params}}))
    with pytest.raises(schedlang.SchedlangError) as info:
        import_file(path, format="deepspeed-json")
    assert D.NULL_MESSAGE in info.value.message and info.value.span.line == 1


# ---------------------------------------------------------------------------------- OLMo-core


def _olmo_module():
    from frameworks.olmo_core_cases import olmo

    return olmo()  # a missing install skips locally, fails under CI (frameworks.real)


def _close(ours: float, expected: float, approx: bool) -> bool:
    return ours == (pytest.approx(expected) if approx else pytest.approx(expected, rel=1e-12, abs=1e-15))


@pytest.mark.parametrize("case", O.CASES, ids=[c["name"] for c in O.CASES])
def test_olmo_core(case):
    """Update k reads get_lr(lr, k + 1, t_max): the test's current c is the preset's step c - 1."""
    module = _olmo_module()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ComposableScheduler / override_decay warn that t_max is ignored
        real = case["real"](module)
        lr = schedlang.compile(case["source"])["lr"]
        for current, expected in case["points"]:
            anchor = real.get_lr(case["lr"], current, case["t_max"])
            if expected is not None:
                assert _close(anchor, expected, case.get("approx", False)), (current, "transcription")
            if current == 0:
                continue  # no update reads the counter 0
            assert _close(lr(current - 1), anchor, False), current
            if expected is not None:
                assert _close(lr(current - 1), expected, case.get("approx", False)), current


@pytest.mark.parametrize("shape, sub, alpha_f", O.PARITY)
def test_olmo_core_composable_and_sequential_match_when_t_max_aligns(shape, sub, alpha_f):
    composable, sequential = (schedlang.compile(s)["lr"] for s in O.parity_sources(shape, sub, alpha_f))
    steps = [c - 1 for c in O.PARITY_POINTS if c > 0]
    assert composable.values(steps) == pytest.approx(sequential.values(steps))
    assert schedlang.equivalent(*O.parity_sources(shape, sub, alpha_f), rtol=1e-9).equivalent


@pytest.mark.parametrize("source, theirs, ours", O.REFUSALS, ids=[r[0].split("(")[0] + f"-{i}"
                                                                  for i, r in enumerate(O.REFUSALS)])
def test_olmo_core_refusals(source, theirs, ours):
    """What OLMo-core refuses at configuration, schedlang refuses at the call."""
    with pytest.raises(schedlang.SchedlangError) as info:
        schedlang.compile(source)
    assert ours in info.value.message


# -------------------------------------------------------------------------------------- optax


def _optax_word(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, dict):  # boundaries_and_scales {b: s} is [[b, s]], {} is []
        return "[" + ", ".join(f"[{b!r}, {s!r}]" for b, s in value.items()) + "]"
    return repr(value)


def optax_source(case: dict) -> str:
    kwargs = case["kwargs"]
    if case["fn"] == "sgdr_schedule":  # one warmup_cosine_decay_schedule per dict
        cycles = ", ".join("optax.warmup_cosine_decay_schedule(" + ", ".join(
            f"{k}={_optax_word(v)}" for k, v in cycle.items()) + ")" for cycle in kwargs["cosine_kwargs"])
        call = f"optax.sgdr_schedule(cosine_kwargs=[{cycles}])"
    else:
        call = f"optax.{case['fn']}(" + ", ".join(f"{k}={_optax_word(v)}" for k, v in kwargs.items()) + ")"
    run = f"run = {case['run']}\n" if "run" in case else ""
    return f"{run}schedule lr = {call}\n"


@pytest.mark.parametrize("case", X.CASES, ids=[c["name"] for c in X.CASES])
def test_optax(case):
    steps = list(case["steps"])
    ours = schedlang.compile(optax_source(case))["lr"].values(steps)
    tolerance = {"rel": case.get("rtol", 0.0), "abs": case.get("atol", 0.0)}
    assert ours == pytest.approx(case["expected"], **tolerance)
    try:
        real = R.optax_values(case["fn"], case.get("real_kwargs", case["kwargs"]), steps)
    except R.AnchorUnavailable as exc:
        pytest.skip(f"optax is not installed: {exc}")
    assert ours == pytest.approx(real, rel=1e-12, abs=1e-15)


def test_optax_exponential_growth_needs_a_run_that_ends_before_it_overflows():
    """The cases with decay_rate=2 and no end_value compile only with their run (SPEC §4)."""
    case = next(c for c in X.CASES if "run" in c)
    without = optax_source(case).split("\n", 1)[1]
    with pytest.raises(schedlang.SchedlangError, match="overflows float64 from step"):
        schedlang.compile(without)


@pytest.mark.parametrize("name, source, hint", X.REFUSALS, ids=[r[0] for r in X.REFUSALS])
def test_optax_refusals(name, source, hint):
    with pytest.raises(schedlang.SchedlangError) as info:
        schedlang.compile(source)
    assert hint in str(info.value)


# ------------------------------------------------------------------------------- transformers


@pytest.mark.parametrize("name, kwargs, expected", H.CASES, ids=[c[0] for c in H.CASES])
def test_transformers(name, kwargs, expected):
    words = ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
    lr = schedlang.compile(f"hf.{name}(lr={H.LR!r}" + (f", {words})" if words else ")"))["lr"]
    ours = lr.values(range(H.NUM_STEPS))
    assert ours == pytest.approx(expected, abs=H.TOLERANCE)
    try:
        options = {k: v for k, v in kwargs.items() if k in ("num_warmup_steps", "num_training_steps")}
        extra = {k: v for k, v in kwargs.items() if k not in options}
        real = R.hf_values(name, range(H.NUM_STEPS), lr=H.LR, **options, **extra)
    except R.AnchorUnavailable as exc:
        pytest.skip(f"transformers is not installed: {exc}")
    assert ours == pytest.approx(real, rel=1e-12, abs=1e-12)


# -------------------------------------------------------------------------------------- torch


@pytest.mark.parametrize("name, source, real, lr, epochs, targets", T.CASES, ids=[c[0] for c in T.CASES])
def test_torch(name, source, real, lr, epochs, targets):
    ours = schedlang.compile(source)["lr"].values(range(epochs))
    assert ours == pytest.approx(targets[:epochs], rel=T.RTOL, abs=T.ATOL)
    if real is not None:
        try:
            anchor = R.torch_values(real[0], real[1], range(epochs), lr=lr)
        except R.AnchorUnavailable as exc:
            pytest.skip(f"torch is not installed: {exc}")
        assert ours == pytest.approx(anchor, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("name, source, message", T.REFUSALS, ids=[r[0] for r in T.REFUSALS])
def test_torch_refusals(name, source, message):
    with pytest.raises(schedlang.SchedlangError) as info:
        schedlang.compile(source)
    assert message in str(info.value)


# --------------------------------------------------------------------------------------- timm


def timm_source(case: dict) -> str:
    from frameworks.timm_cases import _sched

    words = ", ".join(f"{k}={_sched(v)}" for k, v in case["kwargs"].items())
    return f"timm.{case['cls']}(lr={case['lr']!r}, {words})"


_TIMM_RELATIONS = {"le": lambda a, b: b <= a, "lt": lambda a, b: b < a, "ne": lambda a, b: b != a,
                   "increase": None}


def _timm_values(case: dict) -> list:
    return schedlang.compile(timm_source(case))["lr"].values(range(case["steps"]))


@pytest.mark.parametrize("case", [_marked(c["name"], Y.WRONG, c) for c in Y.CASES])
def test_timm(case):
    from frameworks import timm_cases

    ours = _timm_values(case)
    for t, expected, rel in case["points"]:
        assert ours[t] < expected if rel == "below" else ours[t] == pytest.approx(expected, rel=rel), t
    for kind, start, stop in case["shapes"]:
        if kind == "increase":
            assert all(a < b for a, b in zip(ours[start:stop], ours[start + 1:stop])), (start, stop)
        else:
            assert _TIMM_RELATIONS[kind](ours[start], ours[stop]), (kind, start, stop)
    real = timm_cases.values(case["cls"], case["kwargs"], range(case["steps"]), lr=case["lr"])
    assert ours == pytest.approx(real, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("first, second", Y.K_DECAY_PAIRS)
def test_timm_k_decay_changes_the_midpoint(first, second):
    """TestKDecay: ``lrs_k1[50] != lrs_k2[50]``."""
    rows = {c["name"]: c for c in Y.CASES}
    assert _timm_values(rows[first])[50] != _timm_values(rows[second])[50]


@pytest.mark.parametrize("name, source, message", [_marked(r[0], Y.WRONG, *r) for r in Y.REFUSALS])
def test_timm_refusals(name, source, message):
    with pytest.raises(schedlang.SchedlangError) as info:
        schedlang.compile(source)
    assert message in str(info.value)


@pytest.mark.parametrize("name, source, real, key, run, targets", T.CYCLE_CASES,
                         ids=[c[0] for c in T.CYCLE_CASES])
def test_torch_cycles(name, source, real, key, run, targets):
    lr = schedlang.compile(source)["lr"]
    assert lr.values(range(len(targets))) == pytest.approx(targets, rel=0, abs=T.CYCLE_ATOL)
    try:
        anchor = R.torch_values(real[0], real[1], range(run), optimizer_kwargs={"momentum": 0.9}, key=key)
    except R.AnchorUnavailable as exc:
        pytest.skip(f"torch is not installed: {exc}")
    assert lr.values(range(run)) == pytest.approx(anchor, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("name, source, message",
                         [_marked(r[0], T.CYCLE_WRONG, *r) for r in T.CYCLE_REFUSALS])
def test_torch_cycle_refusals(name, source, message):
    with pytest.raises(schedlang.SchedlangError) as info:
        schedlang.compile(source)
    assert message in str(info.value)


# -------------------------------------------------------------------------------------- Keras


@pytest.mark.parametrize("name, cls, kwargs, steps, expected", K.CASES, ids=[c[0] for c in K.CASES])
def test_keras(name, cls, kwargs, steps, expected):
    from frameworks import keras_cases

    source = f"keras.{cls}(" + ", ".join(f"{k}={keras_cases._sched(v)}" for k, v in kwargs.items()) + ")"
    ours = schedlang.compile(source)["lr"].values(steps)
    assert ours == pytest.approx(expected, rel=K.RTOL, abs=K.ATOL)
    real = keras_cases.values(cls, kwargs, steps, float64=True)  # a missing Keras skips (frameworks.real)
    assert ours == pytest.approx(real, rel=1e-12, abs=1e-15)


# -------------------------------------------------------------------------------- Megatron-LM


@pytest.mark.parametrize("name, kwargs, reads", M.CASES, ids=[c[0] for c in M.CASES])
def test_megatron(name, kwargs, reads):
    from types import SimpleNamespace

    from frameworks.real import real
    from frameworks.render import sched_args

    wd = {k: kwargs[k] for k in ("start_wd", "end_wd", "wd_incr_steps", "wd_incr_style")}
    ours = {"lr": schedlang.compile(f"megatron.OptimizerParamScheduler({sched_args(kwargs)})")["lr"],
            "wd": schedlang.compile(f"megatron.OptimizerParamScheduler.get_wd({sched_args(wd)})")["lr"]}
    module = real("megatron.core.optimizer_param_scheduler")
    optimizer = SimpleNamespace(param_groups=[{"lr": 0.0, "weight_decay": 0.0}])
    scheduler = module.OptimizerParamScheduler(optimizer, **kwargs)
    at = 0
    for steps, key, expected, rel_tol in reads:
        scheduler.step(steps - at)  # the test's increments: num_steps adds them up
        at = steps
        value = ours[key](steps)
        assert value == pytest.approx(expected, rel=rel_tol or 1e-15)  # None: the test's ==
        anchor = scheduler.get_lr(optimizer.param_groups[0]) if key == "lr" else scheduler.get_wd()
        assert value == pytest.approx(anchor, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("keyword", ["ssr", "scale_schedule_ratio"])
def test_composer_ssr_as_a_scheduler_argument_says_how_to_write_it(keyword):
    """The peers' cases pass ssr to the scheduler call; schedlang spells it scale() around it."""
    with pytest.raises(schedlang.SchedlangError) as info:
        schedlang.compile(f"composer.StepScheduler(step_size=10ba, {keyword}=0.5)")
    assert info.value.hint == ("Composer's scale_schedule_ratio is the Trainer's, written "
                               "scale(composer.StepScheduler(...), 0.5)")


def test_deepspeed_timm_and_torch_cycle_tables_are_whole():
    """Every case of the three files is a row, a refusal or a named strict xfail (issue 41)."""
    assert (len(D.CASES), len(D.REFUSALS), len(D.NULL_REFUSALS), len(D.WRONG)) == (71, 11, 3, 0)
    assert (len(Y.CASES), len(Y.REFUSALS), len(Y.WRONG)) == (36, 7, 1)
    assert (len(T.CYCLE_CASES), len(T.CYCLE_REFUSALS), len(T.CYCLE_WRONG)) == (38, 5, 0)
    named = {c["name"] for c in D.CASES} | {r[0] for r in D.REFUSALS}
    assert set(D.WRONG) <= named and len(named) == len(D.CASES) + len(D.REFUSALS)
    named = {c["name"] for c in Y.CASES} | {r[0] for r in Y.REFUSALS}
    assert set(Y.WRONG) <= named and len(named) == len(Y.CASES) + len(Y.REFUSALS)
    assert set(T.CYCLE_WRONG) <= {r[0] for r in T.CYCLE_REFUSALS}
