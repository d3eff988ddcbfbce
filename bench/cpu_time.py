"""Runs a command and writes "USER_S SYS_S MAXRSS_KB STATUS" (microsecond
resolution, from the kernel's rusage of the child) to the file given first;
the command's standard output and error pass through. For bench/speed.sh:
/usr/bin/time prints CPU seconds with two decimals, too coarse for runs of
a few milliseconds. The child is started with posix_spawn (vfork, then
exec): a fork() would copy this interpreter's page tables and charge the
child about 3 ms that are not the command's. The price: Linux charges the
parent's peak RSS to a vfork'd child at exec, so MAXRSS_KB is at least this
interpreter's (about 9 MB); it matters only for the small cases.

  /usr/bin/python3 bench/cpu_time.py OUT_FILE COMMAND [ARGS...]
"""
import os
import sys


def main():
    out, argv = sys.argv[1], sys.argv[2:]
    try:
        pid = os.posix_spawnp(argv[0], argv, os.environ)
    except OSError as e:
        print(f"cpu_time.py: cannot run {argv[0]}: {e.strerror}", file=sys.stderr)
        with open(out, "w") as f:
            f.write("0 0 0 127\n")
        sys.exit(127)
    _, status, usage = os.wait4(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    with open(out, "w") as f:
        f.write(f"{usage.ru_utime:.6f} {usage.ru_stime:.6f} {usage.ru_maxrss} {code}\n")
    sys.exit(code if code >= 0 else 128 - code)


if __name__ == "__main__":
    main()
