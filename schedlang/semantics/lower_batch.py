"""The calls of the batch schedule (``library/clock_calls``' rows of role ``batch``:
``stages(...)``, Megatron's and OLMo-core's batch presets) and those read off it (role
``from_batch``: OLMo-core's lr factor).

A batch schedule is a table the run's clock is built from (``lower_clock.clock_at``).  Each row's
arguments are read by its ``_read_<name>`` method here (dots as underscores) and handed to the
row's pure function, whose errors this module puts at the call.
"""

from __future__ import annotations

from fractions import Fraction

from ..core.algebra import Segment
from ..errors import SchedlangError, Span
from ..library.clock_calls import ClockCall
from ..library.stdlib import REQUIRED, ArgumentError, Builtin
from ..syntax import ir
from .clock import BatchValue


class BatchCallLowering:
    """The part of the ``Lowerer`` (``lower.py``) that lowers the batch schedule calls (see
    ``ExpressionLowering`` for why the ``Lowerer`` is split into parts it inherits)."""

    def call_batch(self, call: ClockCall, node: ir.Call) -> BatchValue:
        """``stages(b0, [b1, ...], [th1, ...])`` or a framework's batch schedule preset."""
        if not self._lowering_batch:
            raise SchedlangError(f"{node.func.id}() is a batch schedule: it goes in `batch = ...`",
                                 node.span)
        return BatchValue(self._reader(call)(call, node), node.span)

    def call_from_batch(self, call: ClockCall, node: ir.Call) -> Segment:
        """A schedule read off the file's batch schedule (OLMo-core's lr factor)."""
        return self._reader(call)(call, node)

    def _reader(self, call: ClockCall):
        return getattr(self, "_read_" + call.name.replace(".", "_"))

    def _built(self, call: ClockCall, node: ir.Call, given: dict, *args, at: Span | None = None, **kwargs):
        """``call``'s function on the values read: its ``ArgumentError`` at the argument (or the
        item of a list) it names, a ``ValueError`` (a framework's refusal) at ``at`` or the call."""
        try:
            return call.build(*args, **kwargs)
        except ArgumentError as exc:
            raise self.argument_error(exc, given, node) from None
        except ValueError as exc:
            raise SchedlangError(str(exc), at or node.span) from None

    def _read_stages(self, call: ClockCall, node: ir.Call):
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
            found.append((Fraction(count), amount.clock))
        given = {"thresholds": thresholds}
        return self._built(call, node, given, sizes[0], sizes[1:], found, self.seq_len(node.span))

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

    def _read_megatron_step_batch_size_schedule(self, call: ClockCall, node: ir.Call):
        given = self.batch_arguments(call, node)
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
        return self._built(call, node, given, text.value, length, at=text.span)

    def _read_megatron_rampup_batch_size(self, call: ClockCall, node: ir.Call):
        given = self.batch_arguments(call, node)
        values = {name: self.fix_whole(self.constant(n, name), n.span, name) for name, n in given.items()}
        return self._built(call, node, given, **values)

    def _read_olmo_core_batch_size_schedule(self, call: ClockCall, node: ir.Call):
        given = self.batch_arguments(call, node)
        spec = {a.name: a for a in call.args}
        units = self.argument(call, spec["units"], given["units"]) if "units" in given else "tokens"
        lists = []
        for name, what in (("batch_sizes", "a batch size in tokens"), ("schedule", f"a point in {units}")):
            lists.append([self.fix_whole(self.constant(item, what), item.span, what)
                          for item in _list_items(given[name], f"the {name}")])
        sizes, points = lists
        seq_len = self.seq_len(node.span)
        if seq_len is None:
            raise SchedlangError("OLMo-core's batch sizes count tokens: the file needs the tokens "
                                 "per sample", node.span, hint="declare `param seq_len: int = 4096`")
        self._olmo_batches = (sizes, points, units)
        return self._built(call, node, given, sizes, points, units, seq_len=seq_len)

    def _read_olmo_core_batch_size_lr_factor(self, call: ClockCall, node: ir.Call) -> Segment:
        given = self.bind_arguments(call, node)
        units = self.argument(call, call.args[0], given["units"]) if "units" in given else "tokens"
        if self.batches:
            self.clock_at(node.span)
        if self._olmo_batches is None:
            raise SchedlangError(f"{call.name}() follows the batch of "
                                 "olmo_core.batch_size_schedule(...), and the file's batch is not one",
                                 node.span, hint="declare `batch = olmo_core.batch_size_schedule("
                                                 "batch_sizes=[...], schedule=[...])`")
        return self._built(call, node, given, units, batches=self._olmo_batches)


def _list_items(node: ir.Node, what: str) -> tuple:
    if not isinstance(node, ir.List):
        raise SchedlangError(f"{what} must be a list like [6144, 15360]", node.span)
    return node.items
