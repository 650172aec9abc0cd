"""Every config format through one hardened path (schedlang/formats/): each hostile file below is
written here, in tmp_path, and each class of failure it stands for has its test.

The classes: input over the size limit (refused, never cut); config strings and file names that
would become ``.sched`` statements; outputs over inputs, modes and symlinks; lone CRs and the
line count; tracebacks, memory and hangs (YAML alias keys, deep JSON/TOML, huge numbers, standard
input, ``eval --json`` of the largest range); messages (errors at the config's own key, JSON that
is always UTF-8, an ``error`` object on exit 2); real configs (tab-indented JSON) and guessing the
format from the content, one command per file.

Then what no one format owns: YAML merge keys in the YAML formats, tests that take several formats
in one (``import`` then ``verify`` on the command line, export refusals, the guesser over every
config of ``frameworks/configs/``), and the recipe (a toy format added as one listed module).
Each format's own import and export tests are in ``test_<module>.py`` beside this file.
"""

from __future__ import annotations

import io
import json
import os
import stat
import subprocess
import sys
import types
import warnings
from pathlib import Path

import pytest
from helpers import ROOT

import schedlang
from schedlang import limits
from schedlang.cli import json_output, main
from schedlang.cli.axis import steps_at
from schedlang.errors import SchedlangWarning
from schedlang.formats import TABLE, from_cerebras_yaml, guess_format, help_text, import_file, markdown_table

CONFIGS = Path(__file__).parents[1] / "frameworks" / "configs"
MEGATRON = """#!/bin/bash
torchrun pretrain_gpt.py \\
    --train-iters 1000 --lr-decay-style cosine --min-lr 1e-5 \\
    --lr-warmup-iters 100 {lr}
"""


def run(capsys, *argv):
    """``schedlang ARGV``: (exit status, stdout, stderr)."""
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


# -- the one table ---------------------------------------------------------------------------------


def test_the_table_lists_every_format_for_help_cli_and_docs(capsys):
    names = [f.name for f in TABLE]
    assert len(names) == len(set(names)) == 12
    text = help_text()
    assert all(name in text for name in names)
    with pytest.raises(SystemExit):
        main(["import", "--help"])
    out = capsys.readouterr().out
    assert all(name in out for name in names)
    docs = (ROOT / "docs" / "import_export.md").read_text(encoding="utf-8")
    assert markdown_table() in docs, "paste `python -m schedlang.formats` into docs/import_export.md"


# -- truncation --------------------------------------------------------------------------------------


def test_a_config_over_the_limit_is_refused_not_cut(tmp_path):
    # `--lr 3e-4` straddles the 256 KiB mark: a file cut there would read `--lr 3`
    script = MEGATRON.format(lr="--lr 3e-4")
    at = script.index("--lr 3e-4") + len("--lr 3")
    padding = "#" * (limits.MAX_FILE_BYTES - at - 1) + "\n"
    path = tmp_path / "big.sh"
    path.write_text(padding + script)
    assert path.read_bytes()[:limits.MAX_FILE_BYTES].endswith(b"--lr 3")
    with pytest.raises(schedlang.SchedlangError, match="larger than"):
        import_file(path, "megatron-args")
    for fmt, name in (("timm-args", "t.sh"), ("sambaflow", "s.sh"), ("torchtitan-toml", "j.toml"),
                      ("mmengine-config", "m.py"), ("deepspeed-json", "d.json")):
        big = tmp_path / name
        big.write_text("#" * (limits.MAX_FILE_BYTES + 1))
        with pytest.raises(schedlang.SchedlangError, match="larger than"):
            import_file(big, fmt)


def test_standard_input_is_bounded(tmp_path):
    big = tmp_path / "zero"
    big.write_bytes(b"\0" * (limits.MAX_FILE_BYTES * 4))
    for argv in (["fmt", "-"], ["import", "-", "--format", "megatron-args"]):
        with open(big, "rb") as stdin:
            result = subprocess.run([sys.executable, "-m", "schedlang", *argv], stdin=stdin,
                                    capture_output=True, text=True, cwd=ROOT, timeout=60)
        assert result.returncode == 2, result.stderr
        assert "larger than" in result.stderr and "Traceback" not in result.stderr


# -- config strings and file names never become statements --------------------------------------------

HOSTILE = 'triangular")\nschedule weight_decay = constant(123) #'


def test_a_deepspeed_option_string_is_refused_at_the_value(tmp_path):
    path = tmp_path / "ds.json"
    path.write_text(json.dumps({"optimizer": {"type": "Adam", "params": {"lr": 0.1}},
                                "scheduler": {"type": "CyclicLR", "params": {
                                    "base_lr": 0.01, "max_lr": 0.1, "mode": HOSTILE}}}))
    with pytest.raises(schedlang.SchedlangError, match="mode must be one of") as info:
        import_file(path)
    assert info.value.filename == str(path) and info.value.line == 1


