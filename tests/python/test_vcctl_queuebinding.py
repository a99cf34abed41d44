"""`vcctl queuebinding list|get` (volcanic.vcctl.queuebindings, docs/vcctl.md): volcanic's own
QueueBindings in vcctl, as hidden commands (the help stays Volcano's). On the embedded cluster,
whose queuebinding controller writes the usage `get` shows, and on test_vcctl's fake API for
what a cluster does not easily show (a selector of every operator, a server without the CRD)."""

from __future__ import annotations

import json

import pytest
import yaml

from builders import podgroup
from job_helpers import job, task
from test_queuebinding import binding
from test_vcctl import NOW, FakeApi, vc
from test_vcctl_cluster import cluster
from volcanic.kube.clock import rfc3339
from volcanic.kube.kinds import KINDS
from volcanic.vcctl import VcctlError


def made_at(obj: dict, seconds: float) -> dict:
    """The object with its creationTimestamp at `seconds` (for the Age column)."""
    obj["metadata"]["creationTimestamp"] = rfc3339(seconds)
    return obj


def bound_cluster(cluster):
    """Queue q1 bound to `default` and the namespaces labelled team=a (ml) with limits, queue q2
    to those with a tier label, without any; a job of 2 pods running in default, an enqueued
    PodGroup without pods in ml."""
    cluster.apply([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml", "labels": {"team": "a"}}},
                   {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "web"}},
                   {"apiVersion": KINDS["Queue"].api_version, "kind": "Queue", "metadata": {"name": "q1"}},
                   {"apiVersion": KINDS["Queue"].api_version, "kind": "Queue", "metadata": {"name": "q2"}}])
    cluster.run(1)
    cluster.apply([binding("team-a", "q1", namespaces=["default"], namespaceSelector={"matchLabels": {"team": "a"}},
                           limits={"maxRunningPods": 4, "maxPendingJobs": 2}),
                   binding("tiered", "q2", namespaceSelector={"matchExpressions": [{"key": "tier",
                                                                                   "operator": "Exists"}]})])
    cluster.apply(job("train", task("t", 2), queue="q1"))
    cluster.apply(dict(podgroup("waiting", queue="q1", ns="ml"), apiVersion=KINDS["PodGroup"].api_version))
    cluster.run(3)
    return cluster


def test_list_shows_queue_what_is_bound_limits_and_age(cluster):
    assert cluster.vcctl("queuebinding list") == "No resources found\n"
    bound_cluster(cluster)
    assert cluster.vcctl("queuebinding list") == (
        "Name     Queue   Namespaces       Limits                              Age   \n"
        "team-a   q1      default,team=a   maxRunningPods=4,maxPendingJobs=2   3s    \n"
        "tiered   q2      tier             -                                   3s    \n")
    # -o wide: the namespaces bound now, as the controller resolved them
    assert cluster.vcctl("queuebinding list -o wide") == (
        "Name     Queue   Namespaces       Limits                              Age   Bound        \n"
        "team-a   q1      default,team=a   maxRunningPods=4,maxPendingJobs=2   3s    default,ml   \n"
        "tiered   q2      tier             -                                   3s    -            \n")


def test_get_shows_the_binding_and_the_usage_of_each_bound_namespace(cluster):
    bound_cluster(cluster)
    assert cluster.vcctl("queuebinding get -N team-a") == (
        "Name     Queue   Namespaces       Limits                              Age   \n"
        "team-a   q1      default,team=a   maxRunningPods=4,maxPendingJobs=2   3s    \n"
        "\n"
        "Namespace   Running pods   Max running pods   Pending jobs   Max pending jobs   \n"
        "default     2              4                  0              2                  \n"
        "ml          0              4                  1              2                  \n")
    assert cluster.vcctl("queuebinding get --name tiered").endswith("\nNo bound namespaces\n")
    cluster.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "gpu", "labels": {"tier": "1"}}})
    cluster.run(1)
    assert cluster.vcctl("queuebinding get -N tiered").endswith(
        "\nNamespace   Running pods   Max running pods   Pending jobs   Max pending jobs   \n"
        "gpu         0              -                  0              -                  \n")


def test_get_before_the_controller_wrote_the_usage(cluster):
    cluster.apply(binding("fresh", "q1", namespaces=["default"]))
    assert cluster.vcctl("queuebinding get -N fresh") == (
        "Name    Queue   Namespaces   Limits   Age   \n"
        "fresh   q1      default      -        0s    \n"
        "\n"
        "No usage recorded yet\n")


