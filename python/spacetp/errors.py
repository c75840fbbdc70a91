"""The exceptions spacetp raises for mistakes a user can fix, one base class to catch:

    SpacetpError
    ├── ScenarioError   a scenario, or how it was asked for (also a ValueError)
    │   ├── UnknownPaper, SweepFailed, ExecutorFailed
    ├── UserError       a command-line mistake (a flag, a combination of flags)
    └── EmulateError    the machine cannot do it (not root, no TUN, a device in use)

Each message names the field, flag or file and what is allowed; the CLI prints it as one
line and exits with status 2. A ScenarioError from the core also carries the field's path as
`path` (the core raises `_core.FieldError`, a ValueError with `path`); what the operating
system refused to the emulator or the gateway comes as `_core.SystemRefused` (an OSError),
which the commands report as an EmulateError."""

from __future__ import annotations


class SpacetpError(Exception):
    """Base of every error spacetp raises for a mistake a user can fix."""


class UserError(SpacetpError):
    """A mistake on the command line: printed as one line, exit code 2."""


class ScenarioError(SpacetpError, ValueError):
    """A mistake in a scenario or in how it was asked for; the message names the field, and
    `path` holds it (e.g. `flows[0].tcp.min_rto`) when the core reported one."""

    def __init__(self, message: str, path: str | None = None):
        super().__init__(message)
        self.path = path

    @classmethod
    def from_core(cls, e: ValueError) -> ScenarioError:
        """The core's `FieldError` (or any ValueError) as a ScenarioError, its path kept."""
        return cls(str(e), getattr(e, "path", None) or None)
