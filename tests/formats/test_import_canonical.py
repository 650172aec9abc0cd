"""Imports write canonical text: what ``schedlang import`` prints, or writes with ``-o``, passes
``schedlang fmt --check`` as it is (issue 36: ``import -o`` wrote files that ``fmt --check``
rejected).  Every configuration of the test corpus (``tests/frameworks/configs``) is imported in
both styles; those the importer refuses (the corpus holds refusals too) are left out, and
counted, so a corpus that stopped importing would fail here."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import ROOT

from schedlang import formats
from schedlang.cli import main
from schedlang.errors import SchedlangError
from schedlang.syntax.fmt import format_source

CONFIGS = ROOT / "tests" / "frameworks" / "configs"
#: Files that are only read as another config's ``_base_`` (they hold no schedule of their own).
CORPUS = sorted(p for p in CONFIGS.rglob("*") if p.is_file() and "_base_" not in p.parts)
#: (file, --option) rows for the readers' options, beyond each file's defaults.
OPTIONS = [("torchtitan_wsd.toml", "formula=2025-03"), ("torchtitan_2024.toml", "formula=2024")]


def _imported(path: Path, style: str, options=None) -> str | None:
    try:
        return formats.import_file(path, style=style, options=options)
    except SchedlangError:
        return None


def test_every_import_of_the_corpus_is_in_the_canonical_layout():
    imported = 0
    for path in CORPUS:
        for style in ("presets", "core"):
            text = _imported(path, style)
            if text is None:
                continue
            imported += 1
            assert format_source(text) == text, f"{path.relative_to(ROOT)} ({style}) is not canonical"
    for name, option in OPTIONS:
        key, _, value = option.partition("=")
        text = _imported(CONFIGS / name, "presets", {key: value})
        assert text is not None and format_source(text) == text, (name, option)
    assert imported >= 100, f"only {imported} imports of {len(CORPUS)} files succeeded"


@pytest.mark.parametrize("name", ["megatron/gpt_345m.sh", "deepspeed/hf_auto_cosine.json", "hf_wsd.yaml",
                                  "torchtitan_llama_8b.toml", "mmpretrain_vit_cosine.py",
                                  "keras_piecewise.json", "timm_vit_args.yaml"])
@pytest.mark.parametrize("lower", [False, True])
def test_import_dash_o_passes_fmt_check(tmp_path, capsys, name, lower):
    """The command as a user runs it: ``import -o`` then ``fmt --check`` on the file written, and
    the same text on standard output without ``-o``."""
    out = tmp_path / "out.sched"
    style = ["--lower"] if lower else []
    assert main(["import", str(CONFIGS / name), *style, "-o", str(out)]) == 0
    capsys.readouterr()
    assert main(["fmt", "--check", str(out)]) == 0, capsys.readouterr().err
    assert main(["import", str(CONFIGS / name), *style]) == 0
    assert capsys.readouterr().out == out.read_text(encoding="utf-8")


def test_sambaflow_flags_are_canonical(capsys):
    assert main(["import", "--flags", "--lr_schedule", "cosine_schedule_with_warmup", "--learning_rate",
                 "0.001", "--warmup_steps", "100", "--max_steps", "1000"]) == 0
    text = capsys.readouterr().out
    assert text and format_source(text) == text
