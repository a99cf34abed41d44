"""Admission over AdmissionReview v1 (volcanic.admission.review): the codec, JSONPatch, and
fuzzing of both through mutate and validate. Rule-specific expectations use only the Job
mutator's defaults; everything else is generic behaviour. The HTTPS server is tested in
test_webhook.py; the shared builders are in review_helpers.py."""

from __future__ import annotations

import copy
import json
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
import pytest

from review_helpers import (
    API,
    GROUPS,
    LISTER,
    PATH_KINDS,
    apply_ops,
    check_answer,
    command,
    job,
    mutated_review,
    patch_of,
    pod,
    podgroup,
    queue,
    review,
    same_json,
)
from volcanic.admission import review as rv
from volcanic.admission.chain import AdmissionChain
from volcanic.admission.review import ReviewError
from volcanic.errors import AdmissionError

# The codec.

def test_mutate_echoes_the_uid_and_patches_the_job_defaults():
    sent = review(job(), uid="4f1c-77")
    before = copy.deepcopy(sent)
    answer = rv.mutate(sent)
    assert sent == before  # the review is not changed
    assert answer["apiVersion"] == API and answer["kind"] == "AdmissionReview"
    assert answer["response"]["uid"] == "4f1c-77" and answer["response"]["allowed"] is True
    ops = patch_of(answer)
    mutated = apply_ops(job(), ops)
    spec = mutated["spec"]
    assert spec["queue"] == "default" and spec["maxRetry"] == 3 and spec["schedulerName"] == "volcano"
    assert spec["minAvailable"] == 1 + 2  # the ps task's replicas, the worker's minAvailable
    assert [t["maxRetry"] for t in spec["tasks"]] == [3, 3]
    assert mutated["metadata"] == job()["metadata"]  # the ~ and / in the annotation key survive
    # The patch is exactly the mutator's change and mutating the result changes nothing more.
    again = rv.mutate(review(mutated))
    assert again["response"] == {"uid": "uid-1", "allowed": True}


def test_mutate_follows_the_conf_scheduler_name():
    from volcanic.admission import AdmissionConf, volcano_chain
    chain = volcano_chain(AdmissionConf(scheduler_names=("kube-batch", "volcano")))
    mutated = apply_ops(job(), patch_of(rv.mutate(review(job()), chain=chain)))
    assert mutated["spec"]["schedulerName"] == "kube-batch"


def test_a_patch_is_relative_to_the_object_as_sent_even_without_kind():
    obj = job()
    del obj["kind"]
    sent = review(obj, kind="Job")
    ops = patch_of(rv.mutate(sent))
    assert not any(op["path"] == "/kind" for op in ops)
    assert apply_ops(obj, ops)["spec"]["queue"] == "default"


def _chain(mutator=None, validator=None, kind="Job") -> AdmissionChain:
    chain = AdmissionChain()
    if mutator:
        chain.add_mutator(kind, mutator)
    if validator:
        chain.add_validator(kind, validator)
    return chain


def test_a_denial_carries_the_rules_message_as_volcano_writes_it():
    chain = _chain(validator=lambda r: f"queue {r.obj['spec'].get('queue')!r} is closed")
    answer = rv.validate(review(job(queue="q")), chain=chain)
    assert answer["response"] == {"uid": "uid-1", "allowed": False, "status": {"message": "queue 'q' is closed"}}
    allowed = rv.validate(review(job()), chain=_chain(validator=lambda r: None))
    assert allowed["response"] == {"uid": "uid-1", "allowed": True}


def test_a_mutator_denial_and_a_rule_failure_are_answers():
    def deny(request):
        raise AdmissionError("no jobs on Sundays", kind="Job")
    answer = rv.mutate(review(job()), chain=_chain(mutator=deny))
    assert answer["response"] == {"uid": "uid-1", "allowed": False, "status": {"message": "no jobs on Sundays"}}

    def broken(request):
        return request.obj["spec"]["nope"]
    for answer in (rv.mutate(review(job()), chain=_chain(mutator=broken)),
                   rv.validate(review(job()), chain=_chain(validator=broken))):
        status = answer["response"]["status"]
        assert answer["response"]["allowed"] is False and status["code"] == 500
        assert status["reason"] == "InternalError" and "KeyError" in status["message"]
    answer = rv.mutate(review(job()), chain=_chain(mutator=lambda r: "not an object"))
    assert answer["response"]["status"]["code"] == 500


