"""A minimal Chrome DevTools Protocol client on the standard library (for tests/test_playground.py).

Headless Chromium started with ``--remote-debugging-port=0`` writes its port to
``DevToolsActivePort``; this connects to the browser's websocket (RFC 6455, client
side: masked text frames out, unmasked frames in), attaches to targets with flat
sessions and records every event, so a test can wait for one or read them all
(``Network.requestWillBeSent`` of the page and of its workers).
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import select
import shutil
import socket
import struct
import subprocess
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "chrome")


def find_chromium() -> str | None:
    explicit = os.environ.get("SCHEDLANG_CHROMIUM")
    if explicit:
        return explicit
    return next((found for name in CANDIDATES if (found := shutil.which(name))), None)


class WebSocket:
    def __init__(self, url: str, timeout: float = 30.0):
        parts = urllib.parse.urlsplit(url)
        self.sock = socket.create_connection((parts.hostname, parts.port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        self.sock.sendall((f"GET {path} HTTP/1.1\r\nHost: {parts.hostname}:{parts.port}\r\n"
                           "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                           f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(1)
            if not chunk:
                raise ConnectionError("websocket handshake: connection closed")
            head += chunk
        if b" 101 " not in head.split(b"\r\n", 1)[0]:
            raise ConnectionError(f"websocket handshake failed: {head[:200]!r}")

    def _exact(self, n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise ConnectionError("websocket closed")
            data += chunk
        return data

    def send(self, text: str) -> None:
        payload = text.encode()
        header = bytes([0x81])
        n = len(payload)
        if n < 126:
            header += bytes([0x80 | n])
        elif n < 1 << 16:
            header += bytes([0x80 | 126]) + struct.pack(">H", n)
        else:
            header += bytes([0x80 | 127]) + struct.pack(">Q", n)
        mask = os.urandom(4)
        self.sock.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    def recv(self) -> str:
        """One whole message (continuation frames joined); pings are answered."""
        message = b""
        while True:
            b0, b1 = self._exact(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._exact(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._exact(8))[0]
            payload = self._exact(n)
            opcode = b0 & 0x0F
            if opcode == 0x8:
                raise ConnectionError("websocket closed by the browser")
            if opcode == 0x9:  # ping: answer with a masked pong
                self.sock.sendall(bytes([0x8A, 0x80 | len(payload)]) + b"\0\0\0\0" + payload)
                continue
            message += payload
            if b0 & 0x80:
                return message.decode()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()


class Browser:
    """Headless Chromium with one DevTools connection; ``events`` holds every event seen."""

    def __init__(self, executable: str, args: list[str] = (), timeout: float = 30.0):
        self.profile = tempfile.mkdtemp(prefix="schedlang-chromium-")
        command = [executable, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                   "--no-default-browser-check", "--disable-dev-shm-usage", "--remote-debugging-port=0",
                   f"--user-data-dir={self.profile}", *args, "about:blank"]
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.events: list[dict] = []
        self._next = 0
        try:
            port = self._port(timeout)
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/version", timeout=timeout) as r:
                url = json.load(r)["webSocketDebuggerUrl"]
            self.ws = WebSocket(url, timeout=timeout)
        except BaseException:
            self.close()
            raise

    def _port(self, timeout: float) -> int:
        path = Path(self.profile) / "DevToolsActivePort"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"chromium exited with status {self.process.returncode}")
            if path.exists():
                lines = path.read_text().splitlines()
                if lines and lines[0].strip():
                    return int(lines[0])
            time.sleep(0.05)
        raise TimeoutError("chromium did not open its DevTools port")

    def send(self, method: str, params: dict | None = None, session: str | None = None,
             timeout: float = 60.0) -> dict:
        self._next += 1
        ident = self._next
        message = {"id": ident, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        self.ws.send(json.dumps(message))
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read(deadline)
            if reply.get("id") == ident:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})

    def _read(self, deadline: float) -> dict:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("no answer from chromium in time")
        # Wait for the start of a message, then read all of it (a timeout never splits a frame).
        if not select.select([self.ws.sock], [], [], remaining)[0]:
            raise TimeoutError("no answer from chromium in time")
        self.ws.sock.settimeout(60)
        message = json.loads(self.ws.recv())
        if "method" in message:
            self.events.append(message)
            self._on_event(message)
        return message

    def _on_event(self, message: dict) -> None:
        """Workers a page starts: record their requests too, then let them run."""
        if message["method"] == "Target.attachedToTarget":
            session = message["params"]["sessionId"]
            self._fire("Network.enable", session)
            self._fire("Runtime.runIfWaitingForDebugger", session)

    def _fire(self, method: str, session: str) -> None:
        """A command whose answer is not waited for (it arrives as a message ``_read`` skips)."""
        self._next += 1
        self.ws.send(json.dumps({"id": self._next, "method": method, "params": {}, "sessionId": session}))

    def pump(self, seconds: float) -> None:
        """Read events for ``seconds`` (or until chromium has nothing more to say)."""
        deadline = time.monotonic() + seconds
        with contextlib.suppress(TimeoutError):
            while time.monotonic() < deadline:
                self._read(deadline)

    def open_page(self, url: str) -> str:
        """A new tab on ``url`` with Network, Runtime and worker auto-attach on: its session id."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        self.send("Network.enable", session=session)
        self.send("Runtime.enable", session=session)
        self.send("Page.enable", session=session)
        self.send("Target.setAutoAttach", {"autoAttach": True, "waitForDebuggerOnStart": True,
                                           "flatten": True}, session=session)
        self.send("Page.navigate", {"url": url}, session=session)
        return session

    def evaluate(self, session: str, expression: str, timeout: float = 60.0):
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                "awaitPromise": True}, session=session, timeout=timeout)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression[:80]}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, session: str, expression: str, timeout: float, poll: float = 0.1):
        """Poll ``expression`` in the page until it is truthy: its value."""
        deadline = time.monotonic() + timeout
        while True:
            value = self.evaluate(session, expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise TimeoutError(f"waited {timeout:.0f} s for {expression}")
            self.pump(poll)

    def requested_urls(self) -> list[str]:
        return [e["params"]["request"]["url"] for e in self.events
                if e["method"] == "Network.requestWillBeSent"]

    def close(self) -> None:
        ws = getattr(self, "ws", None)
        if ws is not None:
            ws.close()
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.profile, ignore_errors=True)
