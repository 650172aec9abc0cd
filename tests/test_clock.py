"""The run's time in samples and tokens (SPEC §12): batch tables, exact maps, token-clock segments.

Every value is compared with a simulation written here from the SPEC's words alone: a run
walked step by step, each step taking the batch of the last threshold its consumed-before
samples reached, each segment ending at its own clock's end.  Nothing in it is shared with
``core/clock.py`` or ``semantics/clock.py``.
"""

from __future__ import annotations

import math
import random
import time
from fractions import Fraction

import pytest

import schedlang
from schedlang.core.clock import Clock
from schedlang.errors import SchedlangError
from schedlang.limits import MAX_BATCH_STAGES


def walk(table, steps):
    """``S_k`` for ``k = 0 .. steps`` by stepping: the batch of the last threshold <= S_k."""
    samples, out = 0, []
    for _ in range(steps + 1):
        out.append(samples)
        samples += [batch for threshold, batch in table if threshold <= samples][-1]
    return out


TABLES = [
    ((0, 7),),
    ((0, 3), (10, 5)),
    ((0, 3), (10, 5), (11, 2), (40, 9)),          # 11 is passed inside one step of 5: skipped
    ((0, 16), (1, 320)),                           # a switch after one sample
    ((0, 5), (5, 6), (12, 4), (13, 1), (14, 8)),  # a decreasing batch, then increasing again
]


@pytest.mark.parametrize("table", TABLES)
def test_maps_match_a_step_by_step_walk(table):
    clock = Clock(table, seq_len=3)
    samples = walk(table, 200)
    for k, s in enumerate(samples[:-1]):
        assert clock.samples_at(k) == s
        assert clock.tokens_at(k) == 3 * s
        assert clock.batch_at(k) == samples[k + 1] - s
    for n in range(0, samples[-2] + 1):
        first = next(k for k, s in enumerate(samples) if s >= n)
        assert clock.step_at_samples(n) == first
        assert clock.step_at_tokens(3 * n) == first
        # a token count inside a sample: the first step whose tokens reach it
        assert clock.step_at_tokens(3 * n - 1) == next(k for k, s in enumerate(samples) if 3 * s >= 3 * n - 1)


def test_production_sizes_are_exact():
    # DeepSeek-V3's published sizes: seq 4096, 3072 -> 15360 samples over the first 469B tokens
    # in 12 equal steps of batch, then a 14.8T-token run; every count is a Python int.
    seq = 4096
    batches = [3072 + i * 1024 for i in range(13)]
    thresholds = [math.ceil(Fraction(469 * 10**9 * i, 12 * seq)) for i in range(12)]
    clock = Clock(tuple(zip(thresholds, batches)), seq)
    last = clock.step_at_tokens(14_800 * 10**9)
    assert clock.tokens_at(last) >= 14_800 * 10**9 > clock.tokens_at(last - 1)
    rng = random.Random(7)
    for n in [10**15, 10**18, *(rng.randrange(10**16) for _ in range(200))]:
        k = clock.step_at_tokens(n)
        assert clock.tokens_at(k) >= n and (k == 0 or clock.tokens_at(k - 1) < n)
        assert clock.step_at_tokens(clock.tokens_at(k)) == k
    # each switch at the first step whose consumed-before samples reach the threshold
    for stage in clock.stages[1:]:
        threshold = max(t for t, _ in clock.table if t <= stage.samples)
        assert clock.samples_at(stage.first - 1) < threshold <= stage.samples


@pytest.mark.parametrize("table", [(), ((1, 4),), ((0, 4), (0, 5)), ((0, 4), (9, 0))])
def test_a_bad_table_is_refused(table):
    with pytest.raises(ValueError):
        Clock(table)


# -- the language ----------------------------------------------------------------------

SMALL = """
param seq_len: int = 4
batch = stages(3, [5, 2, 9], [40tok, 41tok, 300tok])
"""


