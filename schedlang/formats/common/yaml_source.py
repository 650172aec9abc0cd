"""YAML read with positions, so an import error can point at the offending key.

``yaml.safe_load`` returns plain values and forgets where they came from.  We
ask the same safe loader (``yaml.SafeLoader``: no Python tags, no object
construction) for its *node* tree instead, which carries start/end marks, and
build ``Node``s that keep a ``Span`` for every value and every mapping key.
Scalars are constructed by the safe constructor, exactly as ``safe_load``
would.  PyYAML is an optional dependency (the ``yaml`` extra); it is imported
here, lazily, only when a YAML file is actually read.

A hostile file cannot make the reader hang or crash: the loader counts
nesting depth and aliases as it composes (``MAX_YAML_DEPTH``,
``MAX_YAML_ALIASES``), the conversion counts values as aliases expand them
(``MAX_YAML_VALUES``: a billion-laughs file stops there), and long or huge
numbers are refused before Python converts them (``MAX_DIGITS``).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from ...errors import SchedlangError, Source, Span, warn
from ...limits import MAX_YAML_ALIASES, MAX_YAML_DEPTH, MAX_YAML_VALUES, LimitError, check_size, decimal

_NUMERIC = re.compile(r"[-+]?[\d_.]+([eE][-+]?[\d_]+)?")


@dataclass
class Node:
    """A YAML value with its span; mappings keep their keys' spans too."""

    value: object  # dict[str, Node] | list[Node] | scalar
    span: Span
    key_spans: dict[str, Span] = field(default_factory=dict)
    #: On the root a Python script's reader returns: the script's parameters (``symbols.Symbols``)
    #: that its values may be computed from, for the imported file's declarations; None for data.
    symbols: object = field(default=None, compare=False, repr=False)

    @property
    def is_mapping(self) -> bool:
        return isinstance(self.value, dict)

    @property
    def is_list(self) -> bool:
        return isinstance(self.value, list)

    def plain(self):
        """The value as ``safe_load`` would give it (spans dropped)."""
        if isinstance(self.value, dict):
            return {k: v.plain() for k, v in self.value.items()}
        if isinstance(self.value, list):
            return [v.plain() for v in self.value]
        return self.value


def _yaml():
    try:
        import yaml  # lazy: yaml
    except ImportError:  # pragma: no cover - depends on the environment
        raise SchedlangError("reading YAML needs PyYAML",
                             hint="pip install 'schedlang[yaml]' (or pip install pyyaml)") from None
    return yaml


def _span(source: Source, start, end) -> Span:
    line, column = start.line + 1, start.column + 1
    if end.line == start.line:
        return Span(source, line, column, line, max(end.column + 1, column + 1))
    text = source.line(line)
    return Span(source, line, column, line, max(len(text) + 1, column + 1))


@functools.lru_cache(maxsize=1)
def _loader_class():
    """``yaml.SafeLoader`` that counts depth, aliases and merged keys while it composes."""
    yaml = _yaml()

    class BoundedLoader(yaml.SafeLoader):
        def __init__(self, text: str, source: Source):
            super().__init__(text)
            self.source, self.depth, self.aliases = source, 0, 0
            self.merged: dict[int, int] = {}  # id(mapping node) -> how many entries came from <<

        def refuse(self, message: str, mark, hint: str) -> SchedlangError:
            return SchedlangError(message, _span(self.source, mark, mark), hint=hint)

        def compose_node(self, parent, index):
            event = self.peek_event()
            if isinstance(event, yaml.AliasEvent):
                self.aliases += 1
                if self.aliases > MAX_YAML_ALIASES:
                    raise self.refuse(f"more than {MAX_YAML_ALIASES} YAML aliases", event.start_mark,
                                      hint="a configuration needs few aliases (*name); write values out")
            self.depth += 1
            if self.depth > MAX_YAML_DEPTH:
                raise self.refuse(f"the YAML nests more than {MAX_YAML_DEPTH} levels deep",
                                  event.start_mark, hint="a scheduler configuration is a few levels deep")
            try:
                return super().compose_node(parent, index)
            finally:
                self.depth -= 1

        def flatten_mapping(self, node):
            super().flatten_mapping(node)  # merge keys (<<) copy entries: count them too
            if len(node.value) > MAX_YAML_VALUES:
                raise self.refuse(f"merge keys (<<) expand this mapping to more than {MAX_YAML_VALUES} "
                                  "entries", node.start_mark, hint="write the mapping out")

    return BoundedLoader


