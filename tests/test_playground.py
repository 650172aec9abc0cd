"""The docs site's playground (SPEC §11), in a real browser: headless Chromium over DevTools.

The site is built (mkdocs, with the runtime ``tools/build_playground.py`` fetched into
``docs/playground/runtime/``; schedlang's wheel rebuilt if it is not from this tree), served from a
thread on 127.0.0.1, and driven like a visitor: type a schedule, read the plot and
the formula, make a typo and read its caret, fill the second box and read the
verdict.  Chromium resolves no host but 127.0.0.1, and every request the page and its
worker make is checked to stay there.

Without the runtime this fails under CI (``.ci/run`` fetches it) and skips elsewhere;
without Chromium it skips (``.ci/run`` installs Debian's ``chromium``).
``SCHEDLANG_PLAYGROUND_SCREENSHOT=path.png`` saves a picture of the page with a plot.
"""

import functools
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time

import pytest
from cdp import Browser, find_chromium
from helpers import ROOT
from installs import PLAYGROUND, needs_install

sys.path.insert(0, str(ROOT / "tools"))
import build_playground  # noqa: E402

RUNTIME = ROOT / "docs" / "playground" / "runtime"
COLD_LOAD_S = 240  # a generous bound for a cold Pyodide start on a loaded 2-core machine
RESULT_S = 60


def _require_runtime():
    if not (RUNTIME / build_playground.PYODIDE_DIR / "pyodide.js").exists():
        needs_install("the playground runtime (docs/playground/runtime) is not built", PLAYGROUND)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    _require_runtime()
    chromium = find_chromium()
    if chromium is None:
        pytest.skip("no Chromium to drive (apt-get install chromium, or set SCHEDLANG_CHROMIUM)")
    out = tmp_path_factory.mktemp("playground") / "site"
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "-q", "-d", str(out)], cwd=ROOT,
                            env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    # schedlang's wheel from this tree: rebuilt (not precompiled, which needs a minute) when the
    # runtime was built from other sources (CI builds it just before the tests: then it is current).
    runtime = out / "playground" / "runtime"
    if not build_playground.is_current(runtime):
        build_playground.build(runtime, schedlang_only=True, precompile=False)
    assert build_playground.is_current(runtime)
    # The same page without its runtime, for the message a visitor then sees.
    shutil.copytree(out / "playground", out / "playground-bare", ignore=shutil.ignore_patterns("runtime"))
    return out, chromium


class _Handler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, ".wasm": "application/wasm",
                      ".mjs": "text/javascript", ".js": "text/javascript", ".whl": "application/zip"}
    requests: list[str]

    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        self.requests.append(self.path)


@pytest.fixture(scope="module")
def server(site):
    root, _ = site
    handler = type("Handler", (_Handler,), {"requests": []})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(root)))
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", handler.requests
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=10)


@pytest.fixture(scope="module")
def browser(site):
    _, chromium = site
    b = Browser(chromium, ["--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
                           "--window-size=1000,1800"])
    try:
        yield b
    finally:
        b.close()


@pytest.fixture(scope="module")
def page(browser, server):
    base, _ = server
    start = time.monotonic()
    session = browser.open_page(f"{base}/playground/")
    state = browser.wait_for(session, "(() => { const s = window.schedlangPlayground; if (!s) return false; "
                             "if (s.state === 'failed' || s.state === 'missing') return s.state; "
                             "return s.firstResultMs !== null && s.state; })()", COLD_LOAD_S, poll=0.5)
    assert state == "ready", browser.evaluate(session, "document.getElementById('pg-status').textContent")
    timings = {"cold_first_result_s": time.monotonic() - start,
               "page_first_result_ms": browser.evaluate(session, "window.schedlangPlayground.firstResultMs"),
               "worker_start_ms": browser.evaluate(session, "window.schedlangPlayground.workerMs")}
    return session, timings


def _wait(browser, session, part: str, after: int) -> None:
    """Until the newest text, sent after request ``after``, has its ``part`` shown."""
    browser.wait_for(session, f"(s => !s.waiting && s.sent > {after} && s.done.{part} === s.sent)"
                              "(window.schedlangPlayground)", RESULT_S)


