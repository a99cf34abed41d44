"""The hyperNode-controller's configuration: the ConfigMap Volcano's controller-manager reads
(pkg/controllers/hypernode/config/loader.go, configmap_handler.go) and its discovery sources
(api/types.go, discovery/label/label.go parseCfg).

    namespace, name = configmap_location(os.environ)
    conf = parse_config(configmap)     # a DiscoveryConfig; ConfigError if it cannot be read

The ConfigMap is `<$HELM_RELEASE_NAME or "volcano">-controller-configmap` in
`$KUBE_POD_NAMESPACE` (volcano-system by default), key `volcano-controller.conf`, YAML:

    networkTopologyDiscovery:
    - source: label
      enabled: true
      config:
        networkTopologyTypes:
          <type>: [{nodeLabel: <top tier's key>}, ..., {nodeLabel: kubernetes.io/hostname}]

A missing ConfigMap is an empty configuration (nothing discovered). A ConfigMap without the
key, whose key is not YAML, or whose networkTopologyDiscovery is not a list cannot be read:
ConfigError, and the controller keeps the configuration it had, as Volcano's manager keeps its
running discoverers. Within a readable configuration, a part that is wrong is left out and
said in `problems` (field path and why); Volcano drops the whole label configuration when
mapstructure cannot decode it, and logs the rest.

Label types as Volcano reads them: a type name longer than 20 characters, or one listing a
label twice, is left out; the last label (meant to be kubernetes.io/hostname) is dropped
whatever it is, and the others are read bottom up: the one just above it is tier 1.
Only the label source is implemented; ufm (which polls a UFM server) and any other source
are reported as problems and not run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

import yaml

from volcanic.kube.objects import Obj, as_map

NAMESPACE_ENV, RELEASE_ENV = "KUBE_POD_NAMESPACE", "HELM_RELEASE_NAME"
DEFAULT_NAMESPACE, DEFAULT_RELEASE = "volcano-system", "volcano"
CONFIG_KEY = "volcano-controller.conf"
TYPE_NAME_MAX = 20  # label.go networkTopologyTypeLength
LABEL = "label"
NOT_IMPLEMENTED = {"ufm": "polls a UFM server, which volcanic does not implement"}


class ConfigError(ValueError):
    """The configuration cannot be read at all; the message names the field."""


@dataclass(frozen=True)
class DiscoveryConfig:
    # The label source's topology types: type name -> label keys, tier 1 first. None when the
    # label source is not enabled.
    label_types: dict[str, tuple[str, ...]] | None = None
    problems: tuple[str, ...] = field(default_factory=tuple)


def configmap_location(env: Mapping[str, str]) -> tuple[str, str]:
    """(namespace, name) of the ConfigMap, from the controller-manager's environment."""
    namespace = env.get(NAMESPACE_ENV) or DEFAULT_NAMESPACE
    return namespace, f"{env.get(RELEASE_ENV) or DEFAULT_RELEASE}-controller-configmap"


def parse_config(configmap: Obj | None) -> DiscoveryConfig:
    """The discovery configuration a ConfigMap holds (see the module docstring)."""
    if configmap is None:
        return DiscoveryConfig()
    text = as_map(configmap.get("data")).get(CONFIG_KEY)
    if not isinstance(text, str):
        raise ConfigError(f"data.{CONFIG_KEY}: the key is missing")
    try:
        conf = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise ConfigError(f"data.{CONFIG_KEY}: not YAML: {e}") from None
    entries = as_map(conf).get("networkTopologyDiscovery")
    if (conf is not None and not isinstance(conf, dict)) or (entries is not None and not isinstance(entries, list)):
        raise ConfigError(f"data.{CONFIG_KEY}: networkTopologyDiscovery: must be a list of sources")
    problems: list[str] = []
    label_types = None
    for i, entry in enumerate(entries or ()):
        where = f"networkTopologyDiscovery[{i}]"
        source = _enabled_source(entry, where, problems)
        if source == LABEL and label_types is None:  # the first enabled one counts (GetDiscoveryConfig)
            label_types = _label_types(as_map(entry.get("config")), f"{where}.config", problems)
        elif source is not None and source != LABEL:
            why = NOT_IMPLEMENTED.get(source, "unknown source (Volcano knows label and ufm)")
            problems.append(f"{where}.source: {source!r} is not run: {why}")
    return DiscoveryConfig(label_types, tuple(problems))


def _enabled_source(entry: Any, where: str, problems: list[str]) -> str | None:
    """The entry's source if it is enabled, else None (a malformed entry is a problem)."""
    if not isinstance(entry, dict):
        problems.append(f"{where}: must be a map with source and enabled")
        return None
    source, enabled = entry.get("source"), entry.get("enabled", False)
    if not isinstance(source, str) or not isinstance(enabled, bool):
        problems.append(f"{where}: source must be a string and enabled a boolean, got {source!r} and {enabled!r}")
        return None
    return source if enabled else None


def _label_types(config: Obj, where: str, problems: list[str]) -> dict[str, tuple[str, ...]]:
    """parseCfg: each type's label keys, tier 1 first, the last one dropped."""
    types = config.get("networkTopologyTypes")
    if types is not None and not isinstance(types, dict):
        problems.append(f"{where}.networkTopologyTypes: must be a map of type name to node labels")
        return {}
    out: dict[str, tuple[str, ...]] = {}
    for name, entries in (types or {}).items():
        here = f"{where}.networkTopologyTypes.{name}"
        keys = _label_keys(entries)
        if len(str(name)) > TYPE_NAME_MAX:
            problems.append(f"{here}: the type name is longer than {TYPE_NAME_MAX} characters; type skipped")
        elif keys is None:
            problems.append(f"{here}: must be a list of {{nodeLabel: <label key>}}; type skipped")
        elif len(set(keys)) != len(keys):
            problems.append(f"{here}: a node label is listed twice; type skipped")
        else:
            out[str(name)] = tuple(reversed(keys[:-1]))
    return out


def _label_keys(entries: Any) -> list[str] | None:
    if not isinstance(entries, list):
        return None
    keys = [as_map(e).get("nodeLabel") for e in entries]
    return keys if all(isinstance(k, str) and k for k in keys) else None  # type: ignore[return-value]
