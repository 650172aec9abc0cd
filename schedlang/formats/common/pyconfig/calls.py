"""The builtins, methods and library calls ``literal`` follows in a Python file, each
computed as Python computes it (``dict(...)``, ``min``, ``list.append``, ``dict.update``, ...),
``argparse`` read as data (``parse_args()`` gives the defaults), and the binding of a call's
arguments to a function of the file."""

from __future__ import annotations

import ast

from ....errors import SchedlangError
from ....limits import MAX_DIGITS
from .. import symbols
from ..symbols import Symbol
from .values import (
    Call,
    DataClass,
    Exit,
    Function,
    Imported,
    Item,
    Namespace,
    NotFollowedError,
    Parser,
    Unread,
    is_int,
    is_number,
    short,
    type_name,
)

#: The calls that end the program (``sys.exit``, ``exit()``, ``quit()``, ``os._exit``).
EXITS = ("sys.exit", "builtins.exit", "builtins.quit", "os._exit")

# -- the builtins and methods followed ---------------------------------------------------------------


def _no_args(module, node, args, kwargs, name: str, most: int, keywords: bool = False):
    if len(args) > most or (kwargs and not keywords):
        raise module._python_error(f"{name}() takes at most {most} positional arguments here", node)


def _b_dict(module, node, args, kwargs, keys):
    _no_args(module, node, args, kwargs, "dict", 1, keywords=True)
    out, out_keys = {}, {}
    if args:
        module._update(out, out_keys, args[0], node)
    out.update(kwargs)
    out_keys.update(keys)
    module._spend(len(out), node)
    return Item(out, module.span(node), out_keys)


def _b_sequence(frozen: bool):
    def build(module, node, args, kwargs, keys):
        _no_args(module, node, args, kwargs, "tuple" if frozen else "list", 1)
        items = module._iterate(args[0], node) if args else []
        module._spend(len(items), node)
        return Item(items, module.span(node), frozen=frozen)
    return build


def _b_number(kind):
    def build(module, node, args, kwargs, keys):
        _no_args(module, node, args, kwargs, kind.__name__, 1)
        if args and isinstance(args[0].raw, Symbol):  # int(steps * args.warmup_ratio): carried
            result = kind(args[0].raw.default)
            made = symbols.converted(kind, args[0].raw, result, node.lineno)
            return Item(made or result, module.span(node))
        value = args[0].value if args else 0
        if isinstance(value, str) and len(value) > MAX_DIGITS + 10:
            raise SchedlangError(f"this number has more than {MAX_DIGITS} digits", module.span(node))
        if not (is_number(value) or isinstance(value, str)):
            raise module._python_error(f"{kind.__name__}() of {type_name(value)} (Python raises TypeError)",
                                       node)
        try:
            return Item(kind(value), module.span(node))
        except (ValueError, OverflowError) as exc:
            raise module._python_error(f"{exc} (Python raises {type(exc).__name__})", node) from None
    return build


def _b_reduce(function):
    def build(module, node, args, kwargs, keys):
        if kwargs:
            module._not(node, f"{function.__name__}() with keywords")
        values = module._iterate(args[0], node) if len(args) == 1 else args
        raws = [v.raw for v in values]
        defaults = symbols.carried(raws)
        if defaults is not None:  # min(args.lr / 10, 1e-5): carried
            result = function(defaults)
            return Item(symbols.extreme(function, raws, result, node.lineno) or result, module.span(node))
        numbers = [v.value for v in values]
        if not numbers or not all(is_number(n) for n in numbers):
            raise module._python_error(f"{function.__name__}() of these values is not followed", node)
        return Item(function(numbers), module.span(node))
    return build


def _b_print(module, node, args, kwargs, keys):
    """``print(...)`` changes no value (it only writes to the terminal)."""
    return Item(None, module.span(node))


def _b_abs(module, node, args, kwargs, keys):
    _no_args(module, node, args, kwargs, "abs", 1)
    if len(args) != 1 or not is_number(args[0].value):
        raise module._python_error("abs() takes one number", node)
    return Item(abs(args[0].value), module.span(node))


def _b_round(module, node, args, kwargs, keys):
    _no_args(module, node, args, kwargs, "round", 2)
    digits = args[1].value if len(args) == 2 else 0
    if not args or not all(is_number(a.value) for a in args) or not is_int(digits):
        raise module._python_error("round() takes a number and a whole number of digits", node)
    return Item(round(*(a.value for a in args)), module.span(node))


