"""``olmo_core.*`` presets against OLMo-core 3.0.0's real ``olmo_core/optim/scheduler.py``.

``tools/install_frameworks.sh`` installs the wheel (no dependencies) into
``.frameworks/ai2-olmo-core-3.0.0``; the test loads just the scheduler module, with its
package imports stubbed (``Config`` and ``Registrable`` are dataclass bases there, ``get_rank``
gives 0) and its real ``exceptions`` module.

The trainer (``Trainer._fit_epoch``) counts a batch before training it: ``global_step += 1``
and ``global_train_tokens_seen += tokens in the batch``, then the train module calls
``scheduler.set_lr``, i.e. ``get_lr(initial_lr, global_step or tokens seen, max_steps or
max_tokens)``.  So update ``k`` uses ``get_lr(lr, k + 1, t_max)`` in steps and
``get_lr(lr, T_{k+1}, t_max)`` in tokens, and a token run trains while ``T_k < max_tokens``.
The tests walk that loop, with ``T_{k+1}`` summed here from the batch schedule, and compare
``prog["lr"](k)`` at every step of small runs (warmup, decay and the end crossed, under a
constant batch and a batch ramp), and at production sizes (10**13 tokens) around every
boundary.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import pytest

import schedlang
from schedlang.errors import SchedlangError

from .olmo_core_cases import olmo

# --------------------------------------------------------------------------- the run's batches


@dataclass(frozen=True)
class Batches:
    """``batch = stages(first, later, thresholds in tokens)``, walked as the file says: the batch
    of step k is the one whose threshold (ceil(th / seq_len) samples) is the largest at most
    S_k; T_k counts the tokens before step k."""

    first: int
    later: tuple = ()
    thresholds: tuple = ()  # tokens
    seq_len: int = 4

    def declaration(self) -> str:
        if not self.later:
            return f"param seq_len: int = {self.seq_len}\nbatch = {self.first}\n"
        later = ", ".join(map(str, self.later))
        ths = ", ".join(f"{t}tok" for t in self.thresholds)
        return f"param seq_len: int = {self.seq_len}\nbatch = stages({self.first}, [{later}], [{ths}])\n"

    def stages(self):
        """(first step, samples before it, batch) per stage, in closed form."""
        out = [(0, 0, self.first)]
        for batch, tokens in zip(self.later, self.thresholds):
            need = -(-tokens // self.seq_len)
            step, samples, current = out[-1]
            assert samples < need  # the cases here never skip an entry
            steps = -(-(need - samples) // current)
            out.append((step + steps, samples + steps * current, batch))
        return out

    def tokens_before(self, k: int) -> int:
        first, samples, batch = next(s for s in reversed(self.stages()) if s[0] <= k)
        return (samples + (k - first) * batch) * self.seq_len

    def walk(self, steps: int):
        """T_k by summing each step's batch (the independent walk for small runs)."""
        samples, out = 0, []
        table = [(0, self.first)] + [(-(-t // self.seq_len), b) for b, t in zip(self.later, self.thresholds)]
        for _ in range(steps + 1):
            out.append(samples * self.seq_len)
            samples += max((th, b) for th, b in table if th <= samples)[1]
        return out

    def step_reaching(self, tokens: int) -> int:
        """The first k with T_k >= tokens."""
        lo, hi = 0, 1
        while self.tokens_before(hi) < tokens:
            hi *= 2
        while lo < hi:
            mid = (lo + hi) // 2
            lo, hi = (mid + 1, hi) if self.tokens_before(mid) < tokens else (lo, mid)
        return lo


CONSTANT = Batches(3, seq_len=4)
RAMP = Batches(2, (4, 8), (40, 150), seq_len=4)  # 8, then 16 (from 40 tokens), 32 tokens a step

# --------------------------------------------------------------------------- the cases

#: (class, its keywords as OLMo-core and schedlang both spell them); t_max is per run
CASES = [
    ("ConstantScheduler", {}),
    ("ConstantWithWarmup", {"warmup": 3}),
    ("ConstantWithWarmup", {"warmup_fraction": 0.25, "warmup_min_lr": 1e-4}),
    ("WSD", {"warmup": 2, "decay": 4}),
    ("WSD", {"warmup_fraction": 0.125, "decay_fraction": 0.25, "warmup_min_lr": 1e-5, "decay_min_lr": 1e-5}),
    ("WSD", {"warmup_steps": 3}),
    ("PowerLR", {"warmup": 3, "b": -0.51}),
    ("PowerLR", {"warmup": 2, "decay": 5, "b": -0.3, "decay_min_lr": 1e-6}),
    ("LinearWithWarmup", {"warmup": 3, "alpha_f": 0.2}),
    ("LinearWithWarmup", {"warmup_fraction": 0.1}),
    ("InvSqrtWithWarmup", {"warmup": 3}),
    ("InvSqrtWithWarmup", {"warmup_fraction": 0.2, "alpha_f": 0.0}),
    ("InvSqrtWithWarmup", {"warmup": 0}),
    ("CosWithWarmup", {"warmup": 3}),
    ("CosWithWarmup", {"warmup_fraction": 0.125, "alpha_f": 0.0, "warmup_min_lr": 1e-4}),
    ("CosWithWarmup", {"warmup": 0}),
    ("HalfCosWithWarmup", {"warmup": 4, "alpha_f": 0.05}),
    ("CosWithWarmupAndLinearDecay", {"warmup": 3}),
    ("CosWithWarmupAndLinearDecay", {"warmup": 2, "decay": 5, "decay_min_lr": 1e-5}),
    ("ExponentialScheduler", {"lr_min": 1e-6}),
    ("WSDS", {"period_lengths": [10, 6, 8], "warmup": 2, "decay_fraction": 0.25}),
    ("WSDS", {"period_lengths": [12, 9], "period_lr_multipliers": [1.0, 0.5], "warmup_fraction": 0.25,
              "decay": 3, "decay_min_lr": 1e-5}),
]

LR = 3e-3


def olmo_scheduler(cls: str, kwargs: dict):
    module = olmo()
    options = dict(kwargs)
    if cls in ("WSD", "PowerLR", "CosWithWarmupAndLinearDecay") and "decay" in options:
        options["decay_fraction"] = None  # OLMo-core refuses decay next to the default fraction
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return getattr(module, cls)(**options)


def _literal(value) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(map(_literal, value)) + "]"
    return repr(value)


def call(cls: str, kwargs: dict, units: str, t_max: int | None, lr=LR) -> str:
    words = [f"lr={lr!r}", f'units="{units}"'] + [f"{k}={_literal(v)}" for k, v in kwargs.items()]
    if t_max is not None and cls != "WSDS":
        words.append(f"t_max={t_max}")
    return f"olmo_core.{cls}({', '.join(words)})"


def close(ours: float, theirs: float, where: str) -> None:
    theirs = float(theirs)
    assert math.isclose(ours, theirs, rel_tol=1e-12, abs_tol=1e-18), \
        f"{where}: ours {ours!r}, OLMo-core {theirs!r}"


def _case_id(case):
    cls, kwargs = case
    return cls + "-" + "-".join(f"{k}={v}" for k, v in kwargs.items())


@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
def test_steps_every_step(case):
    """units="steps": update k reads global_step = k + 1; the run is t_max updates."""
    cls, kwargs = case
    scheduler = olmo_scheduler(cls, kwargs)
    t_max = 24 if cls != "WSDS" else sum(kwargs["period_lengths"])
    prog = schedlang.compile(f"schedule lr = {call(cls, kwargs, 'steps', t_max)}\n")
    lr = prog["lr"]
    for k in range(t_max):
        close(lr(k), scheduler.get_lr(LR, k + 1, t_max), f"{cls} step {k}")
    end = scheduler.get_lr(LR, t_max, t_max)
    for k in range(t_max, t_max + 3):  # after OLMo-core's run: its last value held
        close(lr(k), end, f"{cls} after the run, step {k}")
    # the same steps from the generated torch code (what a training loop runs)
    values = lr.torch(list(range(t_max + 2))).tolist()
    for k, value in enumerate(values):
        close(value, lr(k), f"{cls} torch step {k}")


@pytest.mark.parametrize("batches", [CONSTANT, RAMP], ids=["constant-batch", "batch-ramp"])
@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
def test_tokens_every_step(case, batches):
    """units="tokens": update k reads T_{k+1}; the run trains while T_k < t_max."""
    cls, kwargs = case
    scheduler = olmo_scheduler(cls, kwargs)
    t_max = 203 if cls != "WSDS" else sum(kwargs["period_lengths"]) * 8 + 1
    if cls == "WSDS":  # WSDS's lengths count what units says: scale them to tokens
        kwargs = {**kwargs, "period_lengths": [n * 8 for n in kwargs["period_lengths"]]}
        kwargs = {k: v * 8 if k in ("warmup", "decay") else v for k, v in kwargs.items()}
        scheduler = olmo_scheduler(cls, kwargs)
    else:
        kwargs = {k: v * 8 if k in ("warmup", "warmup_steps", "decay") else v for k, v in kwargs.items()}
        scheduler = olmo_scheduler(cls, kwargs)
    prog = schedlang.compile(batches.declaration() + f"schedule lr = {call(cls, kwargs, 'tokens', t_max)}\n")
    lr = prog["lr"]
    seen = batches.walk(200)
    k = 0
    while seen[k] < t_max:  # OLMo-core's run: stops at the first T_k >= max_tokens
        assert prog.tokens_at(k + 1) == seen[k + 1]
        close(lr(k), scheduler.get_lr(LR, seen[k + 1], t_max), f"{cls} step {k}, T_(k+1) = {seen[k + 1]}")
        k += 1
    assert k > 8
    end = scheduler.get_lr(LR, t_max, t_max)
    for after in range(k, k + 3):
        close(lr(after), end, f"{cls} after the run, step {after}")
    values = lr.torch(list(range(k + 2))).tolist()
    for step, value in enumerate(values):
        close(value, lr(step), f"{cls} torch step {step}")


PRODUCTION = Batches(1024, (2048, 4096), (10**12, 5 * 10**12 + 7), seq_len=4096)
BIG = [
    ("WSD", {"warmup": 2000 * 1024 * 4096, "decay_fraction": 0.1}),
    ("CosWithWarmup", {"warmup_fraction": 0.01, "alpha_f": 0.1}),
    ("LinearWithWarmup", {"warmup": 10**11}),
    ("CosWithWarmupAndLinearDecay", {"warmup": 10**11, "decay": 10**12 + 3}),
    ("InvSqrtWithWarmup", {"warmup": 10**11}),
]


@pytest.mark.parametrize("case", BIG, ids=[_case_id(c) for c in BIG])
def test_tokens_production_sizes(case):
    """10**13 tokens: around the warmup's end, the decay's start, every batch switch and the end."""
    cls, kwargs = case
    scheduler = olmo_scheduler(cls, kwargs)
    t_max = 10**13
    source = f"schedule lr = {call(cls, kwargs, 'tokens', t_max)}\n"
    prog = schedlang.compile(PRODUCTION.declaration() + source)
    lr = prog["lr"]
    warm = kwargs.get("warmup") or round(t_max * kwargs["warmup_fraction"])
    decay = kwargs.get("decay") or round(t_max * kwargs.get("decay_fraction", 0.1))
    marks = [warm, t_max - decay, t_max, *PRODUCTION.thresholds]
    steps = set()
    for tokens in marks:
        k = PRODUCTION.step_reaching(tokens)
        steps |= {k + d for d in range(-3, 3) if k + d >= 0}
    last = PRODUCTION.step_reaching(t_max)  # the first step OLMo-core does not train
    steps = sorted(s for s in steps if s < last)
    for k in steps:
        assert prog.tokens_at(k + 1) == PRODUCTION.tokens_before(k + 1)
        close(lr(k), scheduler.get_lr(LR, PRODUCTION.tokens_before(k + 1), t_max), f"{cls} step {k}")
    torch_values = lr.torch(steps).tolist()
    for k, value in zip(steps, torch_values):
        assert math.isclose(value, lr(k), rel_tol=1e-9, abs_tol=1e-15), f"{cls} torch step {k}"
    close(lr(last + 5), scheduler.get_lr(LR, t_max, t_max), f"{cls} after the run")


def test_steps_production_sizes():
    t_max = 10**9
    kwargs = {"warmup": 2000, "decay_fraction": 0.2}
    scheduler = olmo_scheduler("WSD", kwargs)
    prog = schedlang.compile(f"schedule lr = {call('WSD', kwargs, 'steps', t_max)}\n")
    for k in (0, 1, 1998, 1999, 2000, 8 * 10**8 - 2, 8 * 10**8 - 1, 8 * 10**8, t_max - 2, t_max - 1):
        close(prog["lr"](k), scheduler.get_lr(LR, k + 1, t_max), f"step {k}")


def test_warmup_fraction_rounds_half_to_even():
    """round(t_max * fraction) is Python's: 2.5 -> 2, 3.5 -> 4, on the float product."""
    module = olmo()
    for t_max, fraction in ((10, 0.25), (14, 0.25), (30, 0.05), (10**13 + 1, 0.35)):
        ours = schedlang.compile(
            f"schedule lr = olmo_core.ConstantWithWarmup(warmup_fraction={fraction}, t_max={t_max})\n")
        warm = round(t_max * fraction)
        scheduler = module.ConstantWithWarmup(warmup_fraction=fraction)
        for k in (warm - 2, warm - 1, warm, warm + 1):
            if 0 <= k < t_max:
                close(ours["lr"](k), scheduler.get_lr(1.0, k + 1, t_max), f"t_max {t_max} step {k}")


@pytest.mark.parametrize("source, message", [
    ("olmo_core.CosWithWarmup(warmup=10)", "reads t_max"),
    ("olmo_core.WSD(warmup=1, warmup_fraction=0.1, t_max=100)", "not both"),
    ("olmo_core.ConstantWithWarmup(t_max=100)", "give 'warmup' or 'warmup_fraction'"),
    ("olmo_core.WSD(warmup=2, decay=4, decay_fraction=0.1, t_max=100)", "not both"),
    ("olmo_core.WSD(warmup=2, decay=0, t_max=100)", "divides by it"),
    ("olmo_core.PowerLR(warmup=0, t_max=100)", "divides by it"),
    ("olmo_core.PowerLR(warmup=3, b=0.5, t_max=100)", "must be negative"),
    ("olmo_core.CosWithWarmup(warmup_fraction=1.5, t_max=100)", "between 0 and 1"),
    ("olmo_core.CosWithWarmup(warmup=5, t_max=100, units=\"epochs\")", "not a valid units"),
    ("olmo_core.WSD(lr=1e-3, warmup=5, t_max=100, warmup_min_lr=1e-2)", "OLMo-core asserts it"),
    ("olmo_core.WSDS(period_lengths=[10, 5], warmup=8, decay=3)", "exceeds"),
])
def test_refusals(source, message):
    with pytest.raises(SchedlangError) as info:
        schedlang.compile(f"schedule lr = {source}\n")
    assert message in str(info.value)
    assert ":1:" in str(info.value)


# ------------------------------------------------- schedulers of schedulers (olmo_core_composite)

SEQUENCE = ("olmo_core.SequentialScheduler(lr={lr}, units=\"tokens\", t_max={t_max}, schedulers=["
            "olmo_core.ConstantWithWarmup(warmup=80), olmo_core.CosWithWarmup(warmup_fraction=0.25, "
            "alpha_f=0.1)], schedulers_max=[240], override_decay=olmo_core.OverrideDecay(start=900, "
            "duration=300, shape=\"cosine\", end_lr_fraction=0.05))")


@pytest.mark.parametrize("batches", [CONSTANT, RAMP], ids=["constant-batch", "batch-ramp"])
def test_sequential_scheduler_in_tokens_every_step(batches):
    """A SequentialScheduler with an override on the token clock: the second child's warmup is
    round(min(T - 240, ...) * 0.25) of what the sequence leaves it (OLMo-core passes t_max on)."""
    module = olmo()
    t_max = 1601
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scheduler = module.SequentialScheduler(
            schedulers=[module.ConstantWithWarmup(warmup=80),
                        module.CosWithWarmup(warmup_fraction=0.25, alpha_f=0.1)],
            schedulers_max=[240], override_decay=module.OverrideDecay(
                start=900, duration=300, shape=module.ComposableSchedulerStageType.cosine,
                end_lr_fraction=0.05))
        source = batches.declaration() + "schedule lr = " + SEQUENCE.format(lr=LR, t_max=t_max)
        prog = schedlang.compile(source)
        lr, seen, k = prog["lr"], batches.walk(400), 0
        while seen[k] < t_max:
            if seen[k + 1] > t_max:  # OLMo-core asserts current <= t_max: its last step raises
                with pytest.raises(AssertionError):
                    scheduler.get_lr(LR, seen[k + 1], t_max)
                break
            close(lr(k), scheduler.get_lr(LR, seen[k + 1], t_max), f"step {k}, T_(k+1) = {seen[k + 1]}")
            k += 1
    assert k > 30


@pytest.mark.parametrize("source, message", [
    ("olmo_core.SequentialScheduler(t_max=100, schedulers=[olmo_core.ConstantWithWarmup(warmup=5), "
     "constant(1)], schedulers_max=[10])", "must be an olmo_core scheduler"),
    ("olmo_core.SequentialScheduler(t_max=100, schedulers=[olmo_core.ConstantWithWarmup(warmup=5), "
     "olmo_core.CosWithWarmup(warmup=0)], schedulers_max=[10, 20, 30])", "every scheduler but the last"),
    ("olmo_core.SequentialScheduler(t_max=100, schedulers=[olmo_core.ConstantWithWarmup(warmup=5, t_max=10), "
     "olmo_core.CosWithWarmup(warmup=0)], schedulers_max=[10])", "no t_max field of its own"),
    ("olmo_core.SequentialScheduler(t_max=10, schedulers=[olmo_core.ConstantWithWarmup(warmup=5), "
     "olmo_core.CosWithWarmup(warmup=0)], schedulers_max=[10])", "no room before t_max=10"),
    ("olmo_core.SequentialScheduler(schedulers=[olmo_core.ConstantWithWarmup(warmup=5), "
     "olmo_core.CosWithWarmup(warmup=0)], schedulers_max=[10])", "reads t_max"),
    ("olmo_core.ComposableScheduler(stages=[olmo_core.ComposableSchedulerStage(duration=10)])",
     "exactly one of 'end_lr' or 'end_lr_fraction'"),
    ("olmo_core.ComposableScheduler(stages=[olmo_core.ComposableSchedulerStage(duration=0, end_lr=1)])",
     "whole number >= 1"),
    ("olmo_core.ComposableScheduler(stages=[olmo_core.OverrideDecay(start=1, duration=10, end_lr=0)])",
     "must be an olmo_core.ComposableSchedulerStage"),
    ("olmo_core.ComposableScheduler(stages=[olmo_core.ComposableSchedulerStage(duration=9, end_lr=1)], "
     "override_decay=olmo_core.ComposableSchedulerStage(duration=9, end_lr=1))",
     "'override_decay' must be an olmo_core.OverrideDecay"),
    ("olmo_core.OverrideDecay(start=1, duration=10, end_lr=0, end_lr_fraction=0.1)", "not both"),
    # a scheduler that reads t_max needs one unless a SequentialScheduler passes it
    ("olmo_core.CosWithWarmup(warmup=0) >> constant(1)", "make it a child of olmo_core.SequentialScheduler"),
])
def test_composite_refusals(source, message):
    with pytest.raises(SchedlangError) as info:
        schedlang.compile(f"schedule lr = {source}\n")
    assert message in str(info.value)
    assert ":1:" in str(info.value)
