"""Serialized Keras schedules (``keras-json``) and Keras scripts: import, the refusals.

Each JSON config of ours is imported in both styles, the two are proven equal, and the values
equal Keras' own at every step (its code run in float64, and the float32 values Keras really
gives).  A script that builds a Keras schedule is followed over ``ast`` (never run) and compared
with the schedule Keras really holds after the test runs the file itself (the test's reference
only; schedlang never does); what cannot be followed is refused at its statement.
"""

from __future__ import annotations

import json
import runpy
from pathlib import Path

import pytest
from anchors.preset_cases import max_error
from frameworks import keras_cases as KC
from frameworks.real import real

import schedlang
from schedlang.formats import guess_format, import_file

CONFIGS = Path(__file__).parents[1] / "frameworks" / "configs"
PYTHON = CONFIGS / "python"


KERAS = [
    ("keras_cosine_warmup.json", 11_000),
    ("keras_piecewise.json", 50_000),
    ("keras_adamw_exponential.json", 5_000),
    ("keras_restarts.json", 4_000),
    ("keras_polynomial_cycle.json", 7_000),
]


@pytest.mark.parametrize("name, horizon", KERAS, ids=[k[0] for k in KERAS])
def test_keras_json_import(name, horizon):
    data = json.loads((CONFIGS / name).read_text())
    if data.get("module") == "keras.optimizers":  # an optimizer: its schedule
        data = data["config"]["learning_rate"]
    schedules = real("keras.optimizers.schedules")
    restored = schedules.deserialize(data)
    presets = import_file(CONFIGS / name, format="keras-json")
    ours = schedlang.compile(presets)["lr"]
    steps = sorted(set(range(0, horizon, 97)) | set(range(0, 40)) | {horizon - 1})
    config = restored.get_config()
    config.pop("name")
    assert max_error(ours.values(steps), KC.values(type(restored).__name__, config, steps, float64=True),
                     1e-3) <= 1e-12
    import numpy as np  # and the float32 values Keras really gives, at 1e-6

    float32 = [float(restored(np.int64(s))) for s in steps]
    assert max_error(ours.values(steps), float32, 0.1) <= 1e-6
    if "restarts" in name:  # growing restarts have no core form
        with pytest.raises(schedlang.SchedlangError, match="no core form"):
            import_file(CONFIGS / name, format="keras-json", style="core")
        return
    core = import_file(CONFIGS / name, format="keras-json", style="core")
    assert schedlang.equivalent(ours, schedlang.compile(core)["lr"])


@pytest.mark.parametrize("text, message, where", [
    ('{"class_name": "CosineDecayy", "config": {}}', "not one of Keras", (1, 16)),
    ('{"class_name": "CosineDecay", "config": {"initial_learning_rate": 0.1, "decay_step": 10}}',
     "no argument 'decay_step'", (1, 72)),
    ('{"config": {"initial_learning_rate": 0.1}}', "no class_name", (1, 1)),
    ('{"class_name": "ExponentialDecay",\n "config": {"initial_learning_rate": "x", "decay_steps": 1, '
     '"decay_rate": 0.5}}', "must be a number", (2, 38)),
])
def test_keras_json_errors_point_into_the_file(tmp_path, text, message, where):
    path = tmp_path / "s.json"
    path.write_text(text)
    with pytest.raises(schedlang.SchedlangError) as info:
        import_file(path, format="keras-json")
    assert message in str(info.value)
    assert (info.value.line, info.value.column) == where, str(info.value)


def test_keras_restarts_without_amplitude_decay_have_a_core_form():
    """t_mul = 2, m_mul = 1 (Keras' defaults) is the standard library's cosine_restarts."""
    data = json.loads((CONFIGS / "keras_sgdr_default.json").read_text())
    restored = real("keras.optimizers.schedules").deserialize(data)
    core = import_file(CONFIGS / "keras_sgdr_default.json")  # the format is guessed from the keys
    assert "keras." in core
    core = import_file(CONFIGS / "keras_sgdr_default.json", style="core")
    assert "schedule lr = cosine_restarts(0.01, 0.0001, 300, mult=2)" in core
    ours = schedlang.compile(core)["lr"]
    presets = schedlang.compile(import_file(CONFIGS / "keras_sgdr_default.json"))["lr"]
    assert schedlang.equivalent(ours, presets)
    steps = sorted(set(range(0, 9000, 97)) | {299, 300, 899, 900, 2099, 2100, 4499, 4500})
    config = restored.get_config()
    config.pop("name")
    assert max_error(ours.values(steps), KC.values("CosineDecayRestarts", config, steps, float64=True),
                     1e-3) <= 1e-12


