"""``schedlang compile --target python|torch|cerebras|jax``: standalone, deterministic, pinned."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest
from torch_cases import EXAMPLES, ROOT

import schedlang
from schedlang.cli import main
from schedlang.codegen.emit import BUILDERS, TARGETS, default_class_name, emit, module
from schedlang.codegen.templates import MODULE_TEMPLATES

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("SCHEDLANG_UPDATE_GOLDEN") == "1"
CASES = [(path, target) for path in EXAMPLES for target in TARGETS]


def _run(*args, env=None, cwd=ROOT):
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, **(env or {})}, timeout=120)


#: The example whose filled class templates are pinned in ``golden/templates/``.
TEMPLATE_EXAMPLE = ROOT / "examples" / "warmup_cosine.sched"


def _pin(path: Path, text: str) -> None:
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.exists(), "run with SCHEDLANG_UPDATE_GOLDEN=1 to create the golden files"
    assert text == path.read_text(encoding="utf-8")


def _pinned_text(generated) -> str:
    """The module's own code, then the template it is filled into and the fields, one a line."""
    if generated.template is None:
        return generated.code
    fields = "".join(f"#   {key} = {value!r}\n" for key, value in sorted(generated.fields.items()))
    return (f"{generated.code}\n# --- then templates.MODULE_TEMPLATES[{generated.template!r}] "
            f"(pinned in golden/templates/{generated.template}.py), filled with:\n{fields}")


@pytest.mark.parametrize("path, target", CASES, ids=[f"{p.stem}-{t}" for p, t in CASES])
def test_golden(path, target):
    """The generated source is pinned; SCHEDLANG_UPDATE_GOLDEN=1 rewrites the files.

    A class template is pinned once (``test_template_golden``), not once per example."""
    generated = module(schedlang.load(path), target, path.name)
    assert generated.text == emit(schedlang.load(path), target, path.name)
    _pin(GOLDEN / f"{path.stem}_{target}.py", _pinned_text(generated))


@pytest.mark.parametrize("template", sorted(MODULE_TEMPLATES))
def test_template_golden(template):
    generated = module(schedlang.load(TEMPLATE_EXAMPLE), template, TEMPLATE_EXAMPLE.name)
    assert generated.template == template
    _pin(GOLDEN / "templates" / f"{template}.py", MODULE_TEMPLATES[template].format(**generated.fields))


@pytest.mark.parametrize("path, target", CASES, ids=[f"{p.stem}-{t}" for p, t in CASES])
def test_imports_only_math_torch_or_jax(path, target):
    tree = ast.parse(emit(schedlang.load(path), target, path.name))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported.add(node.module)
    allowed = BUILDERS[target].imports
    assert imported <= allowed
    assert "schedlang" not in str(imported)


def test_deterministic_across_processes(tmp_path):
    path = next(p for p in EXAMPLES if p.name == "gpt_pretrain.sched")
    out = tmp_path / "gpt.py"
    done = _run("-m", "schedlang", "compile", str(path), "--target", "torch", "-o", str(out),
                env={"PYTHONHASHSEED": "12345"})
    assert done.returncode == 0, done.stderr
    assert out.read_text() == emit(schedlang.load(path), "torch", path.name)


def test_compiled_module_drives_adamw(tmp_path):
    """The CLI's torch module, imported on its own in a fresh process, runs a real loop."""
    source = ROOT / "examples" / "warmup_cosine.sched"
    out = tmp_path / "x.py"
    assert main(["compile", str(source), "--target", "torch", "-o", str(out)]) == 0
    lr = schedlang.load(source)["lr"]
    expected = [lr(step) for step in range(1003)]
    script = (
        "import sys, torch, x\n"
        "assert not any(m.startswith('schedlang') for m in sys.modules)\n"
        "model = torch.nn.Linear(4, 1)\n"
        "opt = torch.optim.AdamW(model.parameters(), lr=0.5)\n"
        "sched = x.WarmupCosine(opt)\n"
        "seen = []\n"
        "for step in range(1003):\n"
        "    seen.append(repr(opt.param_groups[0]['lr']))\n"
        "    if step < 5:\n"
        "        opt.zero_grad(); model(torch.ones(2, 4)).pow(2).mean().backward()\n"
        "    opt.step(); sched.step()\n"
        "print(' '.join(seen))\n"
    )
    done = _run("-c", script, cwd=tmp_path, env={"PYTHONPATH": str(tmp_path), "OMP_NUM_THREADS": "1"})
    assert done.returncode == 0, done.stderr
    seen = [float(line) for line in done.stdout.split()]
    assert seen == pytest.approx(expected, rel=1e-15, abs=1e-20)


def test_class_names():
    assert default_class_name("warmup_cosine.sched") == "WarmupCosine"
    assert default_class_name("dir/2-layer lr.sched") == "Schedule2LayerLr"
    assert default_class_name("---.sched") == "Scheduler"
    program = schedlang.load(EXAMPLES[0])
    assert "class Mine(" in emit(program, "torch", "a.sched", class_name="Mine")


@pytest.mark.parametrize("name", ["1x", "class", "a b", "lr", "print", "_private", "x;import os"])
def test_bad_class_name_exits_2(name, capsys):
    path = ROOT / "examples" / "warmup_cosine.sched"
    assert main(["compile", str(path), "--target", "torch", "--class-name", name]) == 2
    assert "cannot name the scheduler class" in capsys.readouterr().err


def test_no_user_text_reaches_code():
    program = schedlang.compile("param lambda: float = 0.5\nparam optimizer: int = 3\n"
                                "schedule print = lambda * 0.5 ** floor(t / optimizer)\n",
                                filename="evil\"\n__import__('os').system('x').sched")
    for target in TARGETS:
        text = emit(program, target, program.filename)
        tree = ast.parse(text)  # valid Python with mangled names
        names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        assert "__import__" not in names and "system" not in str(names)
        assert text.splitlines()[1].startswith("# Do not edit")
        assert "lambda_" in text and "print_" in text
        if target != "python":
            assert "optimizer_" in text