def test_a_timm_decay_fn_string_is_refused_at_the_flag(tmp_path):
    path = tmp_path / "train.sh"
    path.write_text("python train.py --sched wsd --epochs 200 --lr 0.1 --lr-decay-fn "
                    "'linear\")\nschedule weight_decay = constant(123) #'\n")
    with pytest.raises(schedlang.SchedlangError, match="lr_decay_fn must be one of"):
        import_file(path, "timm-args")


def test_an_mmengine_anneal_strategy_string_is_refused_at_the_value(tmp_path):
    path = tmp_path / "cfg.py"
    path.write_text("optim_wrapper = dict(optimizer=dict(type='SGD', lr=0.1))\n"
                    "train_cfg = dict(by_epoch=False, max_iters=100)\n"
                    "param_scheduler = [dict(type='OneCycleLR', eta_max=0.1, total_steps=100,\n"
                    "                        by_epoch=False,\n"
                    f"                        anneal_strategy={HOSTILE!r})]\n")
    with pytest.raises(schedlang.SchedlangError, match="anneal_strategy must be one of") as info:
        import_file(path, "mmengine-config")
    assert info.value.line == 5


NAME = "x\nschedule momentum = constant(7)\n#"


@pytest.mark.parametrize("fmt, suffix, text", [
    ("megatron-args", ".sh", MEGATRON.format(lr="--lr 3e-4")),
    ("sambaflow", ".sh", "python run.py --lr_schedule fixed_lr --learning_rate 0.01\n"),
    ("hf-args", ".json", '{"learning_rate": 0.1, "max_steps": 100, "lr_scheduler_type": "linear"}'),
    ("cerebras-yaml", ".yaml", "schedulers:\n  - ConstantLR:\n      learning_rate: 0.5\n"),
    ("torchtitan-toml", ".toml", "[lr_scheduler]\nwarmup_steps = 10\n[training]\nsteps = 100\n"),
    ("timm-args", ".sh", "python train.py --sched cosine --epochs 10 --lr 0.1\n"),
    ("keras-json", ".json", '{"class_name": "ExponentialDecay", "config": {"initial_learning_rate": 0.1, '
                            '"decay_steps": 10, "decay_rate": 0.5}}'),
])
def test_a_file_name_cannot_add_a_statement(tmp_path, fmt, suffix, text):
    path = tmp_path / (NAME + suffix)
    path.write_text(text)
    source = import_file(path, fmt)
    assert "momentum" not in schedlang.compile(source).schedules
    assert source.splitlines()[0].startswith("# Imported by") and "\\n" in source.splitlines()[0]


def test_an_export_header_escapes_the_file_name(tmp_path):
    from schedlang.formats.export import export

    text = export("schedule lr = cosine(0.1, 0.01, 100)\n", NAME + ".sched", format="cerebras-yaml")
    first, *rest = text.splitlines()
    assert first.startswith("# Exported") and "\\n" in first and "momentum" not in "".join(rest)


# -- outputs --------------------------------------------------------------------------------------------


def test_an_output_that_is_the_input_is_refused(tmp_path, capsys):
    sched = tmp_path / "c.sched"
    sched.write_text("schedule lr = cosine(0.1, 0.01, 100)\n")
    yaml_file = tmp_path / "cfg.yaml"
    yaml_file.write_text("schedulers:\n  - ConstantLR:\n      learning_rate: 0.5\n")
    for argv, kept in ((["compile", sched, "-o", sched], sched),
                       (["import", yaml_file, "-o", yaml_file], yaml_file),
                       (["export", sched, "-o", sched], sched)):
        before = kept.read_text()
        code, _, err = run(capsys, *argv)
        assert code == 2 and "is the input file" in err and "<command line>" in err, err
        assert kept.read_text() == before


def test_an_output_directory_is_a_located_error(tmp_path, capsys):
    sched = tmp_path / "c.sched"
    sched.write_text("schedule lr = cosine(0.1, 0.01, 100)\n")
    code, _, err = run(capsys, "compile", sched, "-o", tmp_path)
    assert code == 2 and "is a directory" in err and "^" in err and "Traceback" not in err


