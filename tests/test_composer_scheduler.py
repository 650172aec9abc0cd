"""``Schedule.composer_scheduler``: a native Composer scheduler reading ``state.timestamp``.

Fast tests on stand-in states (any object with ``state.timestamp.<unit>``), one on
Composer's own ``Time``/``Timestamp`` classes and ``CosineAnnealingWithWarmupScheduler``
(loaded from the pinned sources by tests/anchors/reference.py, no install needed);
docs/guides/composer_trainer.py runs it in the real ``composer.Trainer``.
"""

import enum
import math
from types import SimpleNamespace

import pytest
from anchors import reference as R

import schedlang
from schedlang import SchedlangError
from schedlang.runtime.composer import UNITS

SOURCE = """
param total: int = 24
schedule lr = warmup(linear, 4) >> cosine(0.01, 0.001, total - 4)
"""


def at(**counts):
    return SimpleNamespace(timestamp=SimpleNamespace(**counts))


def test_batches_by_default_past_the_end():
    lr = schedlang.compile(SOURCE)["lr"]
    alpha = lr.composer_scheduler()
    assert alpha.unit == "ba" and alpha.lr == 1.0
    assert [alpha(at(batch=k)) for k in range(40)] == [lr(k) for k in range(40)]
    # Composer passes ssr positionally; 1.0 is accepted.
    assert alpha(at(batch=7), 1.0) == lr(7)


def test_the_multiplier_of_another_initial_lr():
    lr = schedlang.compile(SOURCE)["lr"]
    alpha = lr.composer_scheduler(lr=0.01)
    for k in range(30):
        # Composer sets initial_lr * alpha: f(k) up to one rounding.
        assert math.isclose(0.01 * alpha(at(batch=k)), lr(k), rel_tol=1e-15, abs_tol=0)
    assert alpha(at(batch=4)) == lr(4) / 0.01


class TimeUnit(enum.Enum):  # Composer's TimeUnit is an Enum whose values are the strings
    EPOCH = "ep"
    SAMPLE = "sp"


def test_other_units_and_time_objects():
    prog = schedlang.compile("schedule lr = multistep(0.1, 0.5, [2, 5])")
    lr = prog["lr"]
    Time = SimpleNamespace  # Composer's Time carries its count in .value
    by_epoch = lr.composer_scheduler(unit=TimeUnit.EPOCH)
    assert by_epoch.unit == "ep"
    state = at(batch=Time(value=999), epoch=Time(value=5))
    assert by_epoch(state) == lr(5) == 0.1 * 0.25
    assert lr.composer_scheduler("sp")(at(sample=3)) == lr(3)
    assert lr.composer_scheduler("tok")(at(token=1)) == lr(1)
    assert lr.composer_scheduler("iter")(at(iteration=0)) == lr(0)
    assert set(UNITS) == {"ba", "ep", "sp", "tok", "iter"}


def test_dur_is_refused_with_the_way_round():
    lr = schedlang.compile(SOURCE, filename="run.sched")["lr"]
    with pytest.raises(SchedlangError) as exc:
        lr.composer_scheduler(unit="dur")
    text = str(exc.value)
    assert "run.sched:3:10" in text and "^" in text
    assert "fraction of max_duration" in text and "param max_duration: int" in text


@pytest.mark.parametrize("unit", ["sec", "batches", "", None, 1])
def test_a_unit_it_cannot_read(unit):
    lr = schedlang.compile(SOURCE)["lr"]
    with pytest.raises(SchedlangError, match="cannot be read as a step") as exc:
        lr.composer_scheduler(unit=unit)
    assert "ba, ep, sp, tok, iter" in str(exc.value)


def test_bad_calls():
    prog = schedlang.compile(SOURCE)
    alpha = prog["lr"].composer_scheduler()
    with pytest.raises(SchedlangError, match="scale_schedule_ratio=0.5"):
        alpha(at(batch=3), 0.5)
    with pytest.raises(SchedlangError, match="no timestamp.batch"):
        alpha(at(epoch=3))
    with pytest.raises(SchedlangError, match="a step is a whole number|>= 0"):
        alpha(at(batch=-1))
    for bad in (0, -1.0, "1e-3", True, float("nan")):
        with pytest.raises(SchedlangError, match="initial lr"):
            prog["lr"].composer_scheduler(lr=bad)
    unbound = schedlang.compile("param total: int\nschedule lr = cosine(1, 0, total)")["lr"]
    with pytest.raises(SchedlangError, match="needs a value for parameter 'total'"):
        unbound.composer_scheduler()
    assert repr(alpha) == "<ComposerScheduler lr in 'ba', lr=1.0>"


def test_same_as_composer_on_its_own_timestamps():
    """Composer's Timestamp, and its scheduler called as the Trainer calls it."""
    try:
        composer = R._load_composer()
    except R.AnchorUnavailable as exc:
        pytest.skip(f"anchor unavailable: {exc}")
    Time, TimeUnit, Timestamp = composer.time.Time, composer.time.TimeUnit, composer.time.Timestamp
    theirs = composer.scheduler.CosineAnnealingWithWarmupScheduler(t_warmup="4ba", t_max="24ba", alpha_f=0.1)
    lr = schedlang.compile("schedule lr = composer.CosineAnnealingWithWarmupScheduler("
                           "t_warmup=4ba, t_max=24ba, alpha_f=0.1)")["lr"]
    ours = lr.composer_scheduler(unit=TimeUnit.BATCH)
    for k in range(24):
        state = SimpleNamespace(timestamp=Timestamp(batch=k, epoch=k // 8),
                                max_duration=Time(24, TimeUnit.BATCH), dataloader_len=Time(8, TimeUnit.BATCH))
        assert math.isclose(ours(state), theirs(state), rel_tol=1e-12, abs_tol=1e-15), k
    by_epoch = schedlang.compile("schedule lr = step(1, 0.5, 1)")["lr"].composer_scheduler(TimeUnit.EPOCH)
    assert by_epoch(SimpleNamespace(timestamp=Timestamp(batch=17, epoch=2))) == 0.25
