"""A one-shot `audiomind` process exits without a last collection over every imported object
(audiomind.config.freeze_heap_at_exit, called by the CLI's entry callback): the heap is frozen by the last exit
handler, once, and nothing before exit changes."""

from __future__ import annotations

import os
import subprocess
import sys

CHECK = """
import atexit, gc
atexit.register(lambda: print("frozen at exit:", gc.get_freeze_count() > 0))  # runs after the CLI's handler
from audiomind import config
before = atexit._ncallbacks()
config.freeze_heap_at_exit()
config.freeze_heap_at_exit()
print("registered:", atexit._ncallbacks() - before, "frozen now:", gc.get_freeze_count() > 0)
"""


def test_the_heap_is_frozen_by_the_last_exit_handler_once():
    out = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, check=True, timeout=60,
                         env=dict(os.environ))
    assert out.stdout.splitlines() == ["registered: 1 frozen now: False", "frozen at exit: True"]


def test_the_cli_entry_registers_it():
    code = ("import atexit, gc\n"
            "atexit.register(lambda: print('frozen at exit:', gc.get_freeze_count() > 0))\n"
            "import sys; sys.argv = ['audiomind', '--version']\n"
            "from audiomind.cli import app\n"
            "try:\n    app()\nexcept SystemExit:\n    pass\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60,
                         env=dict(os.environ))
    assert out.stdout.splitlines()[-1] == "frozen at exit: False"  # --version exits before the callback runs
    code = code.replace("'--version'", "'tools', 'list', '--json'")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60,
                         env=dict(os.environ))
    assert out.stdout.splitlines()[-1] == "frozen at exit: True"