# -- Keras schedules built in Python scripts (formats/common/pyconfig/literal.py) ------------------


@pytest.mark.parametrize("name", ["keras_script.py", "keras_inline.py"])
def test_keras_schedule_written_as_a_call(name):
    path = PYTHON / name
    assert guess_format(path, path.read_text()) == "keras-json"
    ours = schedlang.compile(import_file(path))["lr"]
    real("keras.optimizers.schedules")
    made = runpy.run_path(str(path))["model"].optimizer._learning_rate  # the schedule Keras really holds
    config = made.get_config()
    config.pop("name")
    steps = sorted(set(range(0, 1200, 7)) | {4000})
    assert max_error(ours.values(steps), KC.values(type(made).__name__, config, steps, float64=True),
                     1e-3) <= 1e-12


def test_tf_keras_spelling_reads_the_same():
    """``tf.keras.optimizers.schedules.X`` (TensorFlow is not installed: the text is compared)."""
    ours = import_file(PYTHON / "tf_keras_script.py", format="keras-json")
    theirs = import_file(PYTHON / "keras_script.py", format="keras-json")
    assert ours.splitlines()[1:] == theirs.splitlines()[1:]


def test_keras_refusals(tmp_path):
    path = tmp_path / "train.py"
    for text, words in [
        ("import keras\nwith strategy.scope():\n    s = keras.optimizers.schedules.ExponentialDecay(0.1, 10, "
         "0.9)\n", "built inside a with block"),
        ("import keras, os\ns = keras.optimizers.schedules.ExponentialDecay(float(os.environ['LR']), 10, "
         "0.9)\n", "not followed"),
        ("import keras\ns = keras.optimizers.schedules.ExponentialDecay(0.1, 10, 0.9)\n"
         "s.initial_learning_rate = 0.5\n", "it assigns an attribute"),
        ("import keras\na = keras.optimizers.schedules.CosineDecay(0.1, 10)\n"
         "b = keras.optimizers.schedules.CosineDecay(0.2, 10)\n", "builds 2 Keras schedules"),
        ("import keras\nmodel = keras.Sequential()\n", "no Keras LearningRateSchedule"),
    ]:
        path.write_text(text)
        with pytest.raises(schedlang.SchedlangError, match=words):
            import_file(path, "keras-json")


def test_keras_positional_order_is_keras_own():
    import inspect

    from schedlang.formats.keras_json import POSITIONAL

    schedules = real("keras.optimizers.schedules")
    for name, order in POSITIONAL.items():
        assert tuple(inspect.signature(getattr(schedules, name)).parameters) == order, name


LOWERING_ERRORS = [
    ('{"class_name": "ExponentialDecay",\n "config": {"initial_learning_rate": 0.1, "decay_steps": 10,\n'
     '  "decay_rate": -1}}\n', "not finite at step 0", (1, 1)),
    ('{"class_name": "PiecewiseConstantDecay",\n "config": {\n  "boundaries": [100, 50],\n'
     '  "values": [0.1, 0.01, 0.001]}}\n', "must be increasing", (3, 17)),
]


@pytest.mark.parametrize("style", ["presets", "core"])
@pytest.mark.parametrize(("text", "message", "where"), LOWERING_ERRORS)
def test_an_error_the_lowering_raises_lands_on_the_config(tmp_path, style, text, message, where):
    """The preset call the import lowers carries each key's span on its value (core style lowers
    it first), so an error of the lowering (a negative ``decay_rate``, a decreasing list) is at the
    schedule or the key in both styles, never a quote of the generated line."""
    path = tmp_path / "s.json"
    path.write_text(text)
    with pytest.raises(schedlang.SchedlangError) as info:
        import_file(path, style=style)
    assert message in info.value.message
    assert info.value.span.source.filename == str(path)
    assert (info.value.line, info.value.column) == where, str(info.value)
