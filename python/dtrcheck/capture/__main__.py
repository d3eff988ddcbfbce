"""python3 -m dtrcheck.capture SCRIPT.py -o OUT.log [--time flops|measured] [--seed N]
[--checkpoint PATH,PATH|@PLAN.json]"""

import argparse
import sys

from . import CLOCKS, CaptureError, capture_script


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        prog="python3 -m dtrcheck.capture",
        description="Capture one training step of SCRIPT as a DTR trace: SCRIPT's step() if it "
                    "defines model and step(), else SCRIPT run as it is, from the first forward of "
                    "its model to the end of the first optimizer step; see docs/python.md.")
    p.add_argument("script", help="the Python script to capture")
    p.add_argument("-o", "--output", required=True, help="trace file to write (JSON lines)")
    p.add_argument("--time", choices=CLOCKS, default="flops",
                   help="TIME of each operator: flops, a deterministic estimate from shapes "
                        "(default), or measured, wall-clock nanoseconds")
    p.add_argument("--seed", type=int, default=0, help="torch.manual_seed before the script runs (default 0)")
    p.add_argument("--checkpoint", metavar="PATHS",
                   help="run these submodules of the model under torch.utils.checkpoint during the "
                        "capture: module paths separated by commas (layer1.0,layer2), or @FILE, a "
                        "JSON list of module paths")
    a = p.parse_args(argv)
    try:
        cap = capture_script(a.script, a.output, time=a.time, seed=a.seed, checkpoint=a.checkpoint)
    except CaptureError as e:
        print(f"dtrcheck.capture: {e}", file=sys.stderr)
        return 1
    s = cap.summary()
    print(f"wrote {a.output}: {s['lines']} lines, {s['operators']} operators "
          f"({s['skipped']} without tensor results skipped), {s['constants']} constants, "
          f"peak of live storages {s['peak_bytes']} bytes, TIME from {s['clock']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
