"""The editor's view of a ``.sched`` text: one feature core for the language server and the playground.

Text in, plain data out: ``Document`` holds one version of a buffer (parsed and compiled at
most once); ``diagnostics``, ``hover``, ``completion``, ``symbols``, ``hints`` and ``actions``
answer an editor's questions about it in the compiler's units (1-based lines, code-point
columns, ``errors.Span``); ``positions`` is the one place those become an editor's units.
``server`` wires these to the Language Server Protocol (pygls, imported by ``schedlang lsp``
only); nothing else here imports pygls, so the playground and the tests call the core as is.
"""