def _b_len(module, node, args, kwargs, keys):
    _no_args(module, node, args, kwargs, "len", 1)
    if len(args) == 1 and isinstance(args[0].value, (Imported, Call)):  # len(sys.argv): not known here
        module._not(node, f"len() of {type_name(args[0].value)}")
    if len(args) != 1 or not isinstance(args[0].value, (list, dict, str)):
        raise module._python_error("len() takes a list, a dict or a string here", node)
    return Item(len(args[0].value), module.span(node))


def _b_copy(deep: bool):
    def build(module, node, args, kwargs, keys):
        _no_args(module, node, args, kwargs, "deepcopy" if deep else "copy", 1)
        item = args[0]
        if deep:
            return module._deepcopy(item, node).view(module.span(node))
        return _m_copy(module, item, [], {}, {}, node)
    return build


def _b_deepspeed_arguments(module, node, args, kwargs, keys):
    """``deepspeed.add_config_arguments(parser)``: DeepSpeed's own flags, added to the parser
    it returns (``--deepspeed``, ``--deepspeed_config`` and their old names), none given."""
    if len(args) != 1 or kwargs or not isinstance(args[0].value, Parser):
        module._not(node, "deepspeed.add_config_arguments() of something other than a parser")
    span = module.span(node)
    args[0].value.values.update({"deepspeed": Item(False, span), "deepspeed_config": Item(None, span),
                                 "deepscale": Item(False, span), "deepscale_config": Item(None, span)})
    return args[0].view(span)


def _b_namespace(module, node, args, kwargs, keys):
    """``types.SimpleNamespace(lr=3e-4, ...)`` (``argparse.Namespace`` too): read by attribute."""
    if args:
        raise module._python_error("SimpleNamespace() takes keyword arguments here", node)
    module._spend(len(kwargs), node)
    path = module._path(node.func) or "types.SimpleNamespace"
    return Item(Namespace(dict(kwargs), kind=path.rsplit(".", 1)[-1]), module.span(node))


def instance(module, made: DataClass, node, args: list[Item], kwargs: dict[str, Item]) -> Item:
    """``TrainConfig(lr=1e-3)``: an instance of a dataclass of the file, its fields bound by the
    ``__init__`` the dataclass generates (Python's ``TypeError``s), the rest at their defaults."""
    names = bind_arguments(module, made.init, node, args, kwargs)
    module._spend(len(names), node)
    fields = {a.arg: names[a.arg] for a in made.init.node.args.args}
    return Item(Namespace(fields, kind=made.name, frozen=made.frozen), module.span(node))


def _b_cast(module, node, args, kwargs, keys):
    """``tf.cast(x, tf.float32)``, ``keras.ops.cast(x, "float32")``: the number itself (the
    imports are exact; the framework's dtype is its rounding)."""
    if not args:
        raise module._python_error("cast() takes the value to cast", node)
    return args[0].view(module.span(node))


#: The casts of a number to a tensor type, read as the number.
CASTS = ("tensorflow.cast", "keras.ops.cast", "keras.ops.convert_to_tensor", "tensorflow.convert_to_tensor",
         "keras.src.ops.cast")

BUILTINS = {
    **{path: _b_cast for path in CASTS},
    "builtins.dict": _b_dict, "builtins.list": _b_sequence(False), "builtins.tuple": _b_sequence(True),
    "builtins.int": _b_number(int), "builtins.float": _b_number(float), "builtins.abs": _b_abs,
    "builtins.min": _b_reduce(min), "builtins.max": _b_reduce(max), "builtins.round": _b_round,
    "builtins.len": _b_len, "builtins.print": _b_print, "copy.deepcopy": _b_copy(True),
    "copy.copy": _b_copy(False), "deepspeed.add_config_arguments": _b_deepspeed_arguments,
    "types.SimpleNamespace": _b_namespace, "argparse.Namespace": _b_namespace,
    "argparse.ArgumentParser": lambda module, node, args, kwargs, keys: _b_parser(module, node, kwargs),
    **{path: lambda module, node, *_: _b_exit(module, node) for path in EXITS},
}


def _b_exit(module, node):
    """``sys.exit(...)``, ``exit()``, ``quit()``, ``os._exit(n)``: the program ends here, its
    arguments computed first (``sys.exit(main())`` runs ``main()``, which may build what is
    imported); nothing after it runs."""
    raise Exit(SchedlangError(f"the script ends here: {short(module._path(node.func))}() stops it, and "
                               "Python runs nothing after it", module.span(node)))


# -- argparse: a command line that gives no option (its defaults) ---------------------------------------


