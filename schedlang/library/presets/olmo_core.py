"""``olmo_core.*``: OLMo-core 3.0.0's ``olmo_core.optim.scheduler`` schedulers.

Every OLMo-core scheduler is ``get_lr(initial_lr, current, t_max)``: ``initial_lr`` the
optimizer's lr (the preset's ``lr``, default 1: the multiplier), ``t_max`` the trainer's
``max_steps`` (``units="steps"``) or ``max_tokens`` (``units="tokens"``), and ``current``
the trainer's ``global_step`` or ``global_train_tokens_seen``.  The trainer counts the batch
it is about to train *before* the train module sets the lr, so:

* ``units="steps"``: update ``k`` (0-based) uses ``get_lr(lr, k + 1, t_max)``.  The preset
  is that formula shifted by one step; it lasts ``t_max`` updates (OLMo-core's run) and holds
  ``get_lr(lr, t_max, t_max)``, the value of the last one, after them.
* ``units="tokens"``: update ``k`` uses ``get_lr(lr, T_{k+1}, t_max)``, ``T_{k+1}`` the tokens
  consumed through update ``k``.  The preset is a schedule on the token clock read *after*
  its step (``Segment.evaluation == "after"``, placed by ``semantics/clock.py`` like any
  segment in tokens), so it needs the file's ``batch = ...`` and ``param seq_len``.  It
  covers the steps with ``T_k < t_max`` (the trainer stops at the first ``T_k >= max_tokens``),
  the last of which reads ``get_lr`` past ``t_max`` as OLMo-core does, and holds
  ``get_lr(lr, t_max, t_max)`` after.

Formulas (``c`` = ``current``, ``T`` = ``t_max``, ``W`` = warmup, ``D`` = decay,
``warm(x) = warmup_min_lr + (x - warmup_min_lr) * c / W``,
``tail(x) = decay_min_lr + (x - decay_min_lr) * (T - c) / D``, ``eta = alpha_f * lr``)::

    ConstantScheduler            lr
    ConstantWithWarmup           c <= W: warm(lr);  else lr
    WSD                          c <= W: warm(lr);  c < T - D: lr;  else tail(lr)
    PowerLR                      c <= W: warm(lr);  c < T - D: lr (c/W)**b;  else tail(lr ((T-D)/W)**b)
    LinearWithWarmup             c < W: warm(lr);  c < T: lr - (lr - eta)(c - W)/(T - W);  else eta
    InvSqrtWithWarmup            c < W: warm(lr);  else eta + (lr - eta) sqrt(W / c)
    CosWithWarmup                c < W: warm(lr);  c < T: eta + (lr - eta)(1 + cos(pi (c-W)/(T-W)))/2;
                                 else eta
    HalfCosWithWarmup            c < W: warm(eta + (lr - eta)/2);  c < T: the cosine's second half
                                 eta + (lr - eta)(1 + cos(pi (c - 2W + T)/(2(T - W))))/2;  else eta
    CosWithWarmupAndLinearDecay  c < T - D: CosWithWarmup;  else tail(CosWithWarmup at T - D)
    ExponentialScheduler         c < T: lr_min (lr / lr_min)**(c/T);  else lr
    WSDS                         warmup, then per period i (lengths L_i, the first less W): peak_i
                                 = lr * period_lr_multipliers[i], then tail(peak_i) over its last
                                 D_i; decay_min_lr after the last period (t_max is not read)

``W`` is ``warmup`` (or its deprecated alias ``warmup_steps``) or ``round(T *
warmup_fraction)``, ``D`` ``decay`` (``decay_steps``) or ``round(T * decay_fraction)``:
Python's ``round`` of the float product, half to even (WSDS rounds ``L_0 * fraction``, per
period for the decay).  ``LinearWithWarmup``, ``CosWithWarmup`` and ``HalfCosWithWarmup``
read their own ``t_max`` field instead of the trainer's when it is set; here one ``t_max``
is whichever they read.  ``CosWithWarmupAndLinearDecay`` reads the trainer's for its decay:
``t_max`` here is the trainer's (its field left unset).  OLMo-core refuses ``decay`` next to
the default ``decay_fraction=0.1`` (its users write ``decay_fraction=None``); giving
``decay`` here means ``decay_fraction`` is None.

Lengths are plain numbers counting ``units``.  A length OLMo-core divides by where it would
raise ``ZeroDivisionError`` (a decay of 0 that the run reaches, PowerLR's warmup of 0) is
refused.  ``SequentialScheduler`` and ``ComposableScheduler`` (schedulers of schedulers,
stage configs) and their records are in ``olmo_core_composite``.
"""

