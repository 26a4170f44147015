#!/usr/bin/env python3
"""Merges the --trace files of a data-parallel run's ranks into one Chrome
trace (Perfetto, chrome://tracing) with one process per rank.

    scripts/merge_traces.py -o merged.json trace.json trace.rank1.json ...

Each rank's executable writes its own file (rank 0 the --trace path, rank
r FILE.rankR.json), with its events under process r + 1 and the gradient
all-reduces of its communication thread on a track of their own. Times are
aligned on the steady clock each file records (otherData.steady_start_us),
which the ranks of one machine share.
"""
import argparse
import json
import os
import sys
import tempfile


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("traces", nargs="+")
    parser.add_argument("-o", "--output", required=True)
    args = parser.parse_args(argv)
    loaded = []
    for path in args.traces:
        try:
            with open(path) as f:
                data = json.load(f)
            start = float(data["otherData"]["steady_start_us"])
        except (OSError, ValueError, KeyError, TypeError) as e:
            print(f"{path}: error: not a tidal trace with otherData.steady_start_us ({e})", file=sys.stderr)
            return 1
        loaded.append((path, data, start))
    base = min(start for _, _, start in loaded)
    events = []
    for _, data, start in loaded:
        shift = start - base
        for event in data["traceEvents"]:
            if "ts" in event:
                event = dict(event, ts=round(event["ts"] + shift, 3))
            events.append(event)
    merged = {"traceEvents": events, "displayTimeUnit": "ms", "otherData": {"steady_start_us": base}}
    directory = os.path.dirname(os.path.abspath(args.output))
    fd, temp = tempfile.mkstemp(dir=directory, prefix=".merge-", suffix=".json")
    with os.fdopen(fd, "w") as f:
        json.dump(merged, f)
    os.replace(temp, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
