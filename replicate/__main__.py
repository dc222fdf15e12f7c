"""``python -m replicate`` is the ``replicate`` command line."""
import sys

from .cli import main

sys.exit(main())
