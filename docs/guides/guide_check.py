"""The one check every guide ends with: the lr used at each step k is ``prog["lr"](k)``.

The guides record the lr in an optimizer step pre-hook (``record_lrs``), so what
is compared is the value the optimizer applied, not what the scheduler reports.
"""

import sys


def record_lrs(optimizer) -> list[float]:
    """A list that gets every param group's lr each time ``optimizer.step()`` runs (one entry per step)."""
    used: list[float] = []

    def hook(opt, args, kwargs):
        lrs = {float(group["lr"]) for group in opt.param_groups}
        assert len(lrs) == 1, f"param groups disagree: {sorted(lrs)}"
        used.append(lrs.pop())

    optimizer.register_step_pre_hook(hook)
    return used


def check(label: str, used: list[float], schedule, start: int = 0, rtol: float = 0.0) -> bool:
    """``used[i] == schedule(start + i)`` (within ``rtol`` of it when given: XLA's float64
    arithmetic is not the Python reference's, docs/jax.md); print a verdict, True when all match."""
    expected = [schedule(start + i) for i in range(len(used))]
    bad = [(start + i, u, e) for i, (u, e) in enumerate(zip(used, expected, strict=True))
           if abs(u - e) > rtol * abs(e)]
    for k, u, e in bad[:5]:
        print(f"{label}: step {k}: optimizer used lr {u!r}, the schedule says {e!r}", file=sys.stderr)
    if not used:
        print(f"{label}: no optimizer step ran", file=sys.stderr)
        return False
    equal = "equals" if not rtol else f"is within {rtol:g} (relative) of"
    verdict = f"{len(bad)} MISMATCHES" if bad else f"the lr {equal} prog['lr'](k) at every step"
    print(f"{label}: steps {start}..{start + len(used) - 1}: {verdict}")
    return not bad


def same_schedule(label: str, built, text) -> bool:
    """Whether the schedule built in Python (``schedlang.build``) is the one the text says,
    proven by ``schedlang.equivalent``; print the verdict, True when proven."""
    import schedlang

    verdict = schedlang.equivalent(built, text)
    print(f"{label}: the schedule built in Python and the .sched text are {verdict}")
    return bool(verdict)
