// The playground page: the editor boxes, the examples menu and the output panes.
//
// All the work happens in worker.js (Pyodide); this file only sends the boxes' text (debounced)
// and shows what comes back. User text only ever reaches the page as textContent; the plot is
// SVG written by schedlang/cli/plot_svg.py (every text in it escaped), parsed as XML.
// The first box has the language server's hover (rest the pointer on a name) and completion
// (Ctrl+Space, or as a name is typed), answered by schedlang.cli.playground from the same
// feature core (schedlang/cli/editor/); the status line says what is running.
"use strict";

(function () {
  const root = document.getElementById("schedlang-playground");
  if (!root) return;
  const DEBOUNCE_MS = 250;
  const DEFAULT_EXAMPLE = "warmup_cosine";
  const $ = (id) => document.getElementById(id);
  const status = $("pg-status");
  const source = $("pg-source");
  const other = $("pg-other");
  const menu = $("pg-examples");
  const started = performance.now();
  // What the tests (and the curious) can read: timings of the last results.
  const state = (window.schedlangPlayground = {
    state: "loading", readyMs: null, firstResultMs: null, lastLatencyMs: null,
    lastCheckMs: null, results: 0, checks: 0, verifies: 0,
    sent: -1, waiting: false, done: { analyse: -1, check: -1, verify: -1 }, // request ids
    statuses: [], hovers: 0, completions: 0, // every text the status line showed; editor answers
  });

  function setState(name, text) {
    state.state = name;
    root.dataset.state = name;
    say(text);
  }

  function say(text) {
    status.textContent = text;
    if (state.statuses[state.statuses.length - 1] !== text) state.statuses.push(text);
    if (state.statuses.length > 100) state.statuses.splice(0, 50);
  }
  setState("loading", "Loading Python in your browser (Pyodide)…");
  const STAGES = { pyodide: "Loading Python in your browser (Pyodide, about 12 MB)…",
    wheels: "Loading schedlang, sympy and lark (about 15 MB)…", imports: "Importing schedlang…" };
  const ACTIVITY = { analyse: "Reading your schedule…", check: "Checking every step (schedlang check)…",
    verify: "Proving the two boxes equal or finding where they differ (schedlang verify)…" };
  let expected = []; // the parts of the newest text still to come

  function activity(text) {
    if (state.state === "ready") say(text);
  }

  // The examples: examples/*.sched, embedded in the page when the site is built.
  let examples = {};
  const data = document.getElementById("pg-examples-data");
  if (data) examples = JSON.parse(data.textContent);
  for (const name of Object.keys(examples)) {
    const option = document.createElement("option");
    option.value = name;
    option.textContent = `examples/${name}.sched`;
    menu.appendChild(option);
  }
  if (examples[DEFAULT_EXAMPLE] !== undefined) {
    menu.value = DEFAULT_EXAMPLE;
    source.value = examples[DEFAULT_EXAMPLE];
  }

  const runtime = new URL(root.dataset.runtime || "runtime/", document.baseURI).href;
  const workerURL = new URL("worker.js", document.currentScript.src).href;
  const worker = new Worker(workerURL);
  let nextId = 0;
  let latestId = -1;
  let sentAt = 0;
  let timer = null;

  function send() {
    timer = null;
    state.waiting = false;
    latestId = nextId++;
    state.sent = latestId;
    sentAt = performance.now();
    expected = other.value.trim() ? ["analyse", "check", "verify"] : ["analyse", "check"];
    activity(ACTIVITY.analyse);
    worker.postMessage({ type: "run", id: latestId, source: source.value, other: other.value });
  }

  function progressed(part, ok) {
    expected = ok ? expected.filter((p) => p !== part) : [];
    activity(expected.length ? ACTIVITY[expected[0]]
      : `Up to date (${Math.round(performance.now() - sentAt)} ms).`);
  }

  function schedule() {
    if (timer !== null) clearTimeout(timer);
    state.waiting = true;
    timer = setTimeout(send, DEBOUNCE_MS);
  }

  source.addEventListener("input", schedule);
  other.addEventListener("input", schedule);
  menu.addEventListener("change", () => {
    source.value = examples[menu.value] || "";
    schedule();
  });

  function pre(text, className) {
    const element = document.createElement("pre");
    element.className = className;
    element.textContent = text;
    return element;
  }

  function showPlot(svgText) {
    const plot = $("pg-plot");
    plot.replaceChildren();
    if (!svgText) return;
    const parsed = new DOMParser().parseFromString(svgText, "image/svg+xml");
    const svg = parsed.documentElement;
    if (svg.nodeName !== "svg" || svg.querySelector("script, foreignObject")) return;
    plot.appendChild(document.importNode(svg, true));
  }

  function showAnalysis(doc) {
    const diagnostics = $("pg-diagnostics");
    diagnostics.replaceChildren();
    for (const d of doc.diagnostics) diagnostics.appendChild(pre(d.text, `pg-${d.kind}`));
    if (doc.plot_error) diagnostics.appendChild(pre(doc.plot_error.text, "pg-note"));
    if (doc.ok) {
      $("pg-show").textContent = doc.show;
      showPlot(doc.plot);
    }
    root.dataset.ok = doc.ok ? "yes" : "no";
    // No verdict for a first box that does not compile: its error is shown once, above.
    if (!other.value.trim() || !doc.ok) $("pg-verify").hidden = true;
  }

  function showCheck(doc) {
    if (!doc.ok) return; // analyse has shown the error
    const diagnostics = $("pg-diagnostics");
    for (const old of diagnostics.querySelectorAll(".pg-warning")) old.remove();
    for (const d of doc.diagnostics) diagnostics.appendChild(pre(d.text, `pg-${d.kind}`));
    $("pg-check").textContent = doc.check;
  }

  function showVerdict(doc) {
    const box = $("pg-verify");
    box.hidden = false;
    box.dataset.verdict = doc.verdict;
    $("pg-verdict").textContent = { equivalent: "equivalent: proven equal at every step",
      different: "different", unknown: "unknown: neither proven nor refuted",
      error: "error in one of the boxes" }[doc.verdict] || doc.verdict;
    $("pg-verify-text").textContent = (doc.text + doc.diagnostics).trimEnd();
  }

  worker.onmessage = (event) => {
    const message = event.data;
    if (message.type === "progress") {
      if (state.state === "loading" && STAGES[message.stage]) say(STAGES[message.stage]);
    } else if (message.type === "editor") {
      editorAnswer(message);
    } else if (message.type === "ready") {
      state.readyMs = performance.now() - started;
      state.workerMs = message.ms;
      setState("ready", `Ready (schedlang in your browser, loaded in ${(state.readyMs / 1000).toFixed(1)} s).`);
      send();
    } else if (message.type === "missing") {
      setState("missing", "The playground's runtime is not part of this build of the site: run " +
        "`python tools/build_playground.py` before `mkdocs build` (see below). " + `(${message.message})`);
    } else if (message.type === "failed") {
      setState("failed", `The playground stopped: ${message.message}`);
    } else if (message.type === "crash") {
      if (message.part === "hover" || message.part === "complete") return closePopups();
      if (message.id !== latestId) return;
      progressed(message.part, false);
      $("pg-diagnostics").appendChild(pre(`schedlang failed on this text (${message.part}), a bug: ` +
        message.message, "pg-error pg-crash"));
    } else if (message.type === "result") {
      if (message.id !== latestId) return; // an older text's result: a newer one is coming
      const doc = JSON.parse(message.json);
      state.done[message.part] = message.id;
      progressed(message.part, message.part === "analyse" ? doc.ok : true);
      if (message.part === "analyse") {
        showAnalysis(doc);
        state.results += 1;
        state.lastLatencyMs = performance.now() - sentAt;
        if (state.firstResultMs === null) state.firstResultMs = performance.now() - started;
        root.dataset.results = String(state.results);
      } else if (message.part === "check") {
        showCheck(doc);
        state.checks += 1;
        state.lastCheckMs = performance.now() - sentAt;
        root.dataset.checks = String(state.checks);
      } else {
        showVerdict(doc);
        state.verifies += 1;
        root.dataset.verifies = String(state.verifies);
      }
    }
  };
  // -- hover and completion in the first box ------------------------------------------------
  // The box is monospaced and does not wrap, so a point and a (line, column) are a product and
  // a division apart; columns count code points, as schedlang's do.
  const tooltip = document.createElement("div");
  tooltip.id = "pg-tooltip";
  tooltip.className = "pg-tooltip";
  tooltip.setAttribute("role", "tooltip");
  tooltip.hidden = true;
  const list = document.createElement("ul");
  list.id = "pg-complete";
  list.className = "pg-complete";
  list.setAttribute("role", "listbox");
  list.hidden = true;
  root.append(tooltip, list);
  let editorId = 0;
  const asked = { hover: null, complete: null }; // the newest request of each kind
  let items = [];
  let chosen = 0;

  function metrics() {
    const style = getComputedStyle(source);
    const context = (metrics.canvas ||= document.createElement("canvas")).getContext("2d");
    context.font = `${style.fontSize} ${style.fontFamily}`;
    return { char: context.measureText("0".repeat(50)).width / 50, line: parseFloat(style.lineHeight),
      left: parseFloat(style.paddingLeft) + parseFloat(style.borderLeftWidth),
      top: parseFloat(style.paddingTop) + parseFloat(style.borderTopWidth) };
  }

  function lines() {
    return source.value.split(/\r\n|\r|\n/);
  }

  function positionAt(x, y) { // the (line, col) under a point of the page, or null
    const box = source.getBoundingClientRect();
    const m = metrics();
    const dx = x - box.left - m.left + source.scrollLeft;
    const dy = y - box.top - m.top + source.scrollTop;
    if (dx < 0 || dy < 0) return null;
    const line = Math.floor(dy / m.line) + 1;
    const text = lines()[line - 1];
    const col = Math.floor(dx / m.char) + 1;
    if (text === undefined || col > Array.from(text).length) return null;
    return { line, col };
  }

  function pointOf(line, col) { // where (line, col) is drawn, relative to the playground
    const box = source.getBoundingClientRect();
    const outer = root.getBoundingClientRect();
    const m = metrics();
    return { x: box.left - outer.left + m.left + (col - 1) * m.char - source.scrollLeft,
      y: box.top - outer.top + m.top + line * m.line - source.scrollTop };
  }

  function caret() {
    const before = source.value.slice(0, source.selectionStart).split(/\r\n|\r|\n/);
    return { line: before.length, col: Array.from(before[before.length - 1]).length + 1 };
  }

  function ask(part, at) {
    const request = { type: "editor", part, id: ++editorId, source: source.value, line: at.line, col: at.col };
    asked[part] = { ...request, caret: source.selectionStart };
    worker.postMessage(request);
  }

  function closePopups() {
    tooltip.hidden = true;
    list.hidden = true;
    items = [];
  }

  function place(element, point) {
    element.style.left = `${Math.max(0, point.x)}px`;
    element.style.top = `${point.y + 2}px`;
  }

  function editorAnswer(message) {
    const request = asked[message.part];
    if (!request || request.id !== message.id || request.source !== source.value) return; // stale
    const doc = JSON.parse(message.json);
    if (message.part === "hover") {
      if (!doc.hover) return void (tooltip.hidden = true);
      tooltip.textContent = doc.hover.text;
      place(tooltip, pointOf(doc.hover.end_line, doc.hover.col));
      tooltip.hidden = false;
      state.hovers += 1;
    } else {
      if (request.caret !== source.selectionStart || !doc.items.length) return void (list.hidden = true);
      items = doc.items.map((item) => ({ ...item, from: source.selectionStart - (request.col - doc.col) }));
      chosen = 0;
      list.replaceChildren(...items.map((item, i) => {
        const entry = document.createElement("li");
        entry.setAttribute("role", "option");
        entry.textContent = item.label;
        if (item.detail) {
          const detail = document.createElement("span");
          detail.className = "pg-detail";
          detail.textContent = item.detail;
          entry.appendChild(detail);
        }
        entry.addEventListener("mousedown", (event) => { event.preventDefault(); accept(i); });
        return entry;
      }));
      choose(0);
      place(list, pointOf(request.line, doc.col));
      list.hidden = false;
      state.completions += 1;
    }
  }

  function choose(i) {
    chosen = (i + items.length) % items.length;
    list.querySelectorAll("li").forEach((entry, k) => entry.setAttribute("aria-selected", String(k === chosen)));
  }

  function accept(i) {
    const item = items[i];
    closePopups();
    source.setRangeText(item.insert, item.from, source.selectionStart, "end");
    source.focus();
    schedule();
  }

  let hoverTimer = null;
  source.addEventListener("mousemove", (event) => {
    clearTimeout(hoverTimer);
    const at = positionAt(event.clientX, event.clientY);
    if (!at) return void (tooltip.hidden = true);
    hoverTimer = setTimeout(() => ask("hover", at), 300);
  });
  source.addEventListener("mouseleave", () => { clearTimeout(hoverTimer); tooltip.hidden = true; });
  source.addEventListener("input", (event) => {
    tooltip.hidden = true;
    const typed = source.value.slice(Math.max(0, source.selectionStart - 1), source.selectionStart);
    if (event.inputType && event.inputType.startsWith("insert") && /[A-Za-z_.]/.test(typed)) {
      ask("complete", caret());
    } else {
      list.hidden = true;
    }
  });
  source.addEventListener("keydown", (event) => {
    if (event.key === " " && event.ctrlKey) {
      event.preventDefault();
      return ask("complete", caret());
    }
    if (list.hidden) return;
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      choose(chosen + (event.key === "ArrowDown" ? 1 : -1));
    } else if (event.key === "Enter" || event.key === "Tab") {
      event.preventDefault();
      accept(chosen);
    } else if (event.key === "Escape") {
      closePopups();
    }
  });
  source.addEventListener("blur", () => { list.hidden = true; });
  source.addEventListener("scroll", closePopups);

  worker.onerror = (event) => setState("failed", `The playground's worker failed: ${event.message}`);
  worker.postMessage({ type: "start", runtime });
})();