def simulate(table, seq, parts, steps):
    """SPEC §12 by hand: ``parts`` are (unit, length or None, f(local)); unit None is steps."""
    samples = walk(table, steps)
    tokens = [seq * s for s in samples]
    out, index, start_step, start_count = [], 0, 0, Fraction(0)

    def count(unit, k):
        return k if unit is None else tokens[k] if unit == "tok" else samples[k]

    for k in range(steps):
        while True:
            unit, length, f = parts[index]
            local = count(unit, k) - (start_step if unit is None else start_count)
            if length is None or local < length or index == len(parts) - 1:
                break
            end = (start_step if unit is None else start_count) + length
            index += 1
            nxt = parts[index][0]
            start_step = k
            start_count = Fraction(count(nxt, k)) if unit is None else (
                end if nxt == unit else Fraction(count(nxt, k)))
        local = count(unit, k) - (start_step if unit is None else start_count)
        out.append(f(min(local, length) if length is not None else local))
    return out


CASES = [
    # (schedule text, parts for the simulation)
    ("warmup(linear, 4) >> constant(1, 100tok) >> linear(1, 0, 201tok) >> constant(0.5)",
     [(None, 4, lambda x: x / 4), ("tok", 100, lambda x: 1), ("tok", 201, lambda x: 1 - x / 201),
      (None, None, lambda x: 0.5)]),
    ("cosine(1, 0.1, 333tok) >> linear(0.1, 0.2, 7) >> cosine(0.2, 0, 1000tok) >> constant(0)",
     [("tok", 333, lambda x: 0.1 + 0.9 * (1 + math.cos(math.pi * x / 333)) / 2),
      (None, 7, lambda x: 0.1 + 0.1 * x / 7),
      ("tok", 1000, lambda x: 0.2 * (1 + math.cos(math.pi * x / 1000)) / 2),
      (None, None, lambda x: 0)]),
    ("linear(0, 1, 50sp) >> step(1, 0.5, 64sp)",
     [("sp", 50, lambda x: x / 50), ("sp", None, lambda x: 0.5 ** (x // 64))]),
    ("constant(2, 10) >> exp(1, 0.5, 97tok) for 500tok >> constant(3)",
     [(None, 10, lambda x: 2), ("tok", 500, lambda x: 0.5 ** (x / 97)), (None, None, lambda x: 3)]),
]


@pytest.mark.parametrize("text,parts", CASES, ids=[c[0] for c in CASES])
def test_token_clock_segments_match_the_simulation_at_every_step(text, parts):
    prog = schedlang.compile(SMALL + f"schedule lr = {text}\n")
    lr = prog["lr"]
    table = prog.clock.table
    expected = simulate(table, 4, parts, 400)
    steps = list(range(400))
    got = lr.values(steps)
    assert got == pytest.approx(expected, rel=1e-12, abs=1e-15)
    torch = pytest.importorskip("torch")
    values = lr.torch(torch.arange(400, dtype=torch.int64), dtype=torch.float64).tolist()
    assert values == pytest.approx(expected, rel=1e-12, abs=1e-15)


def test_jax_agrees_with_the_reference_on_the_token_clock():
    jax = pytest.importorskip("jax")
    prog = schedlang.compile(SMALL + "schedule lr = " + CASES[1][0])
    steps = list(range(400))
    values = prog["lr"].jax(jax.numpy.asarray(steps)).tolist()
    assert values == pytest.approx(prog["lr"].values(steps), rel=1e-6, abs=1e-7)


DEEPSEEK = """
param seq_len: int = 4096
batch = stages(3072, [6144, 15360], [100e9tok, 469e9tok])
schedule lr = warmup(linear, 2000) >> constant(2.2e-4, 10e12tok)
           >> cosine(2.2e-4, 2.2e-5, 4.3e12tok) >> constant(2.2e-5)
"""


def test_production_run_switches_where_the_tokens_say():
    prog = schedlang.compile(DEEPSEEK)
    lr = prog["lr"]
    end_constant = prog.step_at(tokens=prog.tokens_at(2000) + 10 * 10**12)
    assert lr(end_constant - 1) == pytest.approx(2.2e-4, rel=1e-15)
    assert lr(end_constant) < 2.2e-4
    # the cosine's local t is the tokens since its start, exactly
    k = end_constant + 12_345
    x = prog.tokens_at(k) - (prog.tokens_at(2000) + 10 * 10**12)
    want = 2.2e-5 + (2.2e-4 - 2.2e-5) * (1 + math.cos(math.pi * x / 4.3e12)) / 2
    assert lr(k) == pytest.approx(want, rel=1e-12)
    end = prog.step_at(tokens=prog.tokens_at(2000) + 14_300 * 10**9)
    assert lr(end - 1) > 2.2e-5 and lr(end) == pytest.approx(2.2e-5, rel=1e-15)


def test_maps_on_the_program():
    prog = schedlang.compile(SMALL + "schedule lr = constant(1)")
    assert [prog.batch_at(k) for k in range(6)] == [3, 3, 3, 3, 2, 2]  # 41tok is 11 samples: passed at 12
    assert prog.samples_at(4) == 12 and prog.tokens_at(4) == 48
    assert prog.step_at(tokens=48) == 4 and prog.step_at(samples=13) == 5
    with pytest.raises(SchedlangError):
        prog.step_at(tokens=1, samples=1)
    with pytest.raises(SchedlangError):
        prog.tokens_at(-1)


def test_a_constant_batch_param_gives_the_maps_without_a_declaration():
    prog = schedlang.compile("param batch_size: int = 8\nparam seq_len: int = 10\n"
                             "schedule lr = constant(1)")
    assert prog.tokens_at(3) == 240 and prog.step_at(tokens=241) == 4


def test_values_the_clock_was_computed_with_are_fixed_and_rebinding_recomputes():
    prog = schedlang.compile(SMALL + "param w: int = 4\nschedule lr = linear(0, 1, w) >> "
                                     "constant(1, 100tok) >> constant(0)")
    assert set(prog.fixed) == {"seq_len", "w"}
    other = prog.rebind({"w": 6, "seq_len": 2})
    parts = [(None, 6, lambda x: x / 6), ("tok", 100, lambda x: 1), (None, None, lambda x: 0)]
    assert other["lr"].values(range(200)) == pytest.approx(simulate(other.clock.table, 2, parts, 200))
    # generated code takes no keyword for them: they are part of the time axis
    source = prog.python_source()
    assert "seq_len" not in source and "def lr(t)" in source


BAD = [
    ("batch = stages(8, [16], [100])\nschedule lr = constant(1)", "threshold counts samples or tokens"),
    ("batch = stages(8, [16], [100tok])\nschedule lr = constant(1)", "needs the tokens per sample"),
    ("batch = stages(8, [16, 32], [100sp])\nschedule lr = constant(1)", "2 batch sizes"),
    ("batch = stages(8, [16, 32], [100sp, 50sp])\nschedule lr = constant(1)", "not above"),
    ("batch = stages(0, [16], [100sp])\nschedule lr = constant(1)", "at least 1 sample"),
    ("batch = 8\nbatch = 9\nschedule lr = constant(1)", "declares `batch` twice"),
    ("schedule lr = constant(1)\nlet b = stages(8, [16], [100sp])", "goes in `batch = ...`"),
    ("param n: int\nbatch = n\nschedule lr = constant(1)", "uses parameter 'n', which has no value"),
    ("batch = 8\nschedule lr = constant(100sp)", "is a length, not a value"),
    ("batch = 8\nschedule lr = linear(0, 1, 10) + constant(1, 100sp)", "mixes the step clock"),
    ("batch = 8\nschedule lr = (linear(0, 1, 10) for 100sp) + linear(0, 1, 10sp)",
     "counted in steps (cut at a count"),
    ("batch = 8\nschedule lr = cosine(1, 0, 100sp) for 10", "counts samples, so its length"),
    ("batch = 8\nschedule lr = poly(1, 0, 100sp) + linear(0, 1, 10tok)", "mixes the step clock"),
    ("batch = 8\nschedule lr = repeat(linear(1, 0, 100sp), 3)", "must count steps"),
    ("batch = 8\nschedule lr = hf.linear(lr=1, num_warmup_steps=10, num_training_steps=100sp)",
     "counts steps, as its framework does"),
    ("batch = 8\nschedule lr = linear(0, 1, 10) >> cyclic(0, 1, 10, 20sp)",
     "gets lengths in steps and in samples"),
]


@pytest.mark.parametrize("text,message", BAD, ids=[b[1] for b in BAD])
def test_mistakes_are_located_errors(text, message):
    with pytest.raises(SchedlangError) as info:
        schedlang.compile(text)
    assert message in str(info.value)
    assert "<string>:" in str(info.value)


def test_without_a_batch_declaration_tok_keeps_the_constant_batch_rule():
    prog = schedlang.compile("param tokens_per_batch: int = 1000\n"
                             "schedule lr = constant(1, 2500tok) >> constant(0)")
    assert [prog["lr"](k) for k in range(4)] == [1, 1, 0, 0]  # floor(2500 / 1000) steps


def test_check_reports_stages_starts_totals_and_the_ramp_trap(tmp_path):
    from schedlang.cli.commands import main

    path = tmp_path / "ramp.sched"
    path.write_text("param seq_len: int = 2048\nbatch = stages(256, [512], [1e9tok])\n"
                    "schedule lr = warmup(linear, 2000) >> cosine(3e-4, 3e-5, 20e9tok)\n")
    import contextlib
    import io

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        assert main(["check", str(path)]) == 0
    text = out.getvalue()
    assert "from step 1908: 512 samples (1,048,576 tokens) per step" in text
    # 1908 steps of 256 * 2048 tokens, then 92 of 512 * 2048
    assert "segments start at steps 0, 2000 (1,096,810,496 (1.097B) tokens)" in text
    # the cosine's 20e9 tokens end inside step 21073's batch: the run is 21074 steps
    assert "schedule lr: 21074 steps, 21,097,349,120 (21.1B) tokens" in text
    assert "a length of 2000 steps from step 0 meets the batch ramp" in err.getvalue()
    assert "fewer than 2000 steps at the final batch" in err.getvalue()


# -- scheduler classes -------------------------------------------------------------------

CLASS_SOURCE = SMALL + "schedule lr = warmup(linear, 4) >> cosine(1, 0.1, 333tok) >> constant(0.1)"


def _class_and_optimizer():
    torch = pytest.importorskip("torch")
    prog = schedlang.compile(CLASS_SOURCE)
    opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(2))], lr=0.0)
    return prog, prog.scheduler_class("Tok")(opt), opt


def test_the_class_counts_planned_samples_and_tokens():
    prog, sched, opt = _class_and_optimizer()
    for k in range(60):
        assert sched.samples == prog.samples_at(k) and sched.tokens == prog.tokens_at(k)
        assert opt.param_groups[0]["lr"] == prog["lr"](k)
        sched.step()
    state = sched.state_dict()
    counts = (state["last_epoch"], state["samples"], state["tokens"])
    assert counts == (60, prog.samples_at(60), prog.tokens_at(60))


def _cosine_at(prog, tokens):
    """CLASS_SOURCE's cosine as a function of the tokens consumed (it starts at T_4)."""
    return 0.55 + 0.45 * math.cos(math.pi * (tokens - prog.tokens_at(4)) / 333)


def _batch_at_samples(prog, samples):
    return max(entry for entry in prog.clock.table if entry[0] <= samples)[1]


def test_measured_counts_move_the_schedule_by_the_tokens_consumed():
    """A measured count is the clock (SPEC §12, issue 36 item 4b): the token segment's value is
    its formula at the count itself, not at the planned step the count maps to."""
    prog, sched, opt = _class_and_optimizer()
    for _ in range(5):
        sched.step()
    sched.step(tokens=3)  # a short, packed batch: 3 tokens where the plan takes 12
    tokens = prog.tokens_at(5) + 3
    assert sched.tokens == tokens and sched.last_epoch == prog.step_at(tokens=tokens)
    assert opt.param_groups[0]["lr"] == pytest.approx(_cosine_at(prog, tokens), rel=1e-14)
    assert opt.param_groups[0]["lr"] != pytest.approx(prog["lr"](sched.last_epoch), rel=1e-6)
    sched.step()  # a plain step takes the batch the table gives at the samples consumed
    tokens += 4 * _batch_at_samples(prog, tokens // 4)
    assert sched.tokens == tokens
    assert opt.param_groups[0]["lr"] == pytest.approx(_cosine_at(prog, tokens), rel=1e-14)
    saved = sched.state_dict()
    _, again, _ = _class_and_optimizer()
    again.load_state_dict(saved)
    assert (again.last_epoch, again.samples, again.tokens) == (sched.last_epoch, sched.samples, sched.tokens)


RESTORED = """param seq_len: int = 4
batch = 8
schedule lr = warmup(linear, 4) >> cosine(1, 0.1, 3000tok) >> constant(0.1)
"""


def _standalone_class(prog, tmp_path):
    """The class of ``schedlang compile --target torch``, loaded without schedlang's runtime."""
    import importlib.util

    from schedlang.codegen.emit import emit

    path = tmp_path / "restored_module.py"
    path.write_text(emit(prog, "torch", "restored.sched", "Restored"))
    spec = importlib.util.spec_from_file_location("schedlang_restored_standalone", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.Restored


@pytest.mark.parametrize("kind", ["in-process", "standalone"])
def test_restored_counts_are_the_clock_of_lr_and_state(kind, tmp_path):
    """Issue 39 item 2: a state whose tokens (2000 at step 30) left the plan (960).  The counts
    are the clock: on load and after each plain step() the lr is the formula at the counts
    state_dict() reports, and plain steps add the table's batch to them."""
    torch = pytest.importorskip("torch")
    prog = schedlang.compile(RESTORED)
    cls = prog.scheduler_class("Restored") if kind == "in-process" else _standalone_class(prog, tmp_path)
    first = cls(torch.optim.SGD([torch.nn.Parameter(torch.zeros(2))], lr=0.0))
    for _ in range(30):
        first.step()
    state = first.state_dict()
    assert (state["last_epoch"], state["tokens"]) == (30, 960)
    state = {**state, "samples": 500, "tokens": 2000}
    opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(2))], lr=0.0)
    sched = cls(opt)
    sched.load_state_dict(state)

    end = prog.tokens_at(4) + 3000  # where the cosine ends: 3128, between steps 97 and 98

    def want(tokens):
        if tokens >= end:
            return 0.1
        return 0.55 + 0.45 * math.cos(math.pi * (tokens - prog.tokens_at(4)) / 3000)

    for k in range(45):
        saved = sched.state_dict()
        tokens = saved["tokens"]
        assert tokens == 2000 + 32 * k and saved["samples"] == tokens // 4
        step = prog.step_at(tokens=tokens)  # one earlier while the cosine still covers the count
        assert saved["last_epoch"] == step - (tokens < end <= prog.tokens_at(step))
        assert opt.param_groups[0]["lr"] == pytest.approx(want(tokens), rel=1e-14), k
        sched.step()


