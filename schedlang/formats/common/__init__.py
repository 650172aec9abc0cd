"""What every format shares and no format owns: the declaration a format module makes
(``format``), the path every reader takes (``format.reader``), the read-back-and-prove step
of every writer (``proof``), the keys a recognizer looks at (``keys``) and the writers whose
schedule is one preset call (``preset_call``)."""
