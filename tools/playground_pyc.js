// Precompile wheels for the playground's Pyodide: each .py in them gets its bytecode beside it
// (__pycache__/NAME.cpython-3XX.pyc, unchecked-hash, so it is used as is), written by Pyodide's
// own CPython (bytecode is specific to its version), and `tests` folders are left out.
// A browser then imports sympy from bytecode instead of compiling ~900 modules on every cold
// start (about 10 s of the first result's wait on a 2-core machine).
//
//   node tools/playground_pyc.js PYODIDE_DIR OUT_DIR WHEEL...     (run by tools/build_playground.py)
"use strict";

const fs = require("fs");
const path = require("path");

const PYTHON = `
import importlib._bootstrap_external as external
import importlib.util
import posixpath
import sys
import zipfile

SITE = "/lib/python%d.%d/site-packages" % sys.version_info[:2]


def entry(name):
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))  # the same bytes for the same input
    info.compress_type = zipfile.ZIP_DEFLATED
    return info


def skipped(name):
    return "/tests/" in "/" + name


def precompile(source_path, out_path):
    with zipfile.ZipFile(source_path) as wheel, zipfile.ZipFile(out_path, "w") as out:
        for info in sorted(wheel.infolist(), key=lambda i: i.filename):
            name = info.filename
            if skipped(name) or name.endswith("/"):
                continue
            data = wheel.read(name)
            out.writestr(entry(name), data)
            if name.endswith(".py") and ".dist-info/" not in name:
                try:
                    code = compile(data, posixpath.join(SITE, name), "exec", dont_inherit=True)
                except SyntaxError:  # left to fail where it is imported, as it would without this
                    continue
                pyc = external._code_to_hash_pyc(code, importlib.util.source_hash(data), checked=False)
                folder, base = posixpath.split(name)
                cached = base[:-3] + "." + sys.implementation.cache_tag + ".pyc"
                target = posixpath.join(folder, "__pycache__", cached)
                out.writestr(entry(target), bytes(pyc))
`;

async function main() {
  const [pyodideDir, outDir, ...wheels] = process.argv.slice(2);
  const { loadPyodide } = require(path.resolve(pyodideDir, "pyodide.js"));
  const pyodide = await loadPyodide({ indexURL: path.resolve(pyodideDir) + "/" });
  pyodide.runPython(PYTHON);
  const precompile = pyodide.globals.get("precompile");
  for (const wheel of wheels) {
    const name = path.basename(wheel);
    pyodide.FS.writeFile("/tmp/in.whl", fs.readFileSync(wheel));
    precompile("/tmp/in.whl", "/tmp/out.whl");
    fs.writeFileSync(path.join(outDir, name), pyodide.FS.readFile("/tmp/out.whl"));
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
