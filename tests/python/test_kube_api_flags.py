"""`--kube-api-qps`/`--kube-api-burst` on the real-cluster commands, with Volcano v1.15.1's
defaults (cmd/scheduler/app/options/options.go: 2000/2000; cmd/controller-manager/app/options
and cmd/webhook-manager/app/options/options.go: 50/100), reaching the client's token bucket
(client-go's rest.Config QPS/Burst). Issue 33, "Faults on a real API server" 2."""

from __future__ import annotations

import json

import pytest

from kubeconfig_helpers import write_kubeconfig
from volcanic.cli.kube import _client
from volcanic.cli.main import build_parser


@pytest.mark.parametrize("command,qps,burst", [
    ("scheduler", 2000, 2000), ("controller-manager", 50, 100), ("webhook", 50, 100), ("up", 2000, 2000)])
def test_defaults_are_volcanos(command, qps, burst):
    args = build_parser().parse_args([command])
    assert (args.kube_api_qps, args.kube_api_burst) == (qps, burst)


def test_the_flags_reach_the_clients_token_bucket(tmp_path):
    kubeconfig = write_kubeconfig(tmp_path, "http://127.0.0.1:1")
    args = build_parser().parse_args(["controller-manager", "--kubeconfig", kubeconfig,
                                      "--kube-api-qps", "7.5", "--kube-api-burst", "9"])
    limiter = _client(args).connections.limiter
    assert (limiter.qps, limiter.burst) == (7.5, 9)
    install = build_parser().parse_args(["install", "--kubeconfig", str(kubeconfig)])
    assert _client(install).connections.limiter is None  # a one-off command: not paced


@pytest.mark.parametrize("flag,value", [("--kube-api-qps", "0"), ("--kube-api-qps", "-1"), ("--kube-api-qps", "x"),
                                        ("--kube-api-burst", "0"), ("--kube-api-burst", "1.5")])
def test_bad_values_are_refused_naming_the_flag(flag, value, capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["scheduler", flag, value])
    assert f"argument {flag}: must be" in capsys.readouterr().err