def test_outputs_keep_the_mode_and_write_through_symlinks(tmp_path, capsys):
    sched = tmp_path / "c.sched"
    sched.write_text("schedule   lr = cosine(0.1, 0.01, 100)\n")
    sched.chmod(0o644)
    link = tmp_path / "link.sched"
    link.symlink_to(sched)
    assert run(capsys, "fmt", link)[0] == 0
    assert link.is_symlink() and sched.read_text() == "schedule lr = cosine(0.1, 0.01, 100)\n"
    assert stat.S_IMODE(sched.stat().st_mode) == 0o644
    out = tmp_path / "out.py"
    out.write_text("old")
    out.chmod(0o640)
    assert run(capsys, "compile", sched, "-o", out)[0] == 0
    assert stat.S_IMODE(out.stat().st_mode) == 0o640 and "def" in out.read_text()
    fresh = tmp_path / "fresh.py"
    assert run(capsys, "compile", sched, "-o", fresh)[0] == 0
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o666 & ~umask


# -- lines ------------------------------------------------------------------------------------------------


def test_a_lone_cr_ends_a_comment():
    program = schedlang.compile("schedule lr = constant(0.1) # note\rschedule weight_decay = constant(0.5)\n")
    assert set(program.schedules) == {"lr", "weight_decay"}


@pytest.mark.parametrize("separator", ["\f", "\u2028", "\x1c"])
def test_the_caret_quotes_the_line_the_parser_counted(separator):
    with pytest.raises(schedlang.SchedlangError) as info:
        schedlang.compile(f"schedule lr = constant(0.1)\f # note{separator} more\nschedule wd = oops(1)\n")
    assert info.value.line == 2
    assert "schedule wd = oops(1)" in str(info.value).splitlines()[1]


def test_a_lone_cr_counts_as_a_line_for_the_caret():
    with pytest.raises(schedlang.SchedlangError) as info:
        schedlang.compile("schedule lr = constant(0.1)\rschedule wd = oops(1)\n")
    assert (info.value.line, info.value.column) == (2, 15)
    assert "schedule wd = oops(1)" in str(info.value).splitlines()[1]


# -- tracebacks, memory, hangs ------------------------------------------------------------------------------


def test_a_yaml_alias_bomb_inside_a_key_is_refused_fast():
    import time

    lines = ["? [&a [x, x, x, x, x, x, x, x, x],"]
    previous = "a"
    for level in range(1, 12):
        lines.append(f"   &b{level} [" + ", ".join([f"*{previous}"] * 9) + "],")
        previous = f"b{level}"
    lines.append(f"   *{previous}]\n: 1\n")
    start = time.monotonic()
    with pytest.raises(schedlang.SchedlangError, match="key"):
        from_cerebras_yaml("\n".join(lines), "bomb.yaml")
    assert time.monotonic() - start < 5


@pytest.mark.parametrize("text, match", [
    ("[lr_scheduler]\nwarmup_steps = " + "1" * 5000 + "\n", "more than 400 digits"),
    ("[lr_scheduler]\nx = " + "[" * 3000 + "]" * 3000 + "\n", "nests more than"),
])
def test_toml_numbers_and_nesting_are_located_errors(tmp_path, text, match):
    path = tmp_path / "job.toml"
    path.write_text(text)
    with pytest.raises(schedlang.SchedlangError, match=match) as info:
        import_file(path)
    assert info.value.line == 2


def test_hf_kwargs_nested_deep_is_a_located_error(tmp_path):
    path = tmp_path / "args.json"
    kwargs = "[" * 100_000 + "]" * 100_000
    path.write_text(json.dumps({"lr_scheduler_type": "cosine", "learning_rate": 0.1, "max_steps": 10,
                                "lr_scheduler_kwargs": kwargs}))
    with pytest.raises(schedlang.SchedlangError, match="nests more than") as info:
        import_file(path, "hf-args")
    assert info.value.line == 1


def test_deep_json_and_long_numbers_are_located_errors(tmp_path):
    path = tmp_path / "ds.json"
    path.write_text('{"scheduler":\n ' + "[" * 5000 + "]" * 5000 + "}")
    with pytest.raises(schedlang.SchedlangError, match="nests more than") as info:
        import_file(path, "deepspeed-json")
    assert info.value.line == 2
    path.write_text('{"scheduler": {"type": "WarmupLR", "params": {"warmup_num_steps": ' + "9" * 5000 + "}}}")
    with pytest.raises(schedlang.SchedlangError, match="digits"):
        import_file(path, "deepspeed-json")


def test_a_lone_surrogate_in_keras_json_is_a_located_error_and_json_stays_utf8(tmp_path, capsys):
    path = tmp_path / "lr.json"
    path.write_text('{"class_name": "ExponentialDecay", "config": {"name": "\\ud800", '
                    '"initial_learning_rate": 0.1, "decay_steps": 10, "decay_rate": 0.5}}')
    code = main(["import", str(path), "--json"])
    out, err = capsys.readouterr()
    assert code == 2 and "surrogate" in err
    doc = json.loads(out.encode("utf-8"))
    assert doc["schema"] == "schedlang.error/1" and doc["error"]["line"] == 1


