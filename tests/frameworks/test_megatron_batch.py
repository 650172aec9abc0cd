"""``megatron_batch``'s batch-size tables against Megatron's real calculators, driven as
Megatron-LM's training loop drives them.

* ``rampup_batch_size``: megatron-core 0.16.1's ``RampupBatchsizeNumMicroBatchesCalculator``
  (the installed megatron-core).
* ``step_batch_size_schedule``: megatron-core 0.19.2's ``StepBatchsizeNumMicroBatchesCalculator``,
  loaded from its one module file, which ``tools/install_frameworks.sh`` installs into
  ``.frameworks/megatron-core-0.19.2`` beside the environment's 0.16.1.

The loop (Megatron-LM ``train``): before each step ``update_num_microbatches(consumed,
consistency_check=False)``, assert the number of microbatches did not decrease (after step
0), ``update(consumed, consistency_check=True)``, train, then ``consumed += dp * mbs *
get_num_microbatches()``.  Small runs are compared at every step, past the last switch;
production sizes (10**13 tokens) at every switch and a few steps either side, with the
steps and samples of :func:`switch_steps`' closed form.
"""

from __future__ import annotations

import importlib.util
import sys
import time
from bisect import bisect_right
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedlang.library.presets.megatron_batch import (
    batch_at_samples,
    rampup_batch_size,
    step_batch_size_schedule,
    switch_steps,
)

from .real import framework_file, real

ROOT = Path(__file__).resolve().parents[2]
CORE_019 = ROOT / ".frameworks/megatron-core-0.19.2/megatron/core/num_microbatches_calculator.py"
_MODULE_019 = "megatron_core_0_19_2_num_microbatches_calculator"


def core_016():
    return real("megatron.core.num_microbatches_calculator")


def core_019(path=CORE_019, name=_MODULE_019):
    """A module of megatron-core 0.19.2 loaded from its file: the calculator (it imports only
    logging, abc, typing) or, with ``path``, the lr scheduler (``torch`` and
    ``megatron.core.utils.log_single_rank``, which the installed 0.16.1 provides)."""
    if name in sys.modules:
        return sys.modules[name]
    framework_file(path, "megatron-core 0.19.2")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules[name] = module
    return module


def scheduler_019():
    """megatron-core 0.19.2's ``optimizer_param_scheduler`` (Megatron-LM main's lr scheduler)."""
    return core_019(CORE_019.parent / "optimizer_param_scheduler.py",
                    "megatron_core_0_19_2_optimizer_param_scheduler")


def step_calculator(text, seq_length, mbs=1, dp=1):
    return core_019().StepBatchsizeNumMicroBatchesCalculator(mbs, dp, False, 1, text, seq_length)


def ramp_calculator(start, increment, samples, gbs, mbs=1, dp=1, decrease=False):
    return core_016().RampupBatchsizeNumMicroBatchesCalculator(
        gbs, mbs, dp, decrease, 1, start, increment, samples)


# --------------------------------------------------------------------------- driving the real code


class Loop:
    """Megatron-LM's training loop around a calculator: one ``step()`` is one iteration."""

    def __init__(self, calculator, mbs=1, dp=1, consumed=0, iteration=0):
        self.calc, self.mbs, self.dp = calculator, mbs, dp
        self.consumed, self.iteration = consumed, iteration
        self.num_microbatches = calculator.get()

    def step(self):
        """The batch trained by this iteration (and the samples consumed before it)."""
        self.calc.update(self.consumed, consistency_check=False)
        if self.calc.get() != self.num_microbatches and self.iteration != 0:
            assert self.calc.get() > self.num_microbatches, (
                "Number of microbatches should be increasing due to batch size rampup")
        self.num_microbatches = self.calc.get()
        self.calc.update(self.consumed, consistency_check=True)
        before = self.consumed
        batch = self.dp * self.mbs * self.calc.get()
        self.consumed += batch
        self.iteration += 1
        return before, batch


def real_batch_at(calculator, consumed, mbs=1, dp=1):
    calculator.update(consumed, consistency_check=True)
    return dp * mbs * calculator.get()