def load(text: str, filename: str = "<string>") -> Node:
    """Parse YAML text safely into ``Node``s; YAML syntax errors become ``SchedlangError``s."""
    yaml = _yaml()
    source = Source(text.removeprefix("\ufeff"), filename)
    _check_size(source)
    loader = None
    try:
        loader = _loader_class()(source.text, source)
        root = loader.get_single_node()
        if root is None:
            raise SchedlangError("the YAML file is empty", Span(source, 1, 1, 1, 2))
        return _convert(loader, root, source, [0])
    except yaml.reader.ReaderError as exc:  # a NUL byte or other control character
        raise SchedlangError(f"not valid YAML: character U+{exc.character:04X} is not allowed",
                             Span.at_offset(source, exc.position),
                             hint="YAML files are printable text; remove the character") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        span = _span(source, mark, mark) if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc)
        raise SchedlangError(f"not valid YAML: {problem}", span) from None
    finally:
        if loader is not None:
            loader.dispose()


def _check_size(source: Source) -> None:
    check_size(source.text, source.filename)


_STANDARD_TAGS = "tag:yaml.org,2002:"
_MERGE_TAG = "tag:yaml.org,2002:merge"
_PYTHON_TAGS = "tag:yaml.org,2002:python"


def _convert(loader, node, source: Source, count: list[int]) -> Node:
    yaml = _yaml()
    span = _span(source, node.start_mark, node.end_mark)
    count[0] += 1  # values after alias expansion, shared by the whole walk
    if count[0] > MAX_YAML_VALUES:
        raise SchedlangError(f"the YAML holds more than {MAX_YAML_VALUES} values once its aliases "
                             "are expanded", span,
                             hint="aliases (*name) that repeat other aliases grow exponentially")
    if not node.tag.startswith(_STANDARD_TAGS) or node.tag.startswith(_PYTHON_TAGS):
        raise SchedlangError(f"the YAML tag {node.tag} is not allowed", span,
                             hint="configurations hold plain numbers, strings, lists and mappings")
    if isinstance(node, yaml.MappingNode):
        return _mapping(loader, node, span, source, count)
    if isinstance(node, yaml.SequenceNode):
        return Node([_convert(loader, item, source, count) for item in node.value], span)
    _check_number(node.value, span)
    return Node(loader.construct_object(node, deep=True), span)


def _mapping(loader, node, span: Span, source: Source, count: list[int]) -> Node:
    """A mapping's keys (names, each counted and checked) and converted values, merge keys (``<<``)
    flattened; a key given twice warns as PyYAML's silent choice of the last one."""
    yaml = _yaml()
    merged = loader.merged.get(id(node))
    if merged is None:  # an aliased mapping is flattened once and may be visited again
        own = sum(1 for key_node, _ in node.value if key_node.tag != _MERGE_TAG)
        loader.flatten_mapping(node)  # merge keys (<<): merged entries first, then its own
        merged = loader.merged[id(node)] = len(node.value) - own
    values: dict[str, Node] = {}
    keys: dict[str, Span] = {}
    from_merge: set[str] = set()
    for index, (key_node, value_node) in enumerate(node.value):
        key_span = _span(source, key_node.start_mark, key_node.end_mark)
        count[0] += 1  # a key is a value too: an alias bomb as a key is counted, not built
        if not isinstance(key_node, yaml.ScalarNode):
            raise SchedlangError("expected a name as the key, got a "
                                 f"{'list' if isinstance(key_node, yaml.SequenceNode) else 'mapping'}",
                                 key_span, hint="configuration keys are plain names")
        _check_number(key_node.value, key_span)
        key = loader.construct_object(key_node, deep=True)
        if not isinstance(key, str):
            raise SchedlangError(f"expected a name as the key, got {key!r}", key_span)
        if key in values and index >= merged and key not in from_merge:
            # PyYAML (safe_load, which every framework uses) keeps the last value silently.
            warn(f"'{key}' is given twice; the later value wins, as PyYAML reads it", key_span,
                 hint=f"first at line {keys[key].line}; delete one of them")
        values[key] = _convert(loader, value_node, source, count)
        keys[key] = key_span
        if index < merged:
            from_merge.add(key)
        else:
            from_merge.discard(key)  # the mapping's own key overrides a merged one, silently
    return Node(values, span, keys)


def _check_number(text: str, span: Span) -> None:
    """A 5000-digit integer (or ``1e999999999``) is refused before Python converts it."""
    if isinstance(text, str) and _NUMERIC.fullmatch(text.strip()):
        try:
            decimal(text)
        except LimitError as exc:
            raise SchedlangError(str(exc), span, hint=exc.hint) from None
        except ValueError:
            pass  # not a plain decimal (``1:30``, ``1.2.3``): the safe constructor decides
