"""Double fork + setsid; the grandchild ignores TERM/HUP and lives on (<= 30 s)."""
import os
import signal
import sys
import time

sys.stdin.readline()
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        os.closerange(0, 3)
        time.sleep(30)
    os._exit(0)
os.wait()
print("daemonized", flush=True)
for line in sys.stdin:
    print("ok", flush=True)
