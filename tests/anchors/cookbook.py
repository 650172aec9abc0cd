"""Render ``docs/cookbook.md`` from the conformance cases.

The cookbook is generated, never hand-edited: every recipe in it is a case of
``preset_cases.CASES`` and its "conformance" line is the result of running
that case against the real library.  ``tests/test_cookbook.py`` regenerates
it and fails when the committed file differs; ``python tools/gen_cookbook.py``
writes it.
"""

from __future__ import annotations

from pathlib import Path

from schedlang.build import to_python

from .preset_cases import CASES, Case, max_error

COOKBOOK = Path(__file__).resolve().parents[2] / "docs" / "cookbook.md"

_RESULTS: dict[int, tuple[list[float], list[float]]] = {}

TITLES = {
    "cerebras": "Cerebras (cerebras.pytorch.optim, cstorch 2.10)",
    "torch": "PyTorch (torch.optim.lr_scheduler, torch 2.13)",
    "composer": "MosaicML Composer (composer.optim.scheduler, mosaicml 0.32.1)",
    "hf": "Hugging Face (transformers.get_scheduler, transformers 5.x)",
    "sambaflow": "SambaFlow (documented formulas; no public code)",
    "optax": "optax (optax 0.2.8)",
    "timm": "timm (timm.scheduler, timm 1.0.31)",
    "keras": "Keras (keras.optimizers.schedules, keras 3.15.1)",
    "megatron": "Megatron (megatron-core OptimizerParamScheduler, megatron-core 0.16.1)",
    "deepspeed": "DeepSpeed (deepspeed.runtime.lr_schedules, deepspeed 0.19.8)",
    "torchtitan": "torchtitan (torchtitan.components.optimizer.lr_scheduler, torchtitan 0.3.0)",
    "mmengine": "OpenMMLab mmengine (param_scheduler, mmengine 0.10.7)",
    "olmo_core": "OLMo-core (olmo_core.optim.scheduler, ai2-olmo-core 3.0.0)",
}


def evaluate(case: Case) -> tuple[list[float], list[float]]:
    """``(schedlang values, anchor values)`` over the compared steps, computed once per run."""
    key = CASES.index(case)
    if key not in _RESULTS:
        _RESULTS[key] = (case.ours(), case.reference())
    return _RESULTS[key]


def _value(v) -> str:
    if isinstance(v, str):
        return f'"{v}"'
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_value(k)}: {_value(x)}" for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    return repr(v)


def _kwargs(kwargs: dict, render_child) -> str:
    parts = []
    for key, value in kwargs.items():
        if key in ("schedulers", "schedules"):
            value_text = "[" + ", ".join(render_child(*child) for child in value) + "]"
        else:
            value_text = _value(value)
        parts.append(f"{key}={value_text}")
    return ", ".join(parts)


def anchor_code(case: Case) -> str:
    """The library call the schedlang line migrates, as a user would write it."""
    if hasattr(case, "anchor_code"):  # framework cases (tests/frameworks/) render their own call
        return case.anchor_code()
    kw = case.kwargs
    if case.library == "torch":
        def child(name, k):
            args = _kwargs(k, child)
            return f"{name}(opt{', ' + args if args else ''})"
        lr = case.options.get("lr", 1.0)
        head = "" if case.name == "ChainedScheduler" else "opt, "
        call = child(case.name, kw) if head else f"{case.name}({_kwargs(kw, child)})"
        return (f"opt = torch.optim.SGD(params, lr={lr!r})\n"
                f"sched = torch.optim.lr_scheduler.{call}")
    if case.library == "hf":
        o = case.options
        parts = [f'"{case.name}"', "opt"]
        if o.get("num_warmup_steps") is not None:
            parts.append(f"num_warmup_steps={o['num_warmup_steps']}")
        if o.get("num_training_steps") is not None:
            parts.append(f"num_training_steps={o['num_training_steps']}")
        if kw:
            parts.append(f"scheduler_specific_kwargs={_value(kw)}")
        return (f"opt = torch.optim.SGD(params, lr={o.get('lr', 1.0)!r})\n"
                f"sched = transformers.get_scheduler({', '.join(parts)})")
    if case.library == "optax":
        def child(name, k):
            return f"optax.{name}({_kwargs(k, child)})"
        return f"schedule = {child(case.name, kw)}"
    if case.library == "composer":
        o = case.options
        lines = [f"scheduler = {case.name}({_kwargs(kw, None)})",
                 f"# optimizer lr {o.get('lr', 1.0)!r}; lr(t) = lr * scheduler(state) at batch t"]
        if o.get("max_duration"):
            lines.append(f'# Trainer(max_duration="{o["max_duration"]}")')
        if o.get("dataloader_len"):
            lines.append(f"# len(train_dataloader) == {o['dataloader_len']}")
        return "\n".join(lines)
    if case.library == "cerebras":
        def child(name, k):
            module = "weight_decay_scheduler" if name.endswith("WD") else "lr_scheduler"
            args = _kwargs(k, child)
            opt = "" if name in ("ChainedScheduler", "ChainedWD", "ChainedLR") else "optimizer"
            sep = ", " if opt and args else ""
            return f"cstorch.optim.{module}.{name}({opt}{sep}{args})"
        if "lr_lambda" in kw:  # Cerebras takes the lambda by subclassing
            rest = {k: v for k, v in kw.items() if k != "lr_lambda"}
            return (f"class My{case.name}(cstorch.optim.lr_scheduler.{case.name}):\n"
                    f"    def set_value_lambda(self):\n        return [{kw['lr_lambda']!r}]\n\n"
                    f"sched = My{case.name}(optimizer, {_kwargs(rest, child)})")
        return f"sched = {child(case.name, kw)}"
    if case.library == "sambaflow":
        flags = " ".join(f"--{k} {v}" for k, v in kw.items())
        return f"--lr_schedule {case.name} {flags}"
    raise ValueError(case.library)


