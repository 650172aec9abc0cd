"""How long a Cerebras ModelZoo run trains, read from its loop config: the one place of the rule
(ModelZoo 2.10's ``TrainingLoop``, which calls cerebras_pytorch 2.10's ``compute_num_steps``).

The loop is ``trainer.init.loop`` (or the legacy ``runconfig``, whose ``grad_accum_steps`` is
``optimizer.grad_accum_steps``, as ModelZoo's converter maps it).  From global step 0 it counts

    total = min(num_epochs * (steps_per_epoch // grad_accum_steps), num_steps, max_steps)

over the keys given (``max_steps`` is the last global step, ``max_steps - 0`` from step 0);
``num_epochs`` with ``num_steps`` is ModelZoo's ``ValueError``.  Without ``steps_per_epoch`` an
epoch is the dataloader's length, which the config does not state, so the run is not stated.  The
Trainer then runs ``total`` batches; on the CSX every batch steps the optimizer (its
``GradientAccumulationCallback`` forces ``grad_accum_steps`` to 1), elsewhere only every
``grad_accum_steps``-th does, so with ``grad_accum_steps > 1`` the run's updates are stated only
for ``backend_type: CSX``.  No loop is ModelZoo's ``TrainingLoop(num_epochs=1)``: not stated.
Checked against ModelZoo's own code by ``tests/frameworks/test_cerebras_loop.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import SchedlangError, Span
from .common.numbers import exact
from .common.yaml_source import Node

STEP_KEYS = ("num_steps", "max_steps")


@dataclass
class Loop:
    """A config's loop mapping, where it is, and what else sets its length."""

    node: Node
    where: str  # "trainer.init.loop" or "runconfig"
    accum: Node | None  # the grad_accum_steps key's value
    csx: bool  # backend_type: CSX

    def given(self, key: str) -> Node | None:
        node = self.node.value.get(key)
        return node if node is not None and node.value is not None else None

    def accumulates(self) -> bool:
        """The optimizer steps on every grad_accum_steps-th batch only (not the CSX)."""
        return not self.csx and _steps(self.accum, "grad_accum_steps", default=1) > 1


@dataclass(frozen=True)
class Run:
    """The optimizer steps a fresh run trains, the keys that say so (``trainer.init.loop
    max_steps / num_steps``) and the span of the key whose count is the run (the smallest)."""

    steps: int
    keys: str
    span: Span


def loop_of(root: Node) -> Loop | None:
    """The config's loop (None without a loop mapping)."""
    if not root.is_mapping:
        return None
    init = _mapping(_mapping(root, "trainer"), "init")
    loop, where = (init.value.get("loop"), "trainer.init.loop") if init is not None else (None, "")
    backend = _mapping(init, "backend")
    kind = backend.value.get("backend_type") if backend is not None else None
    csx = kind is not None and str(kind.value).upper() == "CSX"
    if loop is None:
        loop, where = root.value.get("runconfig"), "runconfig"
        accum = _mapping(root, "optimizer")
        accum = accum.value.get("grad_accum_steps") if accum is not None else None
    else:
        accum = loop.value.get("grad_accum_steps") if loop.is_mapping else None
    if loop is None or not loop.is_mapping:
        return None
    return Loop(loop, where, accum, csx)


def run_of(root: Node) -> Run | None:
    """The optimizer steps a fresh run trains, the keys that say so and the span of the one that
    counts; None where the config does not state them (see the module's rule)."""
    loop = loop_of(root)
    if loop is None:
        return None
    epochs, num_steps = loop.given("num_epochs"), loop.given("num_steps")
    if epochs is not None and num_steps is not None:
        raise SchedlangError(f"{loop.where} gives both num_epochs and num_steps, which ModelZoo refuses "
                             "(only one of them can be specified)", loop.node.key_spans["num_steps"],
                             hint="keep one of them (max_steps may go with either)")
    accum = _steps(loop.accum, "grad_accum_steps", default=1)
    found = {key: _steps(loop.given(key), key) for key in STEP_KEYS if loop.given(key) is not None}
    per_epoch = loop.given("steps_per_epoch")
    if epochs is not None:
        if per_epoch is None:
            return None
        batches = _steps(per_epoch, "steps_per_epoch")
        if accum > batches:
            raise SchedlangError(f"grad_accum_steps {accum} is more than the steps_per_epoch {batches}, "
                                 "which ModelZoo refuses", loop.accum.span)
        found["num_epochs"] = _steps(epochs, "num_epochs") * (batches // accum)
    elif per_epoch is not None:
        _steps(per_epoch, "steps_per_epoch")
    if not found or loop.accumulates():
        return None
    epoch = "num_epochs * steps_per_epoch" + (" // grad_accum_steps" if accum > 1 else "")
    keys = [k if k != "num_epochs" else epoch for k in found]
    counting = min(found, key=found.__getitem__)  # the first of the smallest
    return Run(found[counting], f"{loop.where} " + " / ".join(keys), loop.node.key_spans[counting])


def _mapping(node: Node | None, key: str) -> Node | None:
    if node is None or not node.is_mapping:
        return None
    child = node.value.get(key)
    return child if child is not None and child.is_mapping else None


def _steps(node: Node | None, what: str, default: int | None = None) -> int:
    if node is None or node.value is None:
        return default
    number = exact(node.value)
    if number is None or not number.is_Integer or number <= 0:
        raise SchedlangError(f"{what} must be a positive whole number of steps, not {node.value!r}",
                             node.span, hint="ModelZoo's loop takes integers greater than 0")
    return int(number)