def test_eval_json_is_streamed_byte_for_byte():
    program = schedlang.compile("schedule lr = warmup(linear, 50) >> cosine(0.1, 0.01, 100)\n"
                                "schedule weight_decay = constant(0.1)\n")
    names = list(program.schedules)
    schedules = [program[n] for n in names]
    for steps in (range(0, 300, 7), range(3, 3), range(0, 1)):
        for chunk in (1, 5, 1 << 16):
            out = io.StringIO()
            json_output.stream_evaluate(out, "a.sched", steps, names, schedules, chunk=chunk)
            expected = json_output.evaluate("a.sched", steps, names, [s.values(steps) for s in schedules])
            assert out.getvalue() == json_output.dumps(expected) + "\n"
            assert json.loads(out.getvalue()) == expected
    ramp = schedlang.compile("batch = stages(8, [16], [40sp])\nschedule lr = cosine(0.1, 0.01, 40)\n")
    tokens = [ramp["lr"]]
    for positions in (range(0, 500, 3), range(7, 7)):
        for chunk in (1, 4, 1 << 16):
            out = io.StringIO()
            json_output.stream_evaluate(out, "b.sched", positions, ["lr"], tokens, chunk=chunk,
                                        axis="samples", steps_at=lambda part: steps_at(ramp, "samples", part))
            steps = steps_at(ramp, "samples", positions)
            expected = json_output.evaluate("b.sched", steps, ["lr"], [tokens[0].values(steps)],
                                            ("samples", list(positions)))
            assert out.getvalue() == json_output.dumps(expected) + "\n"


@pytest.mark.slow
def test_eval_json_of_the_largest_range_stays_within_bounded_memory(tmp_path):
    if not os.path.exists("/proc/self/status"):
        pytest.skip("reads the peak memory from /proc (Linux)")
    path = tmp_path / "four.sched"
    path.write_text("schedule lr = warmup(linear, 50) >> cosine(0.1, 0.01, 100)\n"
                    "schedule weight_decay = constant(0.1)\nschedule momentum = linear(0.9, 0.8, 1000)\n"
                    "schedule beta2 = constant(0.99)\n")
    # VmHWM, not ru_maxrss: Linux carries ru_maxrss over exec from the forking parent (pytest)
    code = ("import re, sys; from schedlang.cli import main; sys.stdout = open('/dev/null', 'w');"
            f"main(['eval', {str(path)!r}, '--steps', '0:2000000', '--json']);"
            "status = open('/proc/self/status').read();"
            "print(re.search(r'VmHWM:\\s*(\\d+)', status).group(1), file=sys.stderr)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                            timeout=600)
    assert result.returncode == 0, result.stderr
    assert int(result.stderr.split()[-1]) < 400_000  # KiB: before streaming, 2M steps took over 1 GB


# -- messages ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name, text, fmt, line", [
    ("hf.json", '{"learning_rate": 0.1,\n "max_steps": 100,\n "warmup_steps": 1e30,\n'
                ' "lr_scheduler_type": "linear"}', "hf-args", 3),
    ("ds.json", '{"optimizer": {"params": {"lr": 0.1}},\n "scheduler": {"type": "WarmupDecayLR", "params":\n'
                ' {"total_num_steps": 100, "warmup_num_steps": 1e30}}}', "deepspeed-json", 3),
])
def test_an_importer_error_points_at_the_config_key(tmp_path, name, text, fmt, line):
    path = tmp_path / name
    path.write_text(text)
    for style in ("presets", "core"):
        with pytest.raises(schedlang.SchedlangError) as info:
            import_file(path, fmt, style)
        assert info.value.filename == str(path) and info.value.line == line, str(info.value)
        assert "<import>" not in str(info.value)


@pytest.mark.parametrize("name, text, fmt, where", [
    ("lr.json", '{"class_name": "ExponentialDecay",\n "config": {"initial_learning_rate": 0.1,\n'
                ' "decay_steps": 0, "decay_rate": 0.5}}', "keras-json", (3, 17)),
    ("ds.json", '{"optimizer": {"params": {"lr": 0.1}},\n "scheduler": {"type": "WarmupLR", "params":\n'
                ' {"warmup_min_lr": 0, "warmup_max_lr": 0.1, "warmup_num_steps": 0}}}', "deepspeed-json",
     (3, 65)),
])
def test_a_value_the_schedule_refuses_is_reported_at_its_key(tmp_path, name, text, fmt, where):
    path = tmp_path / name
    path.write_text(text)
    for style in ("presets", "core"):
        with pytest.raises(schedlang.SchedlangError) as info:
            import_file(path, fmt, style)
        assert (info.value.line, info.value.column) == where, str(info.value)


