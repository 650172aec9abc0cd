// The playground page: the editor boxes, the examples menu and the output panes.
//
// All the work happens in worker.js (Pyodide); this file only sends the boxes' text (debounced)
// and shows what comes back. User text only ever reaches the page as textContent; the plot is
// SVG written by schedlang/cli/plot_svg.py (every text in it escaped), parsed as XML.
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
  });

  function setState(name, text) {
    state.state = name;
    root.dataset.state = name;
    status.textContent = text;
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
    worker.postMessage({ type: "run", id: latestId, source: source.value, other: other.value });
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
    if (!other.value.trim()) $("pg-verify").hidden = true;
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
    if (message.type === "ready") {
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
      if (message.id !== latestId) return;
      $("pg-diagnostics").appendChild(pre(`schedlang failed on this text (${message.part}), a bug: ` +
        message.message, "pg-error pg-crash"));
    } else if (message.type === "result") {
      if (message.id !== latestId) return; // an older text's result: a newer one is coming
      const doc = JSON.parse(message.json);
      state.done[message.part] = message.id;
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
  worker.onerror = (event) => setState("failed", `The playground's worker failed: ${event.message}`);
  worker.postMessage({ type: "start", runtime });
})();
