# A JSON-protocol bot that turns hostile on its first decision. The test writes
# BEHAVIOUR, HONEST, VICTIM, PORT and SECRET above this line (only this file is visible
# in the sandbox, so everything it needs must be in it).
import ctypes
import os
import random
import signal
import socket
import stat
import sys
import threading
import time

from botkit import run

ESCAPED = 42  # exit code meaning "the sandbox let me do something it must not"
state = {"n": 0}


def forever_child(seconds=30):
    if os.fork() == 0:
        signal.alarm(seconds)
        while True:
            time.sleep(1)


def other_pids():
    """This match's honest seats (named HONEST) and the referee (VICTIM), where visible."""
    me, out = os.getpid(), []
    for p in os.listdir("/proc"):
        if not p.isdigit() or int(p) == me:
            continue
        try:
            with open(f"/proc/{p}/cmdline", "rb") as f:
                cmd = f.read()
        except OSError:
            continue
        if HONEST.encode() in cmd or int(p) == VICTIM:
            out.append(int(p))
    return out


def foreign_fds(own):
    """(pid, fd, stat) of every pipe of another process that is not one of our own."""
    out = []
    for pid in other_pids():
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                st = os.stat(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if stat.S_ISFIFO(st.st_mode) and (st.st_dev, st.st_ino) not in own:
                out.append((pid, fd, st))
    return out


def hostile():
    b = BEHAVIOUR
    if b == "fork_bomb":
        for _ in range(49):
            if os.fork() == 0:
                signal.alarm(30)
                time.sleep(30)
                os._exit(0)
    elif b == "thread_bomb":
        for _ in range(400):
            threading.Thread(target=time.sleep, args=(30,), daemon=True).start()
    elif b == "memory":
        blocks = []
        for _ in range(2048):
            blocks.append(bytearray(1 << 20))  # touched: 2 GiB in all
    elif b == "cpu_main":
        while True:
            pass
    elif b == "cpu_child":
        if os.fork() == 0:
            signal.alarm(30)
            while True:
                pass
    elif b == "cpu_thread":
        threading.Thread(target=lambda: [None for _ in iter(int, 1)], daemon=True).start()
    elif b == "sleeper":
        time.sleep(30)
    elif b == "sigstop":
        os.kill(os.getpid(), signal.SIGSTOP)
    elif b == "stdout_flood":
        chunk = b"x" * (1 << 20)
        for _ in range(1024):
            sys.stdout.buffer.write(chunk)
    elif b == "long_line":
        sys.stdout.buffer.write(b"7" * (100 << 20) + b"\n")
        sys.stdout.flush()
    elif b == "stderr_flood":
        chunk = "e" * (1 << 20)
        for _ in range(64):
            sys.stderr.write(chunk)
    elif b == "garbage":
        sys.stdout.write("this is not json\n")
        sys.stdout.flush()
    elif b == "half_line":
        sys.stdout.write('{"type": "act')
        sys.stdout.flush()
        time.sleep(30)
    elif b == "never_reads":
        while True:  # answer "0" forever without reading another request
            sys.stdout.write("0\n")
            sys.stdout.flush()
            time.sleep(0.001)
    elif b == "exit_midway":
        print("bye bye", file=sys.stderr, flush=True)
        os._exit(3)
    elif b == "read_files":
        for path in SECRET.split(","):
            try:
                with open(path) as f:
                    f.read()
                os._exit(ESCAPED)
            except OSError:
                pass
    elif b == "write_outside":
        try:  # its own file is the host's file, mounted read-only
            with open(sys.argv[0], "a") as f:
                f.write("# pwned")
            os._exit(ESCAPED)
        except OSError:
            pass
        for path in SECRET.split(","):  # the test checks the host for these
            try:
                with open(path, "w") as f:
                    f.write("pwned")
            except OSError:
                pass
    elif b == "network":
        try:
            socket.create_connection(("127.0.0.1", PORT), timeout=1).close()
            os._exit(ESCAPED)
        except OSError:
            pass
        try:
            u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            u.sendto(b"leak", ("127.0.0.1", PORT))
        except OSError:
            pass
    elif b == "daemon":
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
                signal.signal(signal.SIGHUP, signal.SIG_IGN)
                signal.alarm(30)
                while True:
                    time.sleep(0.5)
            os._exit(0)
    elif b == "attack_referee":
        libc = ctypes.CDLL(None, use_errno=True)
        libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
        if libc.ptrace(16, VICTIM, None, None) == 0:  # PTRACE_ATTACH
            os._exit(ESCAPED)
        try:
            os.kill(VICTIM, signal.SIGKILL)
            os._exit(ESCAPED)
        except OSError:
            pass
    elif b == "inject_fd":
        # write a move into any other process's pipe it can open through /proc/<pid>/fd
        own = {(os.fstat(fd).st_dev, os.fstat(fd).st_ino) for fd in (0, 1, 2)}
        for pid, fd, st in foreign_fds(own):
            try:
                w = os.open(f"/proc/{pid}/fd/{fd}", os.O_WRONLY | os.O_NONBLOCK)
            except OSError:
                continue
            try:
                os.write(w, b"0\n")
            except OSError:
                pass
            os._exit(ESCAPED)
    elif b == "peek":
        # read another seat's observation: its stdin pipe, its memory, its scratch folder
        own = {(os.fstat(fd).st_dev, os.fstat(fd).st_ino) for fd in (0, 1, 2)}
        for pid, fd, st in foreign_fds(own):
            try:
                os.close(os.open(f"/proc/{pid}/fd/{fd}", os.O_RDONLY | os.O_NONBLOCK))
                os._exit(ESCAPED)
            except OSError:
                pass
        for pid in other_pids():
            try:
                with open(f"/proc/{pid}/mem", "rb"):
                    os._exit(ESCAPED)
            except OSError:
                pass
        here = os.path.realpath(os.getcwd())
        for d in [os.path.dirname(here), "/tmp"]:
            try:
                names = os.listdir(d)
            except OSError:
                continue
            for n in names:
                full = os.path.join(d, n)
                if n.startswith("arena-scratch-") and os.path.realpath(full) != here:
                    try:
                        os.listdir(full)
                        os._exit(ESCAPED)
                    except OSError:
                        pass
    elif b == "environ":
        # the arena's environment (SECRET is a token the test put there)
        for pid in [os.getppid(), VICTIM, *other_pids()]:
            try:
                with open(f"/proc/{pid}/environ", "rb") as f:
                    if SECRET.encode() in f.read():
                        os._exit(ESCAPED)
            except OSError:
                pass
        if SECRET in str(os.environ):
            os._exit(ESCAPED)
    elif b == "host_state":
        # each call is harmless if it succeeds (same hostname, same time, own priority)
        libc = ctypes.CDLL(None, use_errno=True)
        name = os.uname().nodename.encode()
        if libc.sethostname(name, len(name)) == 0 or libc.sethostname(b"pwned", 5) == 0:
            os._exit(ESCAPED)
        try:
            time.clock_settime(time.CLOCK_REALTIME, time.clock_gettime(time.CLOCK_REALTIME))
            os._exit(ESCAPED)
        except OSError:
            pass
        try:
            os.setpriority(os.PRIO_PROCESS, 0, -5)
            os._exit(ESCAPED)
        except OSError:
            pass
        try:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
            os._exit(ESCAPED)
        except OSError:
            pass
        try:
            os.close(os.open("/dev/kmsg", os.O_WRONLY))
            os._exit(ESCAPED)
        except OSError:
            pass
        try:   # set the console log level to what it already is
            with open("/proc/sys/kernel/printk") as f:
                level = int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            level = 4
        if libc.klogctl(8, None, level) == 0:   # SYSLOG_ACTION_CONSOLE_LEVEL
            os._exit(ESCAPED)
    elif b == "well_behaved":
        keep = bytearray(int(MEMORY_MB * 0.6) << 20)  # touched below
        for i in range(0, len(keep), 4096):
            keep[i] = 1
        state["keep"] = keep
        for _ in range(3):
            forever_child(5)
        sys.stderr.write("w" * 100_000)
        time.sleep(MOVE_S * 0.5)


def choose(observation, match):
    state["n"] += 1
    if state["n"] == 1:
        hostile()
    if BEHAVIOUR in ("cpu_child", "cpu_thread"):
        time.sleep(0.05)  # keep the match going while the child or thread burns CPU
    return random.choice(observation["legal_actions"])["id"]


run(choose, name="hostile-" + BEHAVIOUR)
