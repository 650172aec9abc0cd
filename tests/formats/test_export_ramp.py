"""Export by proof under a changing batch (issue 41, item 3): a file whose ``batch = ...`` is
Megatron's own table (``megatron.rampup_batch_size(...)``, megatron-core 0.17's
``--rampup-batch-size``; ``megatron.step_batch_size_schedule(...)``, 0.19's
``--step-batch-size-schedule``) and whose lr counts samples or tokens (``on_samples(...)`` of a
chain, lengths in ``sp`` / ``tok``) is written as ``--lr-*-samples`` flags with the batch flags
(``PresetCall._on_ramp``: the call found for the file read at one sample a step, proven equal to
the file under its own batch).  Each written command is run as Megatron-LM's loop runs it: the
real batch calculator's batch each iteration, megatron-core's ``OptimizerParamScheduler``
stepped by it (0.16.1's for the ramp, 0.19.2's for the step schedule), compared at every step of
the run.  Where the framework cannot count samples under a changing batch (it counts optimizer
steps, or its config has one batch), the export is refused at the lr, saying why.
"""

from __future__ import annotations

import shlex

import pytest
from anchors.preset_cases import max_error

import schedlang
from formats.test_megatron_args import real_run
from schedlang.errors import SchedlangError
from schedlang.formats.export import export

RAMP = ("param seq_len: int = 1024\nbatch = megatron.rampup_batch_size(16, 16, 2000, global_batch_size=64)\n"
        "run = 1608\n")
STEPS = ('param seq_len: int = 4\nbatch = megatron.step_batch_size_schedule("0:16 8000:32 40000:64")\n'
         "run = 100000sp\n")
COSINE = ["--lr 0.0003", "--min-lr 3.0e-05", "--lr-warmup-samples 4000", "--lr-decay-samples 90000",
          "--lr-decay-style cosine", "--train-samples 100000", "--rampup-batch-size 16 16 2000",
          "--global-batch-size 64"]

#: file (its lr no Megatron call), what the export says.
EQUAL = {
    "ramp-on-samples": (RAMP + "schedule lr = on_samples(warmup(linear, 4000) >> "
                               "cosine(3e-4, 3e-5, 86000))\n", COSINE),
    "ramp-sp": (RAMP + "schedule lr = warmup(linear, 4000sp) >> cosine(3e-4, 3e-5, 86000sp)\n", COSINE),
    "ramp-tok": (RAMP + "schedule lr = warmup(linear, 4000 * 1024tok) >> "
                        "cosine(3e-4, 3e-5, 86000 * 1024tok)\n", COSINE),
    "step-schedule-wsd": (STEPS + "schedule lr = warmup(linear, 4000sp) >> constant(3e-4) for 60000sp >> "
                                  "cooldown(linear, 36000sp, 3e-5)\n",
                          ["--lr-decay-style WSD", "--lr-wsd-decay-samples 36000",
                           "--lr-wsd-decay-style linear", "--lr-decay-samples 100000",
                           "--step-batch-size-schedule '0:16 8000:32 40000:64'", "--seq-length 4"]),
}


def _flags(exported: str) -> dict:
    """The written command's flags as ``real_run`` takes them (underscored names, parsed values)."""
    lines = [line.rstrip("\\") for line in exported.splitlines() if not line.startswith("#")]
    words = shlex.split(" ".join(lines))
    flags, i = {}, words.index("pretrain_gpt.py") + 1
    while i < len(words):
        key = words[i].lstrip("-").replace("-", "_")
        values = []
        i += 1
        while i < len(words) and not words[i].startswith("--"):
            values.append(words[i])
            i += 1
        if key == "rampup_batch_size":
            flags[key] = tuple(int(v) for v in values)
        elif key in ("step_batch_size_schedule", "lr_decay_style", "lr_wsd_decay_style"):
            flags[key] = values[0]
        else:
            number = float(values[0])
            flags[key] = int(number) if number.is_integer() and "." not in values[0] else number
    return flags


@pytest.mark.parametrize("name", EQUAL)
def test_megatron_runs_the_export_as_the_file_at_every_step(name):
    text, says = EQUAL[name]
    exported = export(text, "lr.sched", format="megatron-args")  # read back and proven inside
    for fragment in says:
        assert fragment in exported, exported
    program = schedlang.compile(text)
    lr, _, consumed, batches = real_run(_flags(exported), program.run)
    assert consumed == [program.samples_at(k) for k in range(program.run)]  # the batch changes
    assert len(set(batches)) > 1
    assert max_error(lr, program["lr"].values(range(program.run)), 1e-3) <= 1e-12


#: format, file, what the refusal says.
REFUSED = [
    ("hf-args", EQUAL["ramp-sp"][0],
     "counts samples (under a changing batch), and hf-args's scheduler counts optimizer steps only"),
    ("deepspeed-json", EQUAL["ramp-on-samples"][0], "deepspeed-json's scheduler counts optimizer steps only"),
    ("torchtitan-toml", EQUAL["ramp-tok"][0], "counts tokens (under a changing batch)"),
    ("composer-yaml", EQUAL["ramp-sp"][0], "Composer's YAML trains one global_train_batch_size"),
    ("olmo-core-json", 'param seq_len: int = 8\nbatch = olmo_core.batch_size_schedule(batch_sizes=[64, 128], '
                       'schedule=[0, 3200], units="tokens")\nrun = 6400tok\n'
                       "schedule lr = warmup(linear, 64tok) >> cosine(3e-4, 3e-5, 6336tok)\n",
     "OLMo-core sets update t's lr from the tokens through it"),
]


@pytest.mark.parametrize("fmt, text, message", REFUSED, ids=[f for f, _, _ in REFUSED])
def test_a_framework_that_cannot_count_samples_under_the_ramp_refuses_it_saying_why(fmt, text, message):
    with pytest.raises(SchedlangError) as info:
        export(text, "lr.sched", format=fmt)
    assert message in info.value.message and "under a changing batch" in info.value.message
    assert info.value.span.line == len(text.splitlines())  # at the lr
    assert "megatron-args" in info.value.hint


def test_a_length_in_steps_under_the_ramp_is_refused_naming_the_clock():
    """A warmup of 100 steps is no count of samples while the batch changes: the call found per
    sample is not the file under its batch, and the refusal says to write samples."""
    text = RAMP + "schedule lr = warmup(linear, 100) >> cosine(3e-4, 3e-5, 86000sp)\n"
    with pytest.raises(SchedlangError) as info:
        export(text, "lr.sched", format="megatron-args")
    assert "at one sample a step, but on_samples(megatron.OptimizerParamScheduler(" in info.value.message
    assert "not proven equal to it (different at step 1" in info.value.message
    assert info.value.span.line == 4
    assert "write every length of the lr in samples or tokens" in info.value.hint


def test_a_curve_no_megatron_class_is_is_refused_at_its_first_differing_sample():
    text = RAMP + "schedule lr = on_samples(warmup(linear, 4000) >> poly(3e-4, 3e-5, 86000, 2))\n"
    with pytest.raises(SchedlangError) as info:
        export(text, "lr.sched", format="megatron-args")
    assert info.value.message.startswith("no megatron scheduler equals this lr schedule: the closest, "
                                         "megatron.OptimizerParamScheduler(")
    assert "first differs at sample 4001 (" in info.value.message, info.value.message
    assert info.value.span.line == 4