def compare_every_step(table, calculator, mbs=1, dp=1, extra_steps=5):
    """Walk the real loop and the table side by side past the table's last switch."""
    loop = Loop(calculator, mbs, dp)
    switches = switch_steps(table)
    last_step = switches[-1][0]
    seen = []
    previous = None
    while loop.iteration <= last_step + extra_steps:
        step = loop.iteration
        consumed, batch = loop.step()
        ours = batch_at_samples(table, consumed)
        assert ours == batch, f"step {step}, {consumed} samples consumed: ours {ours}, Megatron {batch}"
        if batch != previous:
            seen.append((step, consumed, batch))
        previous = batch
    # switch_steps lists every entry that takes effect; consecutive equal batches appear in
    # the table only when the text repeats one, which the cases below do not
    assert [s for i, s in enumerate(switches) if i == 0 or s[2] != switches[i - 1][2]] == seen
    return loop.iteration


def compare_at_switches(table, calculator, mbs=1, dp=1, around=3, end_step=None):
    """At every switch and ``around`` steps either side (and the run's end): the real batch at
    the closed form's S_k is S_{k+1} - S_k and the table's batch."""
    switches = switch_steps(table)
    firsts = [s[0] for s in switches]

    def samples_at(step):
        first, samples, batch = switches[bisect_right(firsts, step) - 1]
        return samples + (step - first) * batch

    steps = {k + d for k, _, _ in switches for d in range(-around, around + 1) if k + d >= 0}
    if end_step is not None:
        assert end_step > switches[-1][0]
        steps |= {end_step - 1, end_step}
    for step in sorted(steps):
        before, after = samples_at(step), samples_at(step + 1)
        batch = real_batch_at(calculator, before, mbs, dp)
        assert batch == after - before == batch_at_samples(table, before), (
            f"step {step} ({before} samples consumed): Megatron {batch}, ours {after - before}")
    return switches


# --------------------------------------------------------------------------- the step schedule (0.19.2)

#: (text, seq_length): runs short enough to step through every iteration.
SMALL_STEP = [
    ("0:4 100:8 250:16", None),
    ("0:3 10:5 11:7 40:9", None),  # 10:5 is passed within one step (S = 9 -> 12) and never used
    ("0:64 10:16 20:128", None),  # a smaller batch passed within one step: no decrease assert
    ("5K:64 0:32", 100),  # unsorted: 50 samples
    ("0:32,4.1M:64", 1000),  # 4 099 999 tokens -> 4099 samples
    ("0:8 2.01K:16 1e4:32", None),  # 2009 samples
    ("0:8 1k:16 0.5K:12", None),  # lower-case suffix, sorted to 0:8 500:12 1000:16
    ("0:32.9 1000:64.2", None),  # batch sizes truncate
    ("  0:5\t 33:6 ", None),
    ("0:7", None),
    ("100:32 5000:64", 2048),  # 100 tokens are 0 samples: a valid first threshold
    ("0:16 1.5K:48 12.3K:96 1e5:112", 7),
]

#: (text, seq_length, run tokens): production sizes, compared at every switch.
PRODUCTION_STEP = [
    ("0:32 90B:64", 2048, 300 * 10**9),
    ("0:768 250B:1536 500B:3072 750B:6144", 4096, 10**13),
    ("0:16 2.4B:320 4.35B:512 1.1T:1024", 2048, 10**13),
    ("0:3072 100B:6144 469B:15360", 4096, 10**13),
    ("0:1 1:2 1K:3 0.3M:4096 4.1T:8192 9.99T:16384", None, 10**13),  # thresholds in samples
]


@pytest.mark.parametrize("text, seq_length", SMALL_STEP, ids=repr)
def test_step_schedule_every_step(text, seq_length):
    table = step_batch_size_schedule(text, seq_length)
    calculator = step_calculator(text, seq_length)
    assert list(table) == calculator.schedule
    compare_every_step(table, calculator)


