"""The builder on the sample and token clocks: ``sb.on_samples`` / ``sb.on_tokens`` and the batch
presets (``sb.megatron.step_batch_size_schedule``, ``sb.olmo_core.batch_size_schedule``, ...)
build what the file says, and ``to_python`` moves such a file into Python and back."""

from __future__ import annotations

import pytest

import schedlang
import schedlang.build as sb
from schedlang.errors import SchedlangError

FILES = {
    "megatron step schedule": """\
param seq_len: int = 4096
batch = megatron.step_batch_size_schedule("0:16 2.4B:320")
schedule lr = on_samples(megatron.OptimizerParamScheduler(init_lr=0, max_lr=3e-4, min_lr=3e-5, \
lr_warmup_steps=700, lr_decay_steps=5000000, lr_decay_style="cosine"))
""",
    "megatron ramp": """\
batch = megatron.rampup_batch_size(32, 8, 7200, global_batch_size=248)
schedule lr = on_samples(megatron.OptimizerParamScheduler(init_lr=0, max_lr=1e-3, min_lr=1e-5, \
lr_warmup_steps=3000, lr_decay_steps=8000, lr_decay_style="linear"))
""",
    "olmo-core": """\
param seq_len: int = 4096
batch = olmo_core.batch_size_schedule(batch_sizes=[32768, 65536, 131072], schedule=[0, 200000, 500000])
schedule lr = olmo_core.CosWithWarmup(lr=3e-4, units="tokens", warmup=100000, t_max=2000000) \
* olmo_core.batch_size_lr_factor()
""",
    "cooldown branch": """\
param seq_len: int = 100
batch = stages(4, [16], [20000tok])
let trunk = warmup(linear, 50) >> cosine(1e-3, 1e-4, 20000)
schedule lr = trunk for 1_000_000tok >> cooldown(sqrt, 300000tok, 1e-5) \
    >> cooldown(megatron_exponential, 50, 0)
""",
    "on_tokens": """\
param seq_len: int = 100
batch = stages(4, [16], [20000tok])
schedule lr = on_tokens(linear(0, 1e-3, 5000)) >> cosine(1e-3, 0, 100000tok)
""",
    "run on tokens": """\
param seq_len: int = 100
param total: int = 90_000
batch = stages(4, [16], [20000tok])
run = 90_001tok
schedule lr = linear(0, 1e-3, 5000tok) >> cosine(1e-3, 0, total * 1tok)
""",
}


def _built(source: str):
    code = sb.to_python(source)
    namespace = {"sb": sb}
    exec(compile(code, "<to_python>", "exec"), namespace)  # the builder code we just wrote
    return namespace["prog"], code


@pytest.mark.parametrize("name", sorted(FILES))
def test_to_python_of_a_clocked_file_builds_the_same_run(name):
    source = FILES[name]
    if "batch_size_lr_factor" in source:  # it reads the file's batch: not a piece of its own
        with pytest.raises(SchedlangError, match="batch_size_schedule"):
            _built(source)
        return
    built, code = _built(source)
    ours = schedlang.compile(source)
    steps = [0, 1, 2, 50, 51, 400, 1000, 5000, 12345, 100_000]
    assert [built.batch_at(k) for k in steps] == [ours.batch_at(k) for k in steps]
    if "seq_len" in source:
        assert "seq_len" in code.split("batch=")[1]  # the batch schedule takes the program's seq_len
        assert [built.tokens_at(k) for k in steps] == [ours.tokens_at(k) for k in steps]
    assert built["lr"].values(steps) == ours["lr"].values(steps)
    assert built.run == ours.run and built.run_tokens == ours.run_tokens  # `run = ...` as sb.program(run=)
    assert schedlang.compile(built.to_source())["lr"].values(steps) == ours["lr"].values(steps)


def test_on_samples_is_a_function_of_the_builder():
    peak = 3e-4
    lr = sb.on_samples(sb.linear(0, peak, 1000)) >> sb.constant(peak)
    prog = sb.program(lr=lr, batch=sb.stages(8, [16], [sb.time(400, "sp")]))
    assert "on_samples(linear(0, 0.0003, 1000))" in prog.to_source()
    assert prog["lr"](50) == pytest.approx(peak * prog.samples_at(50) / 1000)


def test_seq_len_takes_the_program_s_parameter():
    with pytest.raises(SchedlangError, match="seq_len= takes the program's parameter"):
        sb.megatron.step_batch_size_schedule("0:16 1M:32", seq_len=4096)