def _b_parser(module, node, kwargs):
    """``argparse.ArgumentParser(...)``: its ``conflict_handler=`` decides what adding an option
    string twice does (``"error"``, the default: argparse raises ``ArgumentError``; ``"resolve"``:
    the later argument replaces it)."""
    handler = kwargs.get("conflict_handler")
    if handler is not None and (isinstance(handler, Unread) or handler.raw not in ("error", "resolve")):
        module._not(node, "an ArgumentParser whose conflict_handler= is not \"error\" or \"resolve\"")
    return Item(Parser(resolve=handler is not None and handler.raw == "resolve"), module.span(node))


_CONVERT = {"builtins.int": int, "builtins.float": float, "builtins.str": str}
_ACTIONS = {"store": None, "store_true": False, "store_false": True, "store_const": None, "append": None,
            "append_const": None, "count": None, "extend": None}


def _destination(module, flags: list[Item], kwargs, node) -> tuple[str, bool]:
    """An argument's attribute name (``--lr-warmup`` → ``lr_warmup``) and whether it is an option."""
    names = [f.value for f in flags]
    if not names or not all(isinstance(n, str) and n for n in names):
        raise module._python_error("add_argument() takes its names as strings here", node)
    option = names[0].startswith("-")
    if "dest" in kwargs:
        dest = kwargs["dest"].value
        if not isinstance(dest, str):
            raise module._python_error("dest= must be a string", node)
        return dest, option
    if not option:
        return names[0], False
    longs = [n for n in names if n.startswith("--")]
    return (longs or names)[0].lstrip("-").replace("-", "_"), True


def _m_add_argument(module, target, args, kwargs, keys, node):
    dest, option = _destination(module, args, kwargs, node)
    parser = target.value
    flags = [a.value for a in args] if option else []
    taken = next((f for f in flags if f in parser.options), None)
    if taken is not None and not parser.resolve:  # argparse's _handle_conflict_error
        raise module._python_error(f"argument {'/'.join(flags)}: conflicting option string: {taken} "
                                   "(argparse raises ArgumentError: the script stops here)", node)
    replaced = parser.values.get(dest)
    if taken is not None and module.symbols is not None \
            and isinstance(getattr(replaced, "raw", None), Symbol):
        module.symbols.forget(replaced.raw)  # "resolve": the later argument replaces the earlier
    parser.options.update(flags)
    parser.values[dest] = _default(module, args[0].value, option, kwargs, keys, node, dest)
    return Item(None, module.span(node))


def _default(module, flag: str, option: bool, kwargs, keys, node, dest: str) -> Item:
    """The value ``parse_args()`` gives ``flag`` when the command line does not: argparse's
    default (a string default converted by ``type=``), or an ``Unread`` saying why there is none."""
    span = module.span(node)

    def unknown(why: str, where=span) -> Item:
        return Unread(SchedlangError(f"the value of {flag} is not known here: {why}", where,
                                     hint=f"give {flag} a default=, or write its value in the file"))

    given = {k: v for k, v in kwargs.items() if k in ("action", "required", "nargs", "type")}
    for key, item in given.items():
        if isinstance(item, Unread) or key != "type" and isinstance(item.value, (Imported, Call)):
            return unknown(f"its {key}= is not computed here", keys[key])
    action = given["action"].value if "action" in given else "store"
    if action not in _ACTIONS:
        return unknown("its action= is not one argparse names (store, store_true, ...)", keys["action"])
    nargs = given["nargs"].value if "nargs" in given else None
    required = bool(given["required"].value) if "required" in given \
        else not option and nargs not in ("?", "*")
    if required:
        return unknown("it is required, so its value comes from the command line")
    if "default" not in kwargs:
        return Item(_ACTIONS[action], span)
    default = kwargs["default"]
    if isinstance(default, Unread):
        return default
    if isinstance(default.raw, str) and action in ("store", "append", "extend") and "type" in given:
        default = _converted(module, flag, default, given["type"].value, keys, node) or \
            unknown("its type= is not int, float or str, and argparse passes the string default through it",
                    keys["type"])
    return _parameter(module, flag, dest, option, default, given, kwargs) or default


