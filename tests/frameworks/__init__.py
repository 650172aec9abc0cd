
# The case modules here subclass anchors.preset_cases.Case, and that table imports them
# back: load it first so either entry point sees a finished Case.
import anchors.preset_cases  # noqa: E402, F401
