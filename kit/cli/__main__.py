"""``python -m kit.cli``: the same as the ``kit`` command."""

from kit.cli import main

main()
