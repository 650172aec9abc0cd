"""``schedlang branch --format``: the branch as the configuration a framework resumes with.

A branch is resumed from the trunk's checkpoint at step ``C``: the framework restores its
counter there and from then on runs the schedule its new configuration describes.  What matters
is therefore the configuration's schedule from ``C`` to the run's end, and a
warmup-stable-decay scheduler holding the trunk's value ``a`` at ``C`` and decaying over ``N``
to ``F`` is that branch:

* ``megatron-args``: ``--lr a --min-lr F --lr-warmup-iters 0 --lr-decay-style WSD
  --lr-decay-iters C+N --lr-wsd-decay-iters N --lr-wsd-decay-style STYLE --train-iters C+N``
  and ``--override-opt_param-scheduler`` (the checkpoint's saved scheduler values would win
  otherwise; its ``num_steps`` is restored either way);
* ``hf-args``: ``lr_scheduler_type: warmup_stable_decay`` with ``learning_rate a``,
  ``num_stable_steps C``, ``num_decay_steps N``, ``min_lr_ratio F / a`` and ``max_steps``
  (the Trainer rebuilds its scheduler from these and loads the saved ``last_epoch``; the
  saved ``base_lrs`` win, so ``a`` must be the trunk's ``learning_rate``: it is, in the stable
  phase of an HF trunk);
* ``olmo-core-json``: the config.json keys (``export --format olmo-core-json``): ``optim.lr a``,
  ``WSD(warmup=0, decay=N, decay_min_lr=F)`` (linear) or ``CosWithWarmup(warmup=C+1,
  alpha_f=F/a)`` (cosine), ``max_duration`` ``C+N+1`` steps and ``hard_stop`` ``C+N``: OLMo-core
  rebuilds its scheduler from the config on resume, its counter read one step ahead (``_olmo_core``);
  from a trunk whose batch is OLMo-core's BatchSizeSchedulerCallback, a ``ComposableScheduler`` of
  stages with their own lr, which the callback's factor does not touch (``olmo_core``);
* ``torchtitan-toml``: ``[training] steps = C+N``, ``[optimizer] lr = a`` and the
  ``[lr_scheduler]`` of the current formula (``warmup_steps = 0``, a ``decay_ratio`` whose
  ``round((C+N) * ratio)`` is ``N``, ``decay_type``, ``min_lr_factor = F / a``); torchtitan
  restores the ``LambdaLR`` state (step and ``base_lrs``) likewise.  HF and torchtitan count
  steps: a token (or sample) branch is written in its steps, at one batch over the cooldown
  (``_in_steps``).

Each is written in the language as the framework's preset (``megatron.OptimizerParamScheduler``,
``hf.warmup_stable_decay``, ``torchtitan.lr_scheduler``, ``olmo_core.*``), proven equal to the branch at every
step from ``C`` to the run's end (torchtitan's is not clamped after it), written by the
format's exporter (which proves its text equal to the preset; torchtitan's keys are written
here, the format having no writer), and the text is read back by the format's reader and
proven equal to the branch over those steps once more.  The frameworks' own scheduler code is
the reference of the presets (``tests/frameworks/test_branch_configs.py`` runs each output
through it from the checkpoint to the run's end).
"""

from __future__ import annotations

from fractions import Fraction

import sympy as sp

from ..core.algebra import t
from ..errors import SchedlangError
from ..formats import by_name
from ..formats.export import export
from ..library.presets.hf import COOLDOWN_SHAPE as HF_SHAPES
from ..library.presets.megatron import COOLDOWN_SHAPE as MEGATRON_SHAPES
from ..library.presets.torchtitan import DECAY_TYPES as TITAN_SHAPES
from ..program import compile_declared
from ..syntax import ir
from ..syntax.parser import parse
from . import olmo_core
from .certificate import Claim, decimal_text, rewritten

#: The framework's name of each ``cooldown`` shape it has.
_STYLES = {"megatron-args": {shape: name for name, shape in MEGATRON_SHAPES.items()},
           "hf-args": {shape: name for name, shape in HF_SHAPES.items()},
           "torchtitan-toml": {shape: shape for shape in TITAN_SHAPES},
           "olmo-core-json": {"linear": "WSD", "cosine": "CosWithWarmup"}}
FORMATS = tuple(_STYLES)
OVERRIDE = "--override-opt_param-scheduler"


