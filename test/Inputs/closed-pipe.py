#!/usr/bin/env python3
"""Runs a command whose standard output (or error) is a pipe nobody reads.

Usage: closed-pipe.py [--stderr] COMMAND [ARG...]

The read end of the pipe is closed before the command starts, so its first
write to that stream fails with EPIPE (or raises SIGPIPE) for certain, with
no race against a reader such as `head`. Prints the command's exit status
as `rc=N` (a negative N: killed by signal -N). With --stderr the command's
standard error is the closed pipe and its standard output is dropped;
otherwise its standard error goes through unchanged.
"""
import os
import subprocess
import sys

args = sys.argv[1:]
to_stderr = bool(args) and args[0] == "--stderr"
if to_stderr:
    args = args[1:]
read_end, write_end = os.pipe()
os.close(read_end)
# Python ignores SIGPIPE itself; the command gets the default action back,
# as it would from a shell.
if to_stderr:
    proc = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=write_end,
                          restore_signals=True)
else:
    proc = subprocess.run(args, stdout=write_end, restore_signals=True)
os.close(write_end)
print(f"rc={proc.returncode}")