def _type(browser, session, box: str, text: str, wait: str = "analyse") -> float:
    """Replace the text of a box as a visitor would (select all, type); wait for its result."""
    before = browser.evaluate(session, "window.schedlangPlayground.sent")
    browser.evaluate(session, f"(() => {{ const e = document.getElementById('{box}'); e.focus(); "
                              "e.select(); })()")
    if text:
        browser.send("Input.insertText", {"text": text}, session=session)
    else:  # deleting the selection (typing nothing fires no input event)
        browser.send("Input.dispatchKeyEvent", {"type": "keyDown", "key": "Delete", "code": "Delete",
                                                "windowsVirtualKeyCode": 46}, session=session)
        browser.send("Input.dispatchKeyEvent", {"type": "keyUp", "key": "Delete", "code": "Delete",
                                                "windowsVirtualKeyCode": 46}, session=session)
        browser.evaluate(session, f"document.getElementById('{box}').dispatchEvent(new Event('input'))")
    _wait(browser, session, wait, before)
    return browser.evaluate(session, "window.schedlangPlayground.lastLatencyMs")  # analyse's


def _text(browser, session, element_id: str) -> str:
    return browser.evaluate(session, f"document.getElementById('{element_id}').textContent")


SCHEDULE = "schedule lr = warmup(linear, 100) >> cosine(0.001, 1e-4, 400)\n"


def test_types_a_schedule_and_shows_its_plot_and_formula(browser, page):
    session, timings = page
    _type(browser, session, "pg-other", "")
    latency = _type(browser, session, "pg-source", SCHEDULE, wait="check")
    show = _text(browser, session, "pg-show")
    assert "lr (500 steps):" in show
    assert re.search(r"\[0, 100\):\s+t/100000", show), show
    assert "[500, ∞):" in show
    panels = browser.evaluate(session, "[...document.querySelectorAll('#pg-plot svg g.panel')]"
                                       ".map(g => g.dataset.title)")
    assert panels == ["lr"]
    points = browser.evaluate(session, "document.querySelector('#pg-plot polyline').getAttribute('points')")
    xy = [tuple(map(float, p.split(","))) for p in points.split()]
    assert len(xy) > 100
    # Up from 0 to the peak at step 100 (a breakpoint), then down: the highest point is near x(100).
    peak = min(xy, key=lambda p: p[1])
    assert xy[0][1] > peak[1] and xy[-1][1] > peak[1]
    breakpoints = browser.evaluate(session, "[...document.querySelectorAll('#pg-plot line.breakpoint')]"
                                            ".map(l => +l.getAttribute('x1'))")
    assert any(abs(b - peak[0]) < 2 for b in breakpoints), (breakpoints, peak)
    assert _text(browser, session, "pg-diagnostics") == ""
    assert "max 0.001" in _text(browser, session, "pg-check")
    timings["keystroke_result_ms"] = latency
    shot = os.environ.get("SCHEDLANG_PLAYGROUND_SCREENSHOT")
    if shot:
        _type(browser, session, "pg-source", (ROOT / "examples" / "wsd.sched").read_text())
        _type(browser, session, "pg-other", "schedule lr = warmup(linear, 1000) >> cosine(0.001, 0, 49000)",
              wait="verify")
        data = browser.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True},
                            session=session)["data"]
        import base64

        with open(shot, "wb") as handle:
            handle.write(base64.b64decode(data))


def test_a_typo_shows_its_diagnostic_with_a_caret(browser, page):
    session, _ = page
    _type(browser, session, "pg-source", "schedule lr = warmup(linear, 100) >> cosinus(0.001, 1e-4, 400)\n")
    errors = browser.evaluate(session, "[...document.querySelectorAll('#pg-diagnostics pre.pg-error')]"
                                       ".map(e => e.textContent)")
    assert len(errors) == 1, errors
    lines = errors[0].splitlines()
    column = SCHEDULE.index("cosine") + 1
    assert lines[0].startswith(f"schedule.sched:1:{column}: error:"), lines[0]
    assert "cosinus" in lines[0]
    source_line = next(i for i, line in enumerate(lines) if "| schedule lr" in line)
    caret = lines[source_line + 1]
    start = caret.index("^")
    assert lines[source_line][start:start + len("cosinus")] == "cosinus", (lines[source_line], caret)
    assert "did you mean 'cosine'" in errors[0]
    assert browser.evaluate(session, "document.getElementById('schedlang-playground').dataset.ok") == "no"