def test_the_synopsis_names_every_target():
    # README and docs/cli.md spell the choices out by hand: exactly the registry's, in its order
    synopsis = "--target " + "|".join(TARGETS) + " "
    for doc in (ROOT / "README.md", ROOT / "docs" / "cli.md"):
        assert synopsis in doc.read_text(encoding="utf-8"), f"{doc.name} should say {synopsis!r}"


def test_check_never_imports_torch():
    path = ROOT / "examples" / "gpt_pretrain.sched"
    script = ("import sys\nfrom schedlang.cli import main\n"
              f"assert main(['check', {str(path)!r}]) == 0\n"
              "assert 'torch' not in sys.modules, 'schedlang check imported torch'\n"
              "printers = {'schedlang.codegen.array', 'schedlang.codegen.torch', 'schedlang.codegen.jax'}\n"
              "assert not printers & set(sys.modules), 'check loaded the array printers'\n")
    done = _run("-c", script)
    assert done.returncode == 0, done.stderr


def test_long_plots_use_torch_and_eval_prints_the_reference(monkeypatch, capsys):
    import schedlang
    from schedlang.runtime import arrays

    path = str(ROOT / "examples" / "warmup_cosine.sched")
    monkeypatch.setattr(arrays, "LONG_RANGE", 10)
    calls = []
    real = arrays.evaluate
    monkeypatch.setattr(arrays, "evaluate", lambda *a, **k: calls.append(1) or real(*a, **k))
    assert main(["eval", path, "--steps", "0:1200:7", "--csv"]) == 0
    assert not calls  # eval: the reference's own digits at any length
    lr = schedlang.load(path)["lr"]
    steps = range(0, 1200, 7)
    values = arrays.values(lr, steps)  # what plot uses
    assert calls
    assert values == pytest.approx(lr.values(steps), rel=1e-12, abs=1e-18)


def test_in_place_rewrites_only_temporaries():
    """``in_place_source``: arithmetic on a fresh floating temporary with a Python number is
    done in place; names (shared), ``.to()`` (may return its input), integer arithmetic and a
    number on the left of ``-`` or ``/`` are left as they are; the values are the same bits."""
    torch = pytest.importorskip("torch")
    from schedlang.codegen.torch import in_place_source

    source = ("def f(t, *, _dtype=torch.float64, _compute=torch.float64):\n"
              "    _dev = t.device\n"
              "    _v0 = t.to(_compute)\n"
              "    _v1 = (1000 + (-2)*torch.clamp(t, 0, 499)).to(_compute)\n"
              "    _v2 = 2.0 - torch.cos(0.5*_v1)\n"
              "    _v3 = 3*_v0 + 1\n"
              "    return (torch.where(t < 500, (2e-06)*_v0, (0.0009)*torch.sin(0.0015*_v1)**2 + 0.0001)"
              " + -torch.exp(_v0/7) + 1/(_v2*2)).to(_dtype)\n")
    rewritten = in_place_source(source)
    lines = rewritten.splitlines()
    assert lines[:4] == source.splitlines()[:4]  # names, .to() and integers untouched
    assert lines[4] == "    _v2 = 2.0 - (0.5 * _v1).cos_()"
    assert lines[5] == "    _v3 = 3*_v0 + 1"  # 3*_v0 is new, but not surely floating
    assert "(0.0015 * _v1).sin_().pow_(2).mul_(0.0009).add_(0.0001)" in lines[6]
    assert "2e-06 * _v0" in lines[6] and "(_v0 / 7).exp_().neg_()" in lines[6]
    assert "1 / (_v2 * 2)" in lines[6]
    namespace, before = {"torch": torch}, {"torch": torch}
    exec(rewritten, namespace)  # noqa: S102 - the test's own source
    exec(source, before)  # noqa: S102
    steps = torch.arange(0, 3000)
    for dtype in (torch.float64, torch.float32):
        assert torch.equal(namespace["f"](steps, _compute=dtype), before["f"](steps, _compute=dtype))


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_in_place_gives_the_same_bits(path, monkeypatch):
    """Every example's torch functions with and without ``in_place_source``: the same bits
    (NaN where NaN) at float64, float32 and float32 compute, on 1-d and 0-d steps."""
    torch = pytest.importorskip("torch")
    import schedlang.codegen.torch as torch_codegen

    program = schedlang.load(path)
    functions = []
    for rewrite in (torch_codegen.in_place_source, lambda source: source):
        monkeypatch.setattr(torch_codegen, "in_place_source", rewrite)
        namespace = {"__name__": "generated"}
        exec(compile(module(program, "torch", path.name, bind_all=True).code, path.name, "exec"),  # noqa: S102
             namespace)
        functions.append(namespace["SCHEDULES"])
    steps = torch.cat([torch.arange(0, 40_000), torch.arange(2**31 - 1000, 2**31 + 5),
                       torch.tensor([10**12, 2**62])])
    for name, in_place in functions[0].items():
        plain = functions[1][name]
        for dtype, compute in ((torch.float64, torch.float64), (torch.float32, torch.float64),
                               (torch.float32, torch.float32)):
            for at in (steps, torch.tensor(7)):
                a, b = in_place(at, _dtype=dtype, _compute=compute), plain(at, _dtype=dtype, _compute=compute)
                assert a.dtype == b.dtype and torch.equal(a.isnan(), b.isnan()), name
                assert torch.equal(a.nan_to_num(), b.nan_to_num()), name
