"""Runtime backends: torch evaluation, scheduler classes, standalone module emission and a
native Composer scheduler.

Each module imports torch only inside the functions that need it, so importing
``schedlang`` (and running ``schedlang check``) never loads torch.
"""
