"""``python -m larev_hf.cli ...``: the same as the ``larev-hf`` console script."""

import sys

from larev_hf.cli.app import main

sys.exit(main())