def test_the_second_box_gives_the_verify_verdict(browser, page):
    session, _ = page
    _type(browser, session, "pg-source", SCHEDULE)
    _type(browser, session, "pg-other", "warmup(linear, 100) >> cosine(1e-3, 0.0001, 400)", wait="verify")
    assert browser.evaluate(session, "document.getElementById('pg-verify').dataset.verdict") == "equivalent"
    assert "equivalent (proven" in _text(browser, session, "pg-verify-text")
    _type(browser, session, "pg-other", "warmup(linear, 100) >> cosine(1e-3, 1e-5, 400)", wait="verify")
    assert browser.evaluate(session, "document.getElementById('pg-verify').dataset.verdict") == "different"
    text = _text(browser, session, "pg-verify-text")
    first = re.search(r"different: first difference at step (\d+)", text)
    assert first, text
    assert int(first.group(1)) == 101  # the cosines agree at their start (step 100), not after
    assert re.search(rf"^>\s+{first.group(1)}\s", text, re.M), text
    # Both schedules are plotted, with their difference.
    panels = browser.evaluate(session, "[...document.querySelectorAll('#pg-plot svg g.panel')]"
                                       ".map(g => g.dataset.title)")
    assert panels == ["lr", "lr: A - B"]


def test_each_keystroke_gets_a_result(browser, page):
    """One character typed at a time (each waits for its result): the figures docs/playground/index.md
    reports (printed with -s; no timing is asserted)."""
    session, timings = page
    _type(browser, session, "pg-other", "")
    for example in ("warmup_cosine", "gpt3"):
        text = (ROOT / "examples" / f"{example}.sched").read_text().rstrip() + "\n"
        _type(browser, session, "pg-source", text, wait="check")
        latencies, checks = [], []
        for char in "# ok":
            before = browser.evaluate(session, "window.schedlangPlayground.sent")
            browser.send("Input.dispatchKeyEvent", {"type": "char", "text": char}, session=session)
            _wait(browser, session, "check", before)
            latencies.append(browser.evaluate(session, "window.schedlangPlayground.lastLatencyMs"))
            checks.append(browser.evaluate(session, "window.schedlangPlayground.lastCheckMs"))
        assert browser.evaluate(session, "document.getElementById('pg-source').value").endswith("# ok")
        assert _text(browser, session, "pg-diagnostics") == ""
        timings[f"keystroke_ms_{example}"] = [round(x) for x in latencies]
        timings[f"keystroke_check_ms_{example}"] = [round(x) for x in checks]
    print(f"\nplayground timings: {json.dumps(timings)}")


def test_no_request_leaves_127_0_0_1(browser, page, server):
    _, served = server
    urls = browser.requested_urls()
    assert any(u.endswith("/pyodide.asm.wasm") for u in urls), urls
    assert any("/wheels/schedlang-" in u for u in urls), urls
    outside = [u for u in urls if not u.startswith(("http://127.0.0.1:", "data:", "blob:", "about:"))]
    assert not outside, outside
    assert any(p.endswith("/python_stdlib.zip") for p in served)


def test_without_the_runtime_the_page_says_so(browser, server):
    base, _ = server
    session = browser.open_page(f"{base}/playground-bare/")
    state = browser.wait_for(session, "(window.schedlangPlayground || {}).state !== 'loading' && "
                                      "(window.schedlangPlayground || {}).state", 60)
    assert state == "missing"
    assert "tools/build_playground.py" in _text(browser, session, "pg-status")


def test_the_status_line_says_what_is_happening(browser, page):
    session, _ = page
    _type(browser, session, "pg-other", "")
    _type(browser, session, "pg-source", SCHEDULE, wait="check")
    said = browser.evaluate(session, "window.schedlangPlayground.statuses")
    assert not any("JavaScript" in text for text in said), said
    loading = [text for text in said if text.startswith("Loading") or text.startswith("Importing")]
    assert loading[:4] == ["Loading Python in your browser (Pyodide)…",
                           "Loading Python in your browser (Pyodide, about 12 MB)…",
                           "Loading schedlang, sympy and lark (about 15 MB)…", "Importing schedlang…"], said
    assert any(text.startswith("Checking every step") for text in said), said
    assert re.fullmatch(r"Up to date \(\d+ ms\)\.", _text(browser, session, "pg-status"))


def test_the_step_axis_is_labelled_at_round_steps(browser, page):
    session, _ = page
    _type(browser, session, "pg-other", "")
    _type(browser, session, "pg-source", SCHEDULE)
    labels = browser.evaluate(session, "[...document.querySelectorAll('#pg-plot text.x-tick')]"
                                       ".map(t => t.textContent)")
    assert labels == ["0", "100", "200", "300", "400", "500"]


