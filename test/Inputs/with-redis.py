#!/usr/bin/env python3
"""with-redis.py DIR CMD [ARGS...]

Runs CMD with a private redis-server listening on the Unix socket
DIR/redis.sock (no TCP port, nothing saved to disk), and a fleet key in
DIR/key (32 random bytes as hex, mode 0600) when there is none yet. The
server is stopped when CMD ends, whatever happens; the exit status is CMD's.
The lit tests of the store's remote tier use it.
"""
import os
import shutil
import socket
import subprocess
import sys
import time


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    folder = os.path.abspath(sys.argv[1])
    os.makedirs(folder, exist_ok=True)
    server = shutil.which("redis-server")
    if not server:
        sys.exit("with-redis.py: redis-server is not installed (the README's "
                 "test command installs it: apt-get install redis-server)")
    key = os.path.join(folder, "key")
    if not os.path.exists(key):
        fd = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.write(fd, os.urandom(32).hex().encode() + b"\n")
        os.close(fd)
    sock = os.path.join(folder, "redis.sock")
    if os.path.exists(sock):
        os.unlink(sock)
    proc = subprocess.Popen(
        [server, "--port", "0", "--unixsocket", sock, "--unixsocketperm", "700",
         "--save", "", "--appendonly", "no", "--dir", folder,
         "--logfile", os.path.join(folder, "redis.log")],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                with socket.socket(socket.AF_UNIX) as s:
                    s.connect(sock)
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                sys.exit("with-redis.py: redis-server did not start; see " +
                         os.path.join(folder, "redis.log"))
            time.sleep(0.02)
        return subprocess.call(sys.argv[2:])
    finally:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


if __name__ == "__main__":
    sys.exit(main())
