"""A Pod's ResourceClaims (named ones and ones generated from templates), and the nodes it may use.

Why: upstream allocates the unallocated claims of one pod together. A pod refers to claims
by name (`resourceClaimName`) or asks for one per pod from a template
(`resourceClaimTemplateName`); the control plane then creates a claim from the template.
We generate that claim in memory (never mutating the template) so the pod can be allocated
offline. Generated names follow upstream's `<pod>-<entry>-` prefix; the random suffix
upstream adds is left out for reproducible output.

A pod's template entry that matches its PodGroup's group-level entry exactly (KEP-5729, gates
GenericWorkload and DRAWorkloadResourceClaims) asks for the one claim generated for the whole
group instead (upstream's ResourceClaim controller: `<podgroup>-<entry>-` prefix, owned by the
PodGroup, its name in the PodGroup's `status.resourceClaimStatuses`): every pod of the group
gets the same claim, so the pods are joined on one allocation like pods sharing a claim by
name (`planning.resolve.join_shared`), and it is reserved for the PodGroup
(`planning.finish.group_claim_owners`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..api.cluster import Cluster
from ..api.models import Pod, PodGroup, PodResourceClaim, ResourceClaim, ResourceClaimTemplate
from ..api.strict import did_you_mean
from ..errors import InputError
from ..gates import FeatureGates
from ..inventory import NodeView, node_selector_matches
from ..reasons import Kind, Reason


def pod_group_of(cluster: Cluster, pod: Pod, gates: FeatureGates | None = None) -> PodGroup | None:
    """The PodGroup whose group-level claims the pod may use: the one it names, when it is in
    the input and both gates are on (None: the defaults)."""
    gates = gates or FeatureGates()
    ref = pod.spec.scheduling_group
    if ref is None or not (gates.GenericWorkload and gates.DRAWorkloadResourceClaims):
        return None
    return cluster.pod_groups.get((pod.metadata.ns, ref.pod_group_name))


def group_entry(
    cluster: Cluster, pod: Pod, entry: PodResourceClaim, gates: FeatureGates | None = None
) -> PodGroup | None:
    """The pod's PodGroup when the pod's `spec.resourceClaims` entry is one of the group's
    claims (`PodGroup.claim_entry`), else None (the entry is the pod's own)."""
    group = pod_group_of(cluster, pod, gates)
    return group if group is not None and group.claim_entry(entry) is not None else None


def pod_claims(cluster: Cluster, pod: Pod, gates: FeatureGates | None = None) -> list[ResourceClaim]:
    """Every claim the pod uses, in pod order (allocated ones included); `gates` decide
    whether the PodGroup's template entries give one claim for the group (None: defaults)."""
    return [
        c if isinstance(c, ResourceClaim) else _from_template(*c) for c in _claim_sources(cluster, pod, gates)
    ]


def uses_allocated_claim(cluster: Cluster, pod: Pod, gates: FeatureGates | None = None) -> bool:
    """Whether a claim the pod uses (`pod_claims`) is allocated already. Why not `pod_claims`:
    a claim a template would give that the cluster does not hold yet is built without a status
    (never allocated), so it need not be built — at 50,000 pods the building was a third of
    resolving them. The same errors as `pod_claims` for a claim or template not in the input."""
    return any(
        isinstance(c, ResourceClaim) and c.status is not None and c.status.allocation is not None
        for c in _claim_sources(cluster, pod, gates)
    )


_ToBuild = tuple[ResourceClaimTemplate, str, str, str, "Pod | PodGroup"]
"""`_from_template`'s arguments: a claim the cluster does not hold yet, from a template."""


def _claim_sources(
    cluster: Cluster, pod: Pod, gates: FeatureGates | None
) -> Iterator[ResourceClaim | _ToBuild]:
    """Per entry of the pod's `spec.resourceClaims`, in order: the claim the cluster holds, or
    what builds it from its template (`_ToBuild`); `InputError` for a claim or template not
    in the input."""
    ns = pod.metadata.ns
    for i, entry in enumerate(pod.spec.resource_claims):
        field = f"spec.resourceClaims[{i}]"
        if entry.resource_claim_name:
            claim = cluster.claims.get((ns, entry.resource_claim_name))
            if claim is None:
                raise InputError(
                    f"ResourceClaim {ns}/{entry.resource_claim_name} not found in the input"
                    + did_you_mean(entry.resource_claim_name, [n for m, n in cluster.claims if m == ns]),
                    obj=pod.ref,
                    field=f"{field}.resourceClaimName",
                )
            yield claim
        elif entry.resource_claim_template_name:
            template = cluster.templates.get((ns, entry.resource_claim_template_name))
            if template is None and (generated := recorded_claim(cluster, pod, entry.name)) is not None:
                yield generated  # the claim is made: upstream never reads the template again
                continue
            if template is None:
                raise InputError(
                    f"ResourceClaimTemplate {ns}/{entry.resource_claim_template_name} not found in the input"
                    + did_you_mean(
                        entry.resource_claim_template_name, [n for m, n in cluster.templates if m == ns]
                    ),
                    obj=pod.ref,
                    field=f"{field}.resourceClaimTemplateName",
                )
            group = group_entry(cluster, pod, entry, gates)
            owner = group if group is not None else pod
            name = (
                group.generated_claim_name(entry.name)
                if group is not None
                else _generated_name(pod, entry.name)
            )
            existing = cluster.claims.get((ns, name))
            yield existing if existing is not None else (template, name, ns, entry.name, owner)
        else:
            raise InputError(
                "exactly one of resourceClaimName and resourceClaimTemplateName is required",
                obj=pod.ref,
                field=field,
            )


def _from_template(
    template: ResourceClaimTemplate, name: str, ns: str, entry: str, owner: Pod | PodGroup
) -> ResourceClaim:
    """The claim the ResourceClaim controller creates from `template` for `entry`: the
    template's metadata and spec, upstream's `resource.kubernetes.io/pod-claim-name`
    annotation, and for a PodGroup's claim its owner reference (the group owns the claim)."""
    meta_dump, spec_dump = _template_dumps(template)
    meta = {**meta_dump, "name": name, "namespace": ns}
    annotations = dict(meta.get("annotations") or {})
    annotations["resource.kubernetes.io/pod-claim-name"] = entry
    meta["annotations"] = annotations
    if isinstance(owner, PodGroup):
        ref: dict[str, Any] = {
            "apiVersion": owner.api_version,
            "kind": "PodGroup",
            "name": owner.metadata.name,
        }
        if owner.metadata.uid:
            ref["uid"] = owner.metadata.uid
        meta["ownerReferences"] = [*meta.get("ownerReferences", []), {**ref, "controller": True}]
    return ResourceClaim.model_validate(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": meta,
            "spec": spec_dump,
        }
    )


