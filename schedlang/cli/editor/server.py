"""``schedlang lsp``: the feature core spoken over the Language Server Protocol (pygls, stdio).

Only wiring lives here: each handler converts the client's position with ``positions.Lines``
(in the encoding negotiated at start), asks the core, and converts the answer to lsprotocol
types.  What keeps an editor working while a user types:

* never down: every handler is guarded, an exception becomes a log message (and, for
  diagnostics, one diagnostic at the top of the file) instead of a pop-up on every keystroke
  or a silently dead background task;
* no stale diagnostics: a change waits ``DEBOUNCE`` seconds, compiles in a worker thread and
  publishes only if the document is still at that version; the error comes first, ``check``'s
  warnings after; a clean file publishes ``[]`` and a closed one is cleared; a check past its
  ``BUDGET`` shows a "still checking" notice, never a false "clean", and its answer follows;
* heavy work off the loop: requests and lens commands run in worker threads within ``BUDGET``,
  a proof ("Verify against…") in a child process that is killed past its own budget;
* full document sync: the compiler's own line model decides lines, not pygls' ``splitlines``;
* stdout carries only the protocol: ``main`` keeps the real stdout for pygls and points
  ``sys.stdout`` at stderr, so a stray ``print`` cannot corrupt a message.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path
from urllib.parse import urlparse
from urllib.request import url2pathname

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer

from ... import __version__
from ...errors import SchedlangError, Span
from ...limits import read_source_text
from . import actions, completion, diagnostics, hints, hover, lenses, symbols
from .document import Document
from .positions import Lines
from .protocol import Protocol, serve
from .wire import REQUEST_FAILED, RpcError

DEBOUNCE = 0.15   # seconds a change waits for the next keystroke before it is compiled
BUDGET = 10.0     # seconds a compile, a check or a request may take before it is given up
#                   (the client may set another: initializationOptions {"budget": seconds})
KINDS = {"function": lsp.CompletionItemKind.Function, "keyword": lsp.CompletionItemKind.Keyword,
         "module": lsp.CompletionItemKind.Module, "variable": lsp.CompletionItemKind.Variable,
         "value": lsp.CompletionItemKind.Value, "property": lsp.CompletionItemKind.Property,
         "constant": lsp.CompletionItemKind.Constant}
SYMBOLS = {"param": lsp.SymbolKind.Constant, "let": lsp.SymbolKind.Variable, "def": lsp.SymbolKind.Function,
           "schedule": lsp.SymbolKind.Event, "batch": lsp.SymbolKind.Property, "run": lsp.SymbolKind.Property}


class SchedlangServer(LanguageServer):
    """The documents a client has open: uri -> (version, ``Document``), and their pending checks."""

    def __init__(self):
        super().__init__("schedlang", __version__, text_document_sync_kind=lsp.TextDocumentSyncKind.Full,
                         protocol_cls=Protocol)
        self.documents: dict[str, tuple[int | None, Document]] = {}
        self.pending: dict[str, asyncio.Task] = {}
        self.budget = BUDGET

    @property
    def encoding(self) -> str:
        encoding = self.workspace.position_encoding if self.workspace else None
        return str(getattr(encoding, "value", encoding) or "utf-16")

    def doc(self, uri: str) -> Document | None:
        entry = self.documents.get(uri)
        return entry[1] if entry else None

    def lines(self, doc: Document) -> Lines:
        return Lines(doc.text, self.encoding)

    def log(self, message: str) -> None:
        try:
            self.window_log_message(lsp.LogMessageParams(lsp.MessageType.Error, message))
        except Exception:  # noqa: BLE001 - logging must never be what fails
            print(message, file=sys.stderr)


server = SchedlangServer()


def _range(lines: Lines, span) -> lsp.Range:
    (l0, c0), (l1, c1) = lines.range(span)
    return lsp.Range(lsp.Position(l0, c0), lsp.Position(l1, c1))


async def _off_loop(function, *args, default=None):
    """``function(*args)`` in a worker thread within ``BUDGET``; ``default`` when it fails."""
    try:
        return await asyncio.wait_for(asyncio.to_thread(function, *args), server.budget)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # noqa: BLE001 - never down: a failed feature answers nothing
        name = getattr(function, "__name__", function)
        server.log(f"schedlang: {name} failed: {type(exc).__name__}: {exc}")
        return default


@server.feature(lsp.INITIALIZE)
def on_initialize(ls: SchedlangServer, params: lsp.InitializeParams):
    """Read the client's options: ``{"budget": seconds}`` (a slow machine's longer wait)."""
    options = params.initialization_options
    budget = options.get("budget") if isinstance(options, dict) else None
    if isinstance(budget, (int, float)) and not isinstance(budget, bool) and 0 <= budget <= 3600:
        ls.budget = float(budget)


# -- diagnostics ------------------------------------------------------------------------------

def _diagnostic(lines: Lines, problem) -> lsp.Diagnostic:
    message = problem.message + (f"\nhint: {problem.hint}" if problem.hint else "")
    severity = lsp.DiagnosticSeverity.Error if problem.severity == "error" else lsp.DiagnosticSeverity.Warning
    return lsp.Diagnostic(_range(lines, problem.span), message, severity=severity, code=problem.code,
                          source="schedlang")


def _publish(uri: str, version: int | None, found: list) -> None:
    entry = server.documents.get(uri)
    if entry is None or entry[0] != version:
        return  # stale: the text changed (or closed) while this was computed
    server.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri, found, version=version))


async def _patiently(function, doc: Document, uri: str, version, lines: Lines, shown: list):
    """``function(doc)`` in a worker thread.  Past ``BUDGET`` the published ``shown`` gets a
    notice that checking goes on (never a false "clean"), and the answer is still awaited: a
    thread cannot be stopped, and its answer stays right unless the text changes meanwhile (then
    ``_publish`` drops it).  (answer, whether the notice was shown)."""
    running = asyncio.ensure_future(asyncio.to_thread(function, doc))
    try:
        return await asyncio.wait_for(asyncio.shield(running), server.budget), False
    except TimeoutError:
        _publish(uri, version, [*shown, _slow(lines, doc)])
        return await running, True


def _current(uri: str, entry) -> bool:
    return server.documents.get(uri) is entry


async def _check(uri: str) -> None:
    """Check ``uri``'s newest version, then any newer one that came meanwhile, one at a time:
    a compile cannot be stopped (it runs in a thread), so a second one is never started
    beside it (ten keystrokes on a long file made ten compiles share the CPU, and the last one's
    diagnostics came seconds late); the versions typed meanwhile are skipped, the newest checked
    next, and a check whose version is outdated stops before its next stage (the warnings)."""
    while True:
        await asyncio.sleep(DEBOUNCE)
        entry = server.documents.get(uri)
        if entry is None:
            return
        await _check_version(uri, entry)
        if _current(uri, entry):
            return


async def _check_version(uri: str, entry) -> None:
    version, doc = entry
    try:
        lines = Lines(doc.text, server.encoding)
        found, _ = await _patiently(diagnostics.errors, doc, uri, version, lines, [])
        _publish(uri, version, [_diagnostic(lines, p) for p in found])
        if found or not _current(uri, entry):
            return
        warned, slow = await _patiently(diagnostics.warnings, doc, uri, version, lines, [])
        if warned or slow:
            _publish(uri, version, [_diagnostic(lines, p) for p in warned])
    except Exception as exc:  # noqa: BLE001 - a background task must not die silently
        message = f"schedlang: diagnostics failed: {type(exc).__name__}: {exc}"
        server.log(message)
        lines = Lines(doc.text, server.encoding)
        _publish(uri, version, [lsp.Diagnostic(_range(lines, Span.at_offset(doc.source, 0)), message,
                                               severity=lsp.DiagnosticSeverity.Error, code="internal",
                                               source="schedlang")])


def _slow(lines: Lines, doc: Document) -> lsp.Diagnostic:
    return lsp.Diagnostic(_range(lines, Span.at_offset(doc.source, 0)),
                          f"schedlang: still checking (over {server.budget:g} s); the result follows",
                          severity=lsp.DiagnosticSeverity.Information, code="slow", source="schedlang")


def _changed(uri: str, version: int | None, text: str) -> None:
    """The new text of ``uri``, checked by its running check when one runs (``_check``)."""
    before = server.doc(uri)
    server.documents[uri] = (version, before.next_version(text) if before is not None else Document(text))
    running = server.pending.get(uri)
    if running is None or running.done():
        task = asyncio.get_running_loop().create_task(_check(uri))
        server.pending[uri] = task
        task.add_done_callback(lambda done: server.pending.pop(uri, None) if server.pending.get(uri) is done
                               else None)


@server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
async def did_open(ls: SchedlangServer, params: lsp.DidOpenTextDocumentParams):
    item = params.text_document
    _changed(item.uri, item.version, item.text)


@server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
async def did_change(ls: SchedlangServer, params: lsp.DidChangeTextDocumentParams):
    """Full sync, as negotiated: a change is the whole text.  A client that sends a range anyway
    has it applied (clamped to the text, its ends in order), never taken for the whole text."""
    uri = params.text_document.uri
    doc = server.doc(uri)
    text = doc.text if doc is not None else None
    for change in params.content_changes:
        if isinstance(change, lsp.TextDocumentContentChangePartial):
            if text is None:
                continue
            lines = Lines(text, server.encoding)
            ends = sorted(lines.offset(p.line, p.character) for p in (change.range.start, change.range.end))
            text = text[:ends[0]] + change.text + text[ends[1]:]
        else:
            text = change.text
    if text is not None:
        _changed(uri, params.text_document.version, text)


@server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
async def did_close(ls: SchedlangServer, params: lsp.DidCloseTextDocumentParams):
    uri = params.text_document.uri
    task = server.pending.pop(uri, None)
    if task is not None:
        task.cancel()
    server.documents.pop(uri, None)
    server.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri, []))


# -- requests ---------------------------------------------------------------------------------

def _at(uri: str, position: lsp.Position):
    doc = server.doc(uri)
    if doc is None:
        return None, None, None
    lines = server.lines(doc)
    line, column = lines.from_lsp(position.line, position.character)
    return doc, lines, (line, column)


def _hover(uri, position):
    doc, lines, at = _at(uri, position)
    found = hover.hover(doc.settled(at[0]), *at) if doc else None
    if found is None:
        return None
    return lsp.Hover(lsp.MarkupContent(lsp.MarkupKind.Markdown, found.markdown), _range(lines, found.span))


@server.feature(lsp.TEXT_DOCUMENT_HOVER)
async def on_hover(ls, params: lsp.HoverParams):
    return await _off_loop(_hover, params.text_document.uri, params.position)


def _markdown_in_completions() -> bool:
    """Whether the client shows Markdown in a completion item's documentation (Emacs does not)."""
    item = server.client_capabilities
    for attribute in ("text_document", "completion", "completion_item", "documentation_format"):
        item = getattr(item, attribute, None)
    return bool(item) and lsp.MarkupKind.Markdown in item


