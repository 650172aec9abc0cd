"""Carets for command-line arguments: errors in ``-D``, ``--steps``, ``--rtol``, paths.

An error in a ``.sched`` file points into the file; an error in an argument
deserves the same: the command line is shown as a one-line pseudo-source
named ``<command line>`` with a caret under the bad argument, or under the bad
part of it (the value of ``-D name=value``, the STOP of ``--steps``).
"""

from __future__ import annotations

import shlex

from ..errors import SchedlangError, Source, Span

FILENAME = "<command line>"


class CommandLine:
    """The arguments as typed, rendered once, with the offset of every argument."""

    def __init__(self, argv: list[str], program: str = "schedlang"):
        self.argv = list(argv)
        shown, offsets, position = [program], [], len(program) + 1
        for arg in self.argv:
            quoted = shlex.quote(arg)
            # Inside simple '...' quoting the argument's own characters start one later.
            offsets.append(position + (1 if quoted != arg and "'" not in arg else 0))
            shown.append(quoted)
            position += len(quoted) + 1
        self.offsets = offsets
        self.source = Source(" ".join(shown), FILENAME)

    def span(self, index: int, start: int = 0, length: int | None = None) -> Span:
        """The span of ``argv[index][start:start + length]`` (the whole argument by default)."""
        length = len(self.argv[index]) - start if length is None else length
        return Span.at_offset(self.source, self.offsets[index] + start, length)

    def argument_span(self, text: str) -> Span | None:
        """The span of the first argument that is ``text`` (or an option ``text=...``)."""
        for i, arg in enumerate(self.argv):
            if arg == text or (text.startswith("-") and arg.startswith(text + "=")):
                return self.span(i)
        return None

    def option_value(self, option: str, value: str) -> tuple[int, int] | None:
        """Where ``value`` of ``option`` was typed: (argument index, offset in it), or None."""
        for i, arg in enumerate(self.argv):
            if arg == value and i and self.argv[i - 1] == option:
                return i, 0
            for joined in (option + value, option + "=" + value):
                if arg == joined:
                    return i, len(joined) - len(value)
        return None

    def value_span(self, option: str, value: str, start: int = 0, length: int | None = None) -> Span | None:
        """The span of part of an option's value, if the value can be found on the line."""
        found = self.option_value(option, value)
        if found is None:
            return None
        index, offset = found
        return self.span(index, offset + start, len(value) - start if length is None else length)

    def define_spans(self, item: str) -> tuple[Span | None, Span | None]:
        """For ``-D name=value``: the spans of the name and of the value."""
        name, _, value = item.partition("=")
        name_span = self.value_span("-D", item, 0, len(name))
        value_span = self.value_span("-D", item, len(name) + 1, max(len(value), 1))
        return name_span, value_span

    def locate(self, error: SchedlangError, defines: list[str]) -> SchedlangError:
        """Give an error that names no location the argument it is about, when one is quoted.

        ``the file has no parameter 'x'`` points at ``x`` of ``-D x=1``; ``cannot read
        PATH`` and ``--class-name '1x' ...`` at that argument.  Longer arguments are tried
        first, so a path is not mistaken for a shorter argument inside it.
        """
        if error.span is not None:
            return error
        message = error.message
        for item in defines:
            name = item.partition("=")[0].strip()
            if name and f"'{name}'" in message:
                return error.with_span(self.define_spans(item)[0])
        for index in sorted(range(len(self.argv)), key=lambda i: -len(self.argv[i])):
            arg = self.argv[index]
            if index == 0 or arg.startswith("-") or not arg.strip():
                continue
            if _mentions(message, arg):
                return error.with_span(self.span(index))
        return error


def _mentions(message: str, arg: str) -> bool:
    return any(form in message for form in (f"'{arg}'", repr(arg), f"read {arg}:", f"write {arg}:",
                                            f"of {arg} from"))