@pytest.mark.parametrize("change,message", [
    ({"tokens": -5}, "whole number >= 0"),
    ({"samples": 1.5}, "whole number >= 0"),
    ({"_measured": (1, 2)}, "disagree"),
])
def test_the_class_checks_the_counts_it_loads(change, message):
    _, sched, _ = _class_and_optimizer()
    sched.step()
    state = {**sched.state_dict(), **change}
    _, other, _ = _class_and_optimizer()
    with pytest.raises(ValueError, match=message):
        other.load_state_dict(state)


def test_measured_counts_are_checked():
    _, sched, _ = _class_and_optimizer()
    for bad in (dict(tokens=-1), dict(tokens=1.5), dict(tokens=1, samples=1), dict(samples=True)):
        with pytest.raises(ValueError):
            sched.step(**bad)


def test_a_class_without_a_batch_schedule_refuses_measured_counts():
    torch = pytest.importorskip("torch")
    opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(2))], lr=0.0)
    sched = schedlang.compile("linear(1, 0, 10)").scheduler_class("Plain")(opt)
    with pytest.raises(ValueError, match="needs a batch schedule"):
        sched.step(tokens=10)
    assert "tokens" not in sched.state_dict()


def test_on_samples_puts_a_step_counted_schedule_on_the_sample_clock():
    prog = schedlang.compile(SMALL + "schedule lr = linear(0, 1, 4) >> on_samples(linear(1, 0, 30) for 30)"
                                     " >> constant(0)")
    parts = [(None, 4, lambda x: x / 4), ("sp", 30, lambda x: 1 - x / 30), (None, None, lambda x: 0)]
    assert prog["lr"].values(range(100)) == pytest.approx(simulate(prog.clock.table, 4, parts, 100))


