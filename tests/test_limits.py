"""Every size limit (schedlang/limits.py): hostile input fails fast, located, and the docs agree.

Each hostile input below once hung for minutes, allocated gigabytes or ended in a
traceback; now each must be a ``SchedlangError`` with a caret, in well under a few
seconds.  Inputs just inside a limit must still work.
"""

from __future__ import annotations

import re
import time
from contextlib import contextmanager

import pytest
from helpers import ROOT

import schedlang
from schedlang import limits
from schedlang.errors import closest, did_you_mean
from schedlang.formats import from_cerebras_yaml

FAST = 5.0  # CPU seconds of this process (a loaded machine does not stretch them); bad inputs took minutes


@contextmanager
def fails_fast(match: str):
    """The block raises a located SchedlangError matching ``match``, within ``FAST`` seconds of CPU time."""
    start = time.process_time()
    with pytest.raises(schedlang.SchedlangError, match=match) as info:
        yield info
    assert time.process_time() - start < FAST
    error = info.value
    assert error.line is not None and error.column is not None, str(error)
    assert "^" in str(error)


# -- the .sched language -------------------------------------------------------------------


def doubling_defs(levels: int) -> str:
    lines = ["def f0(x) = x + x"]
    lines += [f"def f{i}(x) = f{i - 1}(x) + f{i - 1}(x)" for i in range(1, levels)]
    return "\n".join(lines) + f"\nschedule lr = f{levels - 1}(t)\n"


def test_def_doubling_40_levels_fails_fast():
    with fails_fast(f"expand to more than {limits.MAX_DEF_EXPANSION}"):
        schedlang.compile(doubling_defs(40))


def test_def_doubling_a_few_levels_still_works():
    assert schedlang.compile(doubling_defs(5))["lr"](1) == 32


def piecewise_source(count: int) -> str:
    values = ", ".join("0.1" for _ in range(count + 1))
    milestones = ", ".join(str(i + 1) for i in range(count))
    return f"schedule lr = piecewise([{values}], [{milestones}])\n"


def test_piecewise_with_10001_values_fails_fast():
    with fails_fast(f"this list has 10001 items; schedlang takes at most {limits.MAX_LIST_ITEMS}") as info:
        schedlang.compile(piecewise_source(10_000))
    assert info.value.column > 20  # at the first item beyond the limit, not at the statement


def test_call_with_too_many_arguments_fails_fast():
    args = ", ".join("1" for _ in range(limits.MAX_LIST_ITEMS + 1))
    with fails_fast("this call has"):
        schedlang.compile(f"schedule lr = max({args})")


def test_piecewise_of_moderate_length_still_works():
    assert schedlang.compile(piecewise_source(20))["lr"](100) == pytest.approx(0.1)


def test_long_sequence_is_refused():
    # `>>` chains are also bounded by the nesting limit until they are flattened; either
    # way the error is located and quick.
    source = " >> ".join("constant(1, 10)" for _ in range(limits.MAX_SEGMENTS + 1))
    with fails_fast("more than|at most"):
        schedlang.compile(source)


@pytest.mark.parametrize("source, match", [
    ("schedule lr = linear(1, 0, 10**30)", "a duration must be at most"),
    ("schedule lr = constant(1) for 10**19", "a duration must be at most"),
    ("schedule lr = multistep(1, 0.5, [10, 10**20])", "an item of milestones must be at most"),
    ("schedule lr = if t < 10**30 then 1 else 2", "changes at step 1e\\+30"),
    ("schedule lr = constant(1, 2**62) >> constant(1, 2**62) >> constant(3)", "beyond the largest step"),
])
def test_steps_beyond_int64_are_refused_at_check_time(source, match):
    with fails_fast(match):
        schedlang.compile(source)


@pytest.mark.parametrize("source, column", [
    # the argument that puts the change past the largest step, not the whole statement
    ("schedule lr = deepspeed.WarmupDecayLR(total_num_steps=100, warmup_num_steps=1e30)", 77),
    # no single number does it: the call
    ("schedule lr = deepspeed.WarmupDecayLR(total_num_steps=2**62, warmup_num_steps=2**62 - 1)", 15),
])
def test_a_preset_past_the_largest_step_is_refused_at_its_argument(source, column):
    with pytest.raises(schedlang.SchedlangError, match="changes at step") as info:
        schedlang.compile(source)
    assert (info.value.line, info.value.column) == (1, column), str(info.value)


def test_duration_bound_by_a_parameter_is_limited_too():
    with fails_fast("a duration must be at most"):
        schedlang.compile("param n: int = 10\nschedule lr = linear(1, 0, n)", params={"n": 10**30})


def test_largest_step_still_evaluates_in_torch():
    torch = pytest.importorskip("torch")
    schedule = schedlang.compile("constant(1, 2**62) >> constant(2)")["lr"]
    values = schedule.torch(torch.tensor([0, limits.MAX_STEP - 1, limits.MAX_STEP, 2**63 - 1]))
    assert values.tolist() == [1.0, 1.0, 2.0, 2.0]


