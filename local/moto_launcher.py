"""Starts moto server on 127.0.0.1, prints the bound port, exits when its parent process dies.

Binding port 0 lets the OS pick a free port with no race; watching the parent means a test run that is
killed (even with SIGKILL) never leaves an emulator behind.
"""
import json
import os
import signal
import sys
import time

from moto.moto_server.threaded_moto_server import ThreadedMotoServer


def main() -> None:
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    parent = os.getppid()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    host, bound = server.get_host_and_port()
    print(json.dumps({"host": host, "port": bound, "pid": os.getpid()}), flush=True)

    stopping = False

    def stop(*_args: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    while not stopping and os.getppid() == parent:
        time.sleep(0.5)
    server.stop()


if __name__ == "__main__":
    main()
