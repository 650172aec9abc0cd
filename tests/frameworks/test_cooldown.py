"""``cooldown(shape, n, to)`` against each framework's real warmup-stable-decay code, at every
step of runs that pass every boundary (warmup end, decay start, decay end, after), SPEC §14.

Each test writes a trunk that does not decay, ``>>`` a cooldown, and compares it with the
framework's own WSD schedule decaying the same way:

* Megatron's ``OptimizerParamScheduler`` with ``lr_decay_style="WSD"`` and each
  ``lr_wsd_decay_style``; in steps, and in samples and tokens under a batch ramp that
  changes batch inside the decay (Megatron-LM's loop steps the scheduler by the batch, so its
  counter is the samples consumed before the step: the language's clock rule, SPEC §12).
* HF ``get_wsd_schedule`` (``warmup_stable_decay``) with each ``decay_type`` and a floor.
* OLMo-core 3.0.0's ``WSD`` (a linear tail), in steps and in tokens.
* torchtitan 0.3.0's ``lr_scheduler`` with each ``decay_type``.
"""

from __future__ import annotations

import math

import pytest
from anchors.reference import hf_values

import schedlang

from .olmo_core_cases import build as olmo_build
from .real import real
from .test_megatron_batch import Loop, ramp_calculator
from .torchtitan_cases import titan_values


def close(ours: list[float], theirs: list[float], what: str, rtol: float = 1e-12) -> None:
    assert len(ours) == len(theirs)
    for k, (a, b) in enumerate(zip(ours, theirs)):
        if not math.isclose(a, b, rel_tol=rtol, abs_tol=1e-18):
            pytest.fail(f"{what}: step {k}: schedlang {a!r}, framework {b!r}")


# -- Megatron -------------------------------------------------------------------------------

MEGATRON_SHAPES = {"exponential": "megatron_exponential", "linear": "linear", "cosine": "cosine",
                   "minus_sqrt": "sqrt"}
PEAK, FLOOR = 3e-4, 3e-5


def megatron_values(style: str, increments, warmup, decay, wsd) -> list[float]:
    """The lr megatron-core's scheduler sets before each step, stepped as Megatron-LM steps it."""
    module = real("megatron.core.optimizer_param_scheduler")
    from types import SimpleNamespace

    optimizer = SimpleNamespace(param_groups=[{}])
    scheduler = module.OptimizerParamScheduler(
        optimizer, init_lr=0.0, max_lr=PEAK, min_lr=FLOOR, lr_warmup_steps=warmup, lr_decay_steps=decay,
        lr_decay_style="WSD", start_wd=0.0, end_wd=0.0, wd_incr_steps=1, wd_incr_style="constant",
        wsd_decay_steps=wsd, lr_wsd_decay_style=style)
    values = []
    for increment in increments:
        values.append(float(optimizer.param_groups[0]["lr"]))
        scheduler.step(increment)
    return values


@pytest.mark.parametrize("style", MEGATRON_SHAPES)
def test_megatron_wsd_decay_styles_in_steps(style):
    """A branch of Megatron's constant trunk: equal to its WSD run (decay 80 ending at 300)."""
    trunk = (f"megatron.OptimizerParamScheduler(max_lr={PEAK}, min_lr={FLOOR}, lr_warmup_steps=20, "
             f'lr_decay_steps=300, lr_decay_style="constant")')
    lr = schedlang.compile(f"schedule lr = {trunk} for 220 >> "
                           f"cooldown({MEGATRON_SHAPES[style]}, 80, {FLOOR})")["lr"]
    assert lr.duration == 300
    close(lr.values(range(400)), megatron_values(style, [1] * 400, 20, 300, 80), style)


RAMP = "megatron.rampup_batch_size(2, 2, 200, global_batch_size=8)"  # 2, 4, 6, 8 over 200 samples


@pytest.mark.parametrize("unit, per_sample", [("sp", 1), ("tok", 4)])
@pytest.mark.parametrize("style", MEGATRON_SHAPES)
def test_megatron_wsd_on_the_sample_and_token_clock_under_a_batch_ramp(style, unit, per_sample):
    """Megatron counts samples (``--lr-wsd-decay-samples``); the batch grows inside the decay
    (it starts at 60 samples, ramps to 8 at 200, ends at 260)."""
    def n(samples):
        return f"{samples * per_sample}{unit}"

    source = (f"param seq_len: int = 4\nbatch = {RAMP}\n"
              f"schedule lr = linear(0, {PEAK}, {n(20)}) >> constant({PEAK}, {n(40)}) >> "
              f"cooldown({MEGATRON_SHAPES[style]}, {n(200)}, {FLOOR})\n")
    prog = schedlang.compile(source)
    loop = Loop(ramp_calculator(2, 2, 200, 8))
    increments, consumed = [], []
    while loop.iteration < 120:  # about 900 samples: past the ramp and the decay
        before, batch = loop.step()
        consumed.append(before)
        increments.append(batch)
    assert [prog.samples_at(k) for k in range(120)] == consumed
    assert consumed[0] < 60 < 200 < 260 < consumed[-1]
    close(prog["lr"].values(range(120)), megatron_values(style, increments, 20, 260, 200),
          f"{style} in {unit}")


