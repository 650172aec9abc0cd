"""The calls whose value is a batch schedule (``stages(...)``, Megatron's and OLMo-core's batch
presets) or is read off one (OLMo-core's lr factor), and the signatures of the calls lowering
knows by name.

A batch schedule is a table the run's clock is built from (``lower_clock.clock_at``).  The
frameworks' own rules are pure functions in ``library/presets/megatron_batch.py`` and
``olmo_core_batch.py``; this module reads their arguments and puts their errors at the call.
"""

from __future__ import annotations

from fractions import Fraction

import sympy as sp

from ..core.algebra import Segment, tau
from ..errors import SchedlangError, Span
from ..library import stdlib
from ..library.stdlib import REQUIRED, Builtin, Kind
from ..limits import MAX_BATCH_STAGES
from ..syntax import ir
from .clock import BatchValue, stages_table
from .lower_clock import ON_CLOCK, ClockLowering


class BatchCallLowering:
    """The part of the ``Lowerer`` (``lower.py``) that lowers the batch schedule calls (see
    ``ExpressionLowering`` for why the ``Lowerer`` is split into parts it inherits)."""

    def call_batch(self, node: ir.Call) -> BatchValue:
        """``stages(b0, [b1, ...], [th1, ...])`` or a framework's batch schedule preset."""
        if not self._lowering_batch:
            raise SchedlangError(f"{node.func.id}() is a batch schedule: it goes in `batch = ...`",
                                 node.span)
        return BatchValue(BATCH_CALLS[node.func.id](self, node), node.span)

    def _stages(self, node: ir.Call):
        if node.keywords or len(node.args) != 3:
            raise SchedlangError("stages() takes 3 arguments: the first batch, the later batches "
                                 "and their thresholds", node.span,
                                 hint="stages(3072, [6144, 15360], [100e9tok, 469e9tok])")
        first, batches, thresholds = node.args
        sizes = [self.batch_size(self.constant(first, "a batch size"), first.span)]
        for item in _list_items(batches, "the later batch sizes"):
            sizes.append(self.batch_size(self.constant(item, "a batch size"), item.span))
        found = []
        for item in _list_items(thresholds, "the thresholds"):
            amount = self.schedule_value(self.value(item), item, "a threshold")
            if amount.clock is None or amount.depends_on_step:
                raise SchedlangError("a threshold counts samples or tokens", item.span,
                                     hint="e.g. 100e9tok or 2_000_000sp")
            count = self.fix_whole(amount.expr, item.span, "a threshold")
            found.append((Fraction(count), amount.clock, item.span))
        return stages_table(sizes[0], sizes[1:], found, self.seq_len(node.span), node.span)

    def batch_arguments(self, signature: Builtin, node: ir.Call) -> dict:
        """The argument nodes of a batch preset call, by name, bound as any call's are
        (``bind_arguments``); a required one missing is an error at the call."""
        given = self.bind_arguments(signature, node)
        missing = next((a.name for a in signature.args if a.default is REQUIRED and a.name not in given),
                       None)
        if missing is not None:
            raise SchedlangError(f"{signature.name}() is missing '{missing}'", node.span,
                                 hint=f"signature: {signature.signature()}")
        return given

    def _megatron_step_schedule(self, node: ir.Call):
        """``megatron.step_batch_size_schedule("0:16 2.4B:320", seq_length=...)``: Megatron-LM
        main's ``--step-batch-size-schedule`` (megatron-core >= 0.18), exact to its parser;
        ``seq_length`` defaults to the file's ``seq_len`` (Megatron-LM passes its ``--seq-length``)."""
        from ..library.presets import megatron_batch  # lazy: only files with a Megatron batch

        given = self.batch_arguments(MEGATRON_STEP_SCHEDULE, node)
        text = given["schedule"]
        if not isinstance(text, ir.String):
            raise SchedlangError("the schedule is a double-quoted string of THRESHOLD:BATCH entries",
                                 text.span, hint='e.g. "0:16 2.4B:320"')
        seq_len = self.seq_len(node.span)
        if "seq_length" in given:
            length = self.fix_whole(self.constant(given["seq_length"], "seq_length"),
                                    given["seq_length"].span, "seq_length")
            if seq_len is not None and length != seq_len:
                raise SchedlangError(f"seq_length is {length} but the file's seq_len is {seq_len}",
                                     given["seq_length"].span, hint="one sample has one length: drop "
                                     "seq_length, which defaults to seq_len")
        else:
            length = seq_len
        return self._located(megatron_batch.step_batch_size_schedule, text.span, text.value, length)

    def _megatron_rampup(self, node: ir.Call):
        """``megatron.rampup_batch_size(start, increment, samples, global_batch_size=...)``:
        megatron-core <= 0.17's ``--rampup-batch-size``, its float division included
        (0.18 and later ignore the flag)."""
        from ..library.presets import megatron_batch  # lazy: only files with a Megatron batch

        given = self.batch_arguments(MEGATRON_RAMPUP, node)
        values = {name: self.fix_whole(self.constant(n, name), n.span, name) for name, n in given.items()}
        return self._located(megatron_batch.rampup_batch_size, node.span, values.pop("start"),
                              values.pop("increment"), values.pop("samples"),
                              values.pop("global_batch_size"), **values, limit=MAX_BATCH_STAGES)

    @staticmethod
    def _located(function, span: Span, *args, **kwargs):
        try:
            return function(*args, **kwargs)
        except ValueError as exc:
            raise SchedlangError(str(exc), span) from None

    def _olmo_batch_schedule(self, node: ir.Call):
        """``olmo_core.batch_size_schedule(batch_sizes=[...], schedule=[...], units="tokens")``:
        OLMo-core's ``BatchSizeSchedulerCallback``, batch sizes in tokens, an increase waiting
        for a whole number of the new batches (``library/presets/olmo_core_batch.py``)."""
        from ..library.presets import olmo_core_batch  # lazy: only files with an OLMo-core batch

        units, sizes, points = self._olmo_batch_arguments(node)
        seq_len = self.seq_len(node.span)
        if seq_len is None:
            raise SchedlangError("OLMo-core's batch sizes count tokens: the file needs the tokens "
                                 "per sample", node.span, hint="declare `param seq_len: int = 4096`")
        self._olmo_batches = (sizes, points, units)
        return self._located(olmo_core_batch.batch_size_schedule, node.span, sizes, points, seq_len, units)

    def _olmo_batch_arguments(self, node: ir.Call) -> tuple[str, list[int], list[int]]:
        given = self.batch_arguments(OLMO_BATCH_SCHEDULE, node)
        spec = {a.name: a for a in OLMO_BATCH_SCHEDULE.args}
        units = self.argument(OLMO_BATCH_SCHEDULE, spec["units"], given["units"]) if "units" in given \
            else "tokens"
        lists = []
        for name, what in (("batch_sizes", "a batch size in tokens"), ("schedule", f"a point in {units}")):
            lists.append([self.fix_whole(self.constant(item, what), item.span, what)
                          for item in _list_items(given[name], f"the {name}")])
        return units, *lists

    def _olmo_lr_factor(self, node: ir.Call) -> Segment:
        """``olmo_core.batch_size_lr_factor(units=...)``: the ``sqrt(new / old)`` by which
        OLMo-core's batch-size callback multiplies the base lr at each change, from the step
        whose batch changed on; ``units`` as the scheduler's it multiplies (``"tokens"``: on the
        token clock read after the step, ``"steps"``: on the step clock)."""
        from ..library.presets import olmo_core_batch  # lazy: only files with an OLMo-core batch

        given = self.bind_arguments(OLMO_LR_FACTOR, node)
        units = self.argument(OLMO_LR_FACTOR, OLMO_LR_FACTOR.args[0], given["units"]) if "units" in given \
            else "tokens"
        if self.batches:
            self.clock_at(node.span)
        if self._olmo_batches is None:
            raise SchedlangError(f"{OLMO_LR_FACTOR.name}() follows the batch of "
                                 "olmo_core.batch_size_schedule(...), and the file's batch is not one",
                                 node.span, hint="declare `batch = olmo_core.batch_size_schedule("
                                                 "batch_sizes=[...], schedule=[...])`")
        stages = olmo_core_batch.switches(*self._olmo_batches)  # (step, tokens before, batch)
        factors = [sp.sqrt(sp.Rational(batch, stages[0][2])) for _, _, batch in stages]
        # the factor of a switch at step s holds from step s on; read after the step, update k
        # counts T_{k+1} = T_k + its batch, so from T_s + b_s tokens on
        ends = [step if units == "steps" else tokens + batch for step, tokens, batch in stages[1:]]
        pieces = [(factor, sp.Lt(tau, end)) for factor, end in zip(factors, ends)]
        expr = sp.Piecewise(*pieces, (factors[-1], True)) if pieces else factors[-1]
        return Segment(expr) if units == "steps" else Segment(expr, clock="tok", evaluation="after")


