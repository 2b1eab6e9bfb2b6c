"""The one exception root of the package.

Every error meant for a person derives from FinesseError and carries a one-line message
that says what to do. Edges (hooks, CLI) turn these into hook JSON or exit codes.
"""


class FinesseError(Exception):
    """Something the user can fix; str(err) is one line saying how."""


class UsageError(FinesseError):
    """Bad arguments to a command: the message says what to type instead."""


class StateError(FinesseError):
    """A state file could not be read or written."""