@pytest.mark.parametrize("text, seq_length, tokens", PRODUCTION_STEP, ids=repr)
def test_step_schedule_production(text, seq_length, tokens):
    table = step_batch_size_schedule(text, seq_length)
    calculator = step_calculator(text, seq_length)
    assert list(table) == calculator.schedule
    switches = switch_steps(table)
    per_sample = seq_length or 1
    last, samples, batch = switches[-1]
    end_step = last + -(-(tokens // per_sample - samples) // batch)
    compare_at_switches(table, calculator, end_step=end_step)


def test_step_schedule_research_example():
    table = step_batch_size_schedule("0:32 90B:64", 2048)
    assert table == ((0, 32), (43_945_312, 64))
    assert switch_steps(table) == [(0, 0, 32), (1_373_291, 43_945_312, 64)]
    assert 43_945_312 * 2048 == 89_999_998_976
    calculator = step_calculator("0:32 90B:64", 2048)
    assert real_batch_at(calculator, 1_373_290 * 32) == 32
    assert real_batch_at(calculator, 1_373_291 * 32) == 64


@pytest.mark.parametrize("value, expected", [
    ("4.1M", 4_099_999), ("2.01K", 2009), ("1e3K", 10**6), ("90b", 90 * 10**9), (" 7 ", 7),
    ("1_000", 1000), ("0.1K", 100), ("1.1T", 1_100_000_000_000), ("2.4B", 2_400_000_000),
    ("4.35B", 4_350_000_000), ("0.3M", 300_000), ("64.9", 64), ("0.29K", 290), ("1.005K", 1004),
    ("9.99T", 9_990_000_000_000), ("+3", 3), ("0.7", 0), ("1E3", 1000),
])
def test_suffix_quirks(value, expected):
    real_value = core_019().StepBatchsizeNumMicroBatchesCalculator._parse_numeric_value(value)
    assert real_value == expected
    if expected:
        assert step_batch_size_schedule(f"0:1 {value.strip()}:2", None)[-1] == (expected, 2)
    else:
        with pytest.raises(ValueError, match="strictly increasing"):
            step_batch_size_schedule(f"0:1 {value.strip()}:2", None)


@settings(max_examples=300, deadline=None)
@given(whole=st.integers(0, 99_999), frac=st.text("0123456789", max_size=6),
       suffix=st.sampled_from(["", "K", "M", "B", "T", "k", "m", "b", "t"]),
       seq_length=st.one_of(st.none(), st.integers(1, 8192)))
def test_parse_matches(whole, frac, suffix, seq_length):
    number = f"{whole}.{frac}{suffix}" if frac else f"{whole}{suffix}"
    text = f"0:16 {number}:32"
    calculator = core_019().StepBatchsizeNumMicroBatchesCalculator
    expected = calculator._parse_schedule(text, seq_length)
    try:
        ours = step_batch_size_schedule(text, seq_length)
    except ValueError:
        with pytest.raises(AssertionError):
            step_calculator(text, seq_length)
        return
    assert list(ours) == expected


#: (text, seq_length, what the message says): Megatron refuses each when building the calculator.
STEP_ERRORS = [
    ("", None, "no entries"),
    ("   ", 2048, "no entries"),
    ("0:32 100", None, "THRESHOLD:BATCH_SIZE"),
    ("10:32", None, "must be 0"),
    ("0:32 0:64", None, "strictly increasing, but entries '0:32' and '0:64' both give 0 samples"),
    ("0:32 1000:64", 2048, "within one sample"),
    ("0:32 2K:64 3K:96", 2048, "strictly increasing"),
    ("0:0", None, "positive"),
    ("0:-5", None, "positive"),
    ("0:32 x:64", None, "not a number"),
    ("0:32 :64", None, "not a number"),
    ("0:32 5:", None, "not a number"),
    ("0:32 5:6:7", None, "not a number"),
    ("0:32 1e400:64", None, "not a finite number"),
    ("0:nan", None, "not a finite number"),
    ("0:32 inf:64", None, "not a finite number"),
    ("0:32 -100:16", None, "must be 0"),
    ("0:32 100:64", 0, "positive"),
]


@pytest.mark.parametrize("text, seq_length, message", STEP_ERRORS, ids=repr)
def test_step_schedule_errors(text, seq_length, message):
    with pytest.raises(ValueError, match=message):
        step_batch_size_schedule(text, seq_length)
    with pytest.raises((AssertionError, ValueError, OverflowError, ZeroDivisionError)):
        step_calculator(text, seq_length)


def test_step_schedule_decrease_is_refused_like_the_training_loop():
    text = "0:64 100:32"
    with pytest.raises(ValueError, match=r"decreases from 64 to 32 at step 2 \(128 samples"):
        step_batch_size_schedule(text, None)
    loop = Loop(step_calculator(text, None))  # the calculator accepts it ...
    loop.step()
    loop.step()
    with pytest.raises(AssertionError, match="should be increasing"):
        loop.step()  # ... the loop asserts at step 2


def test_step_schedule_divisibility_is_megatrons_per_step_check():
    # Not checked by the table (it needs the layout): Megatron checks the entry in force.
    table = step_batch_size_schedule("0:24 100:64", None)
    loop = Loop(step_calculator("0:24 100:64", None, mbs=2, dp=8), mbs=2, dp=8)
    with pytest.raises(AssertionError, match="not divisible"):
        loop.step()
    assert table == ((0, 24), (100, 64))


# --------------------------------------------------------------------------- the ramp (0.16.1)

#: (start, increment, ramp samples, global batch): every step compared.
SMALL_RAMP = [
    (32, 8, 7200, 248),  # the float quirk: 144 at S = 4000
    (16, 16, 5, 160),  # ramp samples < increments: several increments within one sample
    (1, 1, 1, 2),
    (4, 2, 100, 4 + 2 * 7),
    (16, 16, 5_859_375 // 500, 1536),
    (16, 16, 5_859_375, 1536),  # Megatron-LM's GPT-3 175B example
    (3072, 16, 469_000_000_000 // 4096, 15360),  # DeepSeek-V3's 469B tokens at seq 4096
    (3072, 3072, 469_000_000_000 // 4096, 15360),
    (7, 3, 1000, 7 + 3 * 33),
    (5, 5, 10**6 + 7, 5 + 5 * 999),
]

#: (start, increment, ramp samples, global batch, run samples): compared at every switch.
PRODUCTION_RAMP = [
    (16, 16, 10**13 // 2048 // 2, 1536, 10**13 // 2048),
    (32, 32, 469_000_000_000 // 2048, 4096, 10**13 // 2048),
    (1, 1, 10**12 // 4096, 4097, 10**13 // 4096),
    (3, 7, 3 * 10**9 + 1, 3 + 7 * 12345, 10**10),
    (1, 1, 2**53 + 12345, 1001, 2**54),  # S / r above 2**53: float(S) is rounded too
    (1, 2, 999, 2**20 + 1, 10**7),  # 2**19 increments within 999 samples
]


@pytest.mark.parametrize("case", SMALL_RAMP, ids=repr)
def test_ramp_every_step(case):
    table = rampup_batch_size(*case)
    compare_every_step(table, ramp_calculator(*case))


@pytest.mark.parametrize("case", PRODUCTION_RAMP, ids=repr)
def test_ramp_production(case):
    *ramp, run_samples = case
    table = rampup_batch_size(*ramp)
    calculator = ramp_calculator(*ramp)
    last, samples, batch = switch_steps(table)[-1]
    compare_at_switches(table, calculator, end_step=last + -(-(run_samples - samples) // batch))
    # inside each stage the real batch is monotone in S, so equal ends mean constant
    for threshold, batch in table:
        assert real_batch_at(calculator, threshold) == batch
        if threshold:
            assert real_batch_at(calculator, threshold - 1) < batch


def test_a_ramp_over_the_limit_is_refused_before_any_entry_is_computed():
    """10**9 increments in 10**7 samples: one change per sample (10**7 + 1), built increment by
    increment into a MemoryError (issue 39 item 13); the bound is known before building."""
    start = time.process_time()
    with pytest.raises(ValueError, match="changes the batch up to 10000001 times; schedlang follows at "
                                         "most 1000 changes"):
        rampup_batch_size(1, 1, 10_000_000, 1_000_000_001, limit=1000)
    assert time.process_time() - start < 1
    assert len(rampup_batch_size(1, 1, 999, 10**9 + 1, limit=1000)) == 1001  # at the limit: built
    assert len(rampup_batch_size(1, 1, 10**6, 1001, limit=1000)) == 1001


def test_ramp_research_example():
    table = rampup_batch_size(32, 8, 7200, 248)
    assert batch_at_samples(table, 4000) == 144  # exact arithmetic would give 152
    assert real_batch_at(ramp_calculator(32, 8, 7200, 248), 4000) == 144
    assert table[-1] == (7201, 248) and (6934, 240) in table


@settings(max_examples=100, deadline=None)
@given(start=st.integers(1, 40), increment=st.integers(1, 24), n=st.integers(1, 40),
       samples=st.integers(1, 2000))
def test_ramp_matches(start, increment, n, samples):
    case = (start, increment, samples, start + n * increment)
    compare_every_step(rampup_batch_size(*case), ramp_calculator(*case), extra_steps=2)


#: (start, increment, samples, gbs, mbs, dp): with --decrease-batch-size-if-needed.
DECREASE = [
    (24, 8, 1000, 96, 2, 8),
    (1000, 8, 5000, 1400, 3, 8),  # the research note's 1000 -> 984
    (16, 1, 300, 40, 1, 16),
]


@pytest.mark.parametrize("case", DECREASE, ids=repr)
def test_ramp_decrease_batch_size_if_needed(case):
    *ramp, mbs, dp = case
    table = rampup_batch_size(*ramp, micro_batch_size=mbs, data_parallel_size=dp,
                              decrease_batch_size_if_needed=True)
    assert all(batch % (mbs * dp) == 0 for _, batch in table)
    compare_every_step(table, ramp_calculator(*ramp, mbs=mbs, dp=dp, decrease=True), mbs=mbs, dp=dp)


def test_ramp_divisible_layout_is_the_plain_table():
    plain = rampup_batch_size(32, 32, 10_000, 1024)
    assert rampup_batch_size(32, 32, 10_000, 1024, micro_batch_size=4, data_parallel_size=8) == plain
    compare_every_step(plain, ramp_calculator(32, 32, 10_000, 1024, mbs=4, dp=8), mbs=4, dp=8)


def test_ramp_indivisible_batch_is_refused_where_megatron_asserts():
    with pytest.raises(ValueError, match=r"at step 1 \(32 samples consumed\) the global batch 40"):
        rampup_batch_size(32, 8, 100, 64, micro_batch_size=1, data_parallel_size=16)
    loop = Loop(ramp_calculator(32, 8, 100, 64, mbs=1, dp=16), dp=16)
    loop.step()  # step 0 at 32
    with pytest.raises(AssertionError, match="not divisible"):
        loop.step()


def test_ramp_decrease_to_zero_microbatches():
    with pytest.raises(ValueError, match="0 microbatches"):
        rampup_batch_size(8, 8, 100, 64, micro_batch_size=1, data_parallel_size=16,
                          decrease_batch_size_if_needed=True)
    assert ramp_calculator(8, 8, 100, 64, mbs=1, dp=16, decrease=True).get() == 0


#: (args, keywords, message, what megatron-core 0.16.1 raises)
RAMP_ERRORS = [
    ((32, 8, 1000, 32), {}, "no increments", ZeroDivisionError),
    ((32, 8, 0, 64), {}, "zero ramp-up samples", ZeroDivisionError),
    ((32, 8, 1000, 60), {}, "not a whole number of increments", AssertionError),
    ((64, 8, 1000, 32), {}, "below the start", AssertionError),
    ((0, 8, 1000, 32), {}, "start batch size must be positive", AssertionError),
    ((8, 0, 1000, 32), {}, "increment must be positive", AssertionError),
    ((8, 8, -1, 32), {}, "must be non-negative", AssertionError),
    ((8, 8, 100, 0), {}, "global batch size must be positive", AssertionError),
    ((8, 8, 100, 32), {"micro_batch_size": 0, "data_parallel_size": 8}, "positive", AssertionError),
]


@pytest.mark.parametrize("args, keywords, message, raised", RAMP_ERRORS, ids=repr)
def test_ramp_errors(args, keywords, message, raised):
    with pytest.raises(ValueError, match=message):
        rampup_batch_size(*args, **keywords)
    with pytest.raises(raised):
        ramp_calculator(*args, mbs=keywords.get("micro_batch_size", 1),
                        dp=keywords.get("data_parallel_size", 1))


def test_ramp_argument_errors():
    with pytest.raises(ValueError, match="give both"):
        rampup_batch_size(8, 8, 100, 32, decrease_batch_size_if_needed=True)
    with pytest.raises(ValueError, match="give both"):
        rampup_batch_size(8, 8, 100, 32, micro_batch_size=2)
    with pytest.raises(ValueError, match="whole number"):
        rampup_batch_size(8, 8, 100.0, 32)


# --------------------------------------------------------------------------- the closed-form walk


def test_switch_steps_closed_form():
    table = ((0, 3), (10, 5), (11, 7), (40, 9))
    # S: 0 3 6 9 | 12 19 26 33 | 40: 10:5 is passed inside the step from 9 to 12
    assert switch_steps(table) == [(0, 0, 3), (4, 12, 7), (8, 40, 9)]
    assert switch_steps(((0, 5),)) == [(0, 0, 5)]
    with pytest.raises(ValueError, match="threshold 0"):
        switch_steps(((1, 5),))
