"""TCP connect and UDP sendto to loopback ports only (HOSTILE_TCP_PORT, HOSTILE_UDP_PORT)."""
import json
import os
import signal
import socket
import sys

signal.alarm(30)
sys.stdin.readline()
out = {}
try:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(2)
    s.connect(("127.0.0.1", int(os.environ.get("HOSTILE_TCP_PORT", "9"))))
    s.sendall(b"pwned\n")
    s.close()
    out["tcp"] = "connected"
except OSError as e:
    out["tcp"] = f"denied:{e.errno}"
try:
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.sendto(b"pwned", ("127.0.0.1", int(os.environ.get("HOSTILE_UDP_PORT", "9"))))
    u.close()
    out["udp"] = "sent"
except OSError as e:
    out["udp"] = f"denied:{e.errno}"
print(json.dumps(out), flush=True)
for line in sys.stdin:
    print("ok", flush=True)
