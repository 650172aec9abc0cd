"""Signatures and docstrings of ``schedlang.build``'s functions, from the one table of built-ins
(``stdlib``, the presets, the calls of the run's clock, ``clock_calls``): ``inspect.signature(sb.cosine)``,
``help(sb.torch.StepLR)`` and the editor stub (``stub``) all read them here, so a row added
to the table is a documented Python function with nothing else to write."""

from __future__ import annotations

import inspect

from ..library import stdlib
from ..library.clock_calls import CLOCK_CALLS, Role
from ..library.presets import PRESETS, Rejected


def dotted_presets() -> dict:
    """The presets, and the dotted calls of the run's clock (``megatron.rampup_batch_size``)."""
    return {**PRESETS, **{n: b for n, b in CLOCK_CALLS.items() if "." in n}}


def child_names(prefix: str) -> list[str]:
    depth = prefix.count(".") + 1
    return sorted({name.split(".")[depth] for name in dotted_presets() if name.startswith(prefix + ".")
                   and name.count(".") >= depth})


def builtin_entry(name: str):
    """The table entry of a name: a stdlib ``Builtin``, a preset ``Builtin`` / ``Rejected``, or None."""
    return stdlib.SCHEDULES.get(name) or dotted_presets().get(name) or CLOCK_CALLS.get(name)


#: What each kind of argument takes, for the signature (annotation) and the docstring.
_KINDS = {
    stdlib.Kind.VALUE: ("float | Expr", "a number or a schedule"),
    stdlib.Kind.STEPS: ("int | Expr", "a period in steps: a whole number > 0"),
    stdlib.Kind.DURATION: ("int | Expr", "a length in steps: a whole number >= 0 (0: no steps)"),
    stdlib.Kind.CONST: ("float | Expr", "a number constant in t"),
    stdlib.Kind.VALUES: ("list[float]", "a list of numbers constant in t"),
    stdlib.Kind.SCHEDULE: ("Expr", "a schedule"),
    stdlib.Kind.FINITE: ("Expr", "a schedule with a finite duration"),
    stdlib.Kind.SHAPE: ("Function", "a shape, passed bare (sb.linear, sb.sqrt, ...)"),
    stdlib.Kind.OPTION: ("str", "one of the strings listed"),
    stdlib.Kind.FLAG: ("bool", "True or False"),
    stdlib.Kind.SCHEDULES: ("list[Expr]", "a list of schedules"),
    stdlib.Kind.PAIRS: ("list[tuple[float, float]]", "a list of [a, b] pairs"),
    stdlib.Kind.ANY: ("object", "a number or a list (refused when given: see the preset)"),
}


class _Shown:
    """A default as the docs show it (``0.1``, ``"cos"``, ``1dur``)."""

    def __init__(self, text: str):
        self.text = text

    def __repr__(self) -> str:
        return self.text


def signature_of(name: str) -> inspect.Signature:
    builtin = builtin_entry(name)
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    if isinstance(builtin, stdlib.Builtin) and builtin.variadic or (builtin is None and name in stdlib.MATH):
        arity = stdlib.MATH_ARITY.get(name)
        if arity is None:
            return inspect.Signature([inspect.Parameter("values", inspect.Parameter.VAR_POSITIONAL,
                                                        annotation="float | Expr")], return_annotation="Expr")
        positional = inspect.Parameter.POSITIONAL_ONLY
        return inspect.Signature([inspect.Parameter(n, positional, annotation="float | Expr")
                                  for n in "xyz"[:arity]], return_annotation="Expr")
    if not isinstance(builtin, stdlib.Builtin):
        return inspect.Signature([inspect.Parameter("kwargs", inspect.Parameter.VAR_KEYWORD)],
                                 return_annotation="Expr")
    params = []
    for arg in builtin.args:
        if arg.default is not stdlib.REQUIRED:
            kind = inspect.Parameter.KEYWORD_ONLY if kind == inspect.Parameter.KEYWORD_ONLY else kind
        elif params and params[-1].default is not inspect.Parameter.empty:
            kind = inspect.Parameter.KEYWORD_ONLY  # a required one after an optional one: by keyword
        annotation = _KINDS[arg.kind][0]
        if arg.kind == stdlib.Kind.OPTION and arg.choices:
            annotation = "Literal[" + ", ".join(repr(c) for c in arg.choices) + "]"
        default = inspect.Parameter.empty if arg.default is stdlib.REQUIRED else _Shown(
            _default_text(arg.default))
        params.append(inspect.Parameter(arg.name, kind, default=default, annotation=annotation))
        kind = params[-1].kind
    if is_batch(name):  # the program's tokens per sample, as sb.stages takes it
        params.append(inspect.Parameter("seq_len", inspect.Parameter.KEYWORD_ONLY, default=None,
                                        annotation="Param | None"))
    return inspect.Signature(params, return_annotation="Expr")


def is_batch(name: str) -> bool:
    """Whether ``name`` is a batch schedule's call (``stages``, ``megatron.rampup_batch_size``):
    built for ``sb.program(batch=...)``, with the program's ``seq_len=`` beside its arguments."""
    return name in CLOCK_CALLS and CLOCK_CALLS[name].role is Role.BATCH


def _default_text(default) -> str:
    if isinstance(default, bool):
        return repr(default)
    if default is None:
        return "None"
    return stdlib.show_default(default)


def doc(name: str) -> str:
    builtin = builtin_entry(name)

    if isinstance(builtin, Rejected):
        return f"{name}: refused, not a closed-form schedule. {builtin.reason}"
    if builtin is None:
        if name in stdlib.MATH:
            arity = stdlib.MATH_ARITY[name]
            shown = f"{name}(a, b, ...)" if arity is None else f"{name}({', '.join('xyz'[:arity])})"
            return f"{shown}: the math function {name} of numbers or schedules (docs/language.md)."
        return f"{name}: a namespace of presets."
    lines = [builtin.signature(), "", inspect.cleandoc(builtin.build.__doc__ or "")]
    if name == "exp":
        lines += ["", "exp(x) with one argument is the math function e ** x."]
    if builtin.args and not builtin.variadic:
        lines += ["", "Arguments:"]
        for arg in builtin.args:
            what = _KINDS[arg.kind][1]
            if arg.choices:
                what += ": " + ", ".join(arg.shown_choices())
            lines.append(f"    {arg.name}: {what}")
    return "\n".join(lines).strip()
