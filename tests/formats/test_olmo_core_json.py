"""``olmo_core_json.source``: the tree the import builds (issue 40), each statement at the key of
config.json it states; the whole import against OLMo-core's own code is
``tests/frameworks/test_olmo_core_json.py``'s (it needs ai2-olmo-core)."""

from __future__ import annotations

import json

import pytest

import schedlang
from schedlang.errors import SchedlangError
from schedlang.formats import from_olmo_core_json, olmo_core_json
from schedlang.formats.common.statements import GENERATED
from schedlang.program import compile as compile_source
from schedlang.syntax import ir, unparse

SCHEDULER = {"_CLASS_": "olmo_core.optim.scheduler.CosWithWarmup", "warmup": 10, "units": "tokens"}
RAMP = {"_CLASS_": "olmo_core.train.callbacks.BatchSizeSchedulerCallback", "batch_sizes": [64, 128],
        "schedule": [{"value": 0, "unit": "tokens"}, {"value": 640, "unit": "tokens"}]}


def _config(callbacks=None, hard_stop=None) -> str:
    """A config.json laid out one key a line, so that each key's line is known."""
    trainer = {"max_duration": {"value": 6400, "unit": "tokens"}}
    if hard_stop is not None:
        trainer["hard_stop"] = hard_stop
    if callbacks is not None:
        trainer["callbacks"] = callbacks
    config = {"dataset": {"sequence_length": 8}, "data_loader": {"global_batch_size": 64},
              "train_module": {"optim": {"_CLASS_": "olmo_core.optim.AdamWConfig", "lr": 0.001},
                               "scheduler": SCHEDULER},
              "trainer": trainer}
    return json.dumps(config, indent=1)


def _line(text: str, key: str) -> int:
    """The line of ``"key":`` in ``text`` (it occurs once)."""
    lines = [n for n, line in enumerate(text.splitlines(), 1) if f'"{key}":' in line]
    assert len(lines) == 1, key
    return lines[0]


def _tree(text: str, style: str = "presets") -> ir.Module:
    return olmo_core_json.source(olmo_core_json.read(text, "config.json"), "config.json", style)


def test_each_statement_is_at_the_key_it_states():
    text = _config(hard_stop={"value": 3200, "unit": "tokens"})
    tree = _tree(text)
    kinds = [type(s) for s in tree.statements]
    assert kinds == [ir.Param, ir.BatchDecl, ir.RunDecl, ir.ScheduleDecl]
    param, batch, run, schedule = tree.statements
    assert param.span.line == _line(text, "sequence_length")
    assert batch.span.line == _line(text, "global_batch_size")
    assert run.span.line == _line(text, "hard_stop")  # it ends the run before max_duration
    assert schedule.span.line == _line(text, "scheduler")
    assert {c.text for c in tree.comments if c.trailing} == {
        "dataset.sequence_length", "data_loader.global_batch_size: 64 tokens a step",
        "trainer.hard_stop: 3200 tokens"}


def test_the_batch_size_callback_is_the_batch_and_wraps_the_schedulers_call():
    text = _config(callbacks={"batchwup": RAMP})
    batch, run, schedule = _tree(text).statements[1:]
    assert batch.span.line == _line(text, "batchwup")
    assert isinstance(batch.value, ir.Call) and batch.value.func.id == "olmo_core.batch_size_schedule"
    assert run.span.line == _line(text, "max_duration")
    lr = schedule.value
    assert isinstance(lr, ir.BinOp) and lr.op == "*"
    assert lr.left.func.id == "olmo_core.CosWithWarmup"
    assert lr.right.func.id == "olmo_core.batch_size_lr_factor"
    assert compile_source(unparse.module(_tree(text))).run is not None


def test_the_core_style_keeps_every_statement_but_the_lowered_schedule():
    text = _config(hard_stop={"value": 3200, "unit": "tokens"})
    presets, core = _tree(text), _tree(text, "core")
    assert core.statements[:-1] == presets.statements[:-1]  # seq_len, batch, run as they were built
    assert core.comments == presets.comments
    schedule = core.statements[-1]
    assert isinstance(schedule, ir.ScheduleDecl) and "olmo_core." not in unparse.statement(schedule)
    written = from_olmo_core_json(text, "config.json", "core")
    assert "olmo_core." not in written
    assert next(line for line in written.splitlines() if line.startswith("run = ")).split() == \
        ["run", "=", "3200tok", "#", "trainer.hard_stop:", "3200", "tokens"]


def _generated(node) -> list[str]:
    """The nodes of ``node`` at no span of config.json (text the import wrote and parsed)."""
    return [type(n).__name__ for n in ir.walk(node) if n.span.source.filename == GENERATED]


def test_every_expression_is_built_at_the_config_values_it_reads():
    """Issue 40: no expression text made from config values; each number, option and call is a
    node at config.json's span, so an error lowering raises is there with nothing to search."""
    text = _config(callbacks={"batchwup": RAMP}, hard_stop={"value": 3200, "unit": "tokens"})
    tree = _tree(text)
    assert [_generated(s) for s in tree.statements] == [[]] * len(tree.statements)
    lr = tree.statements[-1].value.left
    keywords = {k.name: k.value for k in lr.keywords}
    assert keywords["lr"].span.line == _line(text, "lr")
    assert keywords["warmup"].span.line == _line(text, "warmup")
    assert keywords["units"].span.line == _line(text, "units")  # the scheduler's own units


def test_an_error_the_lowering_raises_is_at_the_value_that_caused_it():
    """WSD's warmup and decay both 0: the decay of 0 is refused at ``decay``'s 0, not at the first
    0 a search of the config finds (warmup's, before issue 40)."""
    scheduler = {"_CLASS_": "olmo_core.optim.scheduler.WSD", "warmup": 0, "decay": 0}
    config = {"train_module": {"optim": {"lr": 0.001}, "scheduler": scheduler},
              "trainer": {"max_duration": {"value": 100, "unit": "steps"}}}
    text = json.dumps(config, indent=1)
    with pytest.raises(SchedlangError, match="a decay of 0") as caught:
        from_olmo_core_json(text, "config.json")
    assert caught.value.span.line == _line(text, "decay")


def test_the_core_style_of_a_token_ramp_is_the_presets_file():
    """Under the batch-size callback on tokens the lowered lr holds counts of the next step
    (``t + 1``): the core text is written from the finished formula, and it is the same schedule
    (it raised ``a count at t + 1 is not a shifted step`` before)."""
    text = _config(callbacks={"batchwup": RAMP})
    presets, core = (from_olmo_core_json(text, "config.json", style) for style in ("presets", "core"))
    assert "olmo_core.CosWithWarmup" not in core
    assert schedlang.equivalent(presets, core)