from __future__ import annotations

import sympy as sp

from ...core.algebra import at, tau  # formulas are built in the real-valued counter, not t
from ...core.special import geometric
from ..stdlib import ArgumentError
from ._common import OPTION, C, L, PresetSegment, V, arg, frac, preset

HALF = sp.Rational(1, 2)
UNITS = ("steps", "tokens")


def show(value) -> str:
    if isinstance(value, sp.Rational) and not value.is_Integer:
        return f"{float(value):g}"
    return str(value)


def all_numbers(*values) -> bool:
    """Whether every value is a number (not a parameter's symbol): then a preset checks it."""
    return all(isinstance(v, sp.Basic) and v.is_number for v in values)


def _count(value, name: str, minimum: int = 0):
    """A length OLMo-core keeps as an ``int``: whole where it is a number."""
    if value is not None and all_numbers(value) and (not value.is_integer or value < minimum):
        raise ArgumentError(name, f"'{name}' must be a whole number >= {minimum}, not {show(value)}")
    return value


def _fraction(value, name: str):
    if value is not None and all_numbers(value) and not 0 <= value <= 1:
        raise ArgumentError(name, f"'{name}' must be between 0 and 1, not {show(value)} "
                                  "(OLMo-core checks it)")
    return value


def olmo_round(total, fraction, name: str, total_name: str = "t_max") -> sp.Integer:
    """``round(total * fraction)``: Python's round of the float product, half to even."""
    if total is None:
        raise ArgumentError(name, f"'{name}' is a fraction of t_max, the trainer's max_steps "
                                  "(units=\"steps\") or max_tokens (units=\"tokens\")",
                            hint="give t_max=...")
    if not all_numbers(total, fraction):
        raise ArgumentError(total_name, f"with {name}, '{total_name}' must be a number: OLMo-core "
                                        "computes round(t_max * fraction) in floating point (half "
                                        "to even), which is exact only on numbers",
                            hint=f"write the number, or give the length itself instead of {name}")
    return sp.Integer(round(int(total) * float(fraction)))


def _length(value, alias, fraction, total, name: str, default_fraction=None):
    """``warmup`` / ``decay``: the length, its deprecated ``*_steps`` alias, or a fraction."""
    alias_name, fraction_name = f"{name}_steps", f"{name}_fraction"
    if value is None:
        value, given = alias, alias_name
    else:
        given = name
    if value is not None and fraction is not None:
        raise ArgumentError(fraction_name, f"give '{given}' or '{fraction_name}', not both "
                                           "(OLMo-core refuses both)")
    if value is None and fraction is None:
        if default_fraction is None:
            raise ArgumentError(name, f"give '{name}' or '{fraction_name}' (OLMo-core requires one)")
        fraction = default_fraction
    if value is not None:
        return _count(value, given)
    return olmo_round(total, _fraction(fraction, fraction_name), fraction_name)


def _t_max(t_max, required: bool):
    if t_max is None and required:
        raise ArgumentError("t_max", "this scheduler reads t_max, the trainer's max_steps "
                                     "(units=\"steps\") or max_tokens (units=\"tokens\")",
                            hint="give t_max=...")
    return _count(t_max, "t_max", 1)