def test_json_and_yaml_are_the_stored_objects(cluster):
    bound_cluster(cluster)
    listed = json.loads(cluster.vcctl("queuebinding list -o json"))
    assert (listed["apiVersion"], listed["kind"], listed["items"]) == ("v1", "List", cluster.list("QueueBinding"))
    assert yaml.safe_load(cluster.vcctl("queuebinding list -o yaml"))["items"] == cluster.list("QueueBinding")
    assert yaml.safe_load(cluster.vcctl("queuebinding get -N team-a -o yaml")) == cluster.get("QueueBinding", "team-a")
    assert json.loads(cluster.vcctl("queuebinding get -N team-a -o json"))["status"]["namespaces"] == {
        "default": {"runningPods": 2, "pendingJobs": 0}, "ml": {"runningPods": 0, "pendingJobs": 1}}


def test_selectors_print_as_kubectl_prints_them():
    selector = {"matchLabels": {"team": "a", "env": "prod"},
                "matchExpressions": [{"key": "tier", "operator": "In", "values": ["gpu", "cpu"]},
                                     {"key": "zone", "operator": "NotIn", "values": ["b", "a"]},
                                     {"key": "legacy", "operator": "DoesNotExist"},
                                     {"key": "owner", "operator": "Exists"}]}
    api = FakeApi(made_at(binding("mixed", "q1", namespaces=["a", "b"], namespaceSelector=selector,
                                  limits={"maxPendingJobs": 0}), NOW - 300),
                  made_at(binding("everyone", "q1", namespaceSelector={}, limits={"maxRunningPods": 10}), NOW - 7200))
    assert vc(api, "queuebinding", "list") == (0, (
        "Name       Queue   Namespaces                                                             "
        "Limits              Age    \n"
        "mixed      q1      a,b,env=prod,!legacy,owner,team=a,tier in (cpu,gpu),zone notin (a,b)   "
        "maxPendingJobs=0    5m     \n"
        "everyone   q1      <all>                                                                  "
        "maxRunningPods=10   120m   \n"), "")


def test_errors_are_one_line_naming_the_binding_with_volcanos_exit_codes(cluster):
    with pytest.raises(VcctlError) as e:
        cluster.vcctl("queuebinding get -N nope")
    assert (str(e.value), e.value.code) == (
        'Failed to get queuebinding: queuebindings.scheduling.volcanic.dev "nope" not found', 255)
    with pytest.raises(VcctlError) as e:
        cluster.vcctl("queuebinding get")
    assert (str(e.value), e.value.code) == (
        "Failed to get queuebinding: name is mandatory to get the particular queuebinding details", 255)
    with pytest.raises(VcctlError) as e:
        cluster.vcctl("queuebinding list -o xml")
    assert (str(e.value), e.value.code) == (
        'Error: invalid argument "xml" for "-o, --output" flag: must be one of json, yaml, wide', 1)
    assert vc(FakeApi(unserved=("QueueBinding",)), "queuebinding", "list") == (255, "", (
        "Failed to list queuebinding: the server doesn't have a resource type \"queuebindings\" (QueueBinding, "
        "scheduling.volcanic.dev/v1alpha1): is volcanic installed? (volcanic install)\n"))


def test_the_commands_are_hidden_and_volcanos_help_unchanged():
    root = vc(FakeApi(), "--help")[1]
    assert "queuebinding" not in root
    # a hidden command longer than Volcano's longest does not widen the command column
    assert "  jobtemplate vcctl command line operation jobtemplate\n" in root
    assert vc(FakeApi(), "queuebindin")[2].startswith('Error: unknown command "queuebindin" for "vcctl"\n')
    assert vc(FakeApi(), "queuebinding", "--help")[1].startswith(
        "vcctl command line operation queuebinding\n\nUsage:\n  vcctl queuebinding [command]\n\n"
        "Available Commands:\n  get         get a queuebinding with the usage of each bound namespace\n"
        "  list        list queuebindings\n")


def test_completion_offers_the_subcommands_and_binding_names(cluster):
    cluster.apply(binding("team-a", "q1", namespaces=["default"]))

    def complete(*words):
        return cluster.vcctl("__complete", *words).splitlines()
    assert not any(line.startswith("queuebinding") for line in complete(""))
    assert complete("queuebinding", "") == [
        "get\tget a queuebinding with the usage of each bound namespace", "list\tlist queuebindings"]
    assert complete("queuebinding", "get", "-N", "t") == ["team-a\tQueueBinding"]
