"""Summary of a ginkgo v2 JSON report: counts, then passed / failed / other spec names.

usage: summarize.py REPORT.json SUITE"""

import json
import sys


def spec_name(spec):
    return " ".join(t for t in (spec.get("ContainerHierarchyTexts") or []) + [spec.get("LeafNodeText", "")] if t)


def main(path, suite):
    try:
        suites = json.load(open(path))
    except (OSError, ValueError) as e:
        print(f"{suite}: no usable report {path}: {e}")
        return 1
    groups = {}
    failures = {}
    for s in suites:
        for spec in s.get("SpecReports") or []:
            if spec.get("LeafNodeType") != "It":
                # BeforeSuite/AfterSuite failures are reported too.
                if spec.get("State") in ("passed", "skipped"):
                    continue
            name = spec_name(spec) or spec.get("LeafNodeType", "?")
            state = spec.get("State", "?")
            groups.setdefault(state, []).append(name)
            if state not in ("passed", "skipped", "pending"):
                f = spec.get("Failure") or {}
                loc = f.get("Location") or {}
                msg = (f.get("Message") or "").strip().splitlines()
                failures[name] = (f"{loc.get('FileName', '?').split('/test/e2e/')[-1]}:{loc.get('LineNumber', '?')}",
                                  msg[0][:300] if msg else "")
    ran = sum(len(v) for k, v in groups.items() if k not in ("skipped", "pending"))
    passed = len(groups.get("passed", []))
    print(f"{suite}: {passed}/{ran} passed; " + ", ".join(f"{k} {len(v)}" for k, v in sorted(groups.items())))
    for state in sorted(groups, key=lambda k: (k == "passed", k)):
        print(f"\n[{state}]")
        for name in groups[state]:
            print(f"  {name}")
            if name in failures:
                where, msg = failures[name]
                print(f"      at {where}: {msg}")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
