#!/usr/bin/env python3
"""Run a command and record its cost: timed.py OUT.json -- CMD ARGS...

Writes {"cmd", "wall_s", "cpu_s", "user_s", "sys_s", "maxrss_mib", "rc",
"load1_before"} (the 1-minute load average at the start shows how busy the
shared machine was).
CPU time is RUSAGE_CHILDREN: every descendant that was waited for, so the
worker processes of rvspecfit's process pool are included (the pool joins
them before the command exits).  maxrss is the largest single process, not
the sum over workers.  Exits with the command's status.
"""
import json
import os
import resource
import subprocess
import sys
import time


def main():
    out = sys.argv[1]
    if sys.argv[2] != "--":
        sys.exit("usage: timed.py OUT.json -- CMD ARGS...")
    cmd = sys.argv[3:]
    load = os.getloadavg()[0]
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    rc = subprocess.call(cmd)
    wall = time.monotonic() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    user = r1.ru_utime - r0.ru_utime
    syst = r1.ru_stime - r0.ru_stime
    rec = {"cmd": cmd, "wall_s": wall, "cpu_s": user + syst, "user_s": user,
           "sys_s": syst, "maxrss_mib": r1.ru_maxrss / 1024.0, "rc": rc,
           "load1_before": load}
    with open(out, "w") as f:
        json.dump(rec, f, indent=1)
    print(f"timed: {wall:.1f} s wall, {user + syst:.1f} CPU-s, "
          f"rc {rc}: {' '.join(cmd[:2])}", file=sys.stderr)
    sys.exit(rc)


if __name__ == "__main__":
    main()