def test_a_derived_value_the_schedule_refuses_names_the_config_not_generated_text(tmp_path):
    path = tmp_path / "run.sh"
    path.write_text("torchrun pretrain_gpt.py --train-iters 1000 --lr-decay-style cosine --lr 3e-4 "
                    "--lr-warmup-fraction -0.1\n")
    with pytest.raises(schedlang.SchedlangError) as info:
        import_file(path)
    # issue 28: at the flag the value is computed from (file:line:col), not the generated text
    assert info.value.span is not None and info.value.span.source.filename == str(path)
    assert info.value.column == path.read_text().index("-0.1") + 1
    assert "<import>" not in str(info.value)


def test_a_megatron_flag_with_equals_and_a_variable_is_a_parameter(tmp_path):
    for flag in ("--lr=$LR", "--lr $LR"):
        path = tmp_path / "run.sh"
        path.write_text(f"LR=3e-4\ntorchrun pretrain_gpt.py --train-iters 1000 --lr-decay-style cosine "
                        f"{flag}\n")
        program = schedlang.compile(import_file(path))
        assert "lr_" in program.params, flag


def test_check_strict_json_exits_2_with_an_error_object(tmp_path, capsys):
    path = tmp_path / "jump.sched"
    path.write_text("schedule lr = linear(0, 1e-3, 100) >> cosine(5e-4, 0, 100)\n")
    assert run(capsys, "check", path)[0] == 0  # a warning: the jump at step 100
    code, out, _ = run(capsys, "check", path, "--strict", "--json")
    doc = json.loads(out)
    assert code == 2 and doc["schema"] == "schedlang.error/1" and doc["error"]["line"] == 1
    assert "jumps at step 100" in doc["error"]["message"]


def test_json_output_is_utf8_for_an_undecodable_file_name(tmp_path):
    name = os.fsdecode(b"bad\xff.sched")
    (tmp_path / name).write_text("schedule lr = oops(1)\n")
    result = subprocess.run([sys.executable, "-m", "schedlang", "check", os.fsencode(name), "--json"],
                            capture_output=True, cwd=tmp_path, timeout=60, env={**os.environ,
                                                                                 "PYTHONPATH": str(ROOT)})
    assert result.returncode == 2
    doc = json.loads(result.stdout.decode("utf-8"))
    assert doc["error"]["file"] == "bad\\xff.sched"


# -- real configs and the format guess -----------------------------------------------------------------


def test_a_tab_indented_deepspeed_json_is_read(tmp_path):
    path = tmp_path / "ds_config.json"
    path.write_text('{\n\t"optimizer": {"type": "Adam", "params": {"lr": 0.001}},\n\t"scheduler": {\n'
                    '\t\t"type": "WarmupLR",\n\t\t"params": {"warmup_min_lr": 0, "warmup_max_lr": 0.001, '
                    '"warmup_num_steps": 100}\n\t}\n}\n')
    assert "deepspeed.WarmupLR" in import_file(path)


@pytest.mark.parametrize("text, expected", [
    (MEGATRON.format(lr="--lr 3e-4"), "megatron-args"),
    ("python train.py /data --sched cosine --epochs 10 --lr 0.1\n", "timm-args"),
    ("./distributed_train.sh 8 /imagenet --sched step --epochs 90\n", "timm-args"),
    ("python run.py --lr_schedule fixed_lr --learning_rate 0.01\n", "sambaflow"),
])
def test_a_shell_script_is_recognised_from_its_content(tmp_path, text, expected):
    assert guess_format(tmp_path / "run.sh", text) == expected


def test_a_megatron_yaml_of_flags_is_recognised(tmp_path):
    text = "--train-iters: 1000\n--lr: 3.0e-4\n--lr-decay-style: cosine\n--min-lr: 1.0e-5\n"
    path = tmp_path / "megatron.yaml"
    path.write_text(text)
    assert guess_format(path, text) == "megatron-args"
    assert "megatron" in import_file(path)


def test_a_script_of_no_known_format_names_the_formats_that_fit(tmp_path):
    with pytest.raises(schedlang.SchedlangError) as info:
        guess_format(tmp_path / "run.sh", "echo hello\n")
    assert all(name in info.value.hint for name in ("megatron-args", "timm-args", "sambaflow"))