def _below(low, high, low_name: str, what: str) -> None:
    """``_linear_warmup`` / ``_linear_decay`` assert ``0 <= min_lr < lr``."""
    if all_numbers(low, high) and not 0 <= low < high:
        raise ArgumentError(low_name, f"'{low_name}' must be >= 0 and below {what} "
                                      f"({show(high)}), not {show(low)} (OLMo-core asserts it)")


def _div(length):
    """A length divided by inside a branch where it is at least 1 (kept exact, never 0)."""
    return length if all_numbers(length) else sp.Max(length, 1)


def _warm(peak, warmup, floor):
    return floor + (peak - floor) * tau / _div(warmup)


def _tail(value, t_max, decay, floor):
    return floor + (value - floor) * (t_max - tau) / _div(decay)


def _no_zero_decay(decay, name: str = "decay"):
    if all_numbers(decay) and decay == 0:
        raise ArgumentError(name, "a decay of 0: OLMo-core divides by it at t_max "
                                  "(ZeroDivisionError)", hint="give a decay of at least 1")


def olmo_lr(pairs, units: str, end, label: str) -> PresetSegment:
    """OLMo-core's ``get_lr`` (``pairs``: branches in its counter ``tau``, first true wins)
    at the counter the trainer passes: the step after (``units="steps"``) or the tokens
    through the update (``"tokens"``); ``end`` is where the preset's length ends."""
    formula = sp.Piecewise(*pairs) if len(pairs) > 1 else pairs[0][0]
    if units == "tokens":
        return PresetSegment(formula, end, label=label, clock="tok", evaluation="after")
    shifted = at(formula, tau + 1)  # update k reads global_step = k + 1
    if end is None:
        return PresetSegment(shifted, None, label=label)
    # the counter never passes t_max in steps: after the run hold the last update's value
    return PresetSegment(sp.Piecewise((shifted, sp.Lt(tau, end)), (at(formula, end), True)), end,
                         label=label)


def constant_scheduler(lr, units, t_max):
    """``lr`` at every step."""
    return olmo_lr([(lr, True)], units, _t_max(t_max, False), "ConstantScheduler")


def constant_with_warmup(lr, units, t_max, warmup, warmup_steps, warmup_fraction, warmup_min_lr):
    """``warm(lr)`` for ``c <= W`` (inclusive), then ``lr``."""
    t_max = _t_max(t_max, False)
    warm = _length(warmup, warmup_steps, warmup_fraction, t_max, "warmup")
    pairs = [(lr, True)]
    if not (all_numbers(warm) and warm == 0):
        _below(warmup_min_lr, lr, "warmup_min_lr", "lr")
        pairs.insert(0, (_warm(lr, warm, warmup_min_lr), sp.Lt(tau, warm + 1)))
    return olmo_lr(pairs, units, t_max, "ConstantWithWarmup")


def _wsd_lengths(t_max, warmup, warmup_steps, warmup_fraction, decay, decay_steps, decay_fraction):
    t_max = _t_max(t_max, True)
    warm = _length(warmup, warmup_steps, warmup_fraction, t_max, "warmup")
    dec = _length(decay, decay_steps, decay_fraction, t_max, "decay", default_fraction=frac("0.1"))
    _no_zero_decay(dec, "decay" if decay is not None or decay_steps is not None else "decay_fraction")
    return t_max, warm, dec


def wsd(lr, units, t_max, warmup, warmup_steps, warmup_fraction, decay, decay_steps, decay_fraction,
        warmup_min_lr, decay_min_lr):
    """``warm(lr)`` for ``c <= W``, ``lr`` until ``T - D``, then ``tail(lr)`` (0 at ``T``)."""
    t_max, warm, dec = _wsd_lengths(t_max, warmup, warmup_steps, warmup_fraction, decay,
                                    decay_steps, decay_fraction)
    _below(decay_min_lr, lr, "decay_min_lr", "lr")
    pairs = [(lr, sp.Lt(tau, t_max - dec)), (_tail(lr, t_max, dec, decay_min_lr), True)]
    if not (all_numbers(warm) and warm == 0):
        _below(warmup_min_lr, lr, "warmup_min_lr", "lr")
        pairs.insert(0, (_warm(lr, warm, warmup_min_lr), sp.Lt(tau, warm + 1)))
    return olmo_lr(pairs, units, t_max, "WSD")