def test_mutators_and_validators_run_on_their_own_paths_only():
    calls = []
    chain = _chain(mutator=lambda r: calls.append("m") or dict(r.obj, extra=1),
                   validator=lambda r: calls.append("v") or None)
    assert patch_of(rv.mutate(review(job()), chain=chain)) == [{"op": "add", "path": "/extra", "value": 1}]
    assert calls == ["m"]
    rv.validate(review(job()), chain=chain)
    assert calls == ["m", "v"]


def test_update_and_delete_reach_the_rules_with_both_objects():
    seen = []
    chain = _chain(validator=lambda r: seen.append((r.operation, r.obj, r.old)) or None)
    old, new = job(), job(minAvailable=2)
    assert rv.validate(review(new, "UPDATE", old), chain=chain)["response"]["allowed"]
    assert rv.validate(review(None, "DELETE", old), chain=chain)["response"]["allowed"]
    assert seen == [("UPDATE", new, old), ("DELETE", None, old)]
    # Mutating a DELETE has no object to patch; CONNECT is never admitted by rules.
    assert rv.mutate(review(None, "DELETE", old))["response"] == {"uid": "uid-1", "allowed": True}
    assert rv.validate(review({"kind": "PodExecOptions"}, "CONNECT", kind="Pod"),
                       chain=_chain(validator=lambda r: "no", kind="Pod"))["response"]["allowed"]


def test_kinds_of_other_groups_and_foreign_pods_are_allowed_unchanged():
    k8s_job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "namespace": "default"},
               "spec": {"template": {"spec": {"containers": []}}}}
    for fn in (rv.mutate, rv.validate):
        assert fn(review(k8s_job, group="batch"))["response"] == {"uid": "uid-1", "allowed": True}
        assert fn(review({"kind": "ConfigMap", "metadata": {"name": "c"}}))["response"]["allowed"]
        # A pod of another scheduler is the pod rules' business, and they leave it alone.
        assert fn(review(pod(scheduler="default-scheduler")))["response"] == {"uid": "uid-1", "allowed": True}
    # Without request.kind.group the group is read from the object's apiVersion.
    sent = review(k8s_job)
    del sent["request"]["kind"]["group"]
    assert rv.mutate(sent)["response"] == {"uid": "uid-1", "allowed": True}
    sent = review(job())
    del sent["request"]["kind"]["group"]
    assert patch_of(rv.mutate(sent))


def test_a_path_admits_its_own_kind_only_as_volcano_does():
    answer = rv.validate(review(queue()), kind="Job")
    assert answer["response"]["allowed"] is False
    assert answer["response"]["status"]["message"].startswith("expect resource to be [{batch.volcano.sh v1alpha1 jobs}")
    assert rv.mutate(review(job(), group="batch"), kind="Job")["response"]["allowed"] is False
    assert rv.mutate(review(job()), kind="Job")["response"]["allowed"] is True


