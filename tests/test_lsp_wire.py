"""``schedlang lsp`` against hostile input on its own wire (issue 39, items 4-10): a real server
process over stdio, sent malformed frames, bad params, FIFOs and planted links; after each, it
answers the next request, and it never prints a traceback (pygls logs one for whatever reaches
it unchecked).

The server is shared by the cases that leave it running (starting one costs ~1 s); a case
that ends it (``exit``, a full disk) has its own.
"""

import json
import os
import stat

import pytest

pytest.importorskip("pygls")

from lsp_wire import Server, frame  # noqa: E402

INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, PARSE_ERROR = -32600, -32601, -32602, -32700
DOC = {"uri": "file:///tmp/x.sched"}
POSITION = {"line": 0, "character": 0}
HOVER = {"textDocument": DOC, "position": POSITION}


@pytest.fixture(scope="module")
def server():
    running = Server()
    yield running
    running.kill()


@pytest.fixture(autouse=True)
def no_traceback(request):
    yield
    if "server" in request.fixturenames:
        shared = request.getfixturevalue("server")
        shared.alive()
        assert b"Traceback" not in shared.stderr, shared.stderr.decode()


# -- item 5: frames --------------------------------------------------------------------------

HELLO = {"jsonrpc": "2.0", "id": "after", "method": "textDocument/hover",
         "params": {"textDocument": DOC, "position": POSITION}}


@pytest.mark.parametrize("bad", [
    frame(HELLO, length=99999999999999),
    b"Content-Length: " + b"9" * 5000 + b"\r\n\r\n" + json.dumps(HELLO).encode(),
    b"Content-Length: twelve\r\n\r\n{}",
    b"Content-Type: application/vscode-jsonrpc\r\n\r\n{}",
    b"X-Junk: " + b"x" * 5000 + b"\r\n\r\n",
], ids=["huge-length", "5000-digits", "not-a-number", "no-length", "long-header"])
def test_a_bad_frame_is_answered_and_the_next_one_read(server, bad):
    server.send(bad)
    refused = server.wait(lambda m: m.get("id") is None and "error" in m)
    assert refused["error"]["code"] == PARSE_ERROR
    server.send(frame(HELLO))
    assert server.answer("after")["result"] is None


@pytest.mark.parametrize("name", [b"content-length", b"CONTENT-LENGTH", b"Content-length"])
def test_header_names_are_case_insensitive(server, name):
    body = json.dumps(HELLO).encode()
    server.send(name + b": %d\r\n\r\n" % len(body) + body)
    assert server.answer("after")["result"] is None


def test_junk_before_a_header_is_skipped(server):
    server.send(b"a stray line\r\n" + json.dumps(HELLO).encode()[:10] + frame(HELLO))
    assert server.answer("after")["result"] is None


# -- items 6 and 9: every request answered, nothing logged -----------------------------------

@pytest.mark.parametrize("body, code", [
    (b"this is not json", PARSE_ERROR),
    (b"[]", INVALID_REQUEST),
    (b"[" * 100_000 + b"]" * 100_000, PARSE_ERROR),
    (json.dumps({"jsonrpc": "2.0", "id": {"a": 1}, "method": "shutdown"}).encode(), INVALID_REQUEST),
    (json.dumps({"jsonrpc": "1.0", "id": 7, "method": "shutdown"}).encode(), INVALID_REQUEST),
], ids=["not-json", "batch", "nested", "object-id", "jsonrpc-1"])
def test_a_body_that_is_no_message_is_answered(server, body, code):
    server.send(frame(body))
    refused = server.wait(lambda m: "error" in m and m.get("id") in (None, 7))
    assert refused["error"]["code"] == code


@pytest.mark.parametrize("method, params, code", [
    ("textDocument/hover", None, INVALID_PARAMS),
    ("textDocument/hover", {"textDocument": DOC, "position": {"line": "x", "character": 0}}, INVALID_PARAMS),
    ("textDocument/hover", {"textDocument": DOC, "position": {"line": -1, "character": 0}}, INVALID_PARAMS),
    ("textDocument/hover", {**HOVER, "position": {"line": 0, "character": 2**53}}, INVALID_PARAMS),
    ("textDocument/hover", 5, INVALID_PARAMS),
    ("textDocument/references", {"textDocument": DOC, "position": POSITION}, INVALID_PARAMS),
    ("workspace/executeCommand", {}, INVALID_PARAMS),
    ("workspace/executeCommand", {"command": "no.such.command", "arguments": []}, INVALID_PARAMS),
    ("no/such/method", None, METHOD_NOT_FOUND),
    ("$/no/such/request", {}, METHOD_NOT_FOUND),
], ids=["hover-no-params", "line-x", "line-minus-1", "character-2-53", "params-5", "references-no-context",
        "command-missing", "command-unknown", "unknown-method", "unknown-dollar"])