def _list_items(node: ir.Node, what: str) -> tuple:
    if not isinstance(node, ir.List):
        raise SchedlangError(f"{what} must be a list like [6144, 15360]", node.span)
    return node.items


#: The signatures of the Megatron batch presets (``bind_arguments`` reads them; their values are
#: converted by ``_megatron_step_schedule`` / ``_megatron_rampup``, not by ``argument``).
#: (``build`` is the method that lowers the call: its docstring is the call's documentation.)
MEGATRON_STEP_SCHEDULE = Builtin("megatron.step_batch_size_schedule", (
    stdlib.Arg("schedule", Kind.OPTION), stdlib.Arg("seq_length", Kind.CONST, None)),
    build=BatchCallLowering._megatron_step_schedule)
MEGATRON_RAMPUP = Builtin("megatron.rampup_batch_size", (
    *(stdlib.Arg(name, Kind.CONST) for name in ("start", "increment", "samples", "global_batch_size")),
    *(stdlib.Arg(name, Kind.CONST, None) for name in ("micro_batch_size", "data_parallel_size"))),
    build=BatchCallLowering._megatron_rampup)

#: OLMo-core's batch-size callback: its batch schedule and the lr factor it applies.
OLMO_BATCH_SCHEDULE = Builtin("olmo_core.batch_size_schedule", (
    stdlib.Arg("batch_sizes", Kind.VALUES), stdlib.Arg("schedule", Kind.VALUES),
    stdlib.Arg("units", Kind.OPTION, "tokens", ("tokens", "steps"))),
    build=BatchCallLowering._olmo_batch_schedule)
