"""mkdocs hooks (``mkdocs.yml``: ``hooks``): the playground page's examples menu.

``docs/playground/index.md`` has a ``<!-- playground-examples -->`` marker; the build
puts the gallery's recipes (``examples/*.sched``, the one place they are written) there
as a JSON ``<script>`` the page's menu reads, so the menu never goes stale.
"""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MARKER = "<!-- playground-examples -->"
PAGE = "playground/index.md"


def examples() -> dict[str, str]:
    paths = sorted((ROOT / "examples").glob("*.sched"))
    return {path.stem: path.read_text(encoding="utf-8") for path in paths}


def examples_script() -> str:
    # `<` escaped so no text of an example can close the script element.
    data = json.dumps(examples(), ensure_ascii=True, sort_keys=True).replace("<", "\\u003c")
    return f'<script type="application/json" id="pg-examples-data">{data}</script>'


def on_page_markdown(markdown: str, page, config, files) -> str:
    if page.file.src_uri == PAGE:
        if MARKER not in markdown:
            raise ValueError(f"docs/{PAGE} lost its {MARKER} marker")
        markdown = markdown.replace(MARKER, examples_script())
    return markdown