@pytest.mark.parametrize("text,message", [
    ("schedule lr = on_tokens(linear(1, 0, 10))", "declares none"),
    ("batch = 4\nschedule lr = on_tokens(linear(1, 0, 10tok))", "already counts tokens"),
    ("batch = 4\nschedule lr = on_tokens(1, 2)", "takes one schedule"),
    ("batch = 4\nschedule lr = stage(4, [8], [10sp])", "did you mean 'stages'"),
])
def test_on_clock_mistakes(text, message):
    with pytest.raises(SchedlangError, match=message):
        schedlang.compile(text)


# -- the frameworks' batch schedules (exact to their code: tests/frameworks/test_megatron_batch.py) --


def test_megatron_step_batch_size_schedule_switches_where_megatron_does():
    prog = schedlang.compile('param seq_len: int = 2048\n'
                             'batch = megatron.step_batch_size_schedule("0:32 90B:64")\n'
                             'schedule lr = constant(1)')
    # 90B tokens // 2048 = 43 945 312 samples: the switch at 89 999 998 976 tokens, not 90B
    assert prog.step_at(samples=43_945_312) == 1_373_291
    assert prog.batch_at(1_373_290) == 32 and prog.batch_at(1_373_291) == 64
    assert prog.tokens_at(1_373_291) == 89_999_998_976