@pytest.mark.parametrize("bad, message", [
    (None, "must be a JSON object, got null"),
    ([], "must be a JSON object, got an array"),
    ({"apiVersion": "admission.k8s.io/v1beta1", "kind": "AdmissionReview", "request": {}}, "apiVersion"),
    ({"apiVersion": API, "kind": "Review", "request": {}}, "kind: must be 'AdmissionReview'"),
    ({"apiVersion": API, "kind": "AdmissionReview"}, "request: must be an object, got null"),
    ("uid", "request.uid: must be a non-empty string"),
    ("operation", "request.operation: must be one of CREATE, UPDATE, DELETE, CONNECT"),
    ("kind", "request.kind: must be an object"),
    ("object", "request.object: must be an object or null, got an array"),
    ("no-object", "request.object: is required for CREATE"),
    ("no-old", "request.oldObject: is required for UPDATE"),
    ("kind-mismatch", "request.object.kind: 'Queue' is not request.kind.kind 'Job'"),
    ("nan", "is not a JSON value"),
    ("int-key", "key 1 is not a string"),
    ("deep", "nested deeper than 64 levels"),
    ("group", "request.kind.group: must be a string"),
])
def test_malformed_reviews_raise_review_error(bad, message):
    if isinstance(bad, str):
        sent = review(job())
        request = sent["request"]
        if bad == "uid":
            request["uid"] = ""
        elif bad == "operation":
            request["operation"] = "create"
        elif bad == "kind":
            request["kind"] = "Job"
        elif bad == "object":
            request["object"] = []
        elif bad == "no-object":
            request["object"] = None
        elif bad == "no-old":
            request["operation"] = "UPDATE"
        elif bad == "kind-mismatch":
            request["object"] = queue()
        elif bad == "nan":
            request["object"]["spec"]["minAvailable"] = float("nan")
        elif bad == "int-key":
            request["object"]["spec"][1] = 2
        elif bad == "deep":
            deep = request["object"]["spec"]
            for _ in range(100):
                deep["x"] = {}
                deep = deep["x"]
        elif bad == "group":
            request["kind"]["group"] = 7
        bad = sent
    for fn in (rv.mutate, rv.validate):
        with pytest.raises(ReviewError, match=message):
            fn(bad)


def test_parse_refuses_what_is_not_json():
    assert rv.parse(b'{"a": [1, 2.5, null]}') == {"a": [1, 2.5, None]}
    for body in (b"", b'{"a": ', b"\xff\xfe\x00", b'{"a": NaN}', b"[" * 100_000 + b"]" * 100_000, b"{'a': 1}"):
        with pytest.raises(ReviewError, match="the body is not JSON"):
            rv.parse(body)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-2**40, 2**40) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(["a", "b", "~", "/", "a/~0", ""])
                                                                | st.text(max_size=4), inner, max_size=4),
    max_leaves=16)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(JSON, JSON)
def test_json_patch_turns_one_document_into_the_other(a, b):
    ops = rv.json_patch(a, b)
    assert same_json(apply_ops(a, ops), b)
    assert same_json(rv.apply_patch(a, ops), b)
    assert rv.json_patch(a, a) == []
    json.dumps(ops, allow_nan=False)


def test_json_patch_escapes_pointers_and_keeps_json_types():
    assert rv.json_patch({"a/b": 1, "c~d": 1}, {"a/b": 2, "c~d": 1, "e": {}}) == [
        {"op": "replace", "path": "/a~1b", "value": 2}, {"op": "add", "path": "/e", "value": {}}]
    assert rv.json_patch({"x": 1}, {"x": True}) == [{"op": "replace", "path": "/x", "value": True}]
    assert rv.json_patch({"x": 1}, {"x": 1.0}) == [{"op": "replace", "path": "/x", "value": 1.0}]
    assert rv.json_patch({"l": [1, 2]}, {"l": [1, 3]}) == [{"op": "replace", "path": "/l/1", "value": 3}]
    assert rv.json_patch({"l": [1, 2]}, {"l": [1]}) == [{"op": "replace", "path": "/l", "value": [1]}]
    assert rv.json_patch({"x": 1}, {}) == [{"op": "remove", "path": "/x"}]


def _admit_everywhere(sent, rng: random.Random) -> int:
    """Feeds one input to mutate and validate, with and without a path kind; only answers and
    ReviewError may come out. Returns how many reviews were answered."""
    if isinstance(sent, bytes):
        try:
            sent = rv.parse(sent)
        except ReviewError:
            return 0
    answered = 0
    for fn in (rv.mutate, rv.validate):
        for kind in (None, rng.choice(PATH_KINDS)):
            try:
                answer = fn(sent, lister=LISTER, kind=kind)
            except ReviewError as e:
                assert str(e)
                continue
            check_answer(sent, answer)
            answered += 1
    return answered


