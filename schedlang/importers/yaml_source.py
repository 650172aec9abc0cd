"""YAML read with positions, so an import error can point at the offending key.

``yaml.safe_load`` returns plain values and forgets where they came from.  We
ask the same safe loader (``yaml.SafeLoader``: no Python tags, no object
construction) for its *node* tree instead, which carries start/end marks, and
build ``Node``s that keep a ``Span`` for every value and every mapping key.
Scalars are constructed by the safe constructor, exactly as ``safe_load``
would.  PyYAML is an optional dependency (the ``yaml`` extra); it is imported
here, lazily, only when a YAML file is actually read.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import SchedlangError, Source, Span


@dataclass
class Node:
    """A YAML value with its span; mappings keep their keys' spans too."""

    value: object  # dict[str, Node] | list[Node] | scalar
    span: Span
    key_spans: dict[str, Span] = field(default_factory=dict)

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
        import yaml
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


def load(text: str, filename: str = "<string>") -> Node:
    """Parse YAML text safely into ``Node``s; YAML syntax errors become ``SchedlangError``s."""
    yaml = _yaml()
    source = Source(text, filename)
    loader = yaml.SafeLoader(text)
    try:
        root = loader.get_single_node()
        if root is None:
            raise SchedlangError("the YAML file is empty", Span(source, 1, 1, 1, 2))
        return _convert(loader, root, source)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        span = _span(source, mark, mark) if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc)
        raise SchedlangError(f"not valid YAML: {problem}", span) from None
    finally:
        loader.dispose()


_STANDARD_TAGS = "tag:yaml.org,2002:"
_PYTHON_TAGS = "tag:yaml.org,2002:python"


def _convert(loader, node, source: Source) -> Node:
    yaml = _yaml()
    span = _span(source, node.start_mark, node.end_mark)
    if not node.tag.startswith(_STANDARD_TAGS) or node.tag.startswith(_PYTHON_TAGS):
        raise SchedlangError(f"the YAML tag {node.tag} is not allowed", span,
                             hint="configurations hold plain numbers, strings, lists and mappings")
    if isinstance(node, yaml.MappingNode):
        loader.flatten_mapping(node)  # merge keys (<<), as safe_load does
        values: dict[str, Node] = {}
        keys: dict[str, Span] = {}
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node, deep=True)
            key_span = _span(source, key_node.start_mark, key_node.end_mark)
            if not isinstance(key, str):
                raise SchedlangError(f"expected a name as the key, got {key!r}", key_span)
            if key in values:
                raise SchedlangError(f"'{key}' is given twice", key_span,
                                     hint=f"first at {keys[key].location}")
            values[key] = _convert(loader, value_node, source)
            keys[key] = key_span
        return Node(values, span, keys)
    if isinstance(node, yaml.SequenceNode):
        return Node([_convert(loader, item, source) for item in node.value], span)
    return Node(loader.construct_object(node, deep=True), span)