def test_megatron_rampup_keeps_its_float_division():
    prog = schedlang.compile("batch = megatron.rampup_batch_size(32, 8, 7200, global_batch_size=248)\n"
                             "schedule lr = constant(1)")
    table = dict(prog.clock.table)
    batch = [b for s, b in sorted(table.items()) if s <= 4000][-1]
    assert batch == 144  # exact arithmetic gives 152


@pytest.mark.parametrize("text,message", [
    ('batch = megatron.step_batch_size_schedule("5:32 90B:64")', "must be 0"),
    ('param seq_len: int = 4\nbatch = megatron.step_batch_size_schedule("0:32", seq_length=8)',
     "seq_length is 8 but the file's seq_len is 4"),
    ("batch = megatron.step_batch_size_schedule(3)", "double-quoted string"),
    ("batch = megatron.rampup_batch_size(32, 8, 7200)", "missing 'global_batch_size'"),
    ("batch = megatron.rampup_batch_size(32, 8, 7200, gbs=3)", "no argument 'gbs'"),
])
def test_megatron_batch_mistakes(text, message):
    with pytest.raises(SchedlangError, match=message) as info:
        schedlang.compile(text + "\nschedule lr = constant(1)")
    assert "<string>:" in str(info.value)


@pytest.mark.parametrize("batch, message", [
    # 10**9 increments: built one by one into a 4 GiB MemoryError, unlocated (issue 39 item 13)
    ("megatron.rampup_batch_size(1, 1, 10000000, global_batch_size=1000000001)",
     "changes the batch up to 10000001 times; schedlang follows at most 1000 changes"),
    ("megatron.rampup_batch_size(1, 1, 1000000000000, global_batch_size=100001)",  # 100,000 stages
     "changes the batch up to 100000 times"),
    ('megatron.step_batch_size_schedule("' + " ".join(f"{4 * k}:{k + 1}" for k in range(1002)) + '")',
     "this batch schedule changes the batch 1001 times; schedlang follows at most 1000 changes"),
])
def test_a_batch_schedule_of_too_many_stages_is_refused_at_once_and_located(batch, message):
    start = time.process_time()
    with pytest.raises(SchedlangError, match=message) as info:
        schedlang.compile(f"param seq_len: int = 4\nbatch = {batch}\n"
                          "schedule lr = cosine(1e-3, 1e-4, 1e12tok)\n")
    assert time.process_time() - start < 5
    assert info.value.span.line == 2 and info.value.span.column == 9


