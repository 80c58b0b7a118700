"""A supervised Bridge ends with its supervisor: `serve` killed with SIGKILL must not leave an
agent running that nobody watches (Linux's parent-death signal; elsewhere the next `serve`
finds the Bridge left behind and replaces it, see hermes_chat/bridge_leftover.py)."""

from __future__ import annotations

import ctypes
import logging
import os
import signal
import sys

log = logging.getLogger(__name__)
PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def end_with_parent(parent_pid: int) -> bool:
    """Have the kernel send this process SIGTERM (a clean stop) when its parent dies; False if
    the parent is already gone (it died before this could be set: stop now)."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0) != 0:
            log.warning("bridge: could not ask to end with process %s (errno %s)", parent_pid,
                        ctypes.get_errno())
    # Checked after the request, so a parent that died just before it is not missed.
    return os.getppid() == parent_pid