def test_several_commands_in_one_file_are_refused_naming_their_lines(tmp_path):
    path = tmp_path / "timm_docs.sh"
    path.write_text("# three recipes from a docs page\n"
                    "./distributed_train.sh 8 /imagenet --model a --sched cosine --epochs 100 --lr 0.1\n"
                    "\n"
                    "./distributed_train.sh 8 /imagenet --model b --sched step --epochs 90 --lr 0.2\n"
                    "./distributed_train.sh 8 /imagenet --model c \\\n"
                    "    --sched cosine --epochs 50 --lr 0.3\n")
    with pytest.raises(schedlang.SchedlangError, match=r"3 commands .*lines 2, 4, 5"):
        import_file(path)


def test_a_sambaflow_compile_then_run_script_is_one_command(tmp_path):
    path = tmp_path / "run.sh"
    path.write_text("python app.py compile --pef-name app --learning_rate 0.01\n"
                    "python app.py run --pef out/app.pef --lr_schedule fixed_lr --learning_rate 0.01\n")
    assert "sambaflow" in import_file(path)


@pytest.mark.parametrize("fmt", ["cerebras-yaml", "deepspeed-json", "megatron-args"])
def test_every_export_is_read_back_and_proven_by_one_step(fmt):
    from schedlang.formats import READERS
    from schedlang.formats.common.proof import proven
    from schedlang.formats.export import export

    source = "schedule lr = warmup(linear, 10) >> cosine(0.1, 0.01, 90)\n"
    if fmt != "cerebras-yaml":
        source = {"deepspeed-json": "schedule lr = deepspeed.WarmupLR(warmup_min_lr=0, warmup_max_lr=0.1, "
                                    "warmup_num_steps=10, lr=0.1)\n",
                  "megatron-args": "schedule lr = megatron.OptimizerParamScheduler(init_lr=0, max_lr=0.1, "
                                   "min_lr=0.01, lr_warmup_steps=10, lr_decay_steps=100, "
                                   "lr_decay_style=\"cosine\")\n"}[fmt]
    text = export(source, "a.sched", format=fmt)
    original = schedlang.compile(source)
    proven(original, text, READERS[fmt], "a.sched")
    warmup = {"cerebras-yaml": "total_iters: 10", "deepspeed-json": '"warmup_num_steps": 10',
              "megatron-args": "--lr-warmup-iters 10"}[fmt]
    changed = text.replace(warmup, warmup.replace("10", "20"))
    assert changed != text
    with pytest.raises(schedlang.SchedlangError, match="internal error"):
        proven(original, changed, READERS[fmt], "a.sched",
               style="core" if fmt == "cerebras-yaml" else "presets")


# -- YAML merge keys, shared by the YAML formats (issue 11) ------------------------------------------


def test_yaml_merge_keys_with_an_overriding_key_are_read_like_pyyaml():
    from schedlang.formats.common.yaml_source import load

    yaml = pytest.importorskip("yaml")
    text = (CONFIGS / "cerebras_merge_keys.yaml").read_text()
    with warnings.catch_warnings():
        warnings.simplefilter("error", SchedlangWarning)  # merging is not a repeated key
        assert load(text).plain() == yaml.safe_load(text)
        program = schedlang.compile(import_file(CONFIGS / "cerebras_merge_keys.yaml"))
    assert program["lr"](100) == pytest.approx(6e-4)


def test_merge_keys_in_composer_and_hf_files():
    from schedlang.formats import from_composer_yaml, from_hf_args

    hf = ("defaults: &defaults {lr_scheduler_type: cosine, learning_rate: 1.0e-3, max_steps: 100}\n"
          "<<: *defaults\nlearning_rate: 2.0e-3\n")
    composer = ("common: &warm {name: cosine_with_warmup, t_warmup: 10ba, alpha_f: 0.5}\n"
                "scheduler:\n  <<: *warm\n  t_warmup: 20ba\nmax_duration: 100ba\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error", SchedlangWarning)
        assert "hf.cosine(lr=0.002, num_training_steps=100)" in from_hf_args(hf)
        assert "t_warmup=20ba, alpha_f=0.5" in from_composer_yaml(composer)


# -- several formats in one test: the command line, export refusals, the guesser -------------------


def test_cli_imports_and_verifies_both_styles(tmp_path):
    path = CONFIGS / "foundry_mpt_125m.yaml"
    for fmt, name in [("composer-yaml", "foundry_mpt_125m.yaml"),
                      ("composer-yaml", "foundry_inv_sqrt_cooldown.yaml"),
                      ("hf-args", "hf_args_linear.json")]:
        path = CONFIGS / name
        a, b = tmp_path / f"{name}-a.sched", tmp_path / f"{name}-b.sched"
        for out, extra in [(a, []), (b, ["--lower"])]:
            run = subprocess.run([sys.executable, "-m", "schedlang", "import", str(path), "--format", fmt,
                                  "-o", str(out), *extra], capture_output=True, text=True)
            assert run.returncode == 0, run.stderr
        run = subprocess.run([sys.executable, "-m", "schedlang", "verify", str(a), str(b)],
                             capture_output=True, text=True)
        assert run.returncode == 0, run.stdout + run.stderr


