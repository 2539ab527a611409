"""Shared by the seed scenarios (run.sh in each directory): reads the JSON
results a scenario wrote to its temporary directory and records each check,
printing "ok" or "FAIL" with what was found, so every scenario reports the
same way and exits non-zero when any figure does not hold."""
import json
import sys


class Checks:
    def __init__(self, name, results_dir):
        self.name, self.dir, self.fails = name, results_dir, []

    def load(self, file):
        with open(f"{self.dir}/{file}") as f:
            return json.load(f)

    def check(self, what, ok, got):
        print(("ok   " if ok else "FAIL ") + what + f" (got {got})")
        if not ok:
            self.fails.append(what)

    def done(self):
        print(f"{self.name}: {len(self.fails)} failed")
        sys.exit(1 if self.fails else 0)