def result_line(case: Case) -> str:
    ours, anchor = evaluate(case)
    error = max_error(ours, anchor, case.floor)
    steps = case.compared
    verdict = (f"matches at every step t = 0..{steps[-1]} (error <= {case.tolerance:g})"
               if error <= case.tolerance else f"DIFFERS (max error {error:.3g})")
    anchor_name = {"sambaflow": "the documented formula", "cerebras": "cstorch 2.10 (float32 constants)",
                   "keras": "Keras in float32, its dtype for Python floats"}
    return f"{verdict}, against {anchor_name.get(case.library, case.library)}"


def render() -> str:
    out = [
        "# Migration cookbook",
        "",
        "<!-- Generated by tools/gen_cookbook.py from tests/anchors/preset_cases.py; do not edit. -->",
        "",
        "For every preset: the call in the original library, the schedlang line that",
        "reproduces it, the same line from Python (`from schedlang import build as sb`,",
        "[docs/python.md](python.md); `sb.to_python` writes it), and the result of comparing",
        "the schedlang line with the library at every step (the real library is run; see",
        "`tests/test_presets_conformance.py`; `tests/test_build.py` proves each Python spelling",
        "builds the line's schedule).  `docs/presets.md` lists every preset and every place a",
        "library deviates from its own documentation.",
        "",
        "Error measure: `|schedlang - anchor| / max(|anchor|, floor * peak)` at every",
        "compared step, `peak` the largest anchor value: relative error, with values",
        "within rounding of zero measured against a fraction of the peak.  float64",
        "libraries: tolerance 1e-12, floor 1e-3.  Cerebras and Keras: tolerance 1e-6, floor 0.1",
        "(Cerebras' constants are float32; it is run with torch's default dtype float64 so",
        "that its `t / T` ratios are not rounded to float32; Keras computes in float32 and is",
        "also compared in float64 at 1e-12 by `tests/frameworks/test_keras.py`).  The horizon is at least",
        "twice the schedule's length unless a note says why not.",
        "",
    ]
    for library in TITLES:
        cases = [c for c in CASES if c.preset.split(".")[0] == library]
        if not cases:
            continue
        out += [f"## {TITLES[library]}", ""]
        for case in cases:
            lang = "text" if case.library == "sambaflow" else "python"
            via = "" if case.library == library else f" (compared with {case.library})"
            out += [f"### `{case.preset}`{via}", "", f"```{lang}", anchor_code(case), "```", "",
                    "```sched", case.source, "```", "",
                    "```python", to_python(case.source), "```", ""]
            if case.params:
                out += ["Parameters: " + ", ".join(f"`{k} = {v}`" for k, v in case.params.items()), ""]
            out += [f"Conformance: {result_line(case)}.", ""]
            if case.note:
                out += [f"Note: {case.note}.", ""]
    return "\n".join(out).rstrip() + "\n"
