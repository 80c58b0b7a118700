"""`python -m hermes_chat` is the same as the `hermes-chat` command."""

import sys

from hermes_chat.cli import main

sys.exit(main())