@pytest.mark.parametrize("fmt, source, message", [
    ("hf-args", "warmup(linear, 10) >> cosine(1e-3, 0, 90) >> constant(5e-4)",
     "no hf scheduler equals this lr schedule: the closest"),
    ("hf-args", "schedule lr = hf.linear(lr=1e-3, num_training_steps=100)\n"
                "schedule momentum = constant(0.9)", "only the lr"),
    ("composer-yaml", "torch.CyclicLR(base_lr=0.001, max_lr=0.01, step_size_up=10)", "no composer scheduler"),
    ("composer-yaml", "param n: int\nschedule lr = composer.LinearScheduler(t_max=n)",
     "whole number of batches"),
])
def test_exports_refuse_with_the_reason(fmt, source, message):
    from schedlang.formats.export import export

    with pytest.raises(schedlang.SchedlangError, match=message):
        export(source, "x.sched", format=fmt)


def test_cli_imports_and_verify_proves_the_styles_equal(tmp_path):
    for fmt, path in (("megatron-args", CONFIGS / "megatron" / "llama_wsd.sh"),
                      ("deepspeed-json", CONFIGS / "deepspeed" / "onecycle_adam.json")):
        outs = []
        for extra in ([], ["--lower"]):
            out = tmp_path / f"{fmt}{len(extra)}.sched"
            subprocess.run([sys.executable, "-m", "schedlang", "import", str(path), "--format", fmt, *extra,
                            "-o", str(out)], check=True)
            outs.append(out)
        result = subprocess.run([sys.executable, "-m", "schedlang", "verify", str(outs[0]), str(outs[1])],
                                capture_output=True, text=True)
        assert result.returncode == 0, result.stdout + result.stderr


#: Each YAML config of the corpus and the format its file name does not say.
YAML_FORMATS = {"cerebras": "cerebras-yaml", "composer": "composer-yaml", "foundry": "composer-yaml",
                "hf": "hf-args", "timm": "timm-args"}


@pytest.mark.parametrize("path", sorted(CONFIGS.glob("*.yaml")), ids=lambda p: p.name)
def test_yaml_format_is_guessed_from_the_top_level_keys(path):
    from schedlang.formats import guess_format

    expected = YAML_FORMATS[path.name.split("_", 1)[0]]
    assert guess_format(path, path.read_text(encoding="utf-8")) == expected
    assert import_file(path) == import_file(path, format=expected)


@pytest.mark.parametrize("path", sorted([*CONFIGS.glob("*.json"), *CONFIGS.glob("deepspeed/*.json")]),
                         ids=lambda p: p.name)
def test_json_format_is_guessed_from_the_keys(path):
    """A serialized Keras schedule has ``class_name``; an OLMo-core config.json ``_CLASS_`` marks of
    ``olmo_core.`` modules; a DeepSpeed config ``scheduler`` (or its other top-level sections);
    anything else is HF ``TrainingArguments``."""
    from schedlang.formats import guess_format

    expected = "deepspeed-json" if path.parent.name == "deepspeed" else \
        {"hf": "hf-args", "keras": "keras-json", "olmo": "olmo-core-json"}[path.name.split("_", 1)[0]]
    assert guess_format(path, path.read_text(encoding="utf-8")) == expected


# -- the recipe: a format is one module, listed --------------------------------------------------

TOY_MODULE = '''"""A toy format for the recipe test: a line ``toy lr=0.1 steps=100``, a linear decay to 0."""

import re

import schedlang
from schedlang.errors import SchedlangError
from schedlang.formats.common.format import Format, reader
from schedlang.formats.common.proof import proven
from schedlang.formats.common.numbers import exact
from schedlang.formats.common.statements import call, module, number, schedule_stmt

_LINE = re.compile(r"toy lr=(\\S+) steps=(\\d+)")


def read(text, filename):
    found = _LINE.fullmatch(text.strip())
    if found is None:
        raise SchedlangError(f"{filename} is not one toy line")
    return exact(found[1]), int(found[2])


def source(config, filename, style):
    lr, steps = config
    return module(schedule_stmt("lr", call("linear", number(lr, None), number(0, None), number(steps, None))))


def export(text, filename="<string>", params=None, verify=True, schedules=None, *, read, into=None):
    program = schedlang.compile(text, params or None)
    lr = program["lr"]
    written = f"toy lr={lr(0)} steps={lr.duration}\\n"
    if verify:
        proven(program, written, read, filename)
    return written


FORMAT = Format("toy-lines", "a toy line (the recipe test)", (".toy",),
                lambda text, suffix: text.startswith("toy "), reader("toy-lines", read, source), export)
'''