def _point(browser, session, line: int, column: int) -> tuple[float, float]:
    """The middle of the character at (line, column) of the first box, measured here (the box's
    font and padding, a canvas measuring its digits), not asked of the page."""
    return tuple(browser.evaluate(session, f"""(() => {{
        const box = document.getElementById('pg-source'); const s = getComputedStyle(box);
        const c = document.createElement('canvas').getContext('2d');
        c.font = s.fontSize + ' ' + s.fontFamily; const w = c.measureText('0000000000').width / 10;
        const r = box.getBoundingClientRect();
        return [r.left + parseFloat(s.paddingLeft) + parseFloat(s.borderLeftWidth) + ({column} - 0.5) * w,
                r.top + parseFloat(s.paddingTop) + parseFloat(s.borderTopWidth)
                + ({line} - 0.5) * parseFloat(s.lineHeight) - box.scrollTop]; }})()"""))


def test_hover_explains_the_name_under_the_pointer(browser, page):
    session, _ = page
    _type(browser, session, "pg-other", "")
    text = "param n: int = 400\n" + SCHEDULE
    _type(browser, session, "pg-source", text)
    for (line, name), expected in [((2, "cosine"), "cosine(v0, v1, n)"), ((1, "n"), "value: 400"),
                                   ((2, "lr"), "500 steps: start 0")]:
        before = browser.evaluate(session, "window.schedlangPlayground.hovers")
        column = re.search(rf"\b{name}\b", text.splitlines()[line - 1]).start() + 1
        x, y = _point(browser, session, line, column)
        browser.send("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y}, session=session)
        browser.wait_for(session, f"window.schedlangPlayground.hovers > {before}", RESULT_S)
        assert expected in _text(browser, session, "pg-tooltip")
        assert browser.evaluate(session, "document.getElementById('pg-tooltip').hidden") is False
    browser.send("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": 5, "y": 5}, session=session)
    assert browser.evaluate(session, "document.getElementById('pg-tooltip').hidden") is True


def test_completion_offers_names_and_inserts_the_chosen_one(browser, page):
    session, _ = page
    _type(browser, session, "pg-other", "")
    _type(browser, session, "pg-source", "schedule lr = ")
    before = browser.evaluate(session, "window.schedlangPlayground.completions")
    browser.evaluate(session, "(() => { const e = document.getElementById('pg-source'); e.focus(); "
                              "e.setSelectionRange(e.value.length, e.value.length); })()")
    browser.send("Input.insertText", {"text": "torch.Ste"}, session=session)
    browser.wait_for(session, f"window.schedlangPlayground.completions > {before}", RESULT_S)
    offered = browser.evaluate(session, "[...document.querySelectorAll('#pg-complete li')]"
                                        ".map(e => e.firstChild.textContent)")
    assert offered == ["StepLR"], offered
    browser.send("Input.dispatchKeyEvent", {"type": "keyDown", "key": "Enter", "code": "Enter",
                                            "windowsVirtualKeyCode": 13}, session=session)
    assert browser.evaluate(session, "document.getElementById('pg-source').value") == \
        "schedule lr = torch.StepLR"
    assert browser.evaluate(session, "document.getElementById('pg-complete').hidden") is True


def test_both_boxes_filled_show_one_error_once(browser, page):
    session, _ = page
    _type(browser, session, "pg-source", SCHEDULE)
    _type(browser, session, "pg-other", "warmup(linear, 100) >> cosine(1e-3, 0.0001, 400)", wait="verify")
    _type(browser, session, "pg-source", "schedule lr = warmup(linear, 100) >> cosinus(0.001, 1e-4, 400)\n")
    time.sleep(1.0)  # a verdict, were one coming, would be here by now
    page_text = browser.evaluate(session, "document.getElementById('schedlang-playground').innerText")
    assert page_text.count("did you mean 'cosine'") == 1, page_text
    assert browser.evaluate(session, "document.getElementById('pg-verify').hidden") is True


def test_a_long_verdict_wraps_inside_the_window(browser, page):
    session, _ = page
    _type(browser, session, "pg-source", SCHEDULE)
    long_other = "warmup(linear, 100) >> cosine(1e-3, 1e-4, 400)" + " + 0 * t" * 40 + " + cosinus(1, 0, 10)"
    _type(browser, session, "pg-other", long_other, wait="verify")
    assert "cosinus" in _text(browser, session, "pg-verify-text")
    sizes = browser.evaluate(session, "(() => { const p = document.getElementById('pg-verify-text'); "
                                      "return [p.scrollWidth, p.clientWidth, "
                                      "document.documentElement.scrollWidth, window.innerWidth]; })()")
    assert sizes[0] <= sizes[1] and sizes[2] <= sizes[3], sizes
