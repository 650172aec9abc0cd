"""Python configuration files followed as Python would run them, without running them.

OpenMMLab configs, DeepSpeed configs kept as a dict in a ``.py`` file and Keras training
scripts are Python.  Importing one must give the values Python builds, so this module
follows the module's statements in order over ``ast`` (nothing is executed: no ``eval``,
no ``exec``, no import) and computes what each statement does:

* assignment and reassignment (``LR = 0.1`` ... ``LR = 0.2``: the last one wins), chained
  and tuple targets, annotated assignment, ``del``;
* augmented assignment (``LR *= 10``; ``+=`` extends a list in place, as Python does);
* subscript assignment (``param_scheduler[0]['start_factor'] = 0.25``);
* ``.append`` / ``.extend`` / ``.insert`` / ``.update`` / ``.pop`` / ``.setdefault`` /
  ``.get`` / ``.copy`` on dicts and lists, ``copy.copy`` / ``copy.deepcopy``;
* ``if`` / ``elif`` / ``else`` and ``x if c else y`` whose test is computed here;
* literals, ``dict(...)`` / ``list(...)`` / ``tuple(...)`` / ``int`` / ``float`` / ``abs`` /
  ``min`` / ``max`` / ``round`` / ``len``, ``**`` unpacking in dicts, indexing and slicing;
* arithmetic as Python computes it: ints exactly, floats as binary floats
  (``5e-4 * 1024 / 512`` is the float Python gets, and the importers write that float as
  the shortest decimal that reads back as it, ``repr``), comparisons and ``and``/``or``/``not``;
* names assigned earlier (sharing, not copying: ``b = a; a['x'] = 1`` changes ``b`` too).

A name is looked up when its statement runs: ``LR = LR`` with no ``LR`` before is
"'LR' is used before it is assigned", as Python's ``NameError``.  What Python would raise
(``ZeroDivisionError``, a missing key) is an error at the expression.

A training script (``script=True``: the DeepSpeed and Keras entry points) is read as the
program Python runs: ``__name__`` is ``"__main__"``, a function of the file is followed into
its body when the file calls it (``main()``), and ``argparse`` parsers are read as data:
``parser.parse_args()`` gives the defaults (``args.lr``), a flag without one an error where it
is read, and a number option's default is a parameter of the imported file
(``common/symbols.py``).  ``@dataclass`` configs and ``SimpleNamespace(...)`` are read by
attribute.  ``import m`` / ``from m import *`` of a module file ``m.py`` beside the script is
read by this reader too (as Python finds it first, never run); a name after ``from m import *``
of a library that the file never assigns is unknown.  A class of the file whose base a format
reads (a Keras ``LearningRateSchedule``) is a ``Subclass``: its instances are built by following
its ``__init__``, and the format traces the rest (``trace``).

Everything else (loops, ``with``, calls to other functions, attributes of
objects) is *not followed*, and is allowed only where it cannot change what is imported:
a name such a statement (re)binds, and a dict or list it passes to a call or mentions,
reads as an error at that statement when the import needs it ("this for loop is not
followed, and it may change 'param_scheduler'").  Names a ``def``, ``class`` or ``lambda``
mentions are refused the same way (the function may run later).  ``exec``, ``eval``,
``globals``, ``vars``, ``setattr`` and the like can change any name: a file that mentions
them is refused.  A value that is not followed (``x = foo()``) is an error only when read.
Calls to classes a format names (Keras schedules and optimizers) are kept as a ``Call``
(its class path and arguments); such an object is taken as fixed once built (Keras keeps
its constructor arguments, ``get_config()``), so passing it to ``model.compile`` does not
change it; assigning to one of its attributes does (refused when read).

Bounded: the file is at most ``MAX_FILE_BYTES``; before ``ast.parse`` sees it, the
tokens are scanned for nesting deeper than ``MAX_NESTING`` (brackets, operator chains and
runs of unary minus signs: ``ast.parse`` would raise ``MemoryError`` or ``RecursionError``),
refused at the token; values made by following the file are counted against
``MAX_YAML_VALUES``; an int larger than ``MAX_DIGITS`` digits and a string longer than the
file are refused.
"""