def test_a_request_with_bad_params_is_answered(server, method, params, code):
    id_ = server.request(method, *([] if params is None else [params]))
    answer = server.answer(id_)
    assert answer["error"]["code"] == code, answer
    if code == INVALID_PARAMS and method == "textDocument/hover" and isinstance(params, dict):
        assert "position" in answer["error"]["message"]  # it says which field


@pytest.mark.parametrize("method, params", [
    ("$/cancelRequest", {}), ("$/cancelRequest", {"id": {"x": 1}}), ("$/cancelRequest", {"id": 12345}),
    ("textDocument/didChange", {"textDocument": {"uri": DOC["uri"], "version": 2}, "contentChanges": [
        {"range": {"start": {"line": 9, "character": 0}, "end": {"line": 0, "character": 0}}, "text": "x"}]}),
    ("textDocument/didOpen", {"textDocument": {"uri": 5}}),
    ("no/such/notification", None),
], ids=["cancel-empty", "cancel-object-id", "cancel-unknown-id", "change-bad-range", "open-bad", "unknown"])
def test_a_bad_notification_is_dropped_quietly(server, method, params):
    server.notify(method, *([] if params is None else [params]))


def test_a_refused_rename_is_an_answer(server):
    server.notify("textDocument/didOpen", {"textDocument": {**DOC, "languageId": "schedlang", "version": 1,
                                                            "text": "schedule lr = linear(1, 0, 10)\n"}})
    answer = server.call("textDocument/rename", {**HOVER, "position": {"line": 0, "character": 16},
                                                 "newName": "x"})
    assert answer["error"]["code"] == -32803 and "can be renamed" in answer["error"]["message"]
    answer = server.call("textDocument/rename", {**HOVER, "position": {"line": 0, "character": 10},
                                                 "newName": "let"})
    assert "word of the language" in answer["error"]["message"]


def test_initialize_with_null_capabilities_is_invalid_params():
    fresh = Server(initialize=False)
    try:
        answer = fresh.call("initialize", {"processId": None, "capabilities": None})
        assert answer["error"]["code"] == INVALID_PARAMS
        assert fresh.call("textDocument/hover", HOVER)["error"]["code"] == -32002  # not initialized yet
        assert "result" in fresh.call("initialize", {"processId": None, "capabilities": {}})
        assert b"Traceback" not in fresh.stderr
    finally:
        fresh.kill()


# -- item 7: the exit status -------------------------------------------------------------------

def test_requests_after_shutdown_are_invalid_and_exit_is_0():
    fresh = Server()
    try:
        assert fresh.call("shutdown")["result"] is None
        assert fresh.call("textDocument/hover", HOVER)["error"]["code"] == INVALID_REQUEST
        fresh.notify("exit")
        assert fresh.process.wait(20) == 0
    finally:
        fresh.kill()


def test_exit_without_shutdown_is_status_1():
    fresh = Server()
    try:
        fresh.notify("exit")
        assert fresh.process.wait(20) == 1
    finally:
        fresh.kill()


def test_a_client_that_cannot_be_written_to_ends_it_with_status_1():
    with open("/dev/full", "wb") as full:
        fresh = Server(stdout=full, initialize=False)
    try:
        fresh.request("initialize", {"processId": None, "capabilities": {}})
        assert fresh.process.wait(20) == 1
        fresh.process.stderr.close()
    finally:
        fresh.kill()
    assert b"Traceback" not in fresh.stderr and b"cannot write to the client" in fresh.stderr


# -- item 4: no read blocks the loop; item 10: no link followed ---------------------------------

def _open(server, path, text):
    server.notify("textDocument/didOpen", {"textDocument": {"uri": path.as_uri(), "languageId": "schedlang",
                                                            "version": 1, "text": text}})


def test_a_fifo_to_verify_against_is_refused_and_the_server_answers(server, tmp_path):
    here, fifo = tmp_path / "a.sched", tmp_path / "b.sched"
    os.mkfifo(fifo)
    _open(server, here, "schedule lr = linear(1, 0, 10)\n")
    answer = server.call("workspace/executeCommand", {"command": "schedlang.verify",
                                                      "arguments": [here.as_uri(), "lr", fifo.as_uri()]})
    assert answer["result"]["verdict"] == "error" and "not a regular file" in answer["result"]["message"]
    answer = server.call("workspace/executeCommand", {"command": "schedlang.verify",
                                                      "arguments": [here.as_uri(), "lr", tmp_path.as_uri()]})
    assert "not a regular file" in answer["result"]["message"]


