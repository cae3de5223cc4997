"""The deploy files' Redis for the spent-token ledger (issue 33; docs/DEPLOY.md "The spent-token
ledger"): the Kubernetes overlay's objects validate strictly against the Kubernetes schemas, its
patches merge onto the base and validate, the replicas point at the ledger's Service, the NetworkPolicies
admit only the bigtwo pods to Redis and let the bigtwo pods reach Redis and DNS only, and the compose
stack runs the same Redis unpublished."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import kubernetes_validate
import yaml
from test_deploy import DEPLOY, K8S_VERSIONS, base_objects, kustomization, load_docs, server_env_names, strategic_merge

LEDGER = DEPLOY / "k8s" / "overlays" / "ledger"


def ledger_objects() -> dict[tuple[str, str], dict[str, Any]]:
    """The overlay as kustomize builds it: the base with its patches, and its own resources."""
    objects = base_objects()
    overlay = kustomization(LEDGER)
    for resource in overlay["resources"]:
        path = (LEDGER / resource).resolve()
        if path.is_file():
            for doc in load_docs(path):
                objects[(doc["kind"], doc["metadata"]["name"])] = doc
        else:
            assert path == (DEPLOY / "k8s" / "base").resolve(), resource
    for patch in overlay["patches"]:
        target = patch["target"]
        key = (target["kind"], target["name"])
        assert key in objects, f"patch {patch['path']} targets {key}, which is not there"
        doc = load_docs(LEDGER / patch["path"])[0]
        assert (doc["kind"], doc["metadata"]["name"]) == key
        group, _, version = objects[key]["apiVersion"].rpartition("/")
        assert (target.get("group", ""), target.get("version", version)) == (group, version)
        objects[key] = strategic_merge(objects[key], doc)
    return objects


def test_the_ledger_overlay_validates_against_the_kubernetes_schemas() -> None:
    objects = ledger_objects()
    assert {("Deployment", "bigtwo-ledger-redis"), ("Service", "bigtwo-ledger-redis")} <= set(objects)
    assert ("NetworkPolicy", "bigtwo-ledger-redis") in objects
    for (kind, _), doc in objects.items():
        if kind == "ServiceMonitor":
            continue  # a CRD: tests/test_deploy.py checks it against its own schema
        for version in K8S_VERSIONS:
            kubernetes_validate.validate(doc, version, strict=True)


def test_the_replicas_use_the_ledger_service_fail_closed() -> None:
    objects = ledger_objects()
    spec = objects[("Deployment", "bigtwo")]["spec"]["template"]["spec"]["containers"][0]
    env = {item["name"]: item.get("value", "") for item in spec["env"]}
    assert {"BIGTWO_TOKEN_LEDGER", "BIGTWO_TOKEN_LEDGER_MODE", "BIGTWO_TOKEN_LEDGER_TTL"} <= set(env)
    assert set(env) <= server_env_names()
    assert env["BIGTWO_TOKEN_LEDGER_MODE"] == "fail-closed"
    assert "BIGTWO_TOKEN_KEYS_FILE" in env, "the patch adds to the base's environment, never replaces it"
    url = urlsplit(env["BIGTWO_TOKEN_LEDGER"])
    service = objects[("Service", "bigtwo-ledger-redis")]
    assert (url.scheme, url.hostname) == ("redis", service["metadata"]["name"])
    assert url.port in {port["port"] for port in service["spec"]["ports"]}
    redis = objects[("Deployment", "bigtwo-ledger-redis")]
    labels = redis["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= labels.items()
    args = redis["spec"]["template"]["spec"]["containers"][0]["args"]
    assert args[args.index("--save") + 1] == "" and args[args.index("--appendonly") + 1] == "no"
    assert args[args.index("--maxmemory-policy") + 1] == "noeviction", "a full ledger never forgets a spent token"


def test_only_the_bigtwo_pods_reach_redis_and_they_reach_nothing_else() -> None:
    objects = ledger_objects()
    redis_policy = objects[("NetworkPolicy", "bigtwo-ledger-redis")]["spec"]
    assert redis_policy["podSelector"]["matchLabels"] == {"app.kubernetes.io/name": "bigtwo-ledger-redis"}
    assert redis_policy["egress"] == [] and set(redis_policy["policyTypes"]) == {"Ingress", "Egress"}
    (rule,) = redis_policy["ingress"]
    assert rule["from"] == [{"podSelector": {"matchLabels": {"app.kubernetes.io/name": "bigtwo"}}}]
    assert [port["port"] for port in rule["ports"]] == [6379]
    bigtwo_policy = objects[("NetworkPolicy", "bigtwo")]["spec"]
    assert bigtwo_policy["ingress"] == base_objects()[("NetworkPolicy", "bigtwo")]["spec"]["ingress"]
    reached = {
        (tuple(sorted(peer.get("podSelector", {}).get("matchLabels", {}).items())), port["port"])
        for rule in bigtwo_policy["egress"]
        for peer in rule["to"]
        for port in rule["ports"]
    }
    assert reached == {
        ((("app.kubernetes.io/name", "bigtwo-ledger-redis"),), 6379),
        ((("k8s-app", "kube-dns"),), 53),
    }


def test_compose_runs_the_ledger_redis_unpublished() -> None:
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    services = compose["services"]
    redis = services["ledger-redis"]
    assert "ports" not in redis, "only the replicas reach the ledger"
    command = redis["command"]
    assert command[0] == "redis-server" and command[command.index("--save") + 1] == ""
    assert command[command.index("--maxmemory-policy") + 1] == "noeviction"
    for name in (name for name in services if name.startswith("bigtwo-")):
        env = services[name]["environment"]
        url = urlsplit(env["BIGTWO_TOKEN_LEDGER"])
        assert (url.scheme, url.hostname, url.port) == ("redis", "ledger-redis", 6379)
        assert "ledger-redis" in services[name]["depends_on"]
