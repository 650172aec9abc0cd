"""``schedlang lsp`` end to end: a real server process over stdio, driven by pytest-lsp as VS Code,
Neovim 0.11 and Emacs drive it (their recorded capabilities: UTF-16, UTF-8 and UTF-32 columns).

What each feature answers is tested on the core (tests/test_editor_core.py); here, that the
server speaks it: positions in the client's encoding, diagnostics published, replaced when
fixed and cleared on close, and every request answered.
"""

import asyncio
import sys
from pathlib import Path
from urllib.parse import urlparse
from urllib.request import url2pathname

import pytest

pytest.importorskip("pygls")
pytest_lsp = pytest.importorskip("pytest_lsp")

from helpers import ROOT  # noqa: E402
from lsprotocol import types as lsp  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities  # noqa: E402

CLIENTS = {"visual-studio-code": "utf-16", "neovim@v0.11.0": "utf-8", "emacs": "utf-32"}
URI = "file:///tmp/schedule.sched"
# non-ASCII before the error: 😀 is 2 UTF-16 units, 4 UTF-8 bytes, 1 code point
EMOJI = 'let s = "😀"\nschedule lr = cyclic(0, 1, 10, mode="😀😀") # ü\n'
COLUMNS = {"utf-16": (36, 42), "utf-8": (36, 46), "utf-32": (36, 40)}


def _config():
    return ClientServerConfig(server_command=[sys.executable, "-m", "schedlang", "lsp"],
                              server_env={"PYTHONPATH": str(ROOT)})


@pytest_lsp.fixture(config=_config(), params=list(CLIENTS))
async def client(lsp_client: LanguageClient, request):
    lsp_client.initialized = await lsp_client.initialize_session(lsp.InitializeParams(
        capabilities=client_capabilities(request.param)))
    lsp_client.encoding = CLIENTS[request.param]
    yield
    await lsp_client.shutdown_session()


def _open(client, text, uri=URI, version=1):
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(
        lsp.TextDocumentItem(uri, "schedlang", version, text)))


def _change(client, text, version, uri=URI):
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        lsp.VersionedTextDocumentIdentifier(version, uri),
        [lsp.TextDocumentContentChangeWholeDocument(text)]))


async def _until(client, check, uri=URI):
    """The diagnostics of ``uri`` once ``check`` holds for them (each publish looked at); the
    server's "still checking" notice (a check past its budget on a loaded machine) is a state
    on the way, never the answer."""
    for _ in range(20):
        found = list(client.diagnostics.get(uri, ()) or ())
        if uri in client.diagnostics and not any(d.code == "slow" for d in found) and check(found):
            return found
        await asyncio.wait_for(client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS), 20)
    raise AssertionError(f"no such diagnostics: {client.diagnostics.get(uri)}")


@pytest.mark.asyncio(loop_scope="function")
async def test_the_error_is_located_in_the_client_s_encoding(client: LanguageClient):
    _open(client, EMOJI)
    [found] = await _until(client, bool)
    assert found.code == "invalid-option" and found.severity == lsp.DiagnosticSeverity.Error
    assert (found.range.start.line, found.range.start.character, found.range.end.character) == \
        (1, *COLUMNS[client.encoding])
    assert "hint:" in found.message


@pytest.mark.asyncio(loop_scope="function")
async def test_diagnostics_follow_the_text_and_clear_on_close(client: LanguageClient):
    _open(client, "# a form feed \f in a comment\nschedule lr = cosin(1, 0, 10)\n")
    [found] = await _until(client, bool)
    assert found.code == "unknown-name" and found.range.start.line == 1  # the form feed ends no line
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(URI), range=found.range,
        context=lsp.CodeActionContext(diagnostics=[found])))
    [fix] = actions
    [edit] = fix.edit.changes[URI]
    assert edit.new_text == "cosine" and edit.range == found.range
    _change(client, "schedule lr = linear(1, 0.5, 100) >> constant(0.1)\n", 2)
    # the error is cleared first; check's warning comes after
    found = await _until(client, lambda found: [d.code for d in found] == ["jump"])
    assert found[0].severity == lsp.DiagnosticSeverity.Warning
    client.text_document_did_close(lsp.DidCloseTextDocumentParams(lsp.TextDocumentIdentifier(URI)))
    assert await _until(client, lambda found: not found) == []