def power_lr(lr, units, t_max, b, warmup, warmup_steps, warmup_fraction, warmup_min_lr, decay,
             decay_steps, decay_fraction, decay_min_lr):
    """``warm(lr)`` for ``c <= W``, ``lr (c/W)**b`` until ``T - D``, then ``tail`` from there."""
    if all_numbers(b) and b >= 0:
        raise ArgumentError("b", f"'b' must be negative, not {show(b)} (OLMo-core checks it)")
    t_max, warm, dec = _wsd_lengths(t_max, warmup, warmup_steps, warmup_fraction, decay,
                                    decay_steps, decay_fraction)
    if all_numbers(warm) and warm == 0:
        raise ArgumentError("warmup", "PowerLR with a warmup of 0: OLMo-core divides by it "
                                      "(current / warmup) after the warmup",
                            hint="give a warmup of at least 1")
    _below(warmup_min_lr, lr, "warmup_min_lr", "lr")
    tail_start = lr * ((t_max - dec) / _div(warm)) ** b
    _below(decay_min_lr, tail_start, "decay_min_lr", "the lr where the decay starts")
    return olmo_lr([(_warm(lr, warm, warmup_min_lr), sp.Lt(tau, warm + 1)),
                    (lr * (tau / _div(warm)) ** b, sp.Lt(tau, t_max - dec)),
                    (_tail(tail_start, t_max, dec, decay_min_lr), True)], units, t_max, "PowerLR")


def _warmup_then(lr, warm, warmup_min_lr, peak=None):
    """The warmup branch (strict ``c < W``) of the t_max-reading schedulers, if any."""
    if all_numbers(warm) and warm == 0:
        return []
    peak = lr if peak is None else peak
    _below(warmup_min_lr, peak, "warmup_min_lr", "the peak lr")
    return [(_warm(peak, warm, warmup_min_lr), sp.Lt(tau, warm))]


def linear_with_warmup(lr, units, t_max, alpha_f, warmup, warmup_steps, warmup_fraction, warmup_min_lr):
    """``warm(lr)`` for ``c < W``, linear to ``eta = alpha_f * lr`` at ``T``, then ``eta``."""
    t_max = _t_max(t_max, True)
    warm = _length(warmup, warmup_steps, warmup_fraction, t_max, "warmup")
    eta = lr * alpha_f
    line = lr - (lr - eta) * (tau - warm) / _div(t_max - warm)
    return olmo_lr([*_warmup_then(lr, warm, warmup_min_lr), (line, sp.Lt(tau, t_max)),
                    (eta, True)], units, t_max, "LinearWithWarmup")


def inv_sqrt_with_warmup(lr, units, t_max, alpha_f, warmup, warmup_steps, warmup_fraction, warmup_min_lr):
    """``warm(lr)`` for ``c < W``, then ``eta + (lr - eta) sqrt(W / c)``."""
    t_max = _t_max(t_max, False)
    warm = _length(warmup, warmup_steps, warmup_fraction, t_max, "warmup")
    eta = lr * alpha_f
    if all_numbers(warm) and warm == 0:
        return olmo_lr([(eta, True)], units, t_max, "InvSqrtWithWarmup")
    counter = tau if all_numbers(warm) else sp.Max(tau, 1)  # c >= W >= 1 on this branch
    return olmo_lr([*_warmup_then(lr, warm, warmup_min_lr),
                    (eta + (lr - eta) * sp.sqrt(warm / counter), True)], units, t_max, "InvSqrtWithWarmup")


