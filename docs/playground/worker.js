// The playground's Web Worker: Pyodide and schedlang, off the page's main thread.
//
// Everything is loaded from the site's own runtime folder (tools/build_playground.py fills it):
// runtime/manifest.json names the Pyodide folder and the wheels, in load order. Pyodide's
// indexURL is that folder, and the wheels are loaded by URL, so nothing is fetched from a CDN.
//
// Messages in:  {type: "start", runtime}   then   {type: "run", id, source, other}
//               {type: "editor", part: "hover" | "complete", id, source, line, col}  (answered at once)
// Messages out: {type: "progress", stage: "pyodide" | "wheels" | "imports"}   (while starting)
//               {type: "ready", ms: {pyodide, wheels, imports, total}, versions} | {type: "missing", message} | {type: "failed", message}
//               {type: "result", part: "analyse" | "check" | "verify", id, json, ms}
//               {type: "editor", part, id, json}
//               {type: "crash", part, id, message}   (schedlang raised: a bug to report)
"use strict";

let playground = null;
let pending = null; // the newest run request not yet started: older ones are dropped
let busy = false;

async function start(runtime) {
  const t0 = performance.now();
  let manifest;
  try {
    const response = await fetch(runtime + "manifest.json", { cache: "no-cache" });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    manifest = await response.json();
  } catch (error) {
    postMessage({ type: "missing", message: String(error) });
    return;
  }
  try {
    postMessage({ type: "progress", stage: "pyodide" });
    const base = runtime + manifest.pyodide_dir + "/";
    importScripts(base + "pyodide.js");
    const pyodide = await loadPyodide({
      indexURL: base,
      env: { SCHEDLANG_NO_PROGRESS: "1", HOME: "/home/pyodide" },
      stdout: () => {},
      stderr: () => {},
    });
    const t1 = performance.now();
    postMessage({ type: "progress", stage: "wheels" });
    await pyodide.loadPackage(
      manifest.wheels.map((name) => new URL(runtime + "wheels/" + name, self.location.href).href),
      { messageCallback: () => {}, errorCallback: (m) => console.error(m) },
    );
    const t2 = performance.now();
    postMessage({ type: "progress", stage: "imports" });
    playground = pyodide.pyimport("schedlang.cli.playground");
    playground.run_json("1", "", "analyse"); // import what the first run needs (sympy, lark, the grammar)
    const t3 = performance.now();
    postMessage({ type: "ready", versions: manifest.versions,
                  ms: { pyodide: t1 - t0, wheels: t2 - t1, imports: t3 - t2, total: t3 - t0 } });
  } catch (error) {
    postMessage({ type: "failed", message: String(error && error.message ? error.message : error) });
    return;
  }
  drain();
}

function later() {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

async function drain() {
  if (busy || !playground) return;
  busy = true;
  while (pending) {
    const request = pending;
    pending = null;
    const other = request.other && request.other.trim() ? request.other : "";
    // The quick part first; then the slower ones, each skipped when a newer text came in meanwhile.
    const parts = other === "" ? ["analyse", "check"] : ["analyse", "check", "verify"];
    for (const part of parts) {
      if (part !== "analyse") {
        await later();
        if (pending) break;
      }
      const t0 = performance.now();
      try {
        const json = playground.run_json(request.source, other, part);
        postMessage({ type: "result", part, id: request.id, json, ms: performance.now() - t0 });
        // The first box does not compile: analyse has shown its error, which check and verify
        // would only repeat (verify's own errors are the second box's).
        if (part === "analyse" && !JSON.parse(json).ok) break;
      } catch (error) { // a bug, not the text's fault: say so, and keep serving the next text
        postMessage({ type: "crash", part, id: request.id,
                      message: String(error && error.message ? error.message : error) });
        break;
      }
    }
  }
  busy = false;
}

self.onmessage = (event) => {
  const message = event.data;
  if (message.type === "start") {
    start(message.runtime);
  } else if (message.type === "run") {
    pending = message;
    drain();
  } else if (message.type === "editor" && playground) {
    try {
      const json = playground.editor_json(message.part, message.source, message.line, message.col);
      postMessage({ type: "editor", part: message.part, id: message.id, json });
    } catch (error) {
      postMessage({ type: "crash", part: message.part, id: message.id,
                    message: String(error && error.message ? error.message : error) });
    }
  }
};
