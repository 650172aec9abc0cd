"""Every message the client sends gets a result or a JSON-RPC error, and nothing it sends ends
the server but ``exit`` (with status 0 after ``shutdown``, 1 without, as the protocol says).

``Protocol`` is pygls' ``LanguageServerProtocol`` with one front door, ``receive``: a message
checked by ``wire.message`` is refused here, answered with the error the protocol names, when
it comes after ``shutdown`` (InvalidRequest) or before ``initialize`` (ServerNotInitialized),
names no method the server has (MethodNotFound) or a command it does not know, or has params
that lsprotocol's types do not take (InvalidParams, saying which field: a hover without
params, ``line: -1``, references without ``context``).  Only what passes goes to pygls, which
then never meets input that makes it log a traceback and answer nothing.  ``serve`` is the
loop: a reader thread (``wire.Frames``) hands frames to the event loop, which no read blocks.

Also here because pygls does otherwise: ``$/cancelRequest`` cancels an ``executeCommand``'s
own task (pygls cancels only its wrapper, so a proof went on running); a handler that raises
``wire.RpcError`` answers with that error, quietly (a refused rename is an answer, not a
traceback); and pygls keeps no copy of the documents (the server keeps its own, full text).
"""

from __future__ import annotations

import asyncio
import threading

from cattrs import transform_error
from lsprotocol import types as lsp
from pygls.protocol import JsonRPCNotification, JsonRPCRequestMessage, LanguageServerProtocol, lsp_method

from . import wire
from .wire import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    SERVER_NOT_INITIALIZED,
    Bad,
    RpcError,
)

#: Requests a client may send before ``initialize`` has been answered (none but it).
_BEFORE_INITIALIZE = {lsp.INITIALIZE}


class Protocol(LanguageServerProtocol):
    """pygls' protocol with one checked front door (``receive``) and cancellable commands."""

    def __init__(self, server, converter):
        super().__init__(server, converter)
        self.initialized = False
        self.stop = lambda code: None  # set by ``serve``: end the loop with this exit status
        self._inner: dict = {}  # request id -> the tasks its handler started (executeCommand's)

    # -- the front door --------------------------------------------------------------------

    def receive_frame(self, frame: bytes | Bad) -> None:
        """One frame from ``wire.Frames``: decoded, checked and handled, or answered with why not."""
        if isinstance(frame, Bad):
            self.refuse(None, RpcError(PARSE_ERROR, frame.reason))
            return
        try:
            value = wire.message(frame)
        except RpcError as refusal:
            self.refuse(refusal.id, refusal)
            return
        self.receive(value)

    def receive(self, value: dict) -> None:
        method, request = value.get("method"), "id" in value and "method" in value
        id_ = value.get("id") if request else None
        try:
            message = self._admitted(value, method, request)
        except RpcError as refusal:
            if request:
                self.refuse(id_, refusal)
            return  # a notification cannot be answered: what is wrong with it is dropped with it
        if message is not None:
            self.handle_message(message)

    def _admitted(self, value: dict, method, request: bool):
        """The message to hand pygls; None where receiving it was all (a response, ``exit``, a
        cancel); an ``RpcError`` where it is refused."""
        if method is None:
            self._response(value)
            return None
        if method == lsp.EXIT:
            self.stop(0 if self._shutdown else 1)
            return None
        if self._shutdown:
            raise RpcError(INVALID_REQUEST, f"the server is shut down: {method} after shutdown")
        if not self.initialized and method not in _BEFORE_INITIALIZE:
            raise RpcError(SERVER_NOT_INITIALIZED, f"{method} before initialize")
        if method == lsp.CANCEL_REQUEST:
            self._cancel_request(value.get("params"))
            return None
        if method not in self.fm.builtin_features and method not in self.fm.features:
            raise RpcError(METHOD_NOT_FOUND, f"no such method: {method}")
        message = self._structure(value, method, request)
        if method == lsp.WORKSPACE_EXECUTE_COMMAND and message.params.command not in self.fm.commands:
            raise RpcError(INVALID_PARAMS, f"no such command: {message.params.command}")
        if method == lsp.INITIALIZE:
            self.initialized = True
        return message

    def _cancel_request(self, params) -> None:
        cancelled = params.get("id") if isinstance(params, dict) else None
        if isinstance(cancelled, (int, str)) and not isinstance(cancelled, bool):
            self.cancel(cancelled)

    def _structure(self, value: dict, method: str, request: bool):
        kind = self.get_message_type(method) or (JsonRPCRequestMessage if request else JsonRPCNotification)
        if kind in (JsonRPCRequestMessage, JsonRPCNotification):
            value = {"params": None, **value}
        try:
            return self._converter.structure(value, kind)
        except Exception as exc:  # noqa: BLE001 - cattrs' errors: whatever the params got wrong
            try:
                said = "; ".join(transform_error(exc, path="message"))
            except Exception:  # noqa: BLE001 - an error cattrs cannot describe
                said = str(exc)
            raise RpcError(INVALID_PARAMS, f"invalid params for {method}: {said[:500]}") from None

    def _response(self, value: dict) -> None:
        """The client's answer to one of the server's requests (showDocument, showMessageRequest)."""
        future = self._request_futures.pop(value["id"], None)
        kind = self._result_types.pop(value["id"], None)
        if future is None or future.done():
            return
        if "error" in value:
            error = value["error"] if isinstance(value["error"], dict) else {}
            future.set_exception(RpcError(error.get("code", -32603) if isinstance(error.get("code"), int)
                                         else -32603, str(error.get("message", "error"))[:500]))
            return
        try:
            result = self._converter.structure(value, kind).result if kind else value.get("result")
        except Exception as exc:  # noqa: BLE001 - an answer of the wrong shape is no answer
            future.set_exception(RpcError(INVALID_PARAMS, f"the client's answer does not fit: {exc}"))
            return
        future.set_result(result)

    def refuse(self, id_, refusal: RpcError) -> None:
        self._send_response(id_, error=lsp.ResponseError(refusal.code, refusal.message))

    # -- handlers' tasks: cancelled with their request, refusals answered quietly -------------

    def _execute_handler(self, msg_id, handler, callback, args=None, kwargs=None):
        super()._execute_handler(msg_id, handler, callback, args, kwargs)
        started = self._request_futures.get(msg_id)
        request = self.msg_id
        if started is None:
            return
        if request is not None and request != msg_id:  # a builtin's inner step (executeCommand)
            self._inner.setdefault(request, set()).add(started)
            started.add_done_callback(lambda done: self._forget(request, done))
        if request != msg_id:  # pygls never drops the futures of notifications and inner steps
            started.add_done_callback(lambda done: self._request_futures.pop(msg_id, None))

    def _forget(self, request, task) -> None:
        tasks = self._inner.get(request)
        if tasks is not None:
            tasks.discard(task)
            if not tasks:
                del self._inner[request]

    def cancel(self, id_) -> None:
        """``$/cancelRequest``: the request's handler and every task it started, cancelled."""
        future = self._request_futures.pop(id_, None)
        for task in list(self._inner.get(id_, ())):
            task.cancel()
        if future is not None:
            future.cancel()

    def _send_handler_result(self, future, *, msg_id):
        if future.done() and not future.cancelled() and isinstance(future.exception(), RpcError):
            self._request_futures.pop(msg_id, None)
            self.refuse(msg_id, future.exception())
            return
        super()._send_handler_result(future, msg_id=msg_id)

    @lsp_method(lsp.SHUTDOWN)
    def lsp_shutdown(self, *args):
        """Every other request cancelled (and the tasks they started: a proof is killed), then
        shut down.  pygls' own loops over its futures while cancelling them, which drops
        entries from under it: a ``shutdown`` while requests ran was answered with an error."""
        yield from self._user(lsp.SHUTDOWN, *args)
        current = self.msg_id
        for id_ in [i for i in {*self._request_futures, *self._inner} if i != current]:
            self.cancel(id_)
        self._shutdown = True
        return None

    # -- the documents are the server's own (full sync, the compiler's lines) -----------------

    @lsp_method(lsp.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params):
        yield from self._user(lsp.TEXT_DOCUMENT_DID_OPEN, params)

    @lsp_method(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params):
        yield from self._user(lsp.TEXT_DOCUMENT_DID_CHANGE, params)

    @lsp_method(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params):
        yield from self._user(lsp.TEXT_DOCUMENT_DID_CLOSE, params)

    def _user(self, method, params):
        if (handler := self.fm.features.get(method)) is not None:
            yield handler, (params,), None


