"""Truthful refusals, located (issue 28): what an importer cannot know is called unknown, not
an error Python would raise; and every refusal has its file:line:col and a caret."""

from __future__ import annotations

import pytest

from schedlang.errors import SchedlangError
from schedlang.formats import import_file


def _refusal(tmp_path, name: str, content: bytes | str, fmt: str | None = None) -> SchedlangError:
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(SchedlangError) as info:
        import_file(path, format=fmt)
    return info.value


DEEPSPEED = """from config import *
ds_config = {
    "train_batch_size": 8,
    "scheduler": {"type": "WarmupLR", "params": {"warmup_max_lr": LR, "warmup_num_steps": 100}},
}
"""
KERAS = """from config import *
import keras
lr = keras.optimizers.schedules.CosineDecay(initial_learning_rate=LR, decay_steps=1000)
"""


@pytest.mark.parametrize("text", [DEEPSPEED, KERAS], ids=["deepspeed", "keras"])
def test_a_name_a_star_import_may_bind_is_unknown_not_a_name_error(tmp_path, text):
    error = _refusal(tmp_path, "train.py", text)
    assert "NameError" not in error.message
    assert "the value of 'LR' is unknown" in error.message and "from config import *" in error.message
    assert error.span is not None and error.span.line == text.splitlines().index(
        next(line for line in text.splitlines() if "LR," in line or "LR}" in line or "=LR" in line)) + 1


def test_a_name_used_before_the_star_import_is_still_python_s_name_error(tmp_path):
    text = "import keras\nlr = keras.optimizers.schedules.CosineDecay(initial_learning_rate=LR, " \
           "decay_steps=10)\nfrom config import *\n"
    assert "NameError" in _refusal(tmp_path, "train.py", text).message


def test_a_keras_name_given_as_an_f_string_is_dropped_like_any_name(tmp_path):
    path = tmp_path / "train.py"
    path.write_text('import keras\nrun = 3\nlr = keras.optimizers.schedules.CosineDecay('
                    'initial_learning_rate=0.1, decay_steps=1000, name=f"cosine_run{run}")\n')
    text = import_file(path)
    assert "keras.CosineDecay(initial_learning_rate=0.1, decay_steps=1000)" in text
    # another argument as an f-string is still not followed
    path.write_text('import keras\nrun = 3\nlr = keras.optimizers.schedules.CosineDecay('
                    'initial_learning_rate=0.1, decay_steps=f"{run}")\n')
    with pytest.raises(SchedlangError, match="f-string"):
        import_file(path)


def test_a_toml_dotted_key_is_located_like_a_plain_one(tmp_path):
    error = _refusal(tmp_path, "job.toml", "[lr_scheduler]\nwarmup.steps = 10\n[training]\nsteps = 100\n",
                     "torchtitan-toml")
    assert "warmup is not a key" in error.message
    assert (error.span.line, error.span.column) == (2, 1)


def test_a_latin_1_byte_far_along_a_json_line_has_a_caret(tmp_path):
    head = b'{"scheduler": {"type": "WarmupLR", "params": {"warmup_num_steps": 100, "note": "'
    line = head + b"x" * (111 - len(head)) + b'\xe9t\xe9"}}}\n'
    error = _refusal(tmp_path, "ds.json", line, "deepspeed-json")
    assert (error.span.line, error.span.column) == (1, 112)
    caret = str(error).splitlines()[2]
    assert caret.rstrip().endswith("^"), str(error)
    quoted = str(error).splitlines()[1]
    assert caret.index("^") == quoted.index("\ufffd"), str(error)


def test_a_bad_byte_after_wide_characters_is_at_its_character_column(tmp_path):
    content = b'{"a": "' + "é".encode() * 5 + b"\xff\"}\n"
    error = _refusal(tmp_path, "ds.json", content, "deepspeed-json")
    assert error.span.column == len('{"a": "') + 5 + 1


@pytest.mark.parametrize("flags, flag, value", [
    ("--lr 6e-4 --min-lr 6e-5 --lr-decay-style cosine --train-iters 1000 --lr-warmup-fraction -0.1",
     "--lr-warmup-fraction", "-0.1"),
    ("--lr 1e400 --min-lr 6e-5 --lr-decay-style cosine --train-iters 1000 --lr-warmup-iters 10",
     "--lr", "1e400"),
])
def test_megatron_errors_in_computed_values_point_at_the_flag(tmp_path, flags, flag, value):
    line = f"python pretrain_gpt.py {flags}\n"
    error = _refusal(tmp_path, "run.sh", line, "megatron-args")
    assert error.span is not None, str(error)
    assert error.span.column == line.index(f"{flag} {value}") + len(flag) + 2, str(error)


def test_a_sambaflow_line_with_an_unbalanced_quote_is_located(tmp_path):
    line = 'python train.py --lr_schedule cosine_schedule --learning_rate 0.1 --warmup_steps "10\n'
    error = _refusal(tmp_path, "run.sh", line, "sambaflow")
    assert "No closing quotation" in error.message
    assert (error.span.line, error.span.column) == (1, line.index('"') + 1)


def test_a_config_that_raises_when_loaded_is_refused_there(tmp_path):
    """What follows a ``raise`` never runs (issue 39 item 3): it was read as if it did."""
    text = ('lr = 0.1\nraise RuntimeError("retired config")\n'
            'param_scheduler = [dict(type="CosineAnnealingLR", T_max=100, by_epoch=False)]\n'
            'optim_wrapper = dict(optimizer=dict(type="SGD", lr=lr))\n')
    error = _refusal(tmp_path, "config.py", text, "mmengine-config")
    assert "loading this config stops here" in error.message
    assert (error.span.line, error.span.column) == (2, 1)


def test_a_config_that_may_raise_leaves_what_follows_unknown_at_the_if(tmp_path):
    text = ('import os\nlr = 0.1\nif os.environ.get("RETIRED"):\n    raise RuntimeError("retired")\n'
            'param_scheduler = [dict(type="CosineAnnealingLR", T_max=100, by_epoch=False)]\n'
            'optim_wrapper = dict(optimizer=dict(type="SGD", lr=lr))\n')
    error = _refusal(tmp_path, "config.py", text, "mmengine-config")
    assert "it may end the script (raise at line 4), so what follows it is not known" in error.message
    assert (error.span.line, error.span.column) == (3, 1)
