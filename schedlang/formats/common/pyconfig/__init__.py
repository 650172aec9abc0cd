"""A Python config followed over ``ast``, never run: the one reader of every format whose file
is Python (mmengine configs, DeepSpeed dicts, Keras, optax and Hugging Face training scripts).

``literal`` is the reader (``Module``) and what the formats read off it; ``evaluator`` its
expressions, ``calls`` the builtins, methods and ``argparse`` calls it follows, ``values`` the
values it builds, ``syntax`` what the syntax says before anything is followed, ``trace`` a
``LearningRateSchedule`` subclass's ``__call__`` traced with a symbolic step.  Nothing is
re-exported here: a format imports the module it reads (the guesser loads ``syntax`` alone).
"""
