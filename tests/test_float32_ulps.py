"""Every built-in and every preset in float32, in ulps of the correctly rounded exact value.

One row per case of ``test_stdlib_values.CASES`` (every built-in) and of
``anchors/preset_cases.CASES`` (every preset): its source, a grid of steps (the first
steps, three steps either side of every breakpoint, the last steps of a finite
schedule, and far out: 1000, 12345, 2**24 + 1, 2**31 - 1, and 2**40 and 10**15 + 3
where the steps are int64) and the bound.  Three float32 paths:

* ``torch``: ``Schedule.torch(steps, dtype=torch.float32)``, computed in float64 and
  rounded once: within 1 ulp;
* ``float32 compute``: the generated torch function with ``_dtype=_compute=float32``,
  the arithmetic of the Cerebras-shaped class;
* ``jax``: ``Schedule.jax`` without x64 (int32 steps, float32 values).

The last two are within ``4 + kappa`` ulps, ``kappa`` the largest ``|x log b|`` of a
decay ``b ** x`` (or ``exp(x)``) at that step: the float32 exponent is rounded, which
costs about one ulp of the value per unit of ``|x log b|`` (docs/torch.md, "float32").
The rows of ``WIDER`` have a documented larger bound, with the reason.  The exact value
comes from ``fuzzing.exact`` (exact rationals, mpmath at 50 digits).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pytest

pytest.importorskip("torch")
pytest.importorskip("jax")

import mpmath  # noqa: E402
import numpy as np  # noqa: E402
import sympy as sp  # noqa: E402
import torch  # noqa: E402
from anchors.preset_cases import CASES as PRESET_CASES  # noqa: E402
from fuzzing.exact import evaluate  # noqa: E402
from jax_cases import INT32_MAX, x64  # noqa: E402
from test_stdlib_values import CASES as BUILTIN_CASES  # noqa: E402

import schedlang  # noqa: E402
from schedlang.core.algebra import t  # noqa: E402
from schedlang.core.special import as_power  # noqa: E402
from schedlang.runtime.arrays import function  # noqa: E402

FAR = [1000, 12345, 2**24 + 1, INT32_MAX]
INT64_FAR = [2**40, 10**15 + 3]

#: source fragment -> (ulps for the float32 paths, why 4 + kappa is not reached).
WIDER = {
    "mult=": (8, "a restart cycle of length T0 * m**i: the cycle's length is a float power, so "
                 "its cosine argument is not reduced in integers"),
    "T_mult=2": (8, "the same, Cerebras' CosineAnnealingWarmRestarts with T_mult"),
    "k_decay=": (128, "timm's k_decay: cos(pi * (t/T)**k) has an irrational argument near pi at the "
                      "end of a cycle, whose rounding is amplified by the small value there"),
    "CosineDecayWD": (6, "a tail to 0: v * sin(y)**2 doubles sin's float32 error"),
    'lr_decay_style="WSD"': (6, "a tail to min_lr: cos(y)**2 doubles cos's float32 error"),
    'wd_incr_style="cosine"': (6, "a cosine ramp from 0: sin(y)**2 doubles sin's float32 error"),
    'decay_fn="power"': (40, "timm's WSD power decay: (1 - t/T)**p of a non-integer p rounds its base"),
    'stable_fn="power"': (40, "timm's power stage: (1 + t/T)**-p rounds its base"),
    "olmo_core.LinearWithWarmup(t_max=60": (8, "OLMo-core's linear stage, lr - (lr - eta_min) * x, "
                                               "ends at a tenth of where it starts: the two rounded "
                                               "constants cancel near the end, 8x their ulp"),
    "cycle=true": (28, "keras' cyclic PolynomialDecay: the cycle length ceil(t/n)*n as a float"),
}


@dataclass(frozen=True)
class Row:
    source: str
    params: dict

    @property
    def wider(self):
        for fragment, (ulps, why) in WIDER.items():
            if fragment in self.source:
                return ulps, why
        return None


ROWS = [Row(source, {}) for source, _, _ in BUILTIN_CASES] + \
       [Row(case.source, case.params) for case in PRESET_CASES]


def grid(schedule) -> list[int]:
    steps = {0, 1, 2, 3, *FAR, *INT64_FAR}
    for b in schedule.breakpoints:
        steps |= {int(b) + d for d in range(-3, 3)}
    if isinstance(schedule.duration, int):
        steps |= set(range(schedule.duration - 6, schedule.duration + 3))
    return sorted(s for s in steps if s >= 0)


def _exact(expr, step):
    value = evaluate(expr, step)[0]
    if hasattr(value, "numerator"):
        return mpmath.mpf(value.numerator) / value.denominator
    return mpmath.mpf(value)


def _decay_kappa(expr, step) -> float:
    """The largest ``|x log b|`` of a decay ``b ** x`` / ``exp(x)`` in ``expr`` at ``step``."""
    kappa = 0.0
    for node in expr.atoms(sp.exp, sp.Pow):
        if isinstance(node, sp.exp):
            power = as_power(node)
            exponent = node.args[0] if power is None else power[1] * sp.log(power[0])
        elif t in node.exp.free_symbols:
            exponent = node.exp * sp.log(node.base)
        else:
            continue
        try:
            kappa = max(kappa, abs(float(_exact(exponent, step))))
        except Exception:  # noqa: BLE001 - a branch's exponent that is not real at this step
            continue
    return kappa


def _ulps(got: float, exact) -> float:
    if not mpmath.isfinite(exact) or abs(exact) > 3.4e38:
        return 0.0
    spacing = float(np.spacing(np.float32(abs(float(exact)))))
    return float(abs(mpmath.mpf(got) - exact)) / spacing


def _label(row: Row) -> str:
    return row.source.split("schedule lr = ")[-1][:70]


@pytest.mark.parametrize("row", ROWS, ids=_label)
def test_float32_within_bound(row):
    schedule = schedlang.compile(row.source, params=row.params)["lr"]
    steps = grid(schedule)
    exact = {s: _exact(schedule.expr, s) for s in steps}
    wider = row.wider
    tensor = torch.tensor(steps, dtype=torch.int64)
    paths = {
        "torch": (steps, schedule.torch(tensor, dtype=torch.float32).tolist()),
        "float32 compute": (steps, function(schedule, "torch")(tensor, _dtype=torch.float32,
                                                          _compute=torch.float32).tolist()),
    }
    int32 = [s for s in steps if s <= INT32_MAX]
    with x64(False):
        paths["jax"] = (int32, np.asarray(schedule.jax(int32)).tolist())
    failures = []
    for path, (at, values) in paths.items():
        for step, value in zip(at, values):
            if path == "torch":
                bound = 1.0
            elif wider is not None:
                bound = wider[0]
            else:
                bound = 4 + _decay_kappa(schedule.expr, step)
            error = _ulps(value, exact[step])
            if not error <= bound or math.isnan(value) != mpmath.isnan(exact[step]):
                failures.append(f"{path} at step {step}: {value!r} is {error:.1f} ulps from "
                                f"{float(exact[step])!r} (bound {bound:.1f})")
    assert not failures, "\n".join(failures)


def test_every_wider_bound_is_used():
    """A documented exception that no row needs any more is removed, not kept."""
    for fragment in WIDER:
        assert any(fragment in row.source for row in ROWS), fragment


#: Programs with parameters, as ``compile --target cerebras`` sees them: the module's functions
#: take the parameters as arguments (0-d tensors inside), nothing folded.
PARAMETRIC = [
    "param peak: float = 3e-4 where peak > 0\nparam warm: int = 50 where warm > 0\n"
    "param total: int = 1000 where total > warm\n"
    "schedule lr = warmup(linear, warm) >> cosine(peak, peak / 10, total - warm)",
    "param total: int = 700 where total > 0\nschedule lr = cosine_restarts(1e-3, 1e-5, total)",
    "param total: int = 1000 where total > 0\nschedule lr = onecycle(1e-3, total, pct_start=0.25)",
]


@pytest.mark.parametrize("source", PARAMETRIC, ids=lambda s: s.split("schedule lr = ")[-1])
def test_float32_compute_with_parameters(source):
    """The unbound module (what the Cerebras class runs) in float32 compute: within 4 ulps."""
    from schedlang.codegen.base import GeneratedModule
    from schedlang.codegen.emit import module as emit_module
    from schedlang.codegen.load import load

    schedule = schedlang.compile(source)["lr"]
    module = load(GeneratedModule(emit_module(schedule.program, "torch", "x.sched").code, {}),
                  "schedlang_float32_test")
    steps = grid(schedule) + list(range(0, 1000, 7))
    values = module.SCHEDULES["lr"](torch.tensor(steps), _dtype=torch.float32,
                                    _compute=torch.float32).tolist()
    for step, value in zip(steps, values):
        exact = _exact(schedule.expr, step)
        assert _ulps(value, exact) <= 4, f"step {step}: {value!r}, exact {float(exact)!r}"