def serve(server, stdin, stdout) -> int:
    """Serve ``server`` on binary ``stdin``/``stdout`` until ``exit``, the end of the input or a
    client that cannot be written to; the exit status."""
    protocol: Protocol = server.protocol
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    done = loop.create_future()

    def stop(code: int) -> None:
        if not done.done():
            done.set_result(code)

    protocol.stop = stop
    protocol.set_writer(wire.Writer(stdout, lambda: loop.call_soon_threadsafe(stop, 1)))
    frames: asyncio.Queue = asyncio.Queue(maxsize=8)  # the reader waits while 8 are unread
    threading.Thread(target=_read, args=(stdin, frames, loop), name="schedlang-reader", daemon=True).start()
    pumping = loop.create_task(_pump(server, frames, stop))
    try:
        return loop.run_until_complete(done)
    finally:
        pumping.cancel()


def _read(stdin, frames: asyncio.Queue, loop) -> None:
    """The reader thread: each frame of ``stdin`` put on ``frames``, then None at the end."""
    reader = wire.Frames(stdin)
    while True:
        try:
            frame = reader.next()
        except (OSError, ValueError):
            frame = None
        try:
            asyncio.run_coroutine_threadsafe(frames.put(frame), loop).result()
        except (RuntimeError, asyncio.CancelledError):
            return  # the loop is gone
        if frame is None:
            return


async def _pump(server, frames: asyncio.Queue, stop) -> None:
    """Each frame read handed to the protocol, until the input ends."""
    protocol: Protocol = server.protocol
    while True:
        frame = await frames.get()
        if frame is None:  # the client closed its end without exit
            stop(0 if protocol._shutdown else 1)
            return
        try:
            protocol.receive_frame(frame)
        except Exception as exc:  # noqa: BLE001 - never down: a message that fails is logged
            server.log(f"schedlang: a message failed: {type(exc).__name__}: {exc}")
