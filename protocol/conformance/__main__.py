import sys

from protocol.conformance.runner import main

sys.exit(main())