def _documentation(text: str, markdown: bool):
    if not text:
        return None
    return lsp.MarkupContent(lsp.MarkupKind.Markdown, text) if markdown else text


def _complete(uri, position):
    doc, lines, at = _at(uri, position)
    if doc is None:
        return None
    markdown = _markdown_in_completions()
    items = [lsp.CompletionItem(i.label, kind=KINDS.get(i.kind), detail=i.detail or None,
                                documentation=_documentation(i.documentation, markdown), insert_text=i.insert)
             for i in completion.complete(doc, *at)]
    return lsp.CompletionList(is_incomplete=False, items=items)


@server.feature(lsp.TEXT_DOCUMENT_COMPLETION, lsp.CompletionOptions(trigger_characters=[".", "(", "=", '"']))
async def on_completion(ls, params: lsp.CompletionParams):
    return await _off_loop(_complete, params.text_document.uri, params.position)


def _signature(uri, position):
    doc, lines, at = _at(uri, position)
    found = completion.signature(doc, *at) if doc else None
    if found is None:
        return None
    info = lsp.SignatureInformation(
        found.label, documentation=found.documentation or None,
        parameters=[lsp.ParameterInformation(p) for p in found.parameters])
    return lsp.SignatureHelp([info], active_signature=0,
                             active_parameter=found.active if found.active >= 0 else None)


