"""Runtime backends: torch evaluation, scheduler classes and standalone module emission.

Each module imports torch only inside the functions that need it, so importing
``schedlang`` (and running ``schedlang check``) never loads torch.
"""
