"""Runs a command and writes "USER_S SYS_S MAXRSS_KB STATUS" (microsecond
resolution, from the kernel's rusage of the child) to the file given first;
the command's standard output and error pass through. For bench/speed.sh:
/usr/bin/time prints CPU seconds with two decimals, too coarse for runs of
a few milliseconds.

  /usr/bin/python3 bench/cpu_time.py OUT_FILE COMMAND [ARGS...]
"""
import os
import sys


def main():
    out, argv = sys.argv[1], sys.argv[2:]
    pid = os.fork()
    if pid == 0:
        try:
            os.execvp(argv[0], argv)
        finally:
            os._exit(127)
    _, status, usage = os.wait4(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    with open(out, "w") as f:
        f.write(f"{usage.ru_utime:.6f} {usage.ru_stime:.6f} {usage.ru_maxrss} {code}\n")
    sys.exit(code if code >= 0 else 128 - code)


if __name__ == "__main__":
    main()
