"""Writes every YAML scenario under a directory as one JSON list, for the Catch2 runner
(tests/cpp/test_scenarios.cc), which reads JSON but not YAML. The build runs it whenever a
scenario changes (CMakeLists.txt), so both suites read the YAML through PyYAML.

Usage: python export_json.py SCENARIO_DIR OUT.json

Each entry is the scenario as loaded, plus "path" (relative to SCENARIO_DIR) and with "conf"
parsed from its volcano-scheduler.conf text as volcanic.scheduler.load_conf parses it (null
for Volcano's default configuration). A scenario that JSON cannot hold is an error naming it.
"""

from __future__ import annotations

import json
import pathlib
import sys

import yaml


def export(root: pathlib.Path) -> str:
    scenarios = []
    for path in sorted(root.rglob("*.yaml")):
        sc = yaml.safe_load(path.read_text())
        conf = sc.get("conf")
        if isinstance(conf, str):
            conf = yaml.safe_load(conf)
        try:
            scenarios.append(json.loads(json.dumps({**sc, "conf": conf, "path": str(path.relative_to(root))},
                                                   allow_nan=False)))
        except (TypeError, ValueError) as e:
            raise SystemExit(f"{path}: cannot be written as JSON: {e}") from None
    return json.dumps(scenarios, indent=1, sort_keys=True)


def main() -> None:
    root, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    text = export(root)
    if not out.exists() or out.read_text() != text:  # unchanged: leave the file's time alone
        out.write_text(text)


if __name__ == "__main__":
    main()
