"""Generated code as live objects: the plain-Python reference (``reference``: loading it, and the
overflow probe the check of a bound schedule runs on it), scheduler classes, the Composer
scheduler, and evaluating a schedule over many steps with torch or JAX.

Each module imports torch or JAX only inside the functions that need them, so importing
``schedlang`` (and running ``schedlang check``) loads neither.
May import: ``codegen``, ``core``, ``errors``, ``limits``.
"""