def test_a_ramp_at_the_stage_limit_compiles():
    """1000 increments, each a stage of its own (benchmarks/bench_clock.py times one under a token
    cosine, a branch per stage)."""
    text = ("param seq_len: int = 4\nbatch = megatron.rampup_batch_size(1, 1, {}, "
            "global_batch_size={})\nschedule lr = constant(1e-3, 10tok) >> constant(1e-4)\n")
    n = MAX_BATCH_STAGES
    prog = schedlang.compile(text.format(n * 10 * (n + 1), n + 1))
    assert len(prog.clock.stages) == MAX_BATCH_STAGES + 1
    assert prog["lr"](0) == pytest.approx(1e-3)


RAMP = ("param seq_len: int = 4\nbatch = megatron.rampup_batch_size(1, 1, {samples}, "
        "global_batch_size={gbs})\nschedule lr = warmup(linear, 100) >> cosine(1e-3, 1e-4, 1e7tok) "
        ">> constant(1e-4)\n")


def _ramp(n):
    return schedlang.compile(RAMP.format(samples=n * 10 * (n + 1), gbs=n + 1))


def test_a_ramp_is_one_formula_whatever_its_stages():
    """Issue 39 item 13: the cosine reads the token count T(t), one lookup in the stages, not a
    branch per stage; the reference's source grows by the table only, and a cold compile of a
    1,000-stage ramp is far below the seconds a branch per stage cost."""
    from sympy.core.cache import clear_cache

    small, large = _ramp(10), _ramp(MAX_BATCH_STAGES)
    assert len(small["lr"].expr.args) == len(large["lr"].expr.args) == 3
    body = large.python_source()
    assert body.count("def ") == 2 and body.count("return") == 4  # lr's 3 and _count's
    clear_cache()
    start = time.process_time()
    _ramp(MAX_BATCH_STAGES)["lr"](5)
    assert time.process_time() - start < 2.0  # 5-6 s with a branch per stage


