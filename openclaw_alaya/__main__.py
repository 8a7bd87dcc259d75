import sys

from .cli.client import main  # the serve fast path, then cli.main

sys.exit(main())
