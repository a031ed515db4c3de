"""``python -m lineup_jupyter`` is the ``lineup`` command."""

import sys

from ._cli import main

sys.exit(main())
