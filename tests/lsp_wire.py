"""A client that speaks raw bytes to a real ``schedlang lsp`` over stdio (tests/test_lsp_wire.py).

pytest-lsp only sends well-formed messages; this sends whatever a test writes (a lowercase
header, a 5000-digit length, ``[]``) and reads every frame back, with bounded waits: each wait
is for a message, never a fixed sleep.
"""

import json
import os
import queue
import subprocess
import sys
import threading
import time

from helpers import ROOT

WAIT = 20.0  # seconds any one answer may take on a loaded 2-core machine
_MISSING = object()


def frame(value, length=None) -> bytes:
    body = value if isinstance(value, bytes) else json.dumps(value).encode()
    return b"Content-Length: %d\r\n\r\n" % (len(body) if length is None else length) + body


class Server:
    """One ``schedlang lsp`` process: ``send`` bytes, ``request`` and wait for its ``answer``."""

    def __init__(self, env=None, stdout=subprocess.PIPE, initialize=True, capabilities=None):
        environment = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
        self.process = subprocess.Popen([sys.executable, "-m", "schedlang", "lsp"], stdin=subprocess.PIPE,
                                        stdout=stdout, stderr=subprocess.PIPE, env=environment)
        self.messages: queue.Queue = queue.Queue()
        self.seen: list[dict] = []  # every message read so far, in order
        self.stderr = bytearray()
        self.next_id = 0
        if stdout == subprocess.PIPE:
            threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._errors, daemon=True).start()
        if initialize:
            answer = self.call("initialize", {"processId": None, "capabilities": capabilities or {}})
            assert "result" in answer, answer
            self.notify("initialized", {})

    def _read(self):
        out = self.process.stdout
        while True:
            header = b""
            while not header.endswith(b"\r\n\r\n"):
                byte = out.read(1)
                if not byte:
                    self.messages.put(None)
                    return
                header += byte
            length = int(header.split(b":")[1].split(b"\r\n")[0])
            self.messages.put(json.loads(out.read(length)))

    def _errors(self):
        for line in self.process.stderr:
            self.stderr += line

    def send(self, data: bytes) -> None:
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def notify(self, method, params=_MISSING) -> None:
        message = {"jsonrpc": "2.0", "method": method}
        if params is not _MISSING:
            message["params"] = params
        self.send(frame(message))

    def request(self, method, params=_MISSING) -> int:
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not _MISSING:
            message["params"] = params
        self.send(frame(message))
        return self.next_id

    def wait(self, check, timeout=WAIT) -> dict:
        """The first message (already read or still to come) for which ``check`` holds."""
        for message in self.seen:
            if check(message):
                self.seen.remove(message)
                return message
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            try:
                message = self.messages.get(timeout=max(left, 0.01))
            except queue.Empty:
                raise AssertionError(f"nothing came within {timeout} s; read {self.seen}") from None
            if message is None:
                raise AssertionError(f"the server closed its output; stderr: {self.stderr.decode()}")
            if check(message):
                return message
            self.seen.append(message)

    def answer(self, id_, timeout=WAIT) -> dict:
        return self.wait(lambda m: m.get("id") == id_ and "method" not in m, timeout)

    def call(self, method, params=_MISSING, timeout=WAIT) -> dict:
        return self.answer(self.request(method, params), timeout)

    def alive(self) -> None:
        """The server answers the next request (a hover over a file it does not have: null)."""
        answer = self.call("textDocument/hover", {"textDocument": {"uri": "file:///nowhere.sched"},
                                                  "position": {"line": 0, "character": 0}})
        assert answer.get("result", "missing") is None, answer

    def quit(self, timeout=WAIT) -> int:
        """``shutdown`` answered, then ``exit``: the exit status."""
        assert "error" not in self.call("shutdown")
        self.notify("exit")
        return self.process.wait(timeout)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(WAIT)