from __future__ import annotations

import ast

from ....errors import SchedlangError
from ..numbers import PythonString
from ..yaml_source import Node
from .calling import Calling
from .containers import Containers
from .definitions import Definitions
from .evaluator import Evaluator
from .statements import Statements
from .syntax import SCOPES, root_name
from .values import (
    DYNAMIC,
    EXPRESSIONS,
    HINT,
    Call,
    Exit,
    Imported,
    Instance,
    Item,
    MayExit,
    NotFollowedError,
    Unread,
)


class Module(Statements, Definitions, Calling, Evaluator, Containers):
    """The module-level names of one Python file after following its statements: the reader's
    parts joined (``Statements``, ``Definitions``, ``Calling``, ``Evaluator``, ``Containers``), their
    state declared once (``FileState``).

    ``records(path)`` says which imported callables become ``Call``s (a format's classes);
    ``calls`` lists every ``Call`` built, in order, with the statement that built it.
    """

    def __init__(self, text: str, filename: str = "<string>", records=None, script: bool = False,
                 lazy_calls: bool = False, importer: Module | None = None, name: str = "__main__"):
        super().__init__(text, filename, records, script, lazy_calls, importer, name)
        self._scan()
        try:
            self._run(self.tree.body)
        except MayExit as exc:  # what follows is marked unknown, an error where it is read
            self.ended, self.ended_surely = exc.error, False
        except Exit as exc:
            if not script:  # a config that raises when it is loaded gives nothing
                raise SchedlangError("loading this config stops here (Python runs nothing after this "
                                     "statement), so it gives no values", exc.error.span,
                                     hint="a config file is loaded whole") from None
            self.ended = exc.error
        except RecursionError:
            raise SchedlangError("the values of this file nest too deeply", self._span_at(1, 1)) from None

    # -- reading the result ----------------------------------------------------------------

    def get(self, name: str) -> Item | None:
        """The module-level ``name`` (None when the file never binds it), or the error of the
        statement that may have changed it."""
        item = self.env.get(name)
        if item is None:
            return None
        if name in self.late:
            raise SchedlangError(f"a function or class defined here mentions '{name}', and may change it "
                                 "when it runs; schedlang does not run it", self.late[name], hint=HINT)
        if isinstance(item, Unread):
            raise item.error
        self.check_untainted(item)
        return item

    def generic_visit(self, node: ast.AST):
        """A statement or an expression without its ``visit_<Node>`` is not followed."""
        if isinstance(node, ast.stmt):
            raise NotFollowedError(self._not_followed_error(node))
        self._not(node, EXPRESSIONS.get(type(node), type(node).__name__))

    def _scan(self) -> None:
        """One walk of the tree: refuse the names that can change any variable (``exec``,
        ``globals``, ...), and note where each name is bound anywhere in the file, so that
        "used before it is assigned" can say where."""
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Name):
                name = node.id
                if isinstance(node.ctx, ast.Store):
                    self._assigned_at.setdefault(name, []).append(node.lineno)
            elif isinstance(node, ast.Attribute) and node.attr.startswith("__"):
                name = node.attr
            else:
                continue
            if name in DYNAMIC:
                raise SchedlangError(f"'{name}' can change any name of the file behind its statements' "
                                     "backs; schedlang cannot follow it", self.span(node),
                                     hint="write the configuration with plain assignments")
        for lines in self._assigned_at.values():
            lines.sort()


# -- what the formats read -------------------------------------------------------------------------


def to_node(item: Item, what: str = "value"):
    """A value as the YAML readers' ``Node`` (the DeepSpeed and Keras importers read those):
    every part is read here, so a part not followed is its error."""
    value = item.raw
    if isinstance(value, dict):
        return Node({str(k): to_node(v, str(k)) for k, v in value.items()}, item.span,
                    {str(k): item.keys.get(k, item.span) for k in value})
    if isinstance(value, list):
        return Node([to_node(v, what) for v in value], item.span)
    if isinstance(value, (Imported, Call)):
        raise SchedlangError(f"{what} is {value!r}, not a value a configuration holds", item.span)
    return Node(PythonString(value) if isinstance(value, str) else value, item.span)




