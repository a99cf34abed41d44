"""`vcctl cronjob list|get|suspend|resume|delete` (volcanic.vcctl.cronjobs; docs/vcctl.md) on
the embedded cluster, over the CronJobs of test_cronjob_cluster (Volcano's controller; docs/
workflows.md): kubectl's columns, the Jobs a CronJob made, suspend and resume as the
controller then acts on them (on resume the latest activation missed runs at once, as
Kubernetes' CronJob without startingDeadlineSeconds), and one-line errors. Hidden from help, as volcanic's other
additions to Volcano's vcctl."""

from __future__ import annotations

import json

import pytest

from test_cronjob_cluster import EXAMPLE, MINUTE, cluster, cronjob, jobs
from volcanic.vcctl import VcctlError


def rows(text: str) -> list[list[str]]:
    """A table's cells (they hold no spaces here), blank lines left out."""
    return [line.split() for line in text.splitlines() if line.strip()]


def test_list_prints_kubectls_cronjob_columns():
    c = cluster()
    c.apply(EXAMPLE)
    c.apply(cronjob("cj", duration="10s", timeZone="Asia/Shanghai"))
    c.run(6 * MINUTE + 1)
    assert rows(c.vcctl("cronjob list")) == [
        ["Name", "Schedule", "Timezone", "Suspend", "Active", "Last", "Schedule", "Age"],
        ["cj", "*", "*", "*", "*", "*", "Asia/Shanghai", "False", "1", "1s", "6m1s"],
        ["volcano-cronjob-example", "*/5", "*", "*", "*", "*", "<none>", "False", "1", "61s", "6m1s"]]
    wide = rows(c.vcctl("cronjob list --all-namespaces -o wide"))
    assert wide[0][:2] == ["Namespace", "Name"] and wide[0][-2:] == ["Concurrency", "Jobs"]
    assert wide[2][0] == "default" and wide[2][-2:] == ["Forbid", "volcano-cronjob-example-28401125"]
    listed = json.loads(c.vcctl("cronjob list -o json"))
    assert listed["kind"] == "List" and [i["metadata"]["name"] for i in listed["items"]] == \
        ["cj", "volcano-cronjob-example"]
    assert c.vcctl("cronjob list -n other") == "No resources found\n"


def test_get_shows_the_jobs_it_made_oldest_first():
    c = cluster()
    c.apply(cronjob("cj", duration="90s"))
    c.run(3 * MINUTE + 1)
    out = c.vcctl("cronjob get -N cj")
    head, made = out.split("\n\n")
    assert rows(head)[1] == ["cj", "*", "*", "*", "*", "*", "<none>", "False", "2", "1s", "3m1s"]
    made_rows = [[j["metadata"]["name"], phase, j["metadata"]["annotations"]["volcano.sh/cronjob-scheduled-timestamp"],
                  age] for j, phase, age in zip(jobs(c), ["Completed", "Running", "Pending"], ["2m1s", "61s", "1s"])]
    assert rows(made) == [["Job", "Phase", "Scheduled", "Age"], *made_rows]
    assert json.loads(c.vcctl("cronjob get -N cj -o json")) == c.get("CronJob", "cj")


def test_suspend_stops_new_jobs_and_resume_starts_them_again():
    c = cluster()
    c.apply(cronjob("cj", duration="10s"))
    c.run(MINUTE + 1)
    assert c.vcctl("cronjob suspend -N cj") == "suspend cronjob cj successfully\n"
    assert c.get("CronJob", "cj")["spec"]["suspend"] is True
    c.run(5 * MINUTE)
    assert len(jobs(c)) == 1  # none while suspended
    assert c.vcctl("cronjob resume -N cj") == "resume cronjob cj successfully\n"
    c.run(2 * MINUTE)
    # the latest activation missed while suspended (00:06) runs at once, then 00:07 and 00:08
    assert [j["metadata"]["annotations"]["volcano.sh/cronjob-scheduled-timestamp"][11:16] for j in jobs(c)] == \
        ["00:01", "00:06", "00:07", "00:08"]
    assert c.get("CronJob", "cj")["spec"]["suspend"] is False
    assert c.errors == []


def test_delete_takes_the_cronjob_and_its_jobs():
    c = cluster()
    c.apply(cronjob("cj", duration="10s"))
    c.run(2 * MINUTE + 1)
    assert c.vcctl("cronjob delete -N cj") == "delete cronjob cj successfully\n"
    c.run(1)
    assert c.get("CronJob", "cj") is None and c.list("Job", "default") == []


@pytest.mark.parametrize("argv, message", [
    ("cronjob get", "Failed to get cronjob: name is mandatory to get the particular cronjob"),
    ("cronjob suspend", "Failed to suspend cronjob: name is mandatory to suspend the particular cronjob"),
    ("cronjob delete -N nope", 'Failed to delete cronjob: cronjobs.batch.volcano.sh "nope" not found'),
])
def test_errors_are_one_line(argv, message):
    with pytest.raises(VcctlError) as e:
        cluster().vcctl(argv)
    assert str(e.value) == message


def test_hidden_from_help_as_volcanics_other_additions():
    c = cluster()
    assert "cronjob" not in c.vcctl("--help")
    assert "suspend a cronjob" in c.vcctl("cronjob --help")