def _cosine_pairs(lr, t_max, alpha_f, warm, warmup_min_lr):
    eta = lr * alpha_f
    cosine = eta + (lr - eta) * (1 + sp.cos(sp.pi * (tau - warm) / _div(t_max - warm))) / 2
    return [*_warmup_then(lr, warm, warmup_min_lr), (cosine, sp.Lt(tau, t_max)), (eta, True)]


def cos_with_warmup(lr, units, t_max, warmup, warmup_steps, warmup_fraction, alpha_f, warmup_min_lr):
    """``warm(lr)`` for ``c < W``, cosine to ``eta = alpha_f * lr`` at ``T``, then ``eta``."""
    t_max = _t_max(t_max, True)
    warm = _length(warmup, warmup_steps, warmup_fraction, t_max, "warmup")
    return olmo_lr(_cosine_pairs(lr, t_max, alpha_f, warm, warmup_min_lr), units, t_max, "CosWithWarmup")


def half_cos_with_warmup(lr, units, t_max, warmup, warmup_steps, warmup_fraction, alpha_f, warmup_min_lr):
    """Warmup to the cosine's midpoint ``(lr + eta)/2`` for ``c < W``, then its second half to
    ``eta`` at ``T``, then ``eta``."""
    t_max = _t_max(t_max, True)
    warm = _length(warmup, warmup_steps, warmup_fraction, t_max, "warmup")
    eta = lr * alpha_f
    span = _div(t_max - warm)
    cosine = eta + (lr - eta) * (1 + sp.cos(sp.pi * (tau - warm + span) / (2 * span))) / 2
    return olmo_lr([*_warmup_then(lr, warm, warmup_min_lr, eta + (lr - eta) * HALF),
                    (cosine, sp.Lt(tau, t_max)), (eta, True)], units, t_max, "HalfCosWithWarmup")


def cos_with_warmup_and_linear_decay(lr, units, t_max, warmup, warmup_steps, warmup_fraction, alpha_f,
                                     warmup_min_lr, decay, decay_steps, decay_fraction, decay_min_lr):
    """CosWithWarmup until ``T - D``, then ``tail`` from its value there."""
    t_max, warm, dec = _wsd_lengths(t_max, warmup, warmup_steps, warmup_fraction, decay,
                                    decay_steps, decay_fraction)
    pairs = _cosine_pairs(lr, t_max, alpha_f, warm, warmup_min_lr)
    cosine = sp.Piecewise(*pairs)
    final = at(cosine, t_max - dec)
    _below(decay_min_lr, final, "decay_min_lr", "the lr where the decay starts")
    return olmo_lr([(cosine, sp.Lt(tau, t_max - dec)), (_tail(final, t_max, dec, decay_min_lr), True)],
                   units, t_max, "CosWithWarmupAndLinearDecay")


def exponential_scheduler(lr, units, t_max, lr_min):
    """``lr_min (lr / lr_min) ** (c / T)`` up to ``lr`` at ``T``, then ``lr``."""
    t_max = _t_max(t_max, True)
    if all_numbers(lr_min) and lr_min <= 0:
        raise ArgumentError("lr_min", f"'lr_min' must be positive, not {show(lr_min)} (OLMo-core checks it)")
    return olmo_lr([(lr_min * geometric(lr / lr_min, tau / t_max), sp.Lt(tau, t_max)), (lr, True)],
                   units, t_max, "ExponentialScheduler")


def _whole(value, name: str, minimum: int, item: int | None = None) -> int:
    """``value`` (the ``item``-th of the list ``name``, the error at that item) as a whole number."""
    if not all_numbers(value):
        raise ArgumentError(name, f"'{name}' must be numbers here (they decide the shape of the schedule)",
                            item=item)
    if not value.is_integer or value < minimum:
        raise ArgumentError(name, f"each of '{name}' must be a whole number >= {minimum}, not {show(value)}",
                            item=item)
    return int(value)


