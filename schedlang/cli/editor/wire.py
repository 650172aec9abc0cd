"""The base protocol's wire, read by schedlang itself: frames in, checked messages out.

pygls' own reader trusts its client: it matches ``Content-Length: N`` with one exact-case
regex (a lowercase header, legal in the base protocol, desynchronises it for good), reads any
``N`` it is given (``99999999999999`` is a ``MemoryError``), and a message it cannot decode or
structure is logged and never answered (a hover without params, a request after ``shutdown``:
the client waits forever).  So the server reads here, in one place:

* ``Frames``: header lines of at most ``MAX_HEADER_LINE`` bytes, at most ``MAX_HEADERS`` of
  them, names matched case-insensitively, a length of at most ``MAX_BODY`` bytes; a frame that
  breaks a rule is a ``Bad`` (answered with a JSON-RPC error, id null) and the reader finds the
  next ``Content-Length`` header, even at the end of a line of junk (a body longer than it said);
* ``message``: a body is one JSON object with ``jsonrpc: "2.0"``, an id that is a number or a
  string, a string method and params that are an object or an array, else a ``RpcError`` that
  says which rule it broke (``[]``, an object as id, 100k nested arrays);
* ``Writer``: a client that stops reading (a closed pipe, ``/dev/full``) ends the server with
  status 1 and one line on stderr, never a traceback per message.

What pygls still does (structuring params, calling features) is ``protocol.Protocol``'s.
"""

from __future__ import annotations

import json
import re
import sys
import threading
from dataclasses import dataclass

from ...limits import MAX_FILE_BYTES

MAX_HEADER_LINE = 1024            # bytes in one header line, its line break included
MAX_HEADERS = 32                  # header lines in one frame
MAX_BODY = 16 * MAX_FILE_BYTES    # bytes in one body: a largest file, JSON-escaped, with room to spare
_HEADER = re.compile(rb"([!#-'*+.0-9A-Z^-z|~-]+):[ \t]*(.*?)[ \t]*\r?\n", re.DOTALL)
_LENGTH = re.compile(rb"(?<![A-Za-z0-9_-])(?i:content-length):[ \t]*([0-9]{1,20})[ \t]*\r?\n\Z")

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602
SERVER_NOT_INITIALIZED, REQUEST_FAILED = -32002, -32803


