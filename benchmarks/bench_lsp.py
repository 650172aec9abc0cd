"""How quickly ``schedlang lsp`` answers an editor (run on demand: ``python benchmarks/bench_lsp.py``).

A real server process over stdio, driven by pygls' own client, as an editor drives it:

1. start: from launching ``python -m schedlang lsp`` to its answer to ``initialize``, against
   ``python -c "import sympy"`` (what any schedlang command pays first) and ``python -c pass``;
   and from opening the first file to its first published diagnostics (the compiler's first
   use: lark's tables, sympy);
2. for each ``examples/*.sched``: the time from a ``didChange`` (a comment added at the end,
   the text still valid) to the ``publishDiagnostics`` of that version: median and p95 over
   ``EDITS`` edits, each sent once the previous one's diagnostics (and warnings) are in.  The
   figure includes the server's ``DEBOUNCE`` (the wait for the next keystroke), which is what
   a user sees.

Prints a table (Markdown) for docs/editors.md. Not collected by pytest (the file name does
not start with test_).
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient

ROOT = Path(__file__).resolve().parent.parent
EDITS = 20
SETTLE = 0.4     # seconds after a publish before the next edit (lets check's warnings finish)
STARTS = 5       # server starts (and imports) timed


def _env() -> dict:
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return dict(os.environ, PYTHONPATH=path)


def _python(code: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, env=_env())
    return time.perf_counter() - start


def _p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20, method="inclusive")[18]


class Client:
    """A client that records when each (uri, version) first got its diagnostics."""

    def __init__(self):
        self.client = LanguageClient("bench", "1")
        self.published: dict[tuple[str, int | None], float] = {}
        self.changed = asyncio.Event()

        @self.client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_publish(params: lsp.PublishDiagnosticsParams):
            self.published.setdefault((params.uri, params.version), time.perf_counter())
            self.changed.set()

    async def start(self) -> float:
        start = time.perf_counter()
        await self.client.start_io(sys.executable, "-m", "schedlang", "lsp", env=_env())
        await self.client.initialize_async(lsp.InitializeParams(capabilities=lsp.ClientCapabilities()))
        took = time.perf_counter() - start
        self.client.initialized(lsp.InitializedParams())
        return took

    async def stop(self) -> None:
        await self.client.shutdown_async(None)
        self.client.exit(None)
        await self.client.stop()

    async def until(self, uri: str, version: int, timeout: float = 60.0) -> float:
        deadline = time.perf_counter() + timeout
        while (uri, version) not in self.published:
            self.changed.clear()
            await asyncio.wait_for(self.changed.wait(), max(deadline - time.perf_counter(), 0.01))
        return self.published[(uri, version)]

    def open(self, uri: str, text: str) -> float:
        self.client.text_document_did_open(lsp.DidOpenTextDocumentParams(
            lsp.TextDocumentItem(uri, "schedlang", 1, text)))
        return time.perf_counter()

    def change(self, uri: str, text: str, version: int) -> float:
        self.client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            lsp.VersionedTextDocumentIdentifier(version, uri),
            [lsp.TextDocumentContentChangeWholeDocument(text)]))
        return time.perf_counter()


async def main() -> None:
    sympy = statistics.median(_python("import sympy") for _ in range(STARTS))
    bare = statistics.median(_python("pass") for _ in range(STARTS))
    starts, firsts = [], []
    for _ in range(STARTS):
        client = Client()
        starts.append(await client.start())
        uri = (ROOT / "examples" / "warmup_cosine.sched").as_uri()
        sent = client.open(uri, (ROOT / "examples" / "warmup_cosine.sched").read_text(encoding="utf-8"))
        firsts.append(await client.until(uri, 1) - sent)
        await client.stop()
    start = statistics.median(starts)
    print(f"server start to initialize answered: median {start:.2f} s over {STARTS} starts "
          f"(python -c 'import sympy': {sympy:.2f} s, ratio {start / sympy:.2f}; "
          f"python -c pass: {bare:.2f} s)")
    print(f"first file opened to its diagnostics (cold compiler): median {statistics.median(firsts):.2f} s")

    client = Client()
    await client.start()
    print(f"\n| example | didChange to diagnostics, median | p95 (of {EDITS}) |\n|---|---|---|")
    everything = []
    for path in sorted((ROOT / "examples").glob("*.sched")):
        uri, text = path.as_uri(), path.read_text(encoding="utf-8")
        client.open(uri, text)
        await client.until(uri, 1)
        await asyncio.sleep(SETTLE)
        took = []
        for version in range(2, EDITS + 2):
            sent = client.change(uri, f"{text.rstrip()}\n# edit {version}\n", version)
            took.append(await client.until(uri, version) - sent)
            await asyncio.sleep(SETTLE)
        everything += took
        print(f"| `{path.name}` | {statistics.median(took) * 1000:.0f} ms | {_p95(took) * 1000:.0f} ms |")
    print(f"| all examples | {statistics.median(everything) * 1000:.0f} ms | "
          f"{_p95(everything) * 1000:.0f} ms |")
    await client.stop()


if __name__ == "__main__":
    asyncio.run(main())