OLMO_LR_FACTOR = Builtin("olmo_core.batch_size_lr_factor", (
    stdlib.Arg("units", Kind.OPTION, "tokens", ("tokens", "steps")),),
    build=BatchCallLowering._olmo_lr_factor)

#: The signatures of the calls lowering knows by name (the batch presets, ``on_samples`` /
#: ``on_tokens``): what the builder and the editor offer for them.
CALL_SIGNATURES = {b.name: b for b in (MEGATRON_STEP_SCHEDULE, MEGATRON_RAMPUP, OLMO_BATCH_SCHEDULE,
                                       OLMO_LR_FACTOR)}
CALL_SIGNATURES.update({name: Builtin(name, (stdlib.Arg("schedule", Kind.SCHEDULE),),
                                      build=ClockLowering.call_on_clock) for name in ON_CLOCK})

#: Calls whose value is a batch schedule (``batch = ...`` only).
BATCH_CALLS = {"stages": BatchCallLowering._stages,
               "megatron.step_batch_size_schedule": BatchCallLowering._megatron_step_schedule,
               "megatron.rampup_batch_size": BatchCallLowering._megatron_rampup,
               "olmo_core.batch_size_schedule": BatchCallLowering._olmo_batch_schedule}

#: Calls whose value is a schedule read off the file's batch schedule.
BATCH_SCHEDULES = {"olmo_core.batch_size_lr_factor": BatchCallLowering._olmo_lr_factor}