class RpcError(Exception):
    """A JSON-RPC error to answer with (a handler may raise one: a refused rename is an answer)."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code, self.message = code, message


@dataclass(frozen=True)
class Bad:
    """A frame that broke a rule of the base protocol: why (the body, if any, was not read)."""

    reason: str


class Frames:
    """The frames of a byte stream: ``next()`` is a body (bytes), a ``Bad`` or None at the end.

    Blocking (it runs in the server's reader thread) and bounded: it never holds more than one
    header line and one body of at most ``MAX_BODY`` bytes."""

    def __init__(self, stream):
        self.stream = stream

    def _line(self) -> tuple[bytes, bool]:
        """The next line and whether it was too long (then only its last ``MAX_HEADER_LINE``
        bytes, where the next frame's header may stand)."""
        line = self.stream.readline(MAX_HEADER_LINE)
        if len(line) < MAX_HEADER_LINE or line.endswith(b"\n"):
            return line, False
        while not line.endswith(b"\n"):
            more = self.stream.readline(MAX_HEADER_LINE)
            if not more:
                break
            line = (line + more)[-MAX_HEADER_LINE:]
        return line, True

    def next(self) -> bytes | Bad | None:
        length, problem, count = None, None, 0
        while True:
            line, long = self._line()
            if not line:
                return None
            if not line.strip(b"\r\n"):  # the blank line that ends a header
                if problem is None and length is None and not count:
                    continue  # a stray blank line between frames
                return self._body(length, problem)
            count += 1
            found = _LENGTH.search(line)
            if found is not None and (length is not None or problem is not None or
                                      found.start() > 0):
                length, problem, count = None, None, 1  # a new frame: what came before was junk
            length, problem = _header_line(line, long, found, length, problem)
            if count > MAX_HEADERS and problem is None:
                problem = f"more than {MAX_HEADERS} header lines"

    def _body(self, length: int | None, problem: str | None) -> bytes | Bad | None:
        """What a header ended by its blank line gives: the body, or what is wrong."""
        if problem is not None:
            return Bad(problem)
        if length is None:
            return Bad("a header without Content-Length")
        body = self.stream.read(length) if length else b""
        return body if len(body) == length else None


def _header_line(line: bytes, long: bool, found, length: int | None,
                 problem: str | None) -> tuple[int | None, str | None]:
    """(length, problem) after one header line: the Content-Length it gives (``found``), or what
    is wrong with it."""
    header = _HEADER.fullmatch(line) if not long else None
    if found is not None:
        value = int(found.group(1))
        if value > MAX_BODY:
            problem = f"Content-Length {value} is over the {MAX_BODY} bytes a message may have"
        return value, problem
    if header is not None and header.group(1).lower() == b"content-length":
        return length, f"Content-Length is not a number of bytes: {header.group(2)[:40]!r}"
    if long:
        return length, f"a header line longer than {MAX_HEADER_LINE} bytes"
    if header is None:
        return length, f"not a header line: {line[:40]!r}"
    return length, problem


def message(body: bytes) -> dict:
    """The JSON-RPC message a body holds, checked, or a ``RpcError`` saying which rule it breaks
    (its ``id`` attribute the message's id when that much could be read, else None)."""
    try:
        value = json.loads(body)
    except (ValueError, RecursionError) as exc:  # RecursionError: arrays nested 100k deep
        raise _refused(PARSE_ERROR, f"the body is not JSON: {str(exc)[:120]}") from None
    if not isinstance(value, dict):
        raise _refused(INVALID_REQUEST, f"a message is a JSON object, not {type(value).__name__} "
                                        "(the language server protocol has no batches)")
    id_ = value.get("id")
    valid_id = isinstance(id_, (int, str)) and not isinstance(id_, bool)
    if "id" in value and not valid_id:
        raise _refused(INVALID_REQUEST, "a message's id is a number or a string")
    id_ = id_ if valid_id else None
    if value.get("jsonrpc") != "2.0":
        raise _refused(INVALID_REQUEST, 'a message has "jsonrpc": "2.0"', id_)
    if "method" in value and not isinstance(value["method"], str):
        raise _refused(INVALID_REQUEST, "a message's method is a string", id_)
    if "method" not in value and ("id" not in value or not ({"result", "error"} & value.keys())):
        raise _refused(INVALID_REQUEST, "a message is a request, a notification or a response", id_)
    if "params" in value and not isinstance(value["params"], (dict, list)):
        raise _refused(INVALID_PARAMS, "params are an object or an array", id_)
    return value


def _refused(code: int, text: str, id_=None) -> RpcError:
    refusal = RpcError(code, text)
    refusal.id = id_
    return refusal


def error_frame(id_, refusal: RpcError) -> bytes:
    """A JSON-RPC error response, framed."""
    body = json.dumps({"jsonrpc": "2.0", "id": id_,
                       "error": {"code": refusal.code, "message": refusal.message}}).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class Writer:
    """The client's end (pygls' writer interface): a write that fails (the client is gone, the
    disk is full) calls ``lost`` once and drops every later write, quietly."""

    def __init__(self, stream, lost):
        self.stream, self.lost = stream, lost
        self.broken = False
        self._lock = threading.Lock()

    def write(self, data: bytes) -> None:
        with self._lock:
            if self.broken:
                return
            try:
                self.stream.write(data)
                self.stream.flush()
            except (OSError, ValueError) as exc:
                self.broken = True
                print(f"schedlang lsp: cannot write to the client: {getattr(exc, 'strerror', None) or exc}",
                      file=sys.stderr)
                self.lost()

    def close(self) -> None:
        with self._lock:
            self.broken = True
            try:
                self.stream.close()
            except (OSError, ValueError):
                pass