@server.feature(lsp.TEXT_DOCUMENT_SIGNATURE_HELP, lsp.SignatureHelpOptions(trigger_characters=["(", ","]))
async def on_signature(ls, params: lsp.SignatureHelpParams):
    return await _off_loop(_signature, params.text_document.uri, params.position)


def _format(uri):
    doc = server.doc(uri)
    text = actions.formatted(doc) if doc else None
    if text is None:
        return []
    lines = server.lines(doc)
    end = lines.end()
    return [lsp.TextEdit(lsp.Range(lsp.Position(0, 0), lsp.Position(*end)), text)]


@server.feature(lsp.TEXT_DOCUMENT_FORMATTING)
async def on_formatting(ls, params: lsp.DocumentFormattingParams):
    return await _off_loop(_format, params.text_document.uri, default=[])


def _code_actions(uri, range_: lsp.Range):
    doc = server.doc(uri)
    if doc is None:
        return []
    lines = server.lines(doc)
    first, _ = lines.from_lsp(range_.start.line, 0)
    last, _ = lines.from_lsp(range_.end.line, 0)
    found = []
    for action in actions.quick_fixes(doc, first, last):
        edit = lsp.TextEdit(_range(lines, action.span), action.text)
        found.append(lsp.CodeAction(action.title, kind=lsp.CodeActionKind.QuickFix, is_preferred=True,
                                    edit=lsp.WorkspaceEdit(changes={uri: [edit]})))
    return found