@pytest.mark.parametrize("n", [1, 3, 40])
def test_the_count_lookup_is_exact_and_the_expanded_form_agrees(n):
    """T(t) read by the exact evaluator, the reference and the per-stage form the array targets
    print (``expand_counts``) give one value at every stage boundary and its neighbours."""
    from schedlang.core.clock import expand_counts
    from schedlang.core.exact_eval import compile_expr

    prog = _ramp(n)
    expr = prog["lr"].expr
    expanded = expand_counts(expr)
    exact, per_stage = compile_expr(expr), compile_expr(expanded)
    steps = sorted({max(s.first + d, 0) for s in prog.clock.stages for d in (-1, 0, 1)} | {99, 100, 101})
    def number(x):
        return float(x.mid) if hasattr(x, "mid") else float(x)

    for k in steps:
        assert number(exact(k)) == pytest.approx(prog["lr"](k), rel=1e-15), k
        assert number(per_stage(k)) == pytest.approx(prog["lr"](k), rel=1e-15), k
    assert prog["lr"].torch(__import__("torch").tensor(steps)).tolist() == \
        pytest.approx(prog["lr"].values(steps), rel=1e-15)


# -- a segment read after its step (Segment.evaluation == "after": olmo_core.* in tokens) -----

AFTER = """param seq_len: int = 4
batch = stages(2, [4], [40tok])
"""


