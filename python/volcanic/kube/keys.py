"""Well-known Volcano names: the API versions of its kinds and the label and annotation keys
its components read and write on pods, PodGroups and queues (Volcano's `batch/v1alpha1`
labels, `scheduling/v1beta1` annotation keys)."""

from __future__ import annotations

from volcanic.kube.kinds import KINDS, SCHEDULING

# API versions.
JOB_API_VERSION = KINDS["Job"].api_version
SCHEDULING_API_VERSION = KINDS["Queue"].api_version  # PodGroup, Queue

# What the job controller writes on its pods (annotations; several also as labels).
JOB_NAME = "volcano.sh/job-name"
JOB_NAMESPACE = "volcano.sh/job-namespace"
TASK_SPEC = "volcano.sh/task-spec"
TASK_INDEX = "volcano.sh/task-index"
QUEUE_NAME = "volcano.sh/queue-name"
JOB_VERSION = "volcano.sh/job-version"
PARTITION_ID = "volcano.sh/partition-id"
OUT_OF_SYNC = "volcano.sh/controller-out-of-sync"
# The PodGroup a pod belongs to (any pod the Volcano scheduler schedules).
GROUP_NAME = "scheduling.k8s.io/group-name"

# Copied from a job or an owner onto its pods and PodGroups.
PREEMPTABLE = "volcano.sh/preemptable"
COOLDOWN_TIME = "volcano.sh/cooldown-time"
REVOCABLE_ZONE = "volcano.sh/revocable-zone"
JDB_MIN_AVAILABLE = "volcano.sh/jdb-min-available"
JDB_MAX_UNAVAILABLE = "volcano.sh/jdb-max-unavailable"

# Annotations of pods and their owners that Volcano's scheduler and PodGroup controller read.
GROUP_MIN_MEMBER = f"{SCHEDULING}/group-min-member"  # an owner's PodGroup minMember
POD_QUEUE_NAME = f"{SCHEDULING}/queue-name"  # a pod's queue (not the job's volcano.sh/queue-name)
# A pod's opt-in to the queue-allocation gate, and the gate (SchedulingGatesQueueAdmission).
QUEUE_ALLOCATION_GATE = f"{SCHEDULING}/queue-allocation-gate"

# The discovery source of a HyperNode the hyperNode-controller made (label, ufm); HyperNodes
# without it are made by hand and never touched by discovery.
NETWORK_TOPOLOGY_SOURCE = "volcano.sh/network-topology-source"

# The activation a CronJob's Job was made for (Volcano's CronJobScheduledTimestampAnnotation).
CRONJOB_SCHEDULED = "volcano.sh/cronjob-scheduled-timestamp"
