"""Composer's time units on the token and sample clocks (issue 27), against mosaicml 0.32.1's
own scheduler module: a scheduler given ``"...tok"`` / ``"...sp"`` times reads
``state.timestamp.token`` / ``.sample``, the tokens (samples) consumed before the batch, and
``composer.*`` presets given ``tok`` / ``sp`` lengths in a file with a batch schedule are the
same schedule at every step, under a constant batch and under a ramp, and at 10**13 tokens
around every boundary.  (The Trainer applies the value one batch late; like the step-counted
presets, the preset is the scheduler's own function, SPEC §3.)

The ``composer-yaml`` import and export of such times are tested in
tests/formats/test_composer_yaml.py, with the helpers here (``CASES``, ``_composer``)."""

from __future__ import annotations

import warnings

import pytest
from anchors import reference as R

import schedlang
from schedlang.errors import SchedlangError

#: (class, keyword arguments; the times among them are numbers of the unit under test).
CASES = [
    ("CosineAnnealingWithWarmupScheduler", {"t_warmup": 700, "t_max": 5000, "alpha_f": 0.1}),
    ("LinearWithWarmupScheduler", {"t_warmup": 900, "t_max": 4100, "alpha_i": 1.0, "alpha_f": 0.05}),
    ("ConstantWithWarmupScheduler", {"t_warmup": 1300, "t_max": 3000, "alpha": 0.5}),
    ("PolynomialWithWarmupScheduler", {"t_warmup": 500, "t_max": 4500, "power": 2.0, "alpha_f": 0.0}),
    ("MultiStepWithWarmupScheduler", {"t_warmup": 400, "milestones": [1500, 3100], "gamma": 0.3}),
    ("CosineAnnealingScheduler", {"t_max": 3700, "alpha_f": 0.2}),
    ("LinearScheduler", {"t_max": 2900, "alpha_i": 0.9, "alpha_f": 0.1}),
    ("PolynomialScheduler", {"t_max": 3300, "power": 0.5}),
    ("StepScheduler", {"step_size": 1100, "gamma": 0.5}),
    ("MultiStepScheduler", {"milestones": [800, 2600], "gamma": 0.25}),
    ("ExponentialScheduler", {"gamma": 0.5, "decay_period": 1700}),
    ("CosineAnnealingWarmRestartsScheduler", {"t_0": 1200, "t_mult": 2.0, "alpha_f": 0.1}),
]
TIMES = {"t_warmup", "t_max", "milestones", "step_size", "decay_period", "t_0"}
SEQ = 7  # tokens per sample: thresholds and lengths that are not whole batches


def _text(value, unit):
    if isinstance(value, list):
        return "[" + ", ".join(f"{v}{unit}" for v in value) + "]"
    return f"{value}{unit}"


def _sched(cls, kwargs, unit, batch, scale=1):
    args = ", ".join(f"{k}={_text(v * scale if not isinstance(v, list) else [x * scale for x in v], unit)}"
                     if k in TIMES else f"{k}={v!r}".replace("True", "true") for k, v in kwargs.items())
    return f"param seq_len: int = {SEQ}\nbatch = {batch}\nschedule lr = composer.{cls}({args})\n"


def _composer(cls_name, kwargs, unit, scale=1):
    ns = R._load_composer()
    cls = R._composer_class(cls_name)
    given = {k: ([f"{x * scale}{unit}" for x in v] if isinstance(v, list) else f"{v * scale}{unit}")
             if k in TIMES else v for k, v in kwargs.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scheduler = cls(**given)
    Time, TimeUnit, Timestamp = ns.time.Time, ns.time.TimeUnit, ns.time.Timestamp

    def at(step, samples, tokens):
        state = type("S", (), {})()
        state.timestamp = Timestamp(batch=step, sample=samples, token=tokens)
        state.max_duration, state.dataloader_len = Time(0, TimeUnit.BATCH), None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return float(scheduler(state, 1.0))
    return at


def _walk(prog, steps):
    return [(k, prog.samples_at(k), prog.tokens_at(k)) for k in steps]


def _available():
    try:
        R._load_composer()
    except R.AnchorUnavailable as exc:
        pytest.skip(str(exc))


@pytest.mark.parametrize("batch", ["8", "stages(4, [8, 16], [1000tok, 2500tok])"])
@pytest.mark.parametrize("unit", ["tok", "sp"])
@pytest.mark.parametrize("cls, kwargs", CASES, ids=[c for c, _ in CASES])
def test_composer_presets_in_tokens_and_samples_match_composer_at_every_step(cls, kwargs, unit, batch):
    _available()
    prog = schedlang.compile(_sched(cls, kwargs, unit, batch))
    theirs = _composer(cls, kwargs, unit)
    steps = range(0, prog.step_at(tokens=6000 * (1 if unit == "tok" else SEQ)) + 3)
    expected = [theirs(k, s, t) for k, s, t in _walk(prog, steps)]
    assert prog["lr"].values(steps) == pytest.approx(expected, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("cls, kwargs", CASES[:5] + CASES[8:9], ids=[c for c, _ in CASES[:5] + CASES[8:9]])
def test_composer_token_presets_at_production_sizes(cls, kwargs):
    """A 3072 -> 15360 ramp over 469B tokens (DeepSeek-V3's shape) with lengths of 10**10..10**13
    tokens: every boundary of the schedule and of the batch, +-3 steps, exact to Composer."""
    _available()
    scale = 2_000_000_011
    batch = "stages(3072, [6144, 9216, 12288, 15360], [100e9tok, 200e9tok, 300e9tok, 469e9tok])"
    text = _sched(cls, kwargs, "tok", batch, scale).replace(f"seq_len: int = {SEQ}", "seq_len: int = 4096")
    prog = schedlang.compile(text)
    theirs = _composer(cls, kwargs, "tok", scale)
    marks = [v * scale for k, v in kwargs.items() if k in TIMES and not isinstance(v, list)]
    marks += [x * scale for k, v in kwargs.items() if isinstance(v, list) and k in TIMES for x in v]
    marks += [100e9, 200e9, 300e9, 469e9]
    steps = sorted({k + d for m in marks for k in [prog.step_at(tokens=int(m))] for d in range(-3, 4)
                    if k + d >= 0})
    expected = [theirs(k, s, t) for k, s, t in _walk(prog, steps)]
    assert prog["lr"].values(steps) == pytest.approx(expected, rel=1e-9, abs=1e-15)


@pytest.mark.parametrize("text, message", [
    ("composer.CosineAnnealingWithWarmupScheduler(t_warmup=100ba, t_max=1000tok)", "in steps and in tokens"),
    ("composer.CosineAnnealingWithWarmupScheduler(t_warmup=100tok)", "'t_max' defaults to 1dur"),
    ("composer.ExponentialScheduler(gamma=0.5)", None),
])
def test_composer_times_of_two_units_are_refused_as_composer_refuses_them(text, message):
    source = ("param seq_len: int = 8\nparam steps_per_epoch: int = 10\nparam max_duration: int = 100\n"
              f"batch = 4\nschedule lr = {text}\n")
    if message is None:
        schedlang.compile(source)  # step-counted defaults alone stay on the step clock
        return
    with pytest.raises(SchedlangError, match=message) as info:
        schedlang.compile(source)
    assert info.value.span is not None and info.value.span.line == 5