def wsds(lr, units, period_lengths, period_lr_multipliers, warmup, warmup_fraction, decay,
         decay_fraction, warmup_min_lr, decay_min_lr):
    """Warmup, then per period a stable ``peak_i`` and a linear decay to ``decay_min_lr`` over
    its last ``D_i``; ``decay_min_lr`` after the last (WSD-S, arXiv:2410.05192)."""
    lengths = [_whole(v, "period_lengths", 1, i) for i, v in enumerate(period_lengths)]
    multipliers = _period_multipliers(period_lr_multipliers, lengths)
    if (warmup is None) == (warmup_fraction is None):
        raise ArgumentError("warmup_fraction" if warmup is not None else "warmup",
                            "give exactly one of 'warmup' or 'warmup_fraction' (OLMo-core requires it)")
    if (decay is None) == (decay_fraction is None):
        raise ArgumentError("decay_fraction" if decay is not None else "decay",
                            "give exactly one of 'decay' or 'decay_fraction' (OLMo-core requires it)")
    if warmup is not None:
        warm = _whole(warmup, "warmup", 0)
    else:
        warm = int(olmo_round(sp.Integer(lengths[0]), _fraction(warmup_fraction, "warmup_fraction"),
                              "warmup_fraction", "period_lengths"))

    def decay_of(length):
        if decay is not None:
            return _whole(decay, "decay", 0)
        return int(olmo_round(sp.Integer(length), _fraction(decay_fraction, "decay_fraction"),
                              "decay_fraction", "period_lengths"))

    decays = [decay_of(length) for length in lengths]
    _check_decays(lengths, decays, warm, "decay" if decay is not None else "decay_fraction")
    if decay_min_lr.is_number and decay_min_lr < 0:
        raise ArgumentError("decay_min_lr", "'decay_min_lr' must be >= 0 (OLMo-core checks it)")
    pairs = _wsds_pairs(lr, lengths, decays, multipliers, warm, warmup_min_lr, decay_min_lr)
    return olmo_lr(pairs, units, sp.Integer(sum(lengths)), "WSDS")


def _period_multipliers(period_lr_multipliers, lengths: list[int]) -> list:
    """WSDS's lr multiplier of each period (1 each when not given), checked as OLMo-core
    checks them: one per period, each > 0."""
    multipliers = [sp.Integer(1)] * len(lengths) if period_lr_multipliers is None else period_lr_multipliers
    if len(multipliers) != len(lengths):
        raise ArgumentError("period_lr_multipliers", "'period_lr_multipliers' must have one entry per "
                                                     "period (OLMo-core checks it)")
    for m in multipliers:
        if all_numbers(m) and m <= 0:
            raise ArgumentError("period_lr_multipliers", "every period lr multiplier must be > 0")
    return multipliers


def _check_decays(lengths: list[int], decays: list[int], warm: int, decay_name: str) -> None:
    """Refuses WSDS periods whose decay does not fit (the first period holds the warmup
    too) or is 0, which OLMo-core divides by; ``decay_name``: the argument that set them."""
    if warm + decays[0] > lengths[0]:
        raise ArgumentError("period_lengths", f"the first period: warmup ({warm}) + decay ({decays[0]}) "
                                              f"exceeds its length ({lengths[0]}) (OLMo-core checks it)")
    for i, (length, dec) in enumerate(zip(lengths, decays)):
        if dec > length:
            raise ArgumentError("period_lengths", f"period {i}: decay ({dec}) exceeds its length ({length})")
        if dec == 0:
            raise ArgumentError(decay_name,
                                f"period {i} has a decay of 0: OLMo-core divides by it at the "
                                "period's end (ZeroDivisionError)")


