"""``python -m memory_core.cli``: the ``memcore`` command."""

import sys

from . import main

sys.exit(main())