def write_config(format: str, branch, branched) -> tuple[str, list]:  # noqa: A002 - the CLI's name
    """``format``'s resume configuration of ``branch`` (a ``certificate.Branch``) and the claims
    proven about it: the preset equal to ``branched`` from the branch point, and the written
    text, read back, equal to it too."""
    from ..verify import equivalent  # lazy: numpy (verify.float_scan)

    if format not in _STYLES:
        raise SchedlangError(f"branch --format writes {', '.join(FORMATS)}, not '{format}'",
                             hint="write the .sched branch (no --format) and `schedlang export` it")
    olmo_tokens = _olmo_on_tokens(format, branch)
    callback = _olmo_callback(branch, olmo_tokens) if format == "olmo-core-json" else None
    counted = format in ("hf-args", "torchtitan-toml") and {branch.at.unit, branch.length.unit} != {None}
    samples = None if olmo_tokens or counted else _on_samples(format, branch)
    style = _STYLES[format].get(branch.shape)
    if style is None:
        raise SchedlangError(f"{format} has no cooldown shape '{branch.shape}'",
                             hint="its shapes: " + ", ".join(_STYLES[format]))
    a = _exact_value(branched, branch.step, branch, callback)
    # a framework that counts steps: the cooldown's steps at the batch it trains at
    n = _in_steps(format, branch) if counted else branch.length.amount
    call = _preset_call(format, style, branch, a, n, samples, callback, olmo_tokens)
    preset = _preset_file(branch, call, samples, olmo_tokens or callback is not None)
    c, end = branch.step, branch.run
    span = f"at every step from {c} to the run's end, {end}"
    claims = [Claim(f"{call.split('(')[0]} equals the branch {span}",
                    equivalent(compile_declared(preset, branch.params)[branch.schedule], branched, start=c,
                               stop=end + 1))]
    text = _config_text(format, branch, preset, a, n, style)
    back = compile_declared(by_name(format).reader(text, f"<{format} of the branch>"), {})
    claims.append(Claim(f"the {format} text, read back, equals the branch {span}",
                        equivalent(back.main_schedule(None, "the configuration read back"), branched,
                                   start=c, stop=end + 1)))
    return text, claims


def _preset_call(format: str, style: str, branch, a: Fraction, n: int, samples, callback,  # noqa: A002
                 olmo_tokens: bool) -> str:
    """The framework's preset call of the branch from ``a`` at the branch point, its cooldown ``n``
    long in the framework's count (``samples``: Megatron's samples before the point and in the
    cooldown; ``callback``: OLMo-core's batch-size callback of the trunk)."""
    peak, floor = decimal_text(a), decimal_text(branch.to)
    c, end = branch.step, branch.run
    if samples is not None:  # Megatron's counter is the samples consumed before the step
        at, n = samples
        return _megatron_call(style, peak, floor, at + n, n)
    if format == "megatron-args":
        return _megatron_call(style, peak, floor, end, n)
    if callback is not None:  # stages of their own lr: the callback's sqrt factor leaves them be
        return _olmo_core_stages(branch, a, n, callback, olmo_tokens)
    if olmo_tokens:
        return _olmo_core_tokens(style, peak, floor, a, branch)
    if format == "olmo-core-json":
        return _olmo_core(style, peak, floor, a, branch, c, n, end)
    if format == "torchtitan-toml":
        return _titan_call(style, peak, a, _decay_ratio(n, end), branch)
    return _hf_call(style, peak, a, branch, c, n, end)


def _megatron_call(style: str, peak: str, floor: str, decay: int, n: int) -> str:
    """Megatron's WSD scheduler decaying over its last ``n`` of ``decay`` (steps, or samples)."""
    return (f"megatron.OptimizerParamScheduler(max_lr={peak}, min_lr={floor}, lr_warmup_steps=0, "
            f"lr_decay_steps={decay}, lr_decay_style=\"WSD\", wsd_decay_steps={n}, "
            f"lr_wsd_decay_style=\"{style}\")")


def _olmo_core_stages(branch, a: Fraction, n: int, callback, olmo_tokens: bool) -> str:
    """OLMo-core's ``ComposableScheduler`` of the branch under the trunk's batch-size callback, in
    tokens or in steps (``branches/olmo_core.py``)."""
    olmo_core.check_resume(callback, branch)
    stages = olmo_core.token_stages(branch.shape, a, branch.to, branch, callback) if olmo_tokens else \
        olmo_core.step_stages(branch.shape, a, branch.to, branch.step, n)
    return olmo_core.composable(decimal_text(a), "tokens" if olmo_tokens else "steps", stages, branch)


