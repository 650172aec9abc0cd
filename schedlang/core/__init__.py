"""What a schedule means, in sympy: segments and their algebra, the math table, special
functions and exact evaluation of a formula at a step.

Every later stage builds on these; nothing here knows the syntax, the standard library or
any target.  May import: ``errors``, ``limits``.
"""
