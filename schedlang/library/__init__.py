"""Every name a program may call: the standard library (``stdlib``) and other libraries'
schedulers (``presets/<library>``), each a checked signature and a tiny function to a
``Segment``.  May import: ``core``, ``errors``, ``limits``.
"""