def _preset_file(branch, call: str, samples, on_branch_clock: bool) -> str:
    """The ``.sched`` text of the preset: in the branch's file, on its clock (exported with the
    batch), when the call counts tokens or samples; else a file of its own, ``run`` and the call."""
    if on_branch_clock:
        return rewritten(branch.source, branch.trunk, branch.schedule, lambda *_: call)
    if samples is None:
        return f"run = {branch.run}\nschedule {branch.schedule} = {call}\n"
    # in the branch's file, on its batch schedule (the exporter writes its batch flags)
    return rewritten(branch.source, branch.trunk, branch.schedule, lambda *_: f"on_samples({call})")


def _config_text(format: str, branch, preset: str, a: Fraction, n: int, style: str) -> str:  # noqa: A002
    """The configuration's text: the format's export of the preset (Megatron's with
    ``--override-opt_param-scheduler``), or torchtitan's job TOML keys, written here."""
    if format == "torchtitan-toml":
        return _titan_toml(branch, decimal_text(a), _decay_ratio(n, branch.run), style,
                           decimal_text(branch.to / a))
    text = export(preset, f"<branch of {branch.trunk}>", format=format, schedules=[branch.schedule])
    return _with_override(text) if format == "megatron-args" else text


def _olmo_on_tokens(format: str, branch) -> bool:  # noqa: A002 - the CLI's name
    """Whether an OLMo-core branch is written in tokens (its point or length has a unit); one
    in samples, or with one length in steps and the other in tokens, is refused."""
    units = {branch.at.unit, branch.length.unit}
    olmo_tokens = format == "olmo-core-json" and units != {None}
    if olmo_tokens and units != {"tok"}:
        raise SchedlangError("olmo-core-json writes a branch in steps, or in tokens (both the branch point "
                             "and the cooldown's length in tok)",
                             hint="OLMo-core's scheduler counts steps or tokens (units), not samples")
    return olmo_tokens


def _titan_call(style: str, peak: str, a, ratio, branch) -> str:
    """torchtitan's preset call of the branch: its floor is a factor of the lr ``a``."""
    if a == 0:
        raise SchedlangError("torchtitan writes the floor as a factor of the lr, which is 0 at the "
                             "branch point")
    return (f"torchtitan.lr_scheduler(lr={peak}, training_steps={branch.run}, warmup_steps=0, "
            f"decay_ratio={ratio}, decay_type=\"{style}\", min_lr_factor={decimal_text(branch.to / a)})")


def _hf_call(style: str, peak: str, a, branch, c: int, n: int, end: int) -> str:
    """HF's ``warmup_stable_decay`` call of the branch: its floor is a ratio of the lr ``a``."""
    if a == 0:
        raise SchedlangError("hf-args writes the floor as a ratio of the lr, which is 0 at the "
                             "branch point")
    return (f"hf.warmup_stable_decay(lr={peak}, num_warmup_steps=0, num_training_steps={end}, "
            f"num_decay_steps={n}, num_stable_steps={c}, decay_type=\"{style}\", "
            f"min_lr_ratio={decimal_text(branch.to / a)})")

def _olmo_core(style: str, peak: str, floor: str, a: Fraction, branch, c: int, n: int, end: int) -> str:
    """OLMo-core's scheduler of the branch, rebuilt from the config on resume (its trainer state,
    ``global_step = C``, restored; each group's ``initial_lr`` reset to ``optim.lr``, a fixed field).
    Update ``k`` reads ``get_lr(lr, k + 1, t_max)``, so ``t_max`` is one past the run: the trainer's
    ``max_duration`` ``C + N + 1`` with a ``hard_stop`` at ``C + N`` (the export writes both).
    ``WSD`` with no warmup decays linearly over its last ``N`` to ``decay_min_lr = F`` (the value
    at ``C`` is ``lr``); ``CosWithWarmup`` starts its cosine at ``warmup = C + 1`` and ends it at
    ``alpha_f * lr = F``."""
    if style == "WSD":
        return f"olmo_core.WSD(lr={peak}, t_max={end + 1}, warmup=0, decay={n}, decay_min_lr={floor})"
    return f"olmo_core.CosWithWarmup(lr={peak}, t_max={end + 1}, warmup={c + 1}, alpha_f={_alpha(branch, a)})"


def _alpha(branch, a: Fraction) -> str:
    """CosWithWarmup's ``alpha_f = F / lr``, which config.json must hold exactly (a decimal)."""
    ratio = decimal_text(branch.to / a) if a else "("
    if ratio.startswith("("):
        raise SchedlangError("OLMo-core's CosWithWarmup ends at alpha_f * lr, and F / lr has no exact "
                             f"decimal here ({branch.to} / {a})",
                             hint="a linear cooldown (WSD) writes F itself")
    return ratio


