"""dtrcheck.Error: what the C++ library raises (a bad trace, bad options).

Its message is the one line the CLI prints after "dtrcheck: ", e.g.
"model.log:812: CALL result x91 has no MEMORY line".
"""


class Error(Exception):
    """An error of the dtrcheck library, with the CLI's one-line message."""
