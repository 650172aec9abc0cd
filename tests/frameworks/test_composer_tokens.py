"""Composer's time units on the token and sample clocks (issue 27), against mosaicml 0.32.1's
own scheduler module: a scheduler given ``"...tok"`` / ``"...sp"`` times reads
``state.timestamp.token`` / ``.sample``, the tokens (samples) consumed before the batch, and
``composer.*`` presets given ``tok`` / ``sp`` lengths in a file with a batch schedule are the
same schedule at every step, under a constant batch and under a ramp, and at 10**13 tokens
around every boundary.  (The Trainer applies the value one batch late; like the step-counted
presets, the preset is the scheduler's own function, SPEC §3.)"""

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


# --------------------------------------------------------------------------- composer-yaml import

def import_text(text, fmt, filename, style="presets", options=None):
    """``schedlang import`` of ``text`` (a composer-yaml file) as the CLI does it."""
    from schedlang.formats import by_name

    assert fmt == "composer-yaml"
    return by_name(fmt).reader(text, filename, style, **({"options": options} if options else {}))


def _yaml(cls, kwargs, unit, extra=""):
    lines = [f"scheduler:\n  name: {cls}"]
    for k, v in kwargs.items():
        if k in TIMES:
            v = [f"{x}{unit}" for x in v] if isinstance(v, list) else f"{v}{unit}"
        lines.append(f"  {k}: {v}")
    return "\n".join(lines) + "\noptimizer:\n  lr: 6.0e-4\n" + extra


@pytest.mark.parametrize("lower", [False, True], ids=["presets", "lower"])
@pytest.mark.parametrize("unit", ["tok", "sp"])
@pytest.mark.parametrize("cls, kwargs", CASES, ids=[c for c, _ in CASES])
def test_imported_yaml_in_tokens_and_samples_is_composer_at_every_step(cls, kwargs, unit, lower):
    """llm-foundry YAML with times in tokens (samples): the import declares the run's batch
    (global_train_batch_size, max_seq_len) and is Composer's scheduler at T_k (S_k) of every step."""
    _available()
    text = _yaml(cls, kwargs, unit, "global_train_batch_size: 3\nvariables:\n  max_seq_len: 7\n")
    imported = import_text(text, "composer-yaml", "run.yaml", style="core" if lower else "presets")
    assert "batch = 3" in imported and ("param seq_len: int = 7" in imported) == (unit == "tok")
    prog = schedlang.compile(imported)
    theirs = _composer(cls, kwargs, unit)
    steps = range(0, 6000 // 3 + 5)
    expected = [6e-4 * theirs(k, 3 * k, 21 * k) for k in steps]
    assert prog["lr"].values(steps) == pytest.approx(expected, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("fraction", ["0.3", "0.7", "0.01"])
def test_imported_dur_of_a_token_run_is_composer_s_float_conversion(fraction):
    _available()
    total = 1_000_000_007
    text = (f"max_duration: {total}tok\nmax_seq_len: 4096\nglobal_train_batch_size: 8\n"
            f"scheduler:\n  name: cosine_with_warmup\n  t_warmup: {fraction}dur\n  alpha_f: 0.1\n")
    imported = import_text(text, "composer-yaml", "run.yaml")
    warmup = int(float(fraction) * total)
    assert f"t_warmup={warmup}tok" in imported and f"t_max={total}tok" in imported
    prog = schedlang.compile(imported)
    theirs = _composer("CosineAnnealingWithWarmupScheduler", {"t_warmup": warmup, "t_max": total,
                                                              "alpha_f": 0.1}, "tok")
    at = [prog.step_at(tokens=warmup) + d for d in (-2, -1, 0, 1, 2)] + [prog.step_at(tokens=total) + 1]
    assert prog["lr"].values(at) == pytest.approx([theirs(k, 8 * k, 8 * 4096 * k) for k in at], rel=1e-12)


HEAD = "scheduler:\n  name: cosine_with_warmup\n"


@pytest.mark.parametrize("text, message", [
    (HEAD + "  t_warmup: 100ba\n  t_max: 1000tok\nglobal_train_batch_size: 4\n"
     "max_seq_len: 8\n", "'t_warmup' counts batches, but 't_max' counts tokens"),
    (HEAD + "  t_warmup: 100tok\nglobal_train_batch_size: 4\nmax_seq_len: 8\n",
     "its default, 1dur"),
    (HEAD + "  t_warmup: 100tok\n  t_max: 1000tok\nmax_seq_len: 8\n",
     "need the run's global_train_batch_size"),
    (HEAD + "  t_warmup: 100tok\n  t_max: 1000tok\nglobal_train_batch_size: 4\n",
     "need the run's max_seq_len"),
    (HEAD + "  t_warmup: 100sp\n  t_max: 1000tok\nglobal_train_batch_size: 4\n"
     "max_seq_len: 8\n", "'t_max' counts tokens, but 't_warmup' counts samples"),
])
def test_yaml_times_of_two_units_or_no_batch_are_refused_with_the_reason(text, message):
    with pytest.raises(SchedlangError, match=message) as info:
        import_text(text, "composer-yaml", "run.yaml")
    assert info.value.span is not None or "need the run's" in message


def test_the_batch_options_give_what_the_file_leaves_out():
    text = "scheduler:\n  name: cosine_with_warmup\n  t_warmup: 100tok\n  t_max: 1000tok\n"
    imported = import_text(text, "composer-yaml", "run.yaml",
                           options={"global_train_batch_size": "4", "max_seq_len": "8"})
    assert "batch = 4" in imported and "param seq_len: int = 8" in imported
    with pytest.raises(SchedlangError, match="batch options are for times in samples or tokens"):
        import_text("scheduler:\n  name: cosine_with_warmup\n  t_warmup: 100ba\n  t_max: 1000ba\n",
                    "composer-yaml", "run.yaml", options={"global_train_batch_size": "4"})


@pytest.mark.parametrize("unit", ["tok", "sp"])
def test_export_of_token_lengths_writes_the_batch_and_reads_back_equal(unit):
    """``export --format composer-yaml`` of a preset given tokens (samples): the times as Composer
    strings and the batch keys the import needs; the export proves the round trip itself, and the
    YAML it writes is Composer's schedule at every step."""
    _available()
    from schedlang.formats import by_name

    cls, kwargs = CASES[0]
    text = _sched(cls, kwargs, unit, "8")
    yaml = by_name("composer-yaml").writer(text, "run.sched", read=by_name("composer-yaml").reader)
    assert "global_train_batch_size: 8" in yaml and ("max_seq_len: 7" in yaml) == (unit == "tok")
    assert f"t_warmup: 700{unit}" in yaml
    back = schedlang.compile(import_text(yaml, "composer-yaml", "run.yaml"))
    theirs = _composer(cls, kwargs, unit)
    steps = range(0, 800)
    assert back["lr"].values(steps) == pytest.approx([theirs(k, 8 * k, 56 * k) for k in steps], rel=1e-12)


def test_a_batch_ramp_has_no_composer_yaml_export():
    from schedlang.formats import by_name

    text = _sched(*CASES[0], "tok", "stages(4, [8], [1000tok])")
    with pytest.raises(SchedlangError, match="Composer has no batch ramp") as info:
        by_name("composer-yaml").writer(text, "run.sched", read=by_name("composer-yaml").reader)
    assert info.value.span.line == 2