def test_a_planted_link_is_not_followed_by_plot(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    shared = tmp_path / "schedlang-plots"
    shared.mkdir()
    (shared / "a-lr.svg").symlink_to(victim)
    fresh = Server(env={"TMPDIR": str(tmp_path)})
    try:
        _open(fresh, tmp_path / "a.sched", "schedule lr = linear(1, 0, 10)\n")
        here = (tmp_path / "a.sched").as_uri()
        answer = fresh.call("workspace/executeCommand",
                            {"command": "schedlang.plot", "arguments": [here, "lr"]})
        assert victim.read_text() == "precious"
        written = answer["result"]["uri"].removeprefix("file://")
        assert os.path.dirname(written) != str(shared)
        assert stat.S_IMODE(os.stat(os.path.dirname(written)).st_mode) == 0o700
        assert open(written, encoding="utf-8").read().startswith("<svg")
        assert fresh.quit() == 0
        assert not os.path.exists(written)  # the server's own folder goes with it
    finally:
        fresh.kill()


# -- item 8: a few proofs at a time, cancelled ones killed, none left behind --------------------

def _children(pid: int) -> set[int]:
    """The running (not zombie) processes whose parent is ``pid``."""
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    fields = handle.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid and fields[0] != "Z":
                found.add(int(entry))
    return found


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _until(check, timeout=20.0):
    """Poll ``check`` (a process table, which sends no message to wait on) for a bounded time."""
    import time

    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "not within the time"
        time.sleep(0.05)


def test_proofs_run_a_few_at_a_time_and_none_outlives_the_server(tmp_path):
    # a proof that takes far longer than this test: 400 cosines against a file that differs at the end
    pieces = [f"cosine({i % 7 + 1}, {i % 3}, {i % 13 + 5})" for i in range(400)]
    text = "schedule lr = " + " >> ".join(pieces) + "\n"
    pieces[-1] = "cosine(1, 0, 9)"
    (tmp_path / "b.sched").write_text("schedule lr = " + " >> ".join(pieces) + "\n")
    here, other = (tmp_path / "a.sched").as_uri(), (tmp_path / "b.sched").as_uri()
    fresh = Server()
    try:
        _open(fresh, tmp_path / "a.sched", text)
        verify = {"command": "schedlang.verify", "arguments": [here, "lr", other]}
        ids = [fresh.request("workspace/executeCommand", verify) for _ in range(8)]
        busy = [fresh.answer(id_)["result"] for id_ in ids[-2:]]  # 2 running, 4 waiting: the rest refused
        assert all(b["verdict"] == "busy" for b in busy), busy
        _until(lambda: len(_children(fresh.process.pid)) == 2)
        fresh.alive()  # the proofs hold no thread a request needs
        first = _children(fresh.process.pid)
        fresh.notify("$/cancelRequest", {"id": ids[0]})
        assert fresh.answer(ids[0])["error"]["code"] == -32800
        _until(lambda: len(first - _children(fresh.process.pid)) == 1)  # one of them killed...
        _until(lambda: len(_children(fresh.process.pid)) == 2)          # ...and a waiting one started
        every = first | _children(fresh.process.pid)
        assert fresh.quit() == 0
        _until(lambda: not any(_alive(pid) for pid in every), timeout=10)
    finally:
        fresh.kill()


# -- item 11: what real clients do ----------------------------------------------------------------

def _plot(server, tmp_path):
    _open(server, tmp_path / "a.sched", "schedule lr = linear(1, 0, 10)\n")
    return server.request("workspace/executeCommand",
                          {"command": "schedlang.plot", "arguments": [(tmp_path / "a.sched").as_uri(), "lr"]})


def _recorded(client: str) -> dict:
    """A real client's capabilities, as pytest-lsp recorded them."""
    from pytest_lsp import client_capabilities
    from pytest_lsp.client import LanguageClient

    return LanguageClient().protocol._converter.unstructure(client_capabilities(client))


@pytest.mark.parametrize("reply", [None, {"result": {"success": False}},
                                   {"error": {"code": -32603, "message": "no viewer for svg"}}],
                         ids=["neovim-0.7", "declined", "failed"])
def test_a_client_that_shows_no_document_is_told_where_the_plot_is(tmp_path, reply):
    """Neovim 0.7 says ``showDocument.support = false``; another client may answer ``success:
    false`` or an error: either way the user is told the SVG's path in a message."""
    capabilities = _recorded("neovim@v0.7.0")
    assert capabilities["window"]["showDocument"] == {"support": False}
    capabilities["window"]["showDocument"]["support"] = support = reply is not None
    fresh = Server(capabilities=capabilities)
    try:
        id_ = _plot(fresh, tmp_path)
        if support:
            asked = fresh.wait(lambda m: m.get("method") == "window/showDocument")
            fresh.send(frame({"jsonrpc": "2.0", "id": asked["id"], **reply}))
        uri = fresh.answer(id_)["result"]["uri"]
        told = fresh.wait(lambda m: m.get("method") == "window/showMessage")
        assert uri.removeprefix("file://") in told["params"]["message"]
        assert support or not [m for m in fresh.seen if m.get("method") == "window/showDocument"]
    finally:
        fresh.kill()


def test_a_shown_plot_needs_no_message(tmp_path):
    capabilities = _recorded("neovim@v0.7.0")
    capabilities["window"]["showDocument"]["support"] = True
    fresh = Server(capabilities=capabilities)
    try:
        id_ = _plot(fresh, tmp_path)
        asked = fresh.wait(lambda m: m.get("method") == "window/showDocument")
        assert asked["params"]["external"] is True and asked["params"]["uri"].endswith("/a-lr.svg")
        fresh.send(frame({"jsonrpc": "2.0", "id": asked["id"], "result": {"success": True}}))
        assert fresh.answer(id_)["result"]["uri"] == asked["params"]["uri"]
        # the message would have come before the answer, on the same stream
        assert not [m for m in fresh.seen if m.get("method") == "window/showMessage"]
    finally:
        fresh.kill()


def test_editor_lock_files_are_not_offered_to_verify_against(server, tmp_path):
    (tmp_path / "b.sched").write_text("schedule lr = linear(1, 0, 10)\n")
    (tmp_path / ".#b.sched").symlink_to("user@host.1234:1700000000")  # Emacs' lock file: a dangling link
    (tmp_path / ".#a.sched").write_text("user@host.1234:1700000000")  # ... or a file, where links cannot be
    (tmp_path / "c.sched").mkdir()
    _open(server, tmp_path / "a.sched", "schedule lr = linear(1, 0, 10)\n")
    here = (tmp_path / "a.sched").as_uri()
    verify = {"command": "schedlang.verify", "arguments": [here, "lr"]}
    id_ = server.request("workspace/executeCommand", verify)
    asked = server.wait(lambda m: m.get("method") == "window/showMessageRequest")
    assert [a["title"] for a in asked["params"]["actions"]] == ["b.sched"]
    server.send(frame({"jsonrpc": "2.0", "id": asked["id"], "result": {"title": "b.sched"}}))
    assert server.answer(id_)["result"]["verdict"] == "equivalent"


@pytest.mark.parametrize("offered, encoding", [(None, "utf-16"), (["utf-32", "utf-8", "utf-16"], "utf-32")],
                         ids=["eglot-1.9-emacs-28", "emacs-29"])
def test_eglot_columns_are_the_encoding_it_negotiates(tmp_path, offered, encoding):
    """eglot 1.9 (Emacs 28) offers no position encoding, so the protocol's default holds, UTF-16
    (docs/editors.md); Emacs 29's offers UTF-32 first and gets it."""
    capabilities = _recorded("emacs")
    capabilities.get("general", {}).pop("positionEncodings", None)
    if offered:
        capabilities.setdefault("general", {})["positionEncodings"] = offered
    fresh = Server(initialize=False)
    try:
        answer = fresh.call("initialize", {"processId": None, "capabilities": capabilities})
        assert answer["result"]["capabilities"].get("positionEncoding", "utf-16") == encoding
        fresh.notify("initialized", {})
        text = 'schedule lr = cyclic(0, 1, 10, mode="😀😀")\n'
        _open(fresh, tmp_path / "a.sched", text)
        published = fresh.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                               and any(d.get("code") == "invalid-option" for d in m["params"]["diagnostics"]))
        [found] = published["params"]["diagnostics"]
        width = {"utf-16": 4, "utf-32": 2}[encoding]  # "😀😀": 4 UTF-16 units, 2 code points
        assert (found["range"]["start"]["character"], found["range"]["end"]["character"]) == (36, 38 + width)
    finally:
        fresh.kill()
