"""``python -m spanscope.plots KIND FILE... -o OUT``."""

import sys

from spanscope.plots._cli import main

sys.exit(main())