def _wsds_pairs(lr, lengths: list[int], decays: list[int], multipliers: list, warm: int,
                warmup_min_lr, decay_min_lr) -> list:
    """WSDS's (value, condition) pieces: the warmup, then each period's stable peak and its
    linear decay to ``decay_min_lr``, then ``decay_min_lr`` for good."""
    pairs = []
    if warm:
        pairs += _warmup_then(lr * multipliers[0], sp.Integer(warm), warmup_min_lr)
    start = 0  # the period's start in OLMo-core's adjusted count (current - W)
    for i, (length, dec, mult) in enumerate(zip(lengths, decays, multipliers)):
        adjusted = length - warm if i == 0 else length
        end = start + adjusted
        peak = lr * mult
        _below(decay_min_lr, peak, "decay_min_lr", "the period's peak lr")
        pairs.append((peak, sp.Lt(tau, warm + end - dec)))
        # a period owns its end (adjusted count <= end): decay_min_lr there
        pairs.append((decay_min_lr + (peak - decay_min_lr) * (warm + end - tau) / dec,
                      sp.Lt(tau, warm + end + 1)))
        start = end
    pairs.append((decay_min_lr, True))
    return pairs


LR = arg("lr", V, 1)
UNIT = arg("units", OPTION, "steps", UNITS)
T_MAX = arg("t_max", C, None)
WARMUP = (arg("warmup", C, None), arg("warmup_steps", C, None), arg("warmup_fraction", C, None))
ALPHA = arg("alpha_f", C, frac("0.1"))
WARMUP_MIN = arg("warmup_min_lr", C, 0)
DECAY = (arg("decay", C, None), arg("decay_steps", C, None), arg("decay_fraction", C, None))
DECAY_MIN = arg("decay_min_lr", C, 0)

PRESETS = [
    preset("olmo_core.ConstantScheduler", constant_scheduler, LR, UNIT, T_MAX),
    preset("olmo_core.ConstantWithWarmup", constant_with_warmup, LR, UNIT, T_MAX, *WARMUP, WARMUP_MIN),
    preset("olmo_core.WSD", wsd, LR, UNIT, T_MAX, *WARMUP, *DECAY, WARMUP_MIN, DECAY_MIN),
    preset("olmo_core.PowerLR", power_lr, LR, UNIT, T_MAX, arg("b", C, frac("-0.51")), *WARMUP,
           WARMUP_MIN, *DECAY, DECAY_MIN),
    preset("olmo_core.LinearWithWarmup", linear_with_warmup, LR, UNIT, T_MAX, ALPHA, *WARMUP, WARMUP_MIN),
    preset("olmo_core.InvSqrtWithWarmup", inv_sqrt_with_warmup, LR, UNIT, T_MAX, ALPHA, *WARMUP, WARMUP_MIN),
    preset("olmo_core.CosWithWarmup", cos_with_warmup, LR, UNIT, T_MAX, *WARMUP, ALPHA, WARMUP_MIN),
    preset("olmo_core.HalfCosWithWarmup", half_cos_with_warmup, LR, UNIT, T_MAX, *WARMUP, ALPHA,
           WARMUP_MIN),
    preset("olmo_core.CosWithWarmupAndLinearDecay", cos_with_warmup_and_linear_decay, LR, UNIT, T_MAX,
           *WARMUP, ALPHA, WARMUP_MIN, *DECAY, DECAY_MIN),
    preset("olmo_core.ExponentialScheduler", exponential_scheduler, LR, UNIT, T_MAX,
           arg("lr_min", C, frac("1e-9"))),
    preset("olmo_core.WSDS", wsds, LR, UNIT, arg("period_lengths", L),
           arg("period_lr_multipliers", L, None), arg("warmup", C, None), arg("warmup_fraction", C, None),
           arg("decay", C, None), arg("decay_fraction", C, None), WARMUP_MIN, DECAY_MIN),
]

# The schedulers of schedulers read the ones above (``olmo_core_composite``), so they come last.
from .olmo_core_composite import COMPOSITES, rebuildable  # noqa: E402 - it imports this module's names

PRESETS = [*map(rebuildable, PRESETS), *COMPOSITES]

REJECTED: list = []