def test_a_segment_read_after_its_step_uses_the_tokens_through_it():
    """Update k reads T_(k+1) - start; it covers the steps with T_k below its end and holds f(end)."""
    prog = schedlang.compile(AFTER + "schedule lr = constant(1, 8tok) >> "
                             "olmo_core.LinearWithWarmup(lr=1, units=\"tokens\", warmup=0, alpha_f=0, "
                             "t_max=100)\n")
    walk = [prog.tokens_at(k) for k in range(20)]
    for k in range(20):
        if walk[k] < 8:
            expected = 1.0
        elif walk[k] < 108:
            expected = max(0.0, 1 - (walk[k + 1] - 8) / 100)
        else:
            expected = 0.0
        assert prog["lr"](k) == pytest.approx(expected, abs=1e-15), k


def test_arithmetic_keeps_the_evaluation_point_and_refuses_mixing_points():
    base = 'olmo_core.CosWithWarmup(lr=1, units="tokens", warmup=16, t_max=200)'
    plain = schedlang.compile(AFTER + f"schedule lr = {base}\n")["lr"]
    half = schedlang.compile(AFTER + f"schedule lr = 0.5 * {base}\n")["lr"]
    cut = schedlang.compile(AFTER + f"schedule lr = {base} for 100tok >> constant(0)\n")["lr"]
    for k in range(12):
        assert half(k) == pytest.approx(0.5 * plain(k), abs=1e-15)
    assert [cut(k) for k in range(8)] == [plain(k) for k in range(8)]
    with pytest.raises(SchedlangError, match="reads the token count after its step"):
        schedlang.compile(AFTER + f"schedule lr = {base} + linear(1, 0, 100tok)\n")


def test_an_olmo_core_preset_in_tokens_needs_the_batch_and_counts_tokens():
    with pytest.raises(SchedlangError, match="needs the file's batch schedule"):
        schedlang.compile('schedule lr = olmo_core.WSD(units="tokens", warmup=10, t_max=1000)\n')
    # lengths are plain numbers counting `units`, as in OLMo-core's config
    with pytest.raises(SchedlangError, match="an amount of tokens is a length"):
        schedlang.compile(AFTER + "schedule lr = olmo_core.WSD(warmup=10tok, t_max=1000)\n")


@pytest.mark.parametrize("batch, seq_len", [("2**62 + 1", None), ("stages(8, [2**51], [100sp])", 4096),
                                            ("1000000000000000000000000000000", 2048)])
def test_a_step_past_int64_counts_is_refused_at_the_batch(batch, seq_len):
    """Every target counts samples and tokens in int64: a batch whose step alone passes 2**62
    (a hostile import's `global_train_batch_size: 1e30`) is refused where it is declared."""
    head = "" if seq_len is None else f"param seq_len: int = {seq_len}\n"
    with pytest.raises(SchedlangError, match=r"is more than 2\*\*62") as info:
        schedlang.compile(f"{head}batch = {batch}\nschedule lr = 1e-3\n")
    assert info.value.span.line == (1 if seq_len is None else 2)
    schedlang.compile(f"param seq_len: int = 4096\nbatch = {2**62 // 4096}\nschedule lr = 1e-3\n")


def test_a_ramp_printed_again_still_defines_its_table():
    """The reference's function bodies are cached by formula (codegen/python.py): a ramp's body
    printed a second time, by a second compile or by the class's plain-Python twin, must bring
    its count table along, under a name no other table has."""
    first, again, other = _ramp(4), _ramp(4), _ramp(6)
    assert first["lr"](40) == again["lr"](40) > 0 and math.isfinite(other["lr"](40))
    assert first.python_source() == again.python_source()
    names = {line.split(" = ")[0] for p in (first, other) for line in p.python_source().splitlines()
             if line.startswith("_T") or line.startswith("_S")}
    assert len(names) == 2, names
