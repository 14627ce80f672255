"""An `audiomind` command collects garbage less often and exits without a last collection over every imported
object (audiomind.config.command_gc, called by the CLI's entry callback): its thresholds are set and the heap is
frozen by the last exit handler, once."""

from __future__ import annotations

import os
import subprocess
import sys

CHECK = """
import atexit, gc
atexit.register(lambda: print("frozen at exit:", gc.get_freeze_count() > 0))  # runs after the CLI's handler
from audiomind import config
before = atexit._ncallbacks()
config.command_gc()
config.command_gc()
print("registered:", atexit._ncallbacks() - before, "frozen now:", gc.get_freeze_count() > 0,
      "thresholds:", gc.get_threshold() == config.COMMAND_GC_THRESHOLD)
"""


def test_thresholds_set_and_the_heap_frozen_by_the_last_exit_handler_once():
    out = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, check=True, timeout=60,
                         env=dict(os.environ))
    assert out.stdout.splitlines() == ["registered: 1 frozen now: False thresholds: True",
                                     "frozen at exit: True"]


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