def _olmo_core_tokens(style: str, peak: str, floor: str, a: Fraction, branch) -> str:
    """The same on OLMo-core's token clock (``units="tokens"``, both the branch point and the
    cooldown in ``tok``): update ``k`` reads the tokens seen through it, ``T_k + B``, so with the
    branch cut at ``T_c`` (the tokens before the branch step) and a constant batch of ``B`` tokens
    over the cooldown, ``t_max`` is ``T_c + N + B`` and the decay ``N`` (the cosine's warmup
    ``T_c + B``), ``N`` a whole number of batches; the export writes ``max_duration`` ``t_max``
    tokens and ``hard_stop`` the branch's run, ``T_c + N`` tokens."""
    clock = branch.program.clock
    batch = clock.batch_at(branch.step)
    step_tokens = batch * clock.seq_len
    start, n = branch.tokens, branch.length.amount
    if n % step_tokens:  # past T_c + N OLMo-core's decay runs on below F: end at a batch boundary
        shorter, longer = n - n % step_tokens, n - n % step_tokens + step_tokens
        raise SchedlangError(f"the cooldown's {n} tokens end inside a {step_tokens}-token batch: OLMo-core's "
                             "scheduler would pass F on the run's last step",
                             hint=f"a cooldown of whole batches: {shorter}tok or {longer}tok")
    t_max = start + n + step_tokens
    if style == "WSD":
        return (f"olmo_core.WSD(lr={peak}, units=\"tokens\", t_max={t_max}, warmup=0, decay={n}, "
                f"decay_min_lr={floor})")
    ratio = _alpha(branch, a)
    return (f"olmo_core.CosWithWarmup(lr={peak}, units=\"tokens\", t_max={t_max}, "
            f"warmup={start + step_tokens}, alpha_f={ratio})")


def _olmo_callback(branch, tokens: bool):
    """The trunk's ``olmo_core.batch_size_schedule`` (OLMo-core's BatchSizeSchedulerCallback), or
    None for a constant batch; a batch that changes otherwise is not one OLMo-core can train."""
    callback = olmo_core.callback_of(branch.trunk_text, branch.trunk)
    table = branch.program.clock.table if tokens else ()
    if callback is None and len(table) > 1:
        decl = olmo_core.batch_decl(branch.trunk_text, branch.trunk)
        raise SchedlangError("OLMo-core changes the batch only with its BatchSizeSchedulerCallback, and this "
                             "batch is not one: config.json cannot say the tokens of the branch's steps",
                             decl.span if decl is not None else None,
                             hint="write the trunk's batch as olmo_core.batch_size_schedule(batch_sizes="
                                  "[...], schedule=[...]) (what `schedlang import` writes for a config.json "
                                  "with the callback), or branch in steps (a trunk whose schedule counts "
                                  "steps)")
    return callback


def _in_steps(fmt: str, branch) -> int:
    """A branch on the token or sample clock for a framework that counts steps (HF, torchtitan):
    its steps restored from the checkpoint, its cooldown the steps from the branch point to the
    run's end, which is the branch only at one batch over them, ending at a batch boundary."""
    units = {branch.at.unit, branch.length.unit}
    if len(units) > 1:
        raise SchedlangError(f"{fmt} writes a branch in steps, or with both the branch point and the "
                             "cooldown's length in tok (or both in sp)", hint="give both on one clock")
    clock, unit = branch.program.clock, branch.length.unit
    per = clock.seq_len if unit == "tok" else 1
    batches = {clock.batch_at(branch.step)}
    batches |= {s.batch for s in clock.stages if branch.step < s.first < branch.run}
    if len(batches) > 1:
        raise SchedlangError(f"the batch changes during the cooldown: {fmt} counts steps, which is this "
                             "cooldown only at one batch", hint="branch where the batch no longer changes, "
                                                                "or give the branch in steps")
    size = batches.pop() * per
    n = branch.length.amount
    if n % size:
        shorter = n - n % size
        unit_name = unit or ""
        raise SchedlangError(f"the cooldown's {n}{unit_name} ends inside a batch of {size}{unit_name}: {fmt} "
                             "counts steps", hint=f"a cooldown of whole batches: {shorter}{unit_name} or "
                                                  f"{shorter + size}{unit_name}")
    return n // size