@pytest.mark.parametrize("literal, match", [
    ("1" * 5000, "this number has 5000 digits"),
    ("1" * (limits.MAX_DIGITS + 1), f"has {limits.MAX_DIGITS + 1} digits"),
    ("1e999999999", "out of range"),
    ("1e" + "9" * 5000, "out of range"),
])
def test_long_literals_fail_fast(literal, match):
    with fails_fast(match):
        schedlang.compile(f"schedule lr = constant({literal})")


def test_literal_at_the_digit_limit_is_read():
    literal = "0." + "0" * (limits.MAX_DIGITS - 2) + "1"
    assert schedlang.compile(f"constant({literal})")["lr"].expr == schedlang.compile(
        f"constant(1e-{limits.MAX_DIGITS - 1})")["lr"].expr


def test_huge_file_is_refused_before_parsing():
    source = "# padding\n" * (limits.MAX_FILE_BYTES // 10) + "schedule lr = constant(1)\n"
    with fails_fast(f"larger than {limits.MAX_FILE_BYTES} bytes"):
        schedlang.compile(source)


def test_load_reads_no_more_than_the_limit(tmp_path):
    path = tmp_path / "big.sched"
    path.write_bytes(b"schedule lr = constant(1)\n" + b"#" * (4 * limits.MAX_FILE_BYTES))
    with fails_fast("larger than"):
        schedlang.load(path)
    with fails_fast("larger than"):  # refused, never truncated to the limit and read on
        limits.read_source(path)


def test_deep_nesting_is_refused():
    with fails_fast(f"nests more than {limits.MAX_NESTING} levels"):
        schedlang.compile("(" * 5000 + "1" + ")" * 5000)


# -- reserved words ---------------------------------------------------------------------------


@pytest.mark.parametrize("source, word, column", [
    ("schedule if = constant(0.1)", "if", 10),
    ("param for: int = 1\nschedule lr = constant(1)", "for", 7),
    ("let then = 1\nschedule lr = constant(1)", "then", 5),
    ("def else(x) = x\nschedule lr = constant(1)", "else", 5),
    ("def f(where) = 1\nschedule lr = f(1)", "where", 7),
    ("schedule true = constant(1)", "true", 10),
    ("schedule lr = constant(param)", "param", 24),
])
def test_words_of_the_language_are_not_names(source, word, column):
    with fails_fast(f"'{word}' is a word of the language") as info:
        schedlang.compile(source)
    assert info.value.column == column
    assert f"{word}_" in info.value.hint


def test_every_reserved_word_is_refused_as_a_schedule_name():
    from schedlang.syntax.parser import RESERVED

    assert RESERVED == set("param let def schedule where if then else for jump and or not true false".split())
    for word in sorted(RESERVED):
        with pytest.raises(schedlang.SchedlangError):
            schedlang.compile(f"schedule {word} = constant(1)")


def test_keyword_argument_named_like_a_word_still_works():
    assert schedlang.equivalent("scale(schedule=linear(1, 0, 10), ratio=2)", "linear(1, 0, 20)")


# -- byte order mark ------------------------------------------------------------------------------


def test_utf8_bom_is_accepted_and_spans_stay_right(tmp_path):
    path = tmp_path / "bom.sched"
    path.write_bytes(b"\xef\xbb\xbfschedule lr = constant(0.1)\n")
    assert schedlang.load(path)["lr"](0) == pytest.approx(0.1)
    path.write_bytes(b"\xef\xbb\xbfschedule lr = cosin(1, 0, 10)\n")
    with pytest.raises(schedlang.SchedlangError) as info:
        schedlang.load(path)
    assert (info.value.line, info.value.column) == (1, 15)
    assert "   1 | schedule lr = cosin(1, 0, 10)\n     |               ^^^^^" in str(info.value)


def test_bom_in_a_string_is_accepted():
    assert schedlang.compile("\ufeffconstant(2)")["lr"](5) == 2


# -- did you mean -------------------------------------------------------------------------------------


def test_truncated_cerebras_name_suggests_the_lr_schedule():
    from schedlang.library.presets import PRESETS

    with pytest.raises(schedlang.SchedlangError) as info:
        schedlang.compile("schedule lr = cerebras.CosineDecay(initial_learning_rate=1, total_iters=10)")
    assert info.value.hint == "did you mean 'cerebras.CosineDecayLR'?"
    assert closest("cerebras.ConstantW", PRESETS) == "cerebras.ConstantWD"  # a clear WD match stays WD


@pytest.mark.parametrize("name, known, expected", [
    ("CosineDecay", ["CosineDecayWD", "CosineDecayLR"], "CosineDecayLR"),
    ("Linear", ["LinearWD", "LinearLR"], "LinearLR"),
    ("cosine_schedule", ["cosine_schedule_wd", "cosine_schedule_lr"], "cosine_schedule_lr"),
    ("Step", ["StepMomentum", "StepLR"], "StepLR"),
    ("cosin", ["cosine", "constant"], "cosine"),
    ("COSINE", ["cosine", "constant"], "cosine"),
])
def test_near_ties_rank_lr_names_first(name, known, expected):
    assert closest(name, known) == expected
    assert did_you_mean(name, known) == f"did you mean '{expected}'?"


def test_far_matches_still_give_no_hint():
    assert did_you_mean("zzz", ["cosine", "CosineDecayLR"]) is None


# -- YAML import ---------------------------------------------------------------------------------------


def billion_laughs() -> str:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 10):
        previous, current = chr(ord("a") + i - 1), chr(ord("a") + i)
        lines.append(f"{current}: &{current} [" + ",".join([f"*{previous}"] * 9) + "]")
    lines.append("schedulers:\n  - ConstantLR:\n      learning_rate: *j")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("text, match", [
    (billion_laughs(), f"more than {limits.MAX_YAML_VALUES} values"),
    ("schedulers: " + "[" * 10_000 + "]" * 10_000 + "\n", f"nests more than {limits.MAX_YAML_DEPTH}"),
    ("a: &a 1\nb: [" + ", ".join(["*a"] * (limits.MAX_YAML_ALIASES + 1)) + "]\n",
     f"more than {limits.MAX_YAML_ALIASES} YAML aliases"),
    ('schedulers:\n  - ConstantLR:\n      learning_rate: "a\x00"\n', "U\\+0000 is not allowed"),
    ("schedulers:\n  - ConstantLR:\n      learning_rate: " + "9" * 5000 + "\n", "5000 digits"),
    ('schedulers:\n  - ConstantLR:\n      learning_rate: "1e999999999"\n', "out of range"),
    ("x: 1\n" + "#" * limits.MAX_FILE_BYTES, "larger than"),
])
def test_hostile_yaml_fails_fast(text, match):
    with fails_fast(match):
        from_cerebras_yaml(text, "hostile.yaml")


