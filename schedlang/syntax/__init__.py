"""Text and tree: the grammar's parser, the syntax tree (``ir``) and ``fmt``'s layout engine.

Nothing here knows what a schedule means; a ``.sched`` text becomes an ``ir.Module`` whose
nodes carry spans, and ``fmt`` lays a parse tree out again.  May import: ``errors``, ``limits``.
"""