def _on_samples(fmt: str, branch) -> tuple[int, int] | None:
    """A branch on the sample or token clock as Megatron counts it, in samples: the samples
    consumed before the branch point and the cooldown's length; None for a step branch."""
    units = {branch.at.unit, branch.length.unit}
    if units == {None}:
        return None
    if None in units:  # (the other formats' token branches are written before: _in_steps, olmo-core's)
        raise SchedlangError("megatron-args writes a branch in steps, or in samples and tokens (both the "
                             "branch point and the cooldown's length on that clock)",
                             hint="give --at and the cooldown's length in steps, or both in tok / sp")
    n = branch.length.amount
    if branch.length.unit == "tok":
        seq_len = branch.program.clock.seq_len
        if n % seq_len:
            raise SchedlangError(f"Megatron counts samples: the cooldown's {n} tokens are not a whole "
                                 f"number of {seq_len}-token samples",
                                 hint=f"e.g. {n - n % seq_len}tok")
        n //= seq_len
    if branch.samples + n != branch.run_samples:  # --train-samples ends the run at a batch boundary
        shorter = branch.program.samples_at(branch.run - 1) - branch.samples
        longer = branch.run_samples - branch.samples
        raise SchedlangError(f"the cooldown's {n} samples end inside the batch of step {branch.run - 1}: "
                             "Megatron's --train-samples would end the run at another step than the branch",
                             hint=f"a cooldown that ends at a batch boundary: {shorter}sp or {longer}sp")
    return branch.samples, n


def _decay_ratio(n: int, total: int) -> str:
    """A ``decay_ratio`` literal whose ``round(total * float(ratio))`` (torchtitan's rule, half to
    even on the float product) is ``n``: the exact decimal where ``n / total`` has one."""
    exact = decimal_text(Fraction(n, total))
    candidates = ([exact] if not exact.startswith("(") else []) + [repr(n / total)]
    for text in candidates:
        if round(total * float(text)) == n:
            return text
    raise SchedlangError(  # pragma: no cover - repr(n / total) rounds back to n
        f"no decay_ratio gives torchtitan's round({total} * ratio) = {n}")


def _titan_toml(branch, lr: str, ratio: str, decay_type: str, floor: str) -> str:
    """The torchtitan job TOML keys of the branch: ``[training] steps``, ``[optimizer] lr`` and the
    ``[lr_scheduler]`` of the current formula (``torchtitan-toml``'s reader reads them back)."""
    return (f"# torchtitan job config of the branch of {branch.trunk} at step {branch.step}, written by\n"
            "# schedlang branch: resume from the trunk's checkpoint there (its lr_scheduler state holds the\n"
            "# step; the optimizer's saved lr must be this lr).  Merge these keys into your job's TOML.\n"
            f"[training]\nsteps = {branch.run}\n\n[optimizer]\nlr = {lr}\n\n[lr_scheduler]\n"
            f"warmup_steps = 0\ndecay_ratio = {ratio}\ndecay_type = \"{decay_type}\"\n"
            f"min_lr_factor = {floor}\n")


def _exact_value(schedule, step: int, branch=None, callback=None) -> Fraction:
    """The branch's value at its branch point as an exact rational, which a config can write."""
    value = sp.simplify(schedule.expr.xreplace({t: sp.Integer(step)}))
    if not isinstance(value, sp.Rational):
        decl = None if branch is None else next(
            (s for s in parse(branch.trunk_text, branch.trunk).statements
             if isinstance(s, ir.ScheduleDecl) and s.name == branch.schedule), None)
        hint = ("OLMo-core's batch-size factor sqrt(batch / first batch) is rational at square ratios only "
                "(4x, 9x, 16x, ...): branch where the batch is such a multiple of the first" if callback else
                "branch where the trunk's lr is a rational number (a decimal)")
        raise SchedlangError(f"the lr at the branch point is {value}, not a rational number a "
                             "framework's configuration can write exactly",
                             decl.value.span if decl is not None else None, hint=hint)
    return Fraction(int(value.p), int(value.q))


def _with_override(text: str) -> str:
    """Megatron's flags with ``--override-opt_param-scheduler`` after the script: the run resumes
    the checkpoint's ``num_steps`` and takes every other scheduler value from these flags."""
    lines = text.splitlines()
    first = next(i for i, line in enumerate(lines)
                 if line.rstrip().endswith("\\") and not line.startswith(" "))
    lines.insert(first + 1, f"    {OVERRIDE} \\")
    head = [i for i, line in enumerate(lines) if line.startswith("#")]
    note = ("# A branch resumed from the trunk's checkpoint: --override-opt_param-scheduler makes "
            "these flags,\n# not the checkpoint's saved ones, the schedule (num_steps is restored "
            "from the checkpoint).")
    lines.insert(head[-1] + 1 if head else 0, note)
    return "\n".join(lines) + "\n"
