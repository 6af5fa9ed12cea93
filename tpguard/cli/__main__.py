"""``python -m tpguard.cli`` runs the ``tpguard`` command."""

from tpguard.cli import main

main()