# -- HF --------------------------------------------------------------------------------------

HF_SHAPES = {"linear": "linear", "cosine": "cosine", "1-sqrt": "sqrt"}


@pytest.mark.parametrize("ratio", [0.0, 0.1])
@pytest.mark.parametrize("decay_type", HF_SHAPES)
def test_hf_warmup_stable_decay(decay_type, ratio):
    lr, w, s, d = 3e-4, 40, 150, 120
    floor = lr * ratio
    source = (f"schedule lr = warmup(linear, {w}, start={floor!r}) >> constant({lr}, {s}) >> "
              f"cooldown({HF_SHAPES[decay_type]}, {d}, {floor!r})")
    ours = schedlang.compile(source)["lr"].values(range(400))
    theirs = hf_values("warmup_stable_decay", range(400), lr, w, None, num_stable_steps=s,
                       num_decay_steps=d, decay_type=decay_type, min_lr_ratio=ratio)
    close(ours, theirs, decay_type)


# -- OLMo-core -------------------------------------------------------------------------------


def test_olmo_core_wsd_in_steps():
    """Update ``k`` reads ``get_lr(lr, k + 1, T)``: the tail starts at the update whose counter
    is ``T - D``, one before step ``T - D``, and reaches ``decay_min_lr`` at the last update."""
    lr, t_max, warm, dec, floor = 8e-4, 200, 20, 50, 1e-5
    trunk = f"olmo_core.ConstantWithWarmup(lr={lr}, warmup={warm}, t_max={t_max})"
    ours = schedlang.compile(f"schedule lr = {trunk} for {t_max - dec - 1} >> "
                             f"cooldown(linear, {dec}, {floor})")["lr"]
    assert ours.duration == t_max - 1  # final from the last update, k = T - 1: the floor
    wsd = olmo_build("WSD", {"warmup": warm, "decay": dec, "decay_fraction": None, "decay_min_lr": floor})
    close(ours.values(range(t_max)), [wsd.get_lr(lr, k + 1, t_max) for k in range(t_max)], "WSD")


def test_olmo_core_wsd_in_tokens_under_a_batch_ramp():
    """``units="tokens"``: update ``k`` reads the tokens through it, ``T_(k+1)``; the ramp (8,
    16, 32 tokens a step) ends before the tail, so the cooldown, which reads the tokens before
    its step, starts one batch (32 tokens) before ``T - D``.  ``T`` is a step's token count
    (152 + 32 * 27), so the last update reads ``T`` exactly and OLMo-core's value there is its
    floor (past it OLMo-core's tail goes below it)."""
    lr, t_max, warm, dec, floor, batch = 8e-4, 1016, 64, 320, 1e-5, 32
    header = "param seq_len: int = 4\nbatch = stages(2, [4, 8], [40tok, 150tok])\n"
    trunk = f'olmo_core.ConstantWithWarmup(lr={lr}, units="tokens", warmup={warm}, t_max={t_max})'
    prog = schedlang.compile(header + f"schedule lr = {trunk} for {t_max - dec - batch}tok >> "
                             f"cooldown(linear, {dec}tok, {floor})\n")
    wsd = olmo_build("WSD", {"warmup": warm, "decay": dec, "decay_fraction": None, "decay_min_lr": floor})
    steps = [k for k in range(200) if prog.tokens_at(k) < t_max]  # OLMo-core's run
    assert prog.tokens_at(steps[-1] + 1) == t_max and prog.batch_at(steps[0]) < batch
    close(prog["lr"].values(steps), [wsd.get_lr(lr, prog.tokens_at(k + 1), t_max) for k in steps],
          "WSD in tokens")


# -- torchtitan ------------------------------------------------------------------------------


@pytest.mark.parametrize("decay_type", ["linear", "sqrt", "cosine"])
def test_torchtitan_decay_types(decay_type):
    """A branch of torchtitan's trunk without decay (``decay_ratio=0``) at ``T - D``: equal to its
    run with ``decay_ratio = D / T`` through ``t = T``, where both reach ``min_lr_factor``."""
    lr, total, warm, m = 8e-4, 200, 20, 0.1
    trunk = f"torchtitan.lr_scheduler(lr={lr}, training_steps={total}, warmup_steps={warm}, decay_ratio=0)"
    ours = schedlang.compile(f"schedule lr = {trunk} for {total - 70} >> "
                             f"cooldown({decay_type}, 70, {lr * m!r})")["lr"]
    config = {"warmup_steps": warm, "decay_ratio": 70 / total, "decay_type": decay_type, "min_lr_factor": m}
    close(ours.values(range(total + 1)), titan_values(config, total, lr, range(total + 1)), decay_type)
