"""The statements of a followed file that define names for later: ``def`` (a ``Function``,
followed when called), ``class`` (a ``@dataclass`` config or a ``Subclass`` of a format's
class), and ``import`` (a library's name kept as its path; a module file beside the script
read by this reader too, never run)."""

from __future__ import annotations

import ast
from pathlib import Path

from ....errors import SchedlangError
from ....limits import MAX_CONFIG_BASES, read_source_text
from .state import FileState
from .syntax import effects, own_nodes
from .values import (
    HINT,
    DataClass,
    Exit,
    Function,
    Imported,
    Item,
    MayExit,
    Namespace,
    NotFollowedError,
    Subclass,
    Unread,
)


class Definitions(FileState):
    """``def``, ``class`` and ``import``."""

    def visit_FunctionDef(self, stmt: ast.FunctionDef) -> None:
        self._define(stmt)

    def _define(self, stmt: ast.FunctionDef) -> None:
        """``def f(...)``: bound to a ``Function`` (its defaults computed now, as Python does),
        followed when the file calls it.  The names its body may change are noted as a
        function's are (it may also run from where schedlang does not follow it)."""
        if stmt.decorator_list:
            raise NotFollowedError(self._not_followed_error(stmt, "a decorator may replace the function"))
        if any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in own_nodes(stmt)):
            raise NotFollowedError(self._not_followed_error(stmt, "a generator"))
        arguments = stmt.args
        defaults: dict[str, Item] = {}
        positional = [*arguments.posonlyargs, *arguments.args]
        pairs = [*zip(positional[len(positional) - len(arguments.defaults):], arguments.defaults),
                 *((a, d) for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults) if d is not None)]
        for argument, default in pairs:
            try:
                defaults[argument.arg] = self._eval(default)
            except NotFollowedError as exc:
                defaults[argument.arg] = Unread(exc.error)
        function = Function(stmt, defaults)
        function.enclosing = ([self.locals, *self._enclosing] if self.locals is not None else [])
        function.home = self  # its globals: the names of the file that defines it
        self._bind(stmt.name, Item(function, self.span(stmt)))
        self._note_late(stmt)

    def _note_late(self, stmt: ast.FunctionDef | ast.ClassDef) -> None:
        """The names a function's or a class's body may change when it runs (later, from where
        schedlang may not follow it): each reads as that error (``get``)."""
        _, _, late = effects(stmt, self._path)
        for name, node in late.items():
            self.late.setdefault(name, self.span(node))

    def visit_ClassDef(self, stmt: ast.ClassDef) -> None:
        """A ``@dataclass`` config (``lr: float = 3e-4``): its fields and their defaults, computed
        now as Python computes them, so that ``TrainConfig(...)`` builds an instance read by
        attribute.  Any other class is not followed."""
        base = self._path(stmt.bases[0]) if len(stmt.bases) == 1 and not stmt.keywords else None
        if base is not None and self.records(base) and not stmt.decorator_list:
            self._subclass(stmt, base)
            return
        frozen = self._dataclass(stmt)
        fields: dict[str, Item | None] = {}
        defaulted = False
        for item in stmt.body:
            if isinstance(item, ast.Pass) or isinstance(item, ast.Expr) and isinstance(item.value,
                                                                                        ast.Constant):
                continue  # a docstring
            if isinstance(item, ast.FunctionDef) and item.name not in ("__init__", "__post_init__") \
                    and not item.decorator_list:
                continue  # a method: called only through the instance, which is not followed
            if not (isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name) and item.simple):
                raise NotFollowedError(self._not_followed_error(
                    stmt, "a dataclass is followed when its body is annotated fields with defaults and "
                          "methods (no __init__ or __post_init__)"))
            if "ClassVar" in ast.unparse(item.annotation):
                continue  # not a field
            if item.value is None and defaulted:
                raise self._python_error(f"non-default argument '{item.target.id}' follows default argument "
                                         "(Python raises TypeError)", item)
            fields[item.target.id] = None if item.value is None else self._field(item.value)
            defaulted = defaulted or item.value is not None
        self._bind(stmt.name, Item(DataClass(stmt.name, fields, frozen), self.span(stmt)))
        self._note_late(stmt)

    def _subclass(self, stmt: ast.ClassDef, base: str) -> None:
        """``class CustomSchedule(keras.optimizers.schedules.LearningRateSchedule)``: kept as a
        ``Subclass`` (its ``__init__`` a function of the file, its defaults computed now), whose
        instances the format reads; a body other than methods and a docstring is not followed."""
        for item in stmt.body:
            method = isinstance(item, ast.FunctionDef) and not item.decorator_list
            if not (method or isinstance(item, ast.Pass)
                    or isinstance(item, ast.Expr) and isinstance(item.value, ast.Constant)):
                raise NotFollowedError(self._not_followed_error(
                    stmt, f"a {base.rsplit('.', 1)[-1]} subclass is read when its body is methods"))
        init = next((f for f in stmt.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None)
        function = None
        if init is not None:
            saved = self.env.get(init.name), init.name in self.env
            self._define(init)  # its defaults computed at the class statement, as Python does
            function = self.lookup(init.name).raw
            if self.locals is not None:
                self.locals.pop(init.name, None)
            if saved[1]:
                self._bind(init.name, saved[0])
            else:
                self.env.pop(init.name, None)
        self._bind(stmt.name, Item(Subclass(stmt, base, function, self), self.span(stmt)))
        self._note_late(stmt)

    def _dataclass(self, stmt: ast.ClassDef) -> bool:
        """Whether ``@dataclass`` (or ``@dataclass(frozen=...)``) makes ``stmt`` a plain dataclass
        with no base class; its ``frozen=``.  Anything else is not followed."""
        decorators = stmt.decorator_list
        decorator = decorators[0] if len(decorators) == 1 else None
        call = decorator if isinstance(decorator, ast.Call) else None
        target = call.func if call is not None else decorator
        if target is None or self._path(target) != "dataclasses.dataclass" or stmt.bases or stmt.keywords \
                or call is not None and call.args:
            raise NotFollowedError(self._not_followed_error(stmt))
        frozen = False
        for keyword in call.keywords if call is not None else ():
            value = self._eval(keyword.value).value
            if keyword.arg == "frozen":
                frozen = bool(value)
            elif keyword.arg in ("init", "kw_only") and value is not (keyword.arg == "init"):
                raise NotFollowedError(self._not_followed_error(stmt, f"@dataclass({keyword.arg}={value})"))
        return frozen

    def _field(self, node: ast.expr) -> Item:
        """A field's default: the value, or ``field(default=...)``'s; a ``default_factory`` is not
        followed (an error where an instance needs it)."""
        if isinstance(node, ast.Call) and self._path(node.func) == "dataclasses.field":
            keywords = {k.arg: k.value for k in node.keywords}
            if "default" in keywords and not node.args:
                return self._field_value(keywords["default"])
            return Unread(SchedlangError("this field's default_factory is not followed (the file is read, "
                                         "never run)", self.span(node),
                                         hint="give the field a default= value"))
        return self._field_value(node)

    def _field_value(self, node: ast.expr) -> Item:
        item = self._value_or_unread(node)
        if not isinstance(item, Unread) and isinstance(item.raw, (dict, list)):
            raise self._python_error(f"mutable default {type(item.raw).__name__} for a field is not allowed: "
                                     "use default_factory (Python raises ValueError)", node)
        return item

    def visit_Import(self, stmt: ast.Import) -> None:
        for alias in stmt.names:
            name = alias.asname or alias.name.split(".")[0]
            path = alias.name if alias.asname else alias.name.split(".")[0]
            own = self._beside(alias.name, stmt)
            if own is not None:  # import config: the module file beside the script, read as it
                self._bind(name, Item(Namespace(own.env, kind=f"the module {alias.name}"), self.span(stmt)))
                continue
            self._bind(name, Item(Imported(path), self.span(stmt)))

    def visit_ImportFrom(self, stmt: ast.ImportFrom) -> None:
        module = "." * stmt.level + (stmt.module or "")
        own = self._beside(module, stmt) if stmt.level == 0 else None
        for alias in stmt.names:
            if own is not None:
                self._import_names(own, module, alias, stmt)
                continue
            if alias.name == "*":
                self._star_imports.append((module, stmt.lineno))
                raise NotFollowedError(self._not_followed_error(stmt, "a * import may bind any name"))
            self._bind(alias.asname or alias.name, Item(Imported(f"{module}.{alias.name}"),
                                                        self.span(stmt)))

    def _import_names(self, own: FileState, module: str, alias: ast.alias, stmt: ast.ImportFrom) -> None:
        """``from config import *`` (its ``__all__``, else its names not starting with ``_``) or
        ``from config import LR``: the names of a module file of the script, bound here."""
        if alias.name != "*":
            if alias.name not in own.env:
                raise self._python_error(f"cannot import name '{alias.name}' from '{module}' "
                                         f"({own.source.filename}; Python raises ImportError)", stmt)
            self._bind(alias.asname or alias.name, own.env[alias.name].view(self.span(stmt)))
            return
        listed = own.env.get("__all__")
        if listed is not None:
            names = [item.value for item in self._iterate(listed, stmt)]
            if not all(isinstance(n, str) for n in names):
                raise self._python_error(f"__all__ of {module} holds a name that is not a string", stmt)
        else:
            names = [n for n in own.env if not n.startswith("_")]
        for name in names:
            if name not in own.env:
                raise self._python_error(f"module '{module}' has no attribute '{name}' (its __all__ names "
                                         "it; Python raises AttributeError)", stmt)
            self._bind(name, own.env[name].view(self.span(stmt)))

    def _beside(self, name: str, stmt: ast.stmt) -> FileState | None:
        """The module ``name`` as Python finds it first when it runs a script: a file ``name.py``
        beside the script (``sys.path[0]``), read by this reader with the same bounds, never
        run; None when there is none (a library, or a dotted name), or in a config."""
        if self.symbols is None or "." in name or not name or self.source.filename.startswith("<"):
            return None
        path = (Path(self.source.filename).parent / f"{name}.py").resolve()
        if not path.is_file():
            return None
        if path in self._importing:
            raise SchedlangError(f"importing {name} here imports a module that is still being imported (a "
                                 "cycle: Python gives a partly run module)", self.span(stmt),
                                 hint="import the module's names in one direction only")
        if path not in self.modules:
            if len(self.modules) >= MAX_CONFIG_BASES:
                raise SchedlangError(f"more than {MAX_CONFIG_BASES} module files of the script",
                                     self.span(stmt))
            own = type(self)(read_source_text(path), str(path), self.records, script=True,  # a Module
                             lazy_calls=self.lazy_calls, importer=self, name=name)
            self.modules[path] = own
            self.budget = own.budget
            self.calls.extend(own.calls)
            self.frames.extend(own.frames)
            self.tainted.update(own.tainted)
            for late, span in own.late.items():  # a function of it may change the name when it runs
                if late in own.env:
                    own.env[late] = Unread(SchedlangError(
                        f"a function or class defined in {name} mentions '{late}', and may change it when "
                        "it runs; schedlang does not run it", span, hint=HINT))
            if own.ended is not None:  # the script ends (or may end) while importing it
                error = SchedlangError(f"importing {name} ends the script: {own.ended.message}",
                                       own.ended.span, hint=own.ended.hint)
                raise (Exit if own.ended_surely else MayExit)(error)
        return self.modules[path]