def bindings(module: Module):
    """Every value the file names: its module-level names, then each followed call's names
    and what it returned (``"<main>"``)."""
    yield from module.env.items()
    for function, names, result in module.frames:
        yield from names.items()
        yield f"<the value {function.name}() returns>", result

def ended_before(module: Module, what: str) -> None:
    """Refuse a script in which ``what`` is never built because the program ends (or may end)
    before it, at the statement that ends it."""
    if module.ended is not None:
        raise SchedlangError(f"no {what} is built before this point: {module.ended.message}",
                             module.ended.span, hint=module.ended.hint or
                             f"build the {what} before the script exits")


def unfollowed(module: Module, nodes: list[ast.AST], what: str) -> None:
    """Why the first of ``nodes`` (what the format looks for, written in the file) was not
    read: the function around it is never called, or the statement around it is not followed;
    the caret on it."""
    if not nodes:
        return
    node = min(nodes, key=lambda n: (n.lineno, n.col_offset))
    called = {id(function.node) for function, _, _ in module.frames}
    around = [f for f in ast.walk(module.tree) if isinstance(f, (*SCOPES[:2], ast.ClassDef, ast.Lambda))
              and f.lineno <= node.lineno <= (f.end_lineno or f.lineno) and f is not node
              and any(n is node for n in ast.walk(f))]
    uncalled = [f for f in around if isinstance(f, ast.FunctionDef) and id(f) not in called]
    if uncalled:
        raise SchedlangError(f"this {what} is built in {uncalled[-1].name}(), which this file never calls, "
                             "so it is not read (the file is read, never run)", module.span(node),
                             hint=f"call {uncalled[-1].name}() at the top level of the file or under "
                                  "`if __name__ == \"__main__\":`")
    why = "inside a function or class that is not followed" if around else \
        "inside a statement that is not followed (a loop, a with or try block, an if on a value not known)"
    raise SchedlangError(f"this {what} is built {why} (the file is read, never run)", module.span(node),
                         hint="build it with plain assignments, at the top level or in main()")


_HF_SCRIPT = "this script with --format hf-args (it reads transformers' scheduler functions)"
#: Schedulers a training script builds with a framework's code, which no format here reads from
#: a script (their configs are imported instead): the module each comes from, the format to use.
_SCRIPT_SCHEDULERS = {"timm.scheduler": "its command line or args.yaml with --format timm-args",
                      "torch.optim.lr_scheduler": "a config that names it (mmengine, Composer, Cerebras)",
                      "transformers": _HF_SCRIPT, "transformers.optimization": _HF_SCRIPT}


def script_schedule(module: Module) -> None:
    """Refuse, with the caret on the call, a script whose scheduler is a framework's factory or
    class called in Python (``create_scheduler_v2(optimizer, ...)``): nothing reads that call."""
    for node in ast.walk(module.tree):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        for statement in ast.walk(module.tree):
            if not isinstance(statement, (ast.Import, ast.ImportFrom)):
                continue
            for alias in statement.names:
                origin = (statement.module or "") if isinstance(statement, ast.ImportFrom) else alias.name
                bound = alias.asname or alias.name
                if origin in _SCRIPT_SCHEDULERS and (bound == name or bound == root_name(node.func)) \
                        and ("sched" in name.lower() or name.endswith("LR")):
                    raise SchedlangError(f"this script builds its schedule by calling {origin}'s {name}(), "
                                         "which schedlang does not follow into that library",
                                         module.span(node), hint=f"import {_SCRIPT_SCHEDULERS[origin]}")



__all__ = ["Call", "Imported", "Instance", "Item", "Module", "Unread", "ended_before", "script_schedule",
           "to_node"]