def test_merge_key_bomb_fails_fast():
    # The root's own `<<` is flattened first, and each level merges the one before twice.
    # PyYAML before 6.0.4 copies every merged entry (2**39 of them: refused at the limit);
    # 6.0.4 (constraints.txt) merges an aliased key once, so the file is merely empty.
    lines = ["d0: &m0 {k0: 1}"]
    lines += [f"d{i}: &m{i} {{<<: [*m{i - 1}, *m{i - 1}]}}" for i in range(1, 40)]
    lines.append("<<: *m39")
    limit = f"merge keys \\(<<\\) expand this mapping to more than {limits.MAX_YAML_VALUES}"
    with fails_fast(f"{limit}|no schedulers found"):
        from_cerebras_yaml("\n".join(lines) + "\n", "merge.yaml")


def test_merge_key_expansion_is_counted():
    """Merged entries count against the limit whatever PyYAML dedupes: 200 distinct keys
    merged into 600 mappings are 120,000 entries."""
    base = "base: &b {" + ", ".join(f"k{i}: {i}" for i in range(200)) + "}"
    lines = [base] + [f"m{i}: {{<<: *b}}" for i in range(600)]
    with fails_fast("more than"):
        from_cerebras_yaml("\n".join(lines) + "\n", "merge.yaml")


def test_yaml_nul_byte_is_located():
    with pytest.raises(schedlang.SchedlangError) as info:
        from_cerebras_yaml('schedulers:\n  - ConstantLR:\n      learning_rate: "a\x00"\n', "nul.yaml")
    assert (info.value.line, info.value.column) == (3, 24)


def test_yaml_within_the_limits_still_imports():
    text = "lr: &lr 0.001\nschedulers:\n  - ConstantLR:\n      learning_rate: *lr\n"
    assert "cerebras.ConstantLR" in from_cerebras_yaml(text, "ok.yaml")


def test_yaml_with_a_bom_imports():
    text = "\ufeffschedulers:\n  - ConstantLR:\n      learning_rate: 0.5\n"
    assert "cerebras.ConstantLR" in from_cerebras_yaml(text, "bom.yaml")


# -- the docs list every limit with its value ----------------------------------------------------


def limits_table() -> dict[str, str]:
    text = (ROOT / "docs" / "language.md").read_text(encoding="utf-8")
    section = text.split("\n## Limits\n", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        match = re.fullmatch(r"\|[^|]*\| (.*?) \| `(MAX_\w+)` \|", line)
        if match:
            rows[match.group(2)] = match.group(1)
    return rows


def test_docs_list_every_limit_with_its_value():
    table = limits_table()
    assert set(table) == set(limits.documented())
    for name, value in limits.documented().items():
        assert str(value) in table[name].replace("±", ""), (name, value, table[name])


def test_a_regular_read_refuses_a_fifo_without_waiting(tmp_path):
    """``read_source(regular=True)`` (the language server's reads): a FIFO nobody writes to is
    refused at once, as is a directory; a plain file is read."""
    import os

    from schedlang.errors import SchedlangError
    from schedlang.limits import read_source

    fifo = tmp_path / "pipe.sched"
    os.mkfifo(fifo)
    for path in (fifo, tmp_path):
        with pytest.raises(SchedlangError, match="not a regular file"):
            read_source(path, regular=True)
    (tmp_path / "a.sched").write_text("schedule lr = 1\n")
    assert read_source(tmp_path / "a.sched", regular=True) == b"schedule lr = 1\n"
