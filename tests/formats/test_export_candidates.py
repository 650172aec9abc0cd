"""Export by proof (issue 41, item 3): the presets the search reads off a file's own formula,
beyond warmup-then-decay shapes: Composer's ``ExponentialScheduler`` (``g ** (t / n)``: g and n
read off the exponential) and ``CosineAnnealingWarmRestartsScheduler`` (a cosine restarted every
period: its floor from its midpoint), DeepSpeed's ``LRRangeTest`` (a rise from step 0, smooth or
by a stair every ``lr_range_test_step_size`` steps: ``lr_range_test_staircase``) and the decay
after ``OneCycle``'s cycle (``decay_lr_rate``).  Each is written for a hand-written file equal to
it and run by the framework's own code at every step; a file equal to none is refused with the
closest.  (Composer 0.32.1 has no ``InverseSquareRootScheduler``; llm-foundry's
``InverseSquareRootWithWarmupScheduler`` is a candidate as every preset is.)"""

from __future__ import annotations

import pytest
from anchors.preset_cases import max_error

import schedlang
from formats.test_export_by_proof import _framework_values
from schedlang.errors import SchedlangError
from schedlang.formats.export import export

ONE_CYCLE = "linear(1e-4, 1e-3, 100) >> linear(1e-3, 1e-4, 100)"
EQUAL = [
    ("composer-yaml", "exp(1e-3, 0.5, 100)", ["name: exponential", "gamma: 0.5", "decay_period: 100ba"]),
    ("composer-yaml", "exp(1e-3, 0.99, 1)", ["name: exponential", "gamma: 0.99", "decay_period: 1ba"]),
    ("composer-yaml", "cycle(cosine(1e-3, 1e-4, 100))", ["name: cosine_warmrestart", "t_0: 100ba",
                                                         "alpha_f: 0.1"]),
    ("deepspeed-json", "1e-3 * (1 + 0.5 * t / 100)",
     ['"type": "LRRangeTest"', '"lr_range_test_step_rate": 0.005']),
    # LRRangeTest's staircase: a stair every lr_range_test_step_size steps
    ("deepspeed-json", "1e-3 * (1 + 0.5 * floor(t / 100))",
     ['"type": "LRRangeTest"', '"lr_range_test_step_size": 100', '"lr_range_test_step_rate": 0.5',
      '"lr_range_test_staircase": true']),
    ("deepspeed-json", "2e-4 * (1 + 2 * floor(t / 7))",
     ['"lr_range_test_min_lr": 0.0002', '"lr_range_test_step_size": 7', '"lr_range_test_staircase": true']),
    ("deepspeed-json", f"{ONE_CYCLE} >> (1e-4 / (1 + 0.05 * t))",
     ['"type": "OneCycle"', '"decay_lr_rate": 0.05', '"decay_step_size": 1']),
]
NONE = [
    ("composer-yaml", "exp(1e-3, 0.5, 100) + 1e-5"),
    ("composer-yaml", "cycle(linear(1e-3, 1e-4, 100))"),
    ("deepspeed-json", "1e-3 * (1 + 0.5 * t / 100) ** 2"),
    ("deepspeed-json", f"{ONE_CYCLE} >> (1e-4 * 0.99 ** t)"),
    ("deepspeed-json", "1e-3 * (1 + 0.5 * floor((t + 1) / 100))"),  # each stair a step early
]


def test_the_closest_to_an_early_staircase_is_the_staircase_and_its_first_differing_step():
    with pytest.raises(SchedlangError) as info:
        export(_source(NONE[-1][1]), "lr.sched", format="deepspeed-json")
    assert ("the closest, deepspeed.LRRangeTest(lr_range_test_step_size=100, lr_range_test_step_rate=0.5, "
            "lr_range_test_staircase=true), first differs at step 99") in info.value.message


def _source(text: str) -> str:
    return f"schedule lr = {text}\n"


@pytest.mark.parametrize("fmt, text, says", EQUAL, ids=[t for _, t, _ in EQUAL])
def test_a_file_equal_to_the_preset_is_written_as_it_and_runs_as_the_file(fmt, text, says):
    exported = export(_source(text), "lr.sched", format=fmt)  # read back and proven inside
    for fragment in says:
        assert fragment in exported, exported
    steps = range(1200)
    ours = schedlang.compile(_source(text))["lr"].values(steps)
    assert max_error(_framework_values(fmt, exported, steps), ours, 1e-3) <= 1e-12


@pytest.mark.parametrize("fmt, text", NONE, ids=[t for _, t in NONE])
def test_a_file_equal_to_none_is_refused_with_the_closest(fmt, text):
    with pytest.raises(SchedlangError) as info:
        export(_source(text), "lr.sched", format=fmt)
    library = fmt.split("-")[0]
    assert info.value.message.startswith((f"no {library} scheduler equals this lr schedule: the closest, "
                                          f"{library}.", f"no {library} scheduler has the shape")), \
        info.value.message
    assert info.value.span.line == 1