OBJECTS = {"Job": [job(), job(queue="q1")], "Queue": [queue(), queue("q1")], "PodGroup": [podgroup()],
           "Pod": [pod(), pod(scheduler="volcano")], "Command": [command()]}


@st.composite
def random_reviews(draw):
    """Reviews whose every part is most often valid and otherwise random JSON."""
    def part(valid, odds=8):
        return draw(valid) if draw(st.integers(0, 9)) < odds else draw(JSON)
    kind = draw(st.sampled_from(sorted(OBJECTS)))
    objects = st.sampled_from(OBJECTS[kind]).map(copy.deepcopy)
    # Random JSON inside a valid object: the rules see odd shapes.
    odd = st.builds(lambda o, k, v: {**o, "spec": {**o.get("spec", {}), k: v}}, objects,
                    st.sampled_from(["tasks", "queue", "minAvailable", "weight", "capability", "x"]), JSON)
    operation = part(st.sampled_from(["CREATE", "UPDATE", "DELETE", "CONNECT"]), 9)
    request = {"uid": part(st.text(min_size=1, max_size=8)),
               "kind": part(st.just({"group": GROUPS[kind], "version": "v1", "kind": kind}), 9),
               "operation": operation,
               "object": part(st.one_of(objects, odd, odd), 9),
               "oldObject": part(st.one_of(st.none(), objects, odd), 9)}
    return {"apiVersion": part(st.just(API), 9), "kind": part(st.just("AdmissionReview"), 9),
            "request": part(st.just(request), 9)}


def test_fuzz_codec_with_random_reviews():
    count = {"inputs": 0, "answered": 0}

    # A fixed mix (a third random JSON) rather than one_of: Hypothesis also draws constants it
    # finds in every loaded module of the project, which would shift a drawn mix with each
    # module the test session imports.
    @settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck), database=None,
              derandomize=True)
    @given(st.lists(JSON, min_size=7, max_size=7), st.lists(random_reviews(), min_size=13, max_size=13),
           st.randoms(use_true_random=False))
    def run(noise, reviews, rng):
        inputs = noise + reviews
        rng.shuffle(inputs)
        for sent in inputs:
            count["answered"] += _admit_everywhere(sent, rng)
        count["inputs"] += len(inputs)

    run()
    assert count["inputs"] >= 2_000 and count["answered"] > 1_500


def test_fuzz_codec_with_mutated_reviews():
    count = {"inputs": 0, "answered": 0}

    @settings(max_examples=250, deadline=None, suppress_health_check=list(HealthCheck), database=None,
              derandomize=True)
    @given(st.integers(0, 2**32))
    def run(seed):
        rng = random.Random(seed)
        for _ in range(40):
            count["answered"] += _admit_everywhere(mutated_review(rng), rng)
        count["inputs"] += 40

    run()
    assert count["inputs"] >= 10_000 and count["answered"] > 12_000


def test_every_truncation_of_a_review_is_a_review_error():
    from volcanic.bench.admission import review as bench_review
    from volcanic.bench.admission import typical_job
    data = json.dumps(bench_review("uid-1", "CREATE", typical_job(1))).encode()
    for n in range(len(data)):
        with pytest.raises(ReviewError):
            rv.validate(rv.parse(data[:n]))
    assert len(data) > 2_000


def test_the_package_exposes_mutate_and_validate():
    """The issue's contract: volcanic.admission.mutate(review) / validate(review)."""
    import volcanic.admission
    job = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "j", "namespace": "ns"},
           "spec": {"tasks": [{"name": "t", "replicas": 1, "template": {"spec": {"containers": [
               {"name": "c", "image": "busybox"}]}}}]}}
    req = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
        "uid": "u-1", "kind": {"group": "batch.volcano.sh", "version": "v1alpha1", "kind": "Job"},
        "operation": "CREATE", "object": job}}
    mutated = volcanic.admission.mutate(req)
    assert mutated["response"]["uid"] == "u-1" and mutated["response"]["patchType"] == "JSONPatch"
    denied = volcanic.admission.validate(req)  # no queue "default" in an empty lister
    assert denied["response"]["allowed"] is False
