"""Numbers a float's text cannot write (issue 41, item 3): ``1/3`` in the file, or the
``1111/1110000`` a proof finds (OLMo-core counts update t at t + 1, so ``linear(1e-3, 1e-4, 999)``
is a WSD whose lr has no decimal).  Every writer that names a scheduler with its keywords writes
floats: such an argument is written as its float64 (``PresetCall._rounded``), the call with it is
proven within ``FLOAT64_RTOL`` of the file, the export says so in a warning, and its text reads
back as exactly that call.  Never an "internal error"; where the format's own rule refuses the
file, a refusal that says why.  The framework's own code then runs every export as the file.
"""

from __future__ import annotations

import json
import warnings

import pytest
from anchors.preset_cases import max_error

import schedlang
from formats.test_export_by_proof import _framework_values
from schedlang.errors import SchedlangError, SchedlangWarning
from schedlang.formats.common.numbers import float64_of, writable
from schedlang.formats.export import export

BY_PROOF = "run = 1000\nschedule lr = linear(1e-3, 1e-4, 999)\n"  # the bug report's file

#: format, file, what the export does: "exact" (no rounding needed), "rounded" (warned), or the
#: start of the refusal.
RUN = "run = 1000\nschedule lr = "
CASES = [
    ("olmo-core-json", BY_PROOF, "rounded"),  # the found WSD's lr is 1111/1110000
    ("megatron-args", BY_PROOF, "exact"),
    ("composer-yaml", BY_PROOF, "exact"),
    ("deepspeed-json", BY_PROOF, "no deepspeed scheduler equals this lr schedule"),
    ("hf-args", BY_PROOF, "the run is 1000 steps but num_training_steps is 999"),
    ("torchtitan-toml", BY_PROOF, "the run is 1000 steps, but the written configuration trains 999"),
    ("megatron-args", RUN + "megatron.OptimizerParamScheduler(max_lr=(1/3), min_lr=0.01, lr_warmup_steps=10, "
                            'lr_decay_steps=1000, lr_decay_style="cosine")\n', "rounded"),
    ("hf-args", RUN + "hf.cosine(lr=(1/3), num_warmup_steps=10, num_training_steps=1000)\n", "rounded"),
    ("deepspeed-json", "schedule lr = deepspeed.WarmupDecayLR(total_num_steps=1000, warmup_num_steps=10, "
                       "warmup_max_lr=(1/3))\n", "rounded"),
    ("composer-yaml", "schedule lr = composer.CosineAnnealingWithWarmupScheduler(t_warmup=10ba, "
                      "t_max=1000ba, alpha_f=(1/7), lr=(1/3))\n", "rounded"),
    # with its run: without one, the check scans 20,010 steps, at the 8 s scan limit (a flaky verdict)
    ("torchtitan-toml", RUN + "torchtitan.lr_scheduler(lr=(1/3), training_steps=1000, "
                              'warmup_steps=10, decay_type="cosine", min_lr_factor=(1/7))\n', "rounded"),
    ("olmo-core-json", RUN + "olmo_core.CosWithWarmup(lr=(1/3), t_max=1000, warmup_steps=10, "
                             "alpha_f=(1/7))\n", "rounded"),
    ("cerebras-yaml", BY_PROOF, "exact"),  # any chain, its own `# ~` marks for inexact numbers
]
IDS = [f"{f}:{t.splitlines()[-1][14:50]}" for f, t, _ in CASES]


def _export(fmt: str, text: str) -> tuple[str, list[SchedlangWarning]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SchedlangWarning)
        exported = export(text, "lr.sched", format=fmt)
    return exported, [w.message for w in caught if issubclass(w.category, SchedlangWarning)]


@pytest.mark.parametrize("fmt, text, does", CASES, ids=IDS)
def test_an_inexact_number_is_written_as_its_float64_and_said(fmt, text, does):
    if does not in ("exact", "rounded"):
        with pytest.raises(SchedlangError) as info:
            _export(fmt, text)
        assert info.value.message.startswith(does), info.value.message
        assert "internal error" not in info.value.message
        return
    exported, said = _export(fmt, text)
    rounding = [w for w in said if "writes numbers as floats" in w.message]
    if does == "exact":
        assert not rounding, said
        return
    assert len(rounding) == 1, said
    warning = rounding[0]
    assert warning.span.line == len(text.splitlines())  # at the file's lr
    assert "within a relative 1e-12 at every step (proven)" in warning.message \
        or "within a relative 1e-12 where checked (the schedules agree on steps 0.." in warning.message
    assert "0.3333333333333333" in warning.message or "0.0010009009009009009" in warning.message


RUNS = [(f, t) for f, t, does in CASES if does in ("exact", "rounded") and f != "cerebras-yaml"]


@pytest.mark.parametrize("fmt, text", RUNS, ids=[f"{f}:{t.splitlines()[-1][14:50]}" for f, t in RUNS])
def test_the_framework_runs_the_rounded_export_as_the_file(fmt, text):
    """The written floats, run by the framework's own scheduler code: the file's lr at every
    step within 1e-12 (the float64 of its numbers, and the framework's float arithmetic)."""
    exported, _ = _export(fmt, text)
    program = schedlang.compile(text)
    steps = range(program.run if program.run is not None else 1200)
    ours = program["lr"].values(steps)
    if fmt == "olmo-core-json":
        from frameworks.test_olmo_core_json import _from_json, olmo_lrs

        scheduler, duration, stop, lr = _from_json(json.loads(exported))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs = olmo_lrs(scheduler, duration, stop, lr=lr)
    else:
        theirs = _framework_values(fmt, exported, steps)
    assert max_error(theirs, ours, 1e-3) <= 1e-12


def test_the_cli_prints_the_rounding_on_stderr(tmp_path):
    import subprocess
    import sys

    (tmp_path / "o.sched").write_text(BY_PROOF)
    command = [sys.executable, "-m", "schedlang", "export", "o.sched", "--format", "olmo-core-json"]
    run = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "o.sched:2:15: warning: olmo_core writes numbers as floats: lr=1111/1110000 as " \
           "0.0010009009009009009" in run.stderr
    assert "internal error" not in run.stderr and json.loads(run.stdout)


def test_candidates_written_exactly_come_first():
    """Of two calls both equal to the file, the one whose numbers a float's text writes is
    proven first (``by_proof.candidates``): no rounding where none is needed."""
    from schedlang.formats.common.by_proof import Candidate, _exact

    assert _exact("olmo_core.WSD", "olmo_core.WSD(lr=0.001, decay_steps=1000)")
    assert not _exact("olmo_core.WSD", "olmo_core.WSD(lr=(1111 / 1110000), decay_steps=1000)")
    assert not _exact("x", "x(lr=0.1000000000000000000001)")  # a decimal, not a float's
    assert Candidate("a", 0.0).exact


@pytest.mark.parametrize("value, ok", [("0.001", True), ("1/3", False), ("6e-05", True), ("1/1024", True),
                                       ("0.1000000000000000000001", False)])
def test_writable(value, ok):
    from fractions import Fraction

    assert writable(Fraction(value)) is ok
    assert writable(float64_of(Fraction(value)))