@pytest.fixture
def toy_format(tmp_path, monkeypatch):
    """The toy module written to a file and named in ``MODULES``: nothing else changes."""
    import importlib.util

    from schedlang import formats

    path = tmp_path / "toy_lines.py"
    path.write_text(TOY_MODULE, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("schedlang.formats.toy_lines", path)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)
    spec.loader.exec_module(module)
    monkeypatch.setattr(formats, "MODULES", (*formats.MODULES, "toy_lines"))
    formats.table.cache_clear()
    yield module
    formats.table.cache_clear()


def test_a_format_added_as_one_listed_module_is_guessed_imported_exported_and_proven(toy_format, tmp_path,
                                                                                     capsys):
    from schedlang import formats
    from schedlang.formats.common.proof import proven
    from schedlang.formats.export import export

    path = tmp_path / "run.toy"
    path.write_text("toy lr=0.1 steps=100\n", encoding="utf-8")
    assert guess_format(path, path.read_text()) == "toy-lines"
    source = import_file(path)
    assert schedlang.equivalent(source, "schedule lr = linear(0.1, 0, 100)\n")
    written = export(source, "run.sched", format="toy-lines")
    assert written == "toy lr=0.1 steps=100\n"
    proven(schedlang.compile(source), written, formats.READERS["toy-lines"], "run.sched")
    with pytest.raises(schedlang.SchedlangError, match="internal error"):
        proven(schedlang.compile(source), "toy lr=0.1 steps=99\n", formats.READERS["toy-lines"], "run.sched")
    assert formats.from_toy_lines("toy lr=0.1 steps=100") == source
    assert "`toy-lines` | a toy line (the recipe test) | `.toy` | yes |" in markdown_table()
    with pytest.raises(SystemExit):
        main(["import", "--help"])
    assert "toy-lines" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["export", "x.sched", "--format", "nope"])
    assert "toy-lines" in capsys.readouterr().err


def test_a_listed_module_that_declares_no_format_is_named(monkeypatch):
    from schedlang import formats

    monkeypatch.setattr(formats, "MODULES", (*formats.MODULES, "numbers_of_nothing"))
    monkeypatch.setitem(sys.modules, "schedlang.formats.numbers_of_nothing", types.ModuleType("nothing"))
    formats.table.cache_clear()
    try:
        with pytest.raises(TypeError, match="numbers_of_nothing.py is listed in MODULES but declares no"):
            formats.table()
        monkeypatch.setattr(formats, "MODULES", (*formats.MODULES[:-1], "timm_args"))
        formats.table.cache_clear()
        with pytest.raises(TypeError, match="two modules declare the format 'timm-args'"):
            formats.table()
    finally:
        formats.table.cache_clear()


def test_formats_knows_no_framework_outside_its_module_list():
    """``formats/__init__.py`` names formats only in ``MODULES``: the rest is built from them."""
    text = (ROOT / "schedlang" / "formats" / "__init__.py").read_text(encoding="utf-8")
    start = text.index("MODULES = (")
    body = text.replace(text[start:text.index(")\n", start)], "")
    for word in ("cerebras", "composer", "megatron", "timm", "keras", "deepspeed", "sambaflow", "torchtitan",
                 "mmengine", "hf_args", "hf-args", "lr_scheduler", "trainer", "param_scheduler"):
        assert word not in body.lower(), word


def test_the_formats_package_has_no_import_cycle():
    """Every import between the modules of ``formats`` (at module level and inside functions)
    goes one way: a writer is handed its reader, so no format imports ``export`` or another."""
    import ast

    package = ROOT / "schedlang" / "formats"
    graph = {}
    for path in package.rglob("*.py"):
        name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        base = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level:
                parent = base.rsplit(".", node.level - 1)[0] if node.level > 1 else base
                target = f"{parent}.{node.module}" if node.module else parent
                edges |= {f"{target}.{a.name}" for a in node.names} | {target}
        graph[name] = edges
    graph = {name: {e for e in edges if e in graph and e != name} for name, edges in graph.items()}

    def reach(start, seen):
        for nxt in graph[start]:
            if nxt not in seen:
                seen.add(nxt)
                reach(nxt, seen)
        return seen

    # the package's __init__ lists its modules and may load them; nothing it loads loads it back
    cycles = sorted(name for name in graph if name in reach(name, set()) and name != "schedlang.formats")
    assert not cycles, cycles
