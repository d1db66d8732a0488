"""``python -m fp8lab``."""

import sys

from fp8lab.cli.main import main

sys.exit(main())