def _parameter(module, flag: str, dest: str, option: bool, default: Item, given: dict,
               kwargs: dict) -> Item | None:
    """In a training script, a number option that the command line may set (``--lr``, stored as
    given, no ``choices=``) as a parameter of the imported file, its default the parser's."""
    if module.symbols is None or not option or isinstance(default, Unread) or "choices" in kwargs \
            or "nargs" in given or given.get("action", Item("store", None)).raw != "store":
        return None
    value = default.raw
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value \
            or abs(value) == float("inf"):
        return None
    kind = given["type"].raw if "type" in given else None
    kind = {"builtins.int": "int", "builtins.float": "float"}.get(getattr(kind, "path", None)) \
        or ("int" if isinstance(value, int) else "float")
    if kind == "int" and not isinstance(value, int):
        return None  # type=int with a float default: argparse keeps the float, -D could not
    if kind == "int" and value < 0:
        kind = "float"  # the language's int is a count (>= 0); the value and its arithmetic are the same
    return Item(module.symbols.param(dest, flag, kind, value, default.span.line), default.span)


def _converted(module, flag: str, default: Item, kind, keys, node) -> Item | None:
    """A string default passed through ``type=int`` / ``float`` / ``str`` as argparse does (None
    for another type)."""
    path = kind.path if isinstance(kind, Imported) else None
    if path not in _CONVERT:
        return None
    try:
        return Item(_CONVERT[path](default.value), default.span)
    except ValueError:
        raise module._python_error(f"{flag}: invalid {path.removeprefix('builtins.')} value "
                                   f"{default.value!r} (argparse exits)", node) from None


def _m_same_parser(module, target, args, kwargs, keys, node):
    """``parser.add_argument_group(...)``: a group adds its arguments to the parser."""
    return target.view(module.span(node))


def _m_set_defaults(module, target, args, kwargs, keys, node):
    if args:
        raise module._python_error("set_defaults() takes keywords", node)
    target.value.values.update(kwargs)
    return Item(None, module.span(node))


def _m_parse_args(module, target, args, kwargs, keys, node):
    if args or kwargs:
        module._not(node, "parse_args() of a given list")  # the defaults are read for no option given
    if id(target.value) in module.tainted:
        raise NotFollowedError(module.tainted[id(target.value)][1])
    return Item(Namespace(dict(target.value.values)), module.span(node))


def _m_parse_known_args(module, target, args, kwargs, keys, node):
    """``args, rest = parser.parse_known_args()``: the same namespace, and no extra words."""
    span = module.span(node)
    return Item([_m_parse_args(module, target, args, kwargs, keys, node), Item([], span)], span, frozen=True)


def _m_append(module, target, args, kwargs, keys, node):
    if len(args) != 1 or kwargs:
        raise module._python_error("append() takes exactly one argument", node)
    module._no_cycle(target, args[0], node)
    module._spend(1, node)
    target.value.append(args[0])
    return Item(None, module.span(node))


def _m_extend(module, target, args, kwargs, keys, node):
    if len(args) != 1 or kwargs:
        raise module._python_error("extend() takes exactly one argument", node)
    items = module._iterate(args[0], node)
    for item in items:
        module._no_cycle(target, item, node)
    module._spend(len(items), node)
    target.value.extend(items)
    return Item(None, module.span(node))


def _m_insert(module, target, args, kwargs, keys, node):
    if len(args) != 2 or kwargs or not is_int(args[0].value):
        raise module._python_error("insert() takes an index and a value", node)
    module._no_cycle(target, args[1], node)
    module._spend(1, node)
    target.value.insert(args[0].value, args[1])
    return Item(None, module.span(node))


def _m_update(module, target, args, kwargs, keys, node):
    if len(args) > 1:
        raise module._python_error("update() takes at most one positional argument", node)
    for other in args:
        module._no_cycle(target, other, node)
        module._update(target.value, target.keys, other, node)
    for key, item in kwargs.items():
        module._no_cycle(target, item, node)
        target.value[key] = item
        target.keys[key] = keys[key]
    module._spend(len(kwargs), node)
    return Item(None, module.span(node))


def _m_pop(module, target, args, kwargs, keys, node):
    value = target.value
    if kwargs or len(args) > (2 if isinstance(value, dict) else 1):
        raise module._python_error("pop() takes a key (and a default for a dict)", node)
    if isinstance(value, dict):
        key = module._key(args[0], node) if args else None
        if not args:
            raise module._python_error("dict.pop() takes a key", node)
        if key not in value:
            if len(args) == 2:
                return args[1]
            raise module._python_error(f"no key {key!r} (Python raises KeyError)", node)
        target.keys.pop(key, None)
        return value.pop(key)
    index = args[0].value if args else -1
    if not is_int(index):
        raise module._python_error("list indices must be integers", node)
    if not value or not -len(value) <= index < len(value):
        raise module._python_error("pop index out of range (Python raises IndexError)", node)
    return value.pop(index)


