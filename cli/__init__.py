"""The ``tablanette`` command line: one app (:mod:`cli.app`), one module per command group.

:func:`main` starts the app, except for a bulk capture check
(``tablanette rules captures --batch FILE`` with only the rule options), which
:mod:`cli.capture_batch` answers without loading the app's framework: its
start-up is most of the cost of a short batch. Anything else it is given, or
anything it cannot parse, goes to the app, which gives the usual help and errors.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    from .capture_batch import batch_command

    batch = batch_command(args)
    if batch is not None:
        batch()
        return
    from .app import app

    app(args, prog_name="tablanette")