_DUMPS: dict[int, tuple[ResourceClaimTemplate, dict[str, Any], dict[str, Any]]] = {}
"""id(template) -> (the template, its metadata's and its spec's dumps); the template is kept so
that its id cannot be reused while the entry lives."""

_MAX_DUMPS = 10_000


def _template_dumps(template: ResourceClaimTemplate) -> tuple[dict[str, Any], dict[str, Any]]:
    """The template's metadata and spec as dicts, dumped once per template. Why: every pod of a
    Deployment builds its claim from the same template, and dumping it again per pod was a
    third of building 50,000 claims. Read only: `_from_template` copies the metadata's top
    level before changing it, and validation copies what it reads (a dict or list becomes a
    new one in the claim)."""
    found = _DUMPS.get(id(template))
    if found is None or found[0] is not template:
        if len(_DUMPS) >= _MAX_DUMPS:
            _DUMPS.clear()  # bounded: a long-lived process sees many clusters
        found = (template, template.spec.metadata.dump(), template.spec.spec.dump())
        _DUMPS[id(template)] = found
    return found[1], found[2]


def recorded_claim(cluster: Cluster, pod: Pod, entry: str) -> ResourceClaim | None:
    """The claim the pod's `status.resourceClaimStatuses` records as generated for a template
    entry, when the input holds it. Why: upstream's scheduler reads only that claim once it is
    made (resourceclaim.Name reads the pod's status), so a template deleted since costs the
    pod nothing (docs/semantics.md, "Messy clusters: what one bad object costs (issue #39)")."""
    for status in pod.status.resource_claim_statuses if pod.status else []:
        if status.name == entry and status.resource_claim_name:
            return cluster.claims.get((pod.metadata.ns, status.resource_claim_name))
    return None


def _generated_name(pod: Pod, entry: str) -> str:
    """The name of the claim generated for a template entry: the one the pod's
    `status.resourceClaimStatuses` records (upstream's `<pod>-<entry>-<random>`, as a cluster
    dump has it) — else `<pod>-<entry>`, ours. Why: a dumped pod whose claim was generated (and
    maybe allocated) must use that claim, not get a second one from the template."""
    for status in pod.status.resource_claim_statuses if pod.status else []:
        if status.name == entry and status.resource_claim_name:
            return status.resource_claim_name
    return f"{pod.metadata.name}-{entry}"


def node_conflict(cluster: Cluster, pod: Pod, claims: list[ResourceClaim], node: str | None) -> Reason | None:
    """Why `pod` cannot run on `node`, or None: a pod whose claims (`pod_claims`, computed once
    by the caller for every node it tries) are already allocated can only run where their node
    selectors allow."""
    for claim in claims:
        alloc = claim.status.allocation if claim.status else None
        if alloc is None or alloc.node_selector is None:
            continue
        view = NodeView.of(node, cluster.nodes)  # here, not above: most pods have no such claim
        if view is None or not node_selector_matches(alloc.node_selector, view, claim.ref):
            return Reason.of(Kind.CLAIM_ELSEWHERE, claim.ref, pod=pod.ref, node=node or None)
    return None
