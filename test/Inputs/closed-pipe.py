#!/usr/bin/env python3
"""Runs a command whose standard output is a pipe nobody reads any more.

Usage: closed-pipe.py COMMAND [ARG...]

The read end of the pipe is closed before the command starts, so its first
write to standard output fails with EPIPE (or raises SIGPIPE) for certain,
with no race against a reader such as `head`. Prints the command's exit
status as `rc=N` (a negative N: killed by signal -N); the command's
standard error goes through unchanged.
"""
import os
import subprocess
import sys

read_end, write_end = os.pipe()
os.close(read_end)
# Python ignores SIGPIPE itself; the command gets the default action back,
# as it would from a shell.
proc = subprocess.run(sys.argv[1:], stdout=write_end, restore_signals=True)
os.close(write_end)
print(f"rc={proc.returncode}")
