"""Export by proof on the sample and token clocks (issue 41, item 3): a file with a constant
``batch`` whose lr counts samples or tokens (``on_samples(...)``, lengths in ``sp`` / ``tok``) is
written on that clock where the framework's scheduler counts it (``PresetCall._on_clock``):
Megatron-LM's ``--lr-*-samples`` flags, Composer's ``Nsp`` / ``Ntok`` times, OLMo-core's
``units="tokens"``; refused, saying so, where the scheduler counts optimizer steps only.  Every
written config is run by the framework's own code at every step of the run.
"""

from __future__ import annotations

import json
import warnings
from types import SimpleNamespace

import pytest
from anchors import reference as R
from anchors.preset_cases import max_error
from frameworks.megatron_cases import CLASS_DEFAULTS
from frameworks.real import real

import schedlang
from schedlang.errors import SchedlangError
from schedlang.formats.export import export

B, SEQ = 512, 2048
SAMPLES = f"batch = {B}\nrun = 1000\nschedule lr = warmup(linear, 51200sp) >> cosine(1e-3, 1e-4, 460800sp)\n"
TOKENS = (f"param seq_len: int = {SEQ}\nbatch = {B}\nrun = 1000\nschedule lr = warmup(linear, 100 * {B} * "
          f"{SEQ}tok) >> cosine(1e-3, 1e-4, 900 * {B} * {SEQ}tok)\n")
ON_SAMPLES = (f"batch = {B}\nrun = 1000\nschedule lr = on_samples(warmup(linear, 51200) >> "
              "cosine(1e-3, 1e-4, 460800))\n")
# OLMo-core sets update t's lr from the tokens through it: the file's ramp a batch on
OLMO = (f"param seq_len: int = {SEQ}\nbatch = {B}\nrun = 1000\nschedule lr = warmup(linear, "
        f"99 * {B} * {SEQ}tok, start=3e-6) >> cosine(3e-4, 3e-5, 900 * {B} * {SEQ}tok)\n")
STEPS_ONLY = "counts optimizer steps only"

#: format, file, what the export says.
EQUAL = [
    ("megatron-args", SAMPLES, ["--lr-warmup-samples 51200", "--lr-decay-samples 512000",
                                "--train-samples 512000", f"--global-batch-size {B}"]),
    ("megatron-args", TOKENS, ["--lr-warmup-samples 51200", "--lr-decay-samples 512000"]),  # tokens / seq_len
    ("megatron-args", ON_SAMPLES, ["--lr-warmup-samples 51200", "--lr-decay-style cosine"]),
    ("composer-yaml", SAMPLES, ["t_warmup: 51200sp", "t_max: 512000sp", f"global_train_batch_size: {B}"]),
    ("composer-yaml", TOKENS, [f"t_warmup: {100 * B * SEQ}tok", f"t_max: {1000 * B * SEQ}tok",
                               f"max_seq_len: {SEQ}"]),
    ("composer-yaml", ON_SAMPLES, ["t_warmup: 51200sp", "name: cosine_with_warmup"]),
    ("olmo-core-json", OLMO, ['"units": "tokens"', f'"warmup_steps": {100 * B * SEQ}', '"unit": "tokens"']),
]
IDS = [f"{f}:{i}" for i, (f, _, _) in enumerate(EQUAL)]


@pytest.mark.parametrize("fmt, text, says", EQUAL, ids=IDS)
def test_a_file_on_the_sample_or_token_clock_is_written_on_it(fmt, text, says):
    exported = export(text, "lr.sched", format=fmt)  # read back and proven inside
    for fragment in says:
        assert fragment in exported, exported


def _megatron(exported: str, steps: range) -> list[float]:
    """megatron-core's class built from the written flags, stepped by the batch's samples."""
    words = exported.replace("\\\n", " ").split()
    flags = {w.lstrip("-"): words[i + 1] for i, w in enumerate(words) if w.startswith("--")}
    module = real("megatron.core.optimizer_param_scheduler")
    optimizer = SimpleNamespace(param_groups=[{}])
    scheduler = module.OptimizerParamScheduler(
        optimizer, **{**CLASS_DEFAULTS, "max_lr": float(flags["lr"]), "min_lr": float(flags["min-lr"]),
                      "lr_warmup_steps": int(flags["lr-warmup-samples"]),
                      "lr_decay_steps": int(flags["lr-decay-samples"]),
                      "lr_decay_style": flags["lr-decay-style"]})
    values = []
    for _ in steps:
        values.append(float(optimizer.param_groups[0]["lr"]))
        scheduler.step(int(flags["global-batch-size"]))
    return values


def _composer(exported: str, steps: range) -> list[float]:
    """Composer's own scheduler from the written YAML, at each batch's timestamp (the samples and
    tokens consumed before it)."""
    import yaml

    from schedlang.formats.composer_names import EXPORT_NAMES

    try:
        ns = R._load_composer()
    except R.AnchorUnavailable as exc:
        pytest.skip(str(exc))
    data = yaml.safe_load(exported)
    kwargs = dict(data["scheduler"])
    cls = R._composer_class({v: k for k, v in EXPORT_NAMES.items()}[kwargs.pop("name")])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scheduler = cls(**kwargs)
    Time, Timestamp = ns.time.Time, ns.time.Timestamp
    batch, seq = data["global_train_batch_size"], data.get("max_seq_len", 1)
    values = []
    for k in steps:
        state = SimpleNamespace(timestamp=Timestamp(batch=k, sample=k * batch, token=k * batch * seq),
                                max_duration=Time.from_timestring(data["max_duration"]), dataloader_len=None)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            values.append(data["optimizer"]["lr"] * float(scheduler(state, 1.0)))
    return values


def _olmo(exported: str) -> list[float]:
    from frameworks.test_olmo_core_json import _from_json, olmo_lrs

    data = json.loads(exported)
    scheduler, duration, stop, lr = _from_json(data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return olmo_lrs(scheduler, duration, stop, lr=lr, gbs=data["data_loader"]["global_batch_size"])


@pytest.mark.parametrize("fmt, text", [(f, t) for f, t, _ in EQUAL], ids=IDS)
def test_the_framework_runs_the_export_as_the_file(fmt, text):
    exported = export(text, "lr.sched", format=fmt)
    program = schedlang.compile(text)
    steps = range(program.run)
    ours = program["lr"].values(steps)
    if fmt == "olmo-core-json":
        theirs = _olmo(exported)
    else:
        theirs = (_megatron if fmt == "megatron-args" else _composer)(exported, steps)
    assert len(theirs) == len(ours)
    assert max_error(theirs, ours, 1e-3) <= 1e-12


REFUSED = [
    ("hf-args", SAMPLES, STEPS_ONLY), ("deepspeed-json", ON_SAMPLES, STEPS_ONLY),
    ("torchtitan-toml", TOKENS, STEPS_ONLY),
    ("olmo-core-json", OLMO.replace(f" * {SEQ}tok", "sp").replace(f"param seq_len: int = {SEQ}\n", ""),
     "counts steps or tokens, not samples"),
]


@pytest.mark.parametrize("fmt, text, message", REFUSED, ids=[f for f, _, _ in REFUSED])
def test_a_framework_that_counts_steps_only_refuses_it_saying_so(fmt, text, message):
    with pytest.raises(SchedlangError) as info:
        export(text, "lr.sched", format=fmt)
    assert message in info.value.message and "counts " in info.value.message
    assert info.value.span.line == len(text.splitlines())  # at the lr
    assert "write its lengths in steps" in info.value.hint