@server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION,
                lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix]))
async def on_code_action(ls, params: lsp.CodeActionParams):
    return await _off_loop(_code_actions, params.text_document.uri, params.range, default=[])


def _inlay_hints(uri):
    doc = server.doc(uri)
    if doc is None:
        return []
    lines = server.lines(doc)
    found = []
    for hint in hints.hints(doc):
        line, character = lines.to_lsp(hint.line, hint.column)
        step = hint.kind == "step"
        found.append(lsp.InlayHint(lsp.Position(line, character), hint.label, tooltip=hint.tooltip or None,
                                   padding_left=not step, padding_right=step))
    return found


@server.feature(lsp.TEXT_DOCUMENT_INLAY_HINT)
async def on_inlay_hint(ls, params: lsp.InlayHintParams):
    return await _off_loop(_inlay_hints, params.text_document.uri, default=[])


def _document_symbols(uri):
    doc = server.doc(uri)
    if doc is None:
        return []
    lines = server.lines(doc)
    return [lsp.DocumentSymbol(d.name, SYMBOLS[d.kind], _range(lines, d.span),
                               _range(lines, d.name_span or d.span), detail=d.kind)
            for d in symbols.definitions(doc)]


@server.feature(lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
async def on_document_symbol(ls, params: lsp.DocumentSymbolParams):
    return await _off_loop(_document_symbols, params.text_document.uri, default=[])


def _definition(uri, position):
    doc, lines, at = _at(uri, position)
    declared = symbols.at(doc, *at) if doc else None
    if declared is None:
        return None
    return lsp.Location(uri, _range(lines, declared.name_span))


@server.feature(lsp.TEXT_DOCUMENT_DEFINITION)
async def on_definition(ls, params: lsp.DefinitionParams):
    return await _off_loop(_definition, params.text_document.uri, params.position)


def _references(uri, position, declaration: bool):
    doc, lines, at = _at(uri, position)
    declared = symbols.at(doc, *at) if doc else None
    if declared is None:
        return []
    return [lsp.Location(uri, _range(lines, span))
            for span in symbols.references(doc, declared.name, include_declaration=declaration)]


@server.feature(lsp.TEXT_DOCUMENT_REFERENCES)
async def on_references(ls, params: lsp.ReferenceParams):
    return await _off_loop(_references, params.text_document.uri, params.position,
                           params.context.include_declaration, default=[])


def _rename(uri, position, new_name):
    doc, lines, at = _at(uri, position)
    if doc is None:
        return None
    edits = symbols.rename(doc, *at, new_name)
    if isinstance(edits, str):
        return RpcError(REQUEST_FAILED, edits)
    return lsp.WorkspaceEdit(changes={uri: [lsp.TextEdit(_range(lines, span), text) for span, text in edits]})


@server.feature(lsp.TEXT_DOCUMENT_RENAME)
async def on_rename(ls, params: lsp.RenameParams):
    answer = await _off_loop(_rename, params.text_document.uri, params.position, params.new_name)
    if isinstance(answer, RpcError):
        raise answer  # an answer, not a failure: the client shows why the name cannot be renamed
    return answer


# -- code lenses and their commands ------------------------------------------------------------

def _code_lenses(uri):
    doc = server.doc(uri)
    if doc is None:
        return []
    lines = server.lines(doc)
    return [lsp.CodeLens(_range(lines, lens.span),
                         lsp.Command(lens.title, lens.command, arguments=[uri, lens.name]))
            for lens in lenses.lenses(doc)]


@server.feature(lsp.TEXT_DOCUMENT_CODE_LENS, lsp.CodeLensOptions(resolve_provider=False))
async def on_code_lens(ls, params: lsp.CodeLensParams):
    return await _off_loop(_code_lenses, params.text_document.uri, default=[])


def _label(uri: str) -> str:
    return uri.rstrip("/").rsplit("/", 1)[-1] or uri


def _tell(message: str, error: bool = False) -> None:
    """Show a command's answer: a lens's result is dropped by most clients, so it is also said."""
    kind = lsp.MessageType.Error if error else lsp.MessageType.Info
    server.window_show_message(lsp.ShowMessageParams(kind, message))


def _command_document(arguments) -> tuple[str, str, Document]:
    """The (uri, schedule name, open document) a lens command names, or ValueError saying why not."""
    if not isinstance(arguments, (list, tuple)) or len(arguments) < 2 \
            or not all(isinstance(a, str) for a in arguments[:2]):
        raise ValueError("expected the arguments [uri, schedule name]")
    uri, name = arguments[0], arguments[1]
    doc = server.doc(uri)
    if doc is None:
        raise ValueError(f"{_label(uri)} is not open")
    return uri, name, doc


async def _command(title: str, work, *args):
    """``work(*args)`` off the loop within ``BUDGET``: its answer, or an error told to the user."""
    try:
        return await asyncio.wait_for(asyncio.to_thread(work, *args), server.budget)
    except SchedlangError as exc:
        message = f"{title}: {exc.message}" + (f" (hint: {exc.hint})" if exc.hint else "")
    except TimeoutError:
        message = f"{title}: took longer than {server.budget:g} s"
    _tell(message, error=True)
    return {"error": message}


@server.command(lenses.SUMMARY)
async def summary_command(ls, *arguments):
    try:
        uri, name, doc = _command_document(arguments)
    except ValueError as exc:
        _tell(f"schedlang.summary: {exc}", error=True)
        return {"error": str(exc)}
    answer = await _command(f"Summary of {name}", lenses.summary, doc, name)
    if isinstance(answer, str):
        _tell(answer)
        return {"summary": answer}
    return answer


def _safe(text: str) -> str:
    """A piece of a file name: letters, digits, ``_.-`` only (no separator, no ``..``)."""
    return re.sub(r"[^A-Za-z0-9_-]+", "_", text)[:60] or "_"


_plots: list[str] = []  # the server's own folder for plots, made on the first plot


def _write_plot(stem: str, name: str, picture: str) -> Path:
    """``picture`` written to ``<stem>-<name>.svg`` in a folder this server made (``mkdtemp``:
    a new name, mode 700), never in a shared one where another user could have planted a link
    to a file of ours; the file itself opened without following a link (``O_NOFOLLOW``)."""
    if not _plots:
        _plots.append(tempfile.mkdtemp(prefix="schedlang-plots-"))
    path = Path(_plots[0]) / f"{_safe(stem)}-{_safe(name)}.svg"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(picture)
    return path


@server.command(lenses.PLOT)
async def plot_command(ls, *arguments):
    """The plot is written to a temporary SVG file that the client is asked to show; a client
    that cannot show documents, or says it did not, is told where the file is."""
    try:
        uri, name, doc = _command_document(arguments)
    except ValueError as exc:
        _tell(f"schedlang.plot: {exc}", error=True)
        return {"error": str(exc)}
    picture = await _command(f"Plot of {name}", lenses.plot, doc, name, _label(uri))
    if not isinstance(picture, str):
        return picture
    try:
        path = await asyncio.to_thread(_write_plot, _label(uri).removesuffix(".sched"), name, picture)
    except OSError as exc:
        message = f"Plot of {name}: cannot write the SVG file: {exc.strerror or exc}"
        _tell(message, error=True)
        return {"error": message}
    target = path.as_uri()
    window = getattr(server.client_capabilities, "window", None)
    shown = False
    if getattr(getattr(window, "show_document", None), "support", False):
        try:
            answer = await asyncio.wait_for(server.window_show_document_async(
                lsp.ShowDocumentParams(target, external=True)), server.budget)
            shown = bool(getattr(answer, "success", False))
        except Exception as exc:  # noqa: BLE001 - the file is written; showing it is a courtesy
            server.log(f"schedlang: could not show {target}: {type(exc).__name__}: {exc}")
    if not shown:
        _tell(f"Plot of {name}: {path}")
    return {"svg": picture, "uri": target}


@server.command(lenses.VERIFY)
async def verify_command(ls, *arguments):
    """[uri, name, other]: ``other`` the uri of the file to compare with; without it the user
    picks one of the ``.sched`` files beside this one (window/showMessageRequest)."""
    try:
        uri, name, doc = _command_document(arguments)
        other = arguments[2] if len(arguments) > 2 else await _pick_other(uri)
        if other is None:
            return {"verdict": "cancelled", "message": "no file chosen"}
        if not isinstance(other, str):
            raise ValueError("the file to compare with must be a uri")
        other_doc = server.doc(other)
        # read once the proof has its place, so proofs start in the order they were asked for
        other_text = other_doc.text if other_doc is not None else \
            (lambda: asyncio.wait_for(asyncio.to_thread(_read, other), server.budget))
        answer = await PROOFS.verify(doc.text, name, other_text, _label(uri), _label(other))
    except ValueError as exc:
        _tell(f"schedlang.verify: {exc}", error=True)
        return {"verdict": "error", "message": str(exc)}
    _tell(answer["message"], error=answer["verdict"] in ("error", "timeout", "busy"))
    return answer


def _read(uri: str) -> str:
    """The text of the file ``uri`` names (in a worker thread: a slow disk must not stop the
    loop), a regular file only (a FIFO nobody writes to would never answer) and bounded."""
    if not uri.startswith("file:"):
        raise ValueError(f"cannot read {uri}: not a file")
    try:
        return read_source_text(url2pathname(urlparse(uri).path), regular=True)
    except (OSError, SchedlangError) as exc:
        raise ValueError(f"cannot read {_label(uri)}: {getattr(exc, 'message', exc)}") from None


MAX_CHOICES = 20  # .sched files offered by "Verify against…"
PROOFS = lenses.Proofs()


async def _pick_other(uri: str) -> str | None:
    if not uri.startswith("file:"):
        raise ValueError("give the file to compare with as a third argument")
    here = Path(url2pathname(urlparse(uri).path))
    choices = await asyncio.wait_for(asyncio.to_thread(_beside, here), server.budget)
    if not choices:
        raise ValueError(f"no other .sched file beside {here.name} to compare with")
    try:  # no budget: the user takes the time they take
        picked = await server.window_show_message_request_async(lsp.ShowMessageRequestParams(
            lsp.MessageType.Info, f"Verify {here.name} against:",
            actions=[lsp.MessageActionItem(p.name) for p in choices]))
    except Exception as exc:  # noqa: BLE001 - a client that cannot ask: say so, stay up
        raise ValueError(f"the editor could not ask which file to compare with ({type(exc).__name__}); "
                         "give its uri as a third argument") from None
    if picked is None:
        return None
    return next((p.as_uri() for p in choices if p.name == picked.title), None)


def _beside(here: Path) -> list[Path]:
    """The ``.sched`` files beside ``here`` a user may verify against: regular files, not hidden
    (an editor's lock file ``.#main.sched``, Emacs' dangling link, is no schedule)."""
    found = []
    for path in here.parent.glob("*.sched"):
        if path != here and not path.name.startswith(".") and path.is_file():
            found.append(path)
    return sorted(found)[:MAX_CHOICES]


def _cleanup() -> None:
    """What the server leaves behind when it exits: nothing (its proofs killed, its plots'
    folder removed)."""
    PROOFS.kill()
    for folder in _plots:
        shutil.rmtree(folder, ignore_errors=True)


def main() -> int:
    """Serve on stdin/stdout until the client exits; stdout is the protocol's alone.  The process
    ends at once (``os._exit``): a compile still running in a worker thread cannot be stopped,
    and the client that said ``exit`` must not wait for it."""
    out = sys.stdout.buffer
    sys.stdout = sys.stderr
    code = serve(server, sys.stdin.buffer, out)
    _cleanup()
    sys.stderr.flush()
    os._exit(code)