@pytest_lsp.fixture(config=_config())
async def impatient(lsp_client: LanguageClient):
    """A server told to wait no time at all for a check (initializationOptions): every check
    runs past its budget, as on a machine too loaded to compile within the default 10 s."""
    published = lsp_client.published = []
    features = lsp_client.protocol.fm.features
    keep = features[lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]  # pytest-lsp's: client.diagnostics

    def record(params: lsp.PublishDiagnosticsParams):
        published.append((params.version, [d.code for d in params.diagnostics]))
        return keep(params)

    features[lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = record

    await lsp_client.initialize_session(lsp.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"), initialization_options={"budget": 0}))
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio(loop_scope="function")
async def test_a_check_past_its_budget_is_never_reported_clean(impatient: LanguageClient):
    _open(impatient, "schedule lr = cosin(1, 0, 10)\n")
    [found] = await _until(impatient, bool)
    assert found.code == "unknown-name"
    _change(impatient, "schedule lr = linear(1, 0.5, 100) >> constant(0.1)\n", 2)
    await _until(impatient, lambda found: [d.code for d in found] == ["jump"])
    # each check said it was still going, then gave its answer; nothing in between said "clean"
    assert impatient.published == [(1, ["slow"]), (1, ["unknown-name"]),
                                    (2, ["slow"]), (2, []), (2, ["slow"]), (2, ["jump"])]


GPT = (ROOT / "examples" / "gpt_pretrain.sched").read_text()


@pytest.mark.asyncio(loop_scope="function")
async def test_requests_on_an_example(client: LanguageClient):
    _open(client, GPT)
    doc = lsp.TextDocumentIdentifier(URI)
    lines = GPT.splitlines()
    row = next(i for i, line in enumerate(lines) if line.startswith("schedule lr"))
    hover = await client.text_document_hover_async(lsp.HoverParams(doc, lsp.Position(row, 10)))
    assert "start 0" in hover.contents.value
    hover = await client.text_document_hover_async(lsp.HoverParams(doc, lsp.Position(row, 16)))
    assert "warmup(shape, n, start=0)" in hover.contents.value
    items = await client.text_document_completion_async(lsp.CompletionParams(doc, lsp.Position(row, 14)))
    labels = [i.label for i in (items.items if hasattr(items, "items") else items)]
    assert "cosine" in labels and "torch" in labels
    signature = await client.text_document_signature_help_async(
        lsp.SignatureHelpParams(doc, lsp.Position(row, 29)))
    assert signature.signatures[0].label == "warmup(shape, n, start=0)" and signature.active_parameter == 1
    hints = await client.text_document_inlay_hint_async(lsp.InlayHintParams(
        doc, lsp.Range(lsp.Position(0, 0), lsp.Position(len(lines), 0))))
    assert any(h.label == "step 2_000:" and h.position.line == row for h in hints)
    outline = await client.text_document_document_symbol_async(lsp.DocumentSymbolParams(doc))
    assert [s.name for s in outline] == ["peak", "warmup", "total", "decay", "lr", "weight_decay"]
    target = await client.text_document_definition_async(lsp.DefinitionParams(doc, lsp.Position(row, 42)))
    assert target.range.start.line == next(i for i, line in enumerate(lines) if line.startswith("let decay"))
    refs = await client.text_document_references_async(lsp.ReferenceParams(
        text_document=doc, position=lsp.Position(row, 31),
        context=lsp.ReferenceContext(include_declaration=True)))
    assert len(refs) == 5
    rename = await client.text_document_rename_async(lsp.RenameParams(
        text_document=doc, position=lsp.Position(row, 31), new_name="ramp"))
    assert len(rename.changes[URI]) == 5
    edits = await client.text_document_formatting_async(lsp.DocumentFormattingParams(
        text_document=doc, options=lsp.FormattingOptions(tab_size=4, insert_spaces=True)))
    assert not edits  # the example is already laid out by fmt
    _change(client, "schedule lr=linear(1,0,100)", 2)
    edits = await client.text_document_formatting_async(lsp.DocumentFormattingParams(
        text_document=doc, options=lsp.FormattingOptions(tab_size=4, insert_spaces=True)))
    assert edits[0].new_text == "schedule lr = linear(1, 0, 100)\n"


@pytest.mark.asyncio(loop_scope="function")
async def test_half_typed_text_never_brings_it_down(client: LanguageClient):
    text = "param total: int = 100\nschedule lr = warmup(linear, 10) >> cosine(1e-3, 0, total - 10)\n"
    for version, end in enumerate(range(0, len(text), 7), start=1):
        if version == 1:
            _open(client, text[:end])
        else:
            _change(client, text[:end], version)
        doc = lsp.TextDocumentIdentifier(URI)
        position = lsp.Position(text[:end].count("\n"), len(text[:end].rsplit("\n", 1)[-1]))
        await client.text_document_hover_async(lsp.HoverParams(doc, position))
        await client.text_document_completion_async(lsp.CompletionParams(doc, position))
        await client.text_document_inlay_hint_async(lsp.InlayHintParams(
            doc, lsp.Range(lsp.Position(0, 0), position)))
        await client.text_document_code_lens_async(lsp.CodeLensParams(doc))
    _change(client, text, 999)
    await asyncio.sleep(0.5)
    assert await _until(client, lambda found: not found) == []
    assert not [m for m in client.messages if m.type == lsp.MessageType.Error]
    assert not [m for m in client.log_messages if m.type == lsp.MessageType.Error]


LENS_TEXT = "param n: int = 100\nschedule lr = linear(1, 0, n)\n"


async def _execute(client, command, *arguments):
    return await client.workspace_execute_command_async(lsp.ExecuteCommandParams(command, list(arguments)))


@pytest.mark.asyncio(loop_scope="function")
async def test_code_lenses_plot_summarise_and_verify(client: LanguageClient, tmp_path):
    here = tmp_path / "a.sched"
    (tmp_path / "b.sched").write_text("schedule lr = linear(1, 0.5, 50) >> linear(0.5, 0, 50)\n")
    (tmp_path / "c.sched").write_text("schedule lr = linear(1, 0, 99)\n")
    uri = here.as_uri()
    _open(client, LENS_TEXT, uri)
    found = await client.text_document_code_lens_async(lsp.CodeLensParams(lsp.TextDocumentIdentifier(uri)))
    assert [(lens.command.title, lens.command.command, list(lens.command.arguments)) for lens in found] == [
        ("Plot", "schedlang.plot", [uri, "lr"]), ("Summary", "schedlang.summary", [uri, "lr"]),
        ("Verify against…", "schedlang.verify", [uri, "lr"])]
    assert found[0].range == lsp.Range(lsp.Position(1, 9), lsp.Position(1, 11))
    commands = client.initialized.capabilities.execute_command_provider.commands
    assert {"schedlang.plot", "schedlang.summary", "schedlang.verify"} <= set(commands)

    summary = await _execute(client, "schedlang.summary", uri, "lr")
    assert summary["summary"].startswith("lr: 100 steps: start 1, end 0")
    assert client.messages[-1].message == summary["summary"]

    picture = await _execute(client, "schedlang.plot", uri, "lr")
    written = Path(url2pathname(urlparse(picture["uri"]).path)).read_text(encoding="utf-8")
    assert written.startswith("<svg") and written == picture["svg"]
    told = [d.uri for d in client.shown_documents] + [m.message for m in client.messages]
    assert any(picture["uri"] in item or picture["uri"].removeprefix("file://") in item for item in told)

    same = await _execute(client, "schedlang.verify", uri, "lr", (tmp_path / "b.sched").as_uri())
    assert same["verdict"] == "equivalent" and "a.sched:lr vs b.sched:lr" in same["message"]
    asked = []

    @client.feature(lsp.WINDOW_SHOW_MESSAGE_REQUEST)
    def pick(params: lsp.ShowMessageRequestParams):
        asked.append([a.title for a in params.actions])
        return params.actions[-1]

    different = await _execute(client, "schedlang.verify", uri, "lr")
    assert asked == [["b.sched", "c.sched"]] and different["verdict"] == "different"
    assert client.messages[-1].message == different["message"]

    _change(client, "schedule lr = cosin(1, 0, 10)\n", 2, uri)
    failed = await _execute(client, "schedlang.plot", uri, "lr")
    assert "unknown name 'cosin'" in failed["error"] and client.messages[-1].type == lsp.MessageType.Error
    missing = await _execute(client, "schedlang.summary", "file:///nowhere.sched", "lr")
    assert "not open" in missing["error"]
    assert not [m for m in client.log_messages if m.type == lsp.MessageType.Error]


# issue 39 item 11: the statement's range and its text in the hover stopped one short of the `)`
DECAY = ("param peak: float = 1e-3\nparam total: int = 1000\n"
         "let decay = cosine(peak, 0.1 * peak, total - 500)\nschedule lr = decay\n")


@pytest.mark.asyncio(loop_scope="function")
async def test_a_statement_ending_in_a_call_is_ranged_to_its_bracket(client: LanguageClient):
    _open(client, DECAY)
    doc = lsp.TextDocumentIdentifier(URI)
    let = DECAY.splitlines()[2]
    hover = await client.text_document_hover_async(lsp.HoverParams(doc, lsp.Position(3, 16)))
    assert f"```schedlang\n{let}\n```" in hover.contents.value
    assert hover.range == lsp.Range(lsp.Position(3, 14), lsp.Position(3, 19))
    found = await client.text_document_document_symbol_async(lsp.DocumentSymbolParams(doc))
    outline = {s.name: s for s in found}
    assert outline["decay"].range == lsp.Range(lsp.Position(2, let.index("decay")), lsp.Position(2, len(let)))
    assert outline["decay"].selection_range == lsp.Range(lsp.Position(2, 4), lsp.Position(2, 9))
    assert outline["lr"].range.end == lsp.Position(3, len(DECAY.splitlines()[3]))