def _m_get(module, target, args, kwargs, keys, node):
    if kwargs or not 1 <= len(args) <= 2:
        raise module._python_error("get() takes a key and a default", node)
    key = module._key(args[0], node)
    if key in target.value:
        return target.value[key]
    return args[1] if len(args) == 2 else Item(None, module.span(node))


def _m_setdefault(module, target, args, kwargs, keys, node):
    if kwargs or not 1 <= len(args) <= 2:
        raise module._python_error("setdefault() takes a key and a default", node)
    key = module._key(args[0], node)
    if key not in target.value:
        value = args[1] if len(args) == 2 else Item(None, module.span(node))
        module._no_cycle(target, value, node)
        target.value[key] = value
        target.keys[key] = module.span(node)
    return target.value[key]


def _m_copy(module, target, args, kwargs, keys, node):
    if args or kwargs:
        raise module._python_error("copy() takes no arguments", node)
    value = target.value
    module._spend(len(value) if isinstance(value, (dict, list)) else 1, node)
    if isinstance(value, dict):
        return Item(dict(value), module.span(node), dict(target.keys))
    if isinstance(value, list):
        return Item(list(value), module.span(node), frozen=target.frozen)
    return target


METHODS = {("list", "append"): _m_append, ("list", "extend"): _m_extend, ("list", "insert"): _m_insert,
            ("list", "pop"): _m_pop, ("list", "copy"): _m_copy, ("dict", "update"): _m_update,
            ("dict", "pop"): _m_pop, ("dict", "get"): _m_get, ("dict", "setdefault"): _m_setdefault,
            ("dict", "copy"): _m_copy, ("parser", "add_argument"): _m_add_argument,
            ("parser", "add_argument_group"): _m_same_parser,
            ("parser", "add_mutually_exclusive_group"): _m_same_parser,
            ("parser", "set_defaults"): _m_set_defaults, ("parser", "parse_args"): _m_parse_args,
            ("parser", "parse_known_args"): _m_parse_known_args}

def bind_arguments(module, function: Function, node: ast.Call, args: list[Item],
                kwargs: dict[str, Item]) -> dict[str, Item]:
    """The names a call binds in the function, as Python binds them (its ``TypeError``s)."""
    arguments, name, span = function.node.args, function.name, module.span(node)
    positional = [*arguments.posonlyargs, *arguments.args]
    if len(args) > len(positional) and arguments.vararg is None:
        raise module._python_error(f"{name}() takes {len(positional)} positional arguments but "
                                   f"{len(args)} were given (Python raises TypeError)", node)
    names: dict[str, Item] = {a.arg: v for a, v in zip(positional, args)}
    if arguments.vararg is not None:
        names[arguments.vararg.arg] = Item(args[len(positional):], span, frozen=True)
    _keywords(module, function, node, names, kwargs)
    for argument in [*positional, *arguments.kwonlyargs]:
        if argument.arg not in names:
            if argument.arg not in function.defaults:
                raise module._python_error(f"{name}() is missing the argument '{argument.arg}' (Python "
                                           "raises TypeError)", node)
            names[argument.arg] = function.defaults[argument.arg]
    return names


def _keywords(module, function, node: ast.Call, names: dict[str, Item], kwargs: dict[str, Item]) -> None:
    """A call's keyword arguments into ``names`` (the rest into ``**kwargs``)."""
    arguments, name = function.node.args, function.name
    by_keyword = {a.arg for a in [*arguments.args, *arguments.kwonlyargs]}
    rest: dict[str, Item] = {}
    for key, value in kwargs.items():
        if key in by_keyword:
            if key in names:
                raise module._python_error(f"{name}() got multiple values for argument '{key}' (Python "
                                           "raises TypeError)", node)
            names[key] = value
        elif arguments.kwarg is not None:
            rest[key] = value
        else:
            raise module._python_error(f"{name}() got an unexpected keyword argument '{key}' (Python "
                                       "raises TypeError)", node)
    if arguments.kwarg is not None:
        names[arguments.kwarg.arg] = Item(rest, module.span(node))


def namespace_attribute(module, namespace: Item, node: ast.Attribute) -> Item:
    """``args.lr``: the default of ``--lr``, or why it has none."""
    values = namespace.value.values
    if node.attr not in values:
        if namespace.value.kind != "argparse.Namespace":
            raise module._python_error(f"{namespace.value!r} has no attribute '{node.attr}' (Python raises "
                                       "AttributeError)", node)
        module._not(node, f"args.{node.attr}: no add_argument followed here gives it")
    item = values[node.attr]
    if isinstance(item, Unread):
        raise NotFollowedError(item.error)
    return item


