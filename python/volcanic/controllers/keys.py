"""Well-known Volcano names that more than one controller module uses: API versions and the
label and annotation keys written on pods and PodGroups (Volcano's `batch/v1alpha1` labels,
`scheduling/v1beta1` annotation keys). A key that only one module uses stays there."""

from __future__ import annotations

# API versions.
JOB_API_VERSION = "batch.volcano.sh/v1alpha1"
SCHEDULING_API_VERSION = "scheduling.volcano.sh/v1beta1"  # PodGroup, Queue

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
