import sys

from .client import main  # the serve fast path, then cli.main

sys.exit(main())
