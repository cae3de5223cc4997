"""deploy/: the image recipe, the Kubernetes manifests, the compose file, checked offline.

No Docker engine and no cluster here: the Dockerfile is read instruction by instruction, the
manifests are validated against the Kubernetes OpenAPI schemas (kubernetes-validate, strict: an
unknown field fails), the ServiceMonitor (a CRD) against deploy/k8s/schemas, kustomize references
are resolved by hand (every resource exists, every patch hits an object of the base, and the
patched object still validates), and the numbers that must agree across files are compared.
"""

from __future__ import annotations

import argparse
import copy
import fnmatch
import json
import re
import shlex
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
import yaml
from bigtwo.cli import serve_cmd
from bigtwo.service.container import MEMORY, Budget, idle_tree_bytes, size, tree_bytes
from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"
BASE = DEPLOY / "k8s" / "base"
OVERLAY = DEPLOY / "k8s" / "overlays" / "example"
DOCS = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))
DEPLOY_DOC = ROOT / "docs" / "DEPLOY.md"
MIB = 1 << 20
K8S_VERSIONS = ("1.29.0", "1.33.0")
"""An older and a recent release: the manifests use nothing newer than 1.29 (grpc probes: 1.27)."""


# -- helpers -----------------------------------------------------------------------------------------


def load_docs(path: Path) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc]


def kustomization(folder: Path) -> dict[str, Any]:
    return load_docs(folder / "kustomization.yaml")[0]


def base_objects() -> dict[tuple[str, str], dict[str, Any]]:
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for name in kustomization(BASE)["resources"]:
        for doc in load_docs(BASE / name):
            out[(doc["kind"], doc["metadata"]["name"])] = doc
    return out


def by_kind(kind: str) -> dict[str, Any]:
    matches = [doc for (k, _), doc in base_objects().items() if k == kind]
    assert len(matches) == 1, f"one {kind} expected"
    return matches[0]


def container(deployment: dict[str, Any]) -> dict[str, Any]:
    containers: list[dict[str, Any]] = deployment["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1
    return containers[0]


def env_of(deployment: dict[str, Any]) -> dict[str, str]:
    return {item["name"]: item.get("value", "") for item in container(deployment).get("env", [])}


def strategic_merge(base: Any, patch: Any) -> Any:
    """Enough of kustomize's strategic merge for our patches: maps merge, ``null`` deletes, lists of
    named items (containers, env, volumes, volumeMounts, ports) merge by name, other lists replace."""
    if isinstance(base, dict) and isinstance(patch, dict):
        out = dict(base)
        for key, value in patch.items():
            if value is None:
                out.pop(key, None)
            elif key in out:
                out[key] = strategic_merge(out[key], value)
            else:
                out[key] = copy.deepcopy(value)
        return out
    if isinstance(base, list) and isinstance(patch, list):
        if all(isinstance(item, dict) and "name" in item for item in base + patch):
            merged = {item["name"]: item for item in base}
            for item in patch:
                merged[item["name"]] = strategic_merge(merged.get(item["name"], {}), item)
            return list(merged.values())
        return copy.deepcopy(patch)
    return copy.deepcopy(patch)


def dockerfile_instructions() -> list[tuple[str, str]]:
    text = (DEPLOY / "Dockerfile").read_text()
    text = re.sub(r"\\\n", " ", text)
    out = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        word, _, rest = line.partition(" ")
        out.append((word.upper(), rest.strip()))
    return out


def server_env_names() -> set[str]:
    """Every environment variable ``bigtwo serve`` reads, from its own --help texts and keys.py."""
    parser = argparse.ArgumentParser()
    serve_cmd.add_arguments(parser)
    names = set()
    for action in parser._actions:
        names.update(re.findall(r"\bBIGTWO_[A-Z_]+", action.help or ""))
    names.update({"BIGTWO_TOKEN_KEYS", "BIGTWO_TOKEN_KEYS_FILE", "BIGTWO_HOME", "BIGTWO_LOG_CALLS"})
    return names


# -- the image recipe ---------------------------------------------------------------------------------


def test_dockerfile_is_multi_stage_slim_non_root_with_a_grpc_healthcheck() -> None:
    steps = dockerfile_instructions()
    args = {rest.split("=", 1)[0]: rest.split("=", 1)[1] for word, rest in steps if word == "ARG" and "=" in rest}
    froms = [rest.replace("${PYTHON_IMAGE}", args.get("PYTHON_IMAGE", "")) for word, rest in steps if word == "FROM"]
    assert len(froms) >= 2, "multi-stage"
    assert froms[0].endswith(" AS build")
    assert all(image.split()[0] == "python:3.11-slim" for image in froms)
    final_stage = max(i for i, (word, _) in enumerate(steps) if word == "FROM")
    final = steps[final_stage:]
    assert any(word == "RUN" and "from=build" in rest and "pip install" in rest for word, rest in final)
    users = [rest for word, rest in final if word == "USER"]
    assert users and users[-1].split(":")[0] not in ("0", "root"), "runs as a non-root user"
    uid = users[-1].split(":")[0]
    assert uid.isdigit(), "a numeric UID, so runAsNonRoot can check it"
    health = [rest for word, rest in final if word == "HEALTHCHECK"]
    assert len(health) == 1
    command = json.loads(health[0].split("CMD", 1)[1])
    assert command[:2] == ["bigtwo", "health"] and "--target" in command
    entry = [json.loads(rest) for word, rest in final if word == "ENTRYPOINT"]
    assert entry == [["bigtwo", "serve"]]
    exposed = " ".join(rest for word, rest in final if word == "EXPOSE").split()
    assert {"50051", "9464"} <= set(exposed)


def test_dockerfile_bakes_in_no_secret_and_uses_real_settings() -> None:
    steps = dockerfile_instructions()
    env_text = " ".join(rest for word, rest in steps if word == "ENV")
    env = dict(re.findall(r"(\w+)=(\S+)", env_text))
    for secret in ("BIGTWO_TOKEN_KEYS", "BIGTWO_AUTH_TOKEN", "BIGTWO_TLS_KEY"):
        assert secret not in env, f"{secret} must come at run time"
    known = server_env_names()
    assert {name for name in env if name.startswith("BIGTWO_")} <= known
    assert env["BIGTWO_TOKEN_KEYS_FILE"].startswith("/etc/bigtwo/keys/"), "keys are a mounted file"
    copies = [shlex.split(rest) for word, rest in steps if word == "COPY"]
    for parts in copies:
        sources = [p for p in parts[:-1] if not p.startswith("--")]
        for source in sources:
            assert not re.search(r"\.(pem|key|crt)$|token-keys|secret", source), source
            if not any(p.startswith("--from") for p in parts):
                assert (ROOT / source).exists(), f"COPY {source}: no such path"


def test_dockerignore_keeps_secrets_out_and_the_sources_in() -> None:
    patterns = [
        line.strip()
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]

    def ignored(path: str) -> bool:
        for pattern in patterns:
            pattern = pattern.rstrip("/")
            candidates = [pattern, pattern.removeprefix("**/")]
            parts = path.split("/")
            for cand in candidates:
                for i in range(len(parts)):
                    if fnmatch.fnmatch("/".join(parts[: i + 1]), cand) or fnmatch.fnmatch(parts[i], cand):
                        return True
        return False

    for leaked in (
        "secrets/token-keys",
        "deploy/secrets/token-keys",
        "tls/server.key",
        "a/b/server.pem",
        ".git/config",
    ):
        assert ignored(leaked), leaked
    needed = ("pyproject.toml", "setup.py", "README.md", "engine/deal.py", "service/server.py", "clients/cli/main.py")
    for path in needed:
        assert not ignored(path), path
    assert ignored(".venv/bin/python") and ignored("tests/test_deploy.py")
    assert ignored("clients/ts/node_modules/x.js"), "the TypeScript client's 188 MB stay out of the build context"


# -- Kubernetes ---------------------------------------------------------------------------------------


def test_every_kustomize_resource_exists_and_validates_against_the_kubernetes_schemas() -> None:
    objects = base_objects()
    assert {kind for kind, _ in objects} == {
        "ServiceAccount",
        "Deployment",
        "Service",
        "HorizontalPodAutoscaler",
        "PodDisruptionBudget",
        "NetworkPolicy",
        "ServiceMonitor",
    }
    for (kind, name), doc in objects.items():
        if kind == "ServiceMonitor":
            continue
        for version in K8S_VERSIONS:
            kubernetes_validate.validate(doc, version, strict=True)
        assert doc["metadata"]["labels"]["app.kubernetes.io/name"] == "bigtwo", (kind, name)


def test_strict_validation_catches_a_typo() -> None:
    deployment = copy.deepcopy(by_kind("Deployment"))
    container(deployment)["readinesProbe"] = container(deployment)["readinessProbe"]
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, K8S_VERSIONS[-1], strict=True)


def test_service_monitor_matches_its_schema_and_the_service() -> None:
    schema = json.loads((DEPLOY / "k8s" / "schemas" / "servicemonitor.schema.json").read_text())
    monitor = by_kind("ServiceMonitor")
    jsonschema.validate(monitor, schema)
    broken = copy.deepcopy(monitor)
    broken["spec"]["endpoints"][0]["intervall"] = "15s"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema)
    service = by_kind("Service")
    labels = service["metadata"]["labels"]
    assert monitor["spec"]["selector"]["matchLabels"].items() <= labels.items()
    ports = {port["name"] for port in service["spec"]["ports"]}
    assert {endpoint["port"] for endpoint in monitor["spec"]["endpoints"]} <= ports


def test_deployment_probes_grace_security_and_keys() -> None:
    deployment = by_kind("Deployment")
    pod = deployment["spec"]["template"]["spec"]
    main = container(deployment)
    env = env_of(deployment)
    assert set(env) <= server_env_names(), set(env) - server_env_names()
    ports = {port["name"]: port["containerPort"] for port in main["ports"]}
    assert ports == {
        "grpc": int(env["BIGTWO_PORT"]),
        "metrics": int(env["BIGTWO_METRICS_PORT"]),
        "web": int(env["BIGTWO_WEB_PORT"]),
    }
    for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
        assert main[probe]["grpc"]["port"] == ports["grpc"], probe
    assert main["readinessProbe"]["grpc"]["service"] == "bigtwo.v1.BigTwoService"

    # SIGTERM grace: preStop, then the server's drain, inside the kubelet's grace period.
    parser = argparse.ArgumentParser()
    serve_cmd.add_arguments(parser)
    grace = float(env["BIGTWO_GRACE"])
    assert grace != parser.get_default("grace") or grace >= 10
    pre_stop = main["lifecycle"]["preStop"]["exec"]["command"]
    assert pre_stop[0] == "sleep"
    budget = float(pre_stop[1]) + grace
    period = pod["terminationGracePeriodSeconds"]
    assert budget < period <= budget + 15, "the kubelet must not SIGKILL a drain, nor wait for nothing"
    docker_env = dict(re.findall(r"(\w+)=(\S+)", " ".join(r for w, r in dockerfile_instructions() if w == "ENV")))
    assert float(docker_env["BIGTWO_GRACE"]) == grace
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    assert float(compose["services"]["bigtwo-1"]["environment"]["BIGTWO_GRACE"]) == grace
    assert int(compose["services"]["bigtwo-1"]["stop_grace_period"].rstrip("s")) > grace

    # non-root, read-only root, nothing extra
    assert pod["securityContext"]["runAsNonRoot"] is True
    uid = [r for w, r in dockerfile_instructions() if w == "USER"][-1].split(":")[0]
    assert str(pod["securityContext"]["runAsUser"]) == uid
    security = main["securityContext"]
    assert security["readOnlyRootFilesystem"] is True
    assert security["allowPrivilegeEscalation"] is False
    assert security["capabilities"]["drop"] == ["ALL"]
    mounts = {mount["name"]: mount for mount in main["volumeMounts"]}
    volumes = {volume["name"]: volume for volume in pod["volumes"]}
    assert set(mounts) == set(volumes)
    assert "emptyDir" in volumes[mounts["tmp"]["name"]] and mounts["tmp"]["mountPath"] == "/tmp"

    # the signing keys: a Secret mounted as a file where BIGTWO_TOKEN_KEYS_FILE points
    keys_path = Path(env["BIGTWO_TOKEN_KEYS_FILE"])
    keys_mount = next(m for m in main["volumeMounts"] if Path(m["mountPath"]) == keys_path.parent)
    assert keys_mount["readOnly"] is True
    secret = volumes[keys_mount["name"]]["secret"]
    assert secret["secretName"] == "bigtwo-token-keys"
    assert [item["path"] for item in secret["items"]] == [keys_path.name]
    assert "BIGTWO_TOKEN_KEYS" not in env and "BIGTWO_AUTH_TOKEN" not in env, "no secret values in the spec"

    resources = main["resources"]
    assert resources["requests"]["cpu"] and resources["limits"]["memory"]


def test_service_hpa_pdb_and_network_policy_fit_the_deployment() -> None:
    deployment = by_kind("Deployment")
    pod_labels = deployment["spec"]["template"]["metadata"]["labels"]
    selector = deployment["spec"]["selector"]["matchLabels"]
    assert selector.items() <= pod_labels.items()
    ports = {p["name"]: p["containerPort"] for p in container(deployment)["ports"]}

    service = by_kind("Service")
    assert service["spec"]["clusterIP"] == "None", "headless: clients balance calls over pod addresses"
    assert service["spec"]["selector"].items() <= pod_labels.items()
    assert {p["targetPort"] for p in service["spec"]["ports"]} <= set(ports)
    assert "L7" in (BASE / "service.yaml").read_text(), "the note on L7 balancers"

    hpa = by_kind("HorizontalPodAutoscaler")
    assert hpa["apiVersion"] == "autoscaling/v2"
    target = hpa["spec"]["scaleTargetRef"]
    assert (target["kind"], target["name"]) == ("Deployment", deployment["metadata"]["name"])
    assert hpa["spec"]["minReplicas"] >= 2 and hpa["spec"]["maxReplicas"] > hpa["spec"]["minReplicas"]

    pdb = by_kind("PodDisruptionBudget")
    assert pdb["spec"]["selector"]["matchLabels"].items() <= pod_labels.items()
    assert pdb["spec"]["maxUnavailable"] < hpa["spec"]["minReplicas"]

    policy = by_kind("NetworkPolicy")
    assert policy["spec"]["podSelector"]["matchLabels"].items() <= pod_labels.items()
    allowed = {port["port"] for rule in policy["spec"]["ingress"] for port in rule["ports"]}
    assert allowed == set(ports.values())
    assert policy["spec"]["egress"] == [] and "Egress" in policy["spec"]["policyTypes"]

    account = by_kind("ServiceAccount")
    assert deployment["spec"]["template"]["spec"]["serviceAccountName"] == account["metadata"]["name"]


def test_overlay_references_resolve_and_patched_objects_validate() -> None:
    overlay = kustomization(OVERLAY)
    objects = base_objects()
    for resource in overlay["resources"]:
        path = (OVERLAY / resource).resolve()
        assert path.exists(), resource
        if path.is_dir():
            assert (path / "kustomization.yaml").exists()
        else:
            for doc in load_docs(path):
                for version in K8S_VERSIONS:
                    kubernetes_validate.validate(doc, version, strict=True)
    image_names = {image["name"] for image in overlay["images"]}
    assert image_names <= {container(by_kind("Deployment"))["image"].split(":")[0]}
    assert overlay["patches"]
    for patch in overlay["patches"]:
        target = patch["target"]
        key = (target["kind"], target["name"])
        assert key in objects, f"patch {patch['path']} targets {key}, which the base does not have"
        doc = load_docs(OVERLAY / patch["path"])[0]
        assert (doc["kind"], doc["metadata"]["name"]) == key
        group, _, version = objects[key]["apiVersion"].rpartition("/")
        assert (target.get("group", ""), target.get("version", version)) == (group, version)
        merged = strategic_merge(objects[key], doc)
        for version in K8S_VERSIONS:
            kubernetes_validate.validate(merged, version, strict=True)
        if key[0] == "Deployment":
            main = container(merged)
            mounts = {m["name"] for m in main["volumeMounts"]}
            assert mounts == {v["name"] for v in merged["spec"]["template"]["spec"]["volumes"]}
            assert set(env_of(merged)) <= server_env_names()
            for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
                handlers = {"grpc", "exec", "httpGet", "tcpSocket"} & set(main[probe])
                assert len(handlers) == 1, f"{probe}: one handler after the patch, got {handlers}"
                if "exec" in main[probe]:
                    assert main[probe]["exec"]["command"][:2] == ["bigtwo", "health"]
    for base_file in kustomization(BASE)["resources"]:
        assert (BASE / base_file).is_file()


def pool_and_caps(env: dict[str, Any]) -> tuple[int, int, int, int]:
    """The heavy workers, heavy waiting, calls in flight and server processes a spec sets."""
    names = ("BIGTWO_HEAVY_WORKERS", "BIGTWO_HEAVY_WAITING", "BIGTWO_MAX_CONCURRENT_RPCS", "BIGTWO_WORKERS")
    missing = [name for name in names[:3] if name not in env]
    assert not missing, f"set explicitly, not sized from what the container reports: {missing}"
    workers, waiting, calls = (int(env[name]) for name in names[:3])
    return workers, waiting, calls, int(env.get("BIGTWO_WORKERS", 1))


def check_fits(where: str, env: dict[str, Any], limit_cpu: float, request_mib: int, limit_mib: int) -> None:
    """The pool and caps a spec sets hold within its resources: no more workers than the server would
    size for its limits, the whole process tree at full load within the memory limit (less the
    headroom), and at idle within the memory request (service/container.py, measured figures)."""
    workers, waiting, calls, processes = pool_and_caps(env)
    assert workers >= 1 and waiting >= 0 and calls >= 1, f"{where}: 0 turns a cap off"
    sized = size(Budget(limit_cpu, "limit", 64, limit_mib * MIB, "limit"), processes)
    assert workers <= sized.heavy_workers, f"{where}: {workers} heavy workers, the limits hold {sized.heavy_workers}"
    assert waiting <= sized.heavy_waiting, where
    assert calls <= sized.max_concurrent_rpcs, f"{where}: {calls} calls, the memory holds {sized.max_concurrent_rpcs}"
    loaded, idle = tree_bytes(workers, calls, processes), idle_tree_bytes(workers, processes)
    assert loaded <= limit_mib * MIB * (1 - MEMORY.headroom), f"{where}: {loaded / MIB:.0f} MiB at full load"
    assert idle <= request_mib * MIB, f"{where}: {idle / MIB:.0f} MiB at idle over the {request_mib} Mi request"


def test_the_manifests_set_the_pool_and_caps_their_resources_hold() -> None:
    for where, deployment in (("base", by_kind("Deployment")), ("overlay", overlay_deployment())):
        _, request_mib, limit_cpu, limit_mib = resources_in_words(container(deployment)["resources"])
        check_fits(where, env_of(deployment), limit_cpu, request_mib, limit_mib)
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    for name, spec in compose["services"].items():
        if name.startswith("bigtwo-"):
            limit, request = mebibytes_compose(spec["mem_limit"]), mebibytes_compose(spec["mem_reservation"])
            check_fits(name, spec["environment"], float(spec["cpus"]), request, limit)
    base, replica = container(by_kind("Deployment"))["resources"], compose["services"]["bigtwo-1"]
    assert (float(cpu_cores(base["limits"]["cpu"])), mebibytes(base["limits"]["memory"])) == (
        float(replica["cpus"]),
        mebibytes_compose(replica["mem_limit"]),
    ), "compose gives a replica the base's limits"


def test_the_fit_check_catches_a_pool_sized_from_the_node() -> None:
    """The issue's pod: 16 workers (half of a 32-CPU node) under 1 CPU and 512 Mi."""
    env = {"BIGTWO_HEAVY_WORKERS": "16", "BIGTWO_HEAVY_WAITING": "16", "BIGTWO_MAX_CONCURRENT_RPCS": "2000"}
    with pytest.raises(AssertionError, match="16 heavy workers"):
        check_fits("node-sized", env, 1.0, 192, 512)
    with pytest.raises(AssertionError, match="set explicitly"):
        check_fits("unset", {"BIGTWO_MAX_CONCURRENT_RPCS": "2000"}, 1.0, 192, 512)


def mebibytes_compose(text: str) -> int:
    assert text.endswith("m"), f"compose memory in m (MiB), got {text}"
    return int(text[:-1])


def test_the_tls_overlay_probes_natively_on_the_plaintext_health_port() -> None:
    """No probe runs a process: with TLS on the service port, the kubelet's grpc probes ask the
    health-only port (``--health-port``), which the pod declares and the server is told to serve; the
    readiness probe asks for the service by name. The NetworkPolicy leaves that port to the node."""
    for deployment in (by_kind("Deployment"), overlay_deployment()):
        main = container(deployment)
        env = env_of(deployment)
        ports = {port["name"]: port["containerPort"] for port in main["ports"]}
        probed = int(env.get("BIGTWO_HEALTH_PORT") or env["BIGTWO_PORT"])
        if "BIGTWO_TLS_CERT" in env:
            assert probed == ports["health"] != ports["grpc"], "TLS on: the probes need the plaintext health port"
        for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
            assert set(main[probe]) & {"grpc", "exec", "httpGet", "tcpSocket"} == {"grpc"}, probe
            assert main[probe]["grpc"]["port"] == probed, probe
        assert main["readinessProbe"]["grpc"]["service"] == "bigtwo.v1.BigTwoService"
    policy_ports = {port["port"] for rule in by_kind("NetworkPolicy")["spec"]["ingress"] for port in rule["ports"]}
    assert ports["health"] not in policy_ports, "no pod needs the health port; the kubelet probes from the node"
    parser = argparse.ArgumentParser()
    serve_cmd.add_arguments(parser)
    assert parser.parse_args(["--health-port", str(ports["health"])]).health_port == ports["health"]


def test_compose_has_three_replicas_prometheus_and_grafana() -> None:
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    services = compose["services"]
    replicas = [name for name in services if name.startswith("bigtwo-")]
    assert len(replicas) == 3 and {"prometheus", "grafana"} <= set(services)
    host_ports: set[str] = set()
    for name in replicas:
        spec = services[name]
        assert spec["build"]["dockerfile"] == "deploy/Dockerfile"
        assert (DEPLOY / spec["build"]["context"] / spec["build"]["dockerfile"]).resolve().is_file()
        assert spec["healthcheck"]["test"][1:3] == ["bigtwo", "health"]
        assert spec["read_only"] is True
        assert spec["secrets"] == ["token-keys"]
        assert spec["environment"]["BIGTWO_TOKEN_KEYS_FILE"] == "/run/secrets/token-keys"
        assert set(spec["environment"]) <= server_env_names()
        host_ports.update(port.split(":")[1] for port in spec["ports"])
    assert len(host_ports) == 3
    assert "file" in compose["secrets"]["token-keys"]
    for name in ("prometheus", "grafana"):
        for volume in services[name]["volumes"]:
            source = volume.split(":")[0]
            assert (DEPLOY / source).is_file(), source
    scrape = yaml.safe_load((DEPLOY / "observability" / "prometheus.yml").read_text())
    targets = scrape["scrape_configs"][0]["static_configs"][0]["targets"]
    assert sorted(t.split(":")[0] for t in targets) == sorted(replicas)


# -- the docs agree with the manifests ----------------------------------------------------------------


def overlay_deployment() -> dict[str, Any]:
    """The base Deployment with the example overlay's patch applied."""
    for patch in kustomization(OVERLAY)["patches"]:
        if patch["target"]["kind"] == "Deployment":
            return dict(strategic_merge(by_kind("Deployment"), load_docs(OVERLAY / patch["path"])[0]))
    raise AssertionError("the example overlay patches no Deployment")


def cpu_cores(quantity: str | int | float) -> float:
    text = str(quantity)
    return int(text[:-1]) / 1000 if text.endswith("m") else float(text)


def mebibytes(quantity: str) -> int:
    assert quantity.endswith("Mi"), f"memory in Mi, got {quantity}"
    return int(quantity[:-2])


RESOURCES_IN_WORDS = re.compile(
    r"\b(?P<who>base|overlay)\b(?:(?!\bbase\b|\boverlay\b).){0,80}?"
    r"requests (?P<request_cpu>[\d.]+) CPU and (?P<request_mib>\d+) MiB, "
    r"limits (?P<limit_cpu>[\d.]+) CPU and (?P<limit_mib>\d+) MiB"
)
"""How the docs state a pod's resources: "the base ... requests 0.5 CPU and 192 MiB, limits 1 CPU and
512 MiB" (or "the example overlay ..."), in one sentence."""


def resources_in_words(resources: dict[str, Any]) -> tuple[float, int, float, int]:
    return (
        cpu_cores(resources["requests"]["cpu"]),
        mebibytes(resources["requests"]["memory"]),
        cpu_cores(resources["limits"]["cpu"]),
        mebibytes(resources["limits"]["memory"]),
    )


def test_the_docs_state_the_resources_the_manifests_set() -> None:
    """Every CPU figure of README and docs is a base's or the overlay's request or limit, as set."""
    expected = {
        "base": resources_in_words(container(by_kind("Deployment"))["resources"]),
        "overlay": resources_in_words(container(overlay_deployment())["resources"]),
    }
    seen: dict[str, set[str]] = {"base": set(), "overlay": set()}
    for path in DOCS:
        text = " ".join(path.read_text().split())
        covered: list[tuple[int, int]] = []
        for match in RESOURCES_IN_WORDS.finditer(text):
            stated = (
                float(match["request_cpu"]),
                int(match["request_mib"]),
                float(match["limit_cpu"]),
                int(match["limit_mib"]),
            )
            assert stated == expected[match["who"]], (
                f"{path.name}: {match[0]!r} but the {match['who']} sets {expected[match['who']]}"
            )
            seen[match["who"]].add(path.name)
            covered.append(match.span())
        for figure in re.finditer(r"\b\d+(?:\.\d+)? CPUs?\b(?!-)", text):
            assert any(start <= figure.start() < end for start, end in covered), (
                f"{path.name}: {text[max(0, figure.start() - 60) : figure.end() + 20]!r}: state a pod's resources as "
                "'the base ... requests X CPU and N MiB, limits Y CPU and M MiB' (or '... overlay ...')"
            )
    assert {"README.md", "DEPLOY.md"} <= seen["base"] and {"README.md", "DEPLOY.md"} <= seen["overlay"], seen


def test_the_deploy_page_states_the_numbers_the_manifests_set() -> None:
    """Replicas, autoscaling bounds, the shutdown's three numbers, concurrency and scrape interval."""
    text = " ".join(DEPLOY_DOC.read_text().split())
    base = by_kind("HorizontalPodAutoscaler")["spec"]
    overlay = strategic_merge(base, load_docs(OVERLAY / "hpa.yaml")[0]["spec"])
    deployment = by_kind("Deployment")
    main = container(deployment)
    assert f"{deployment['spec']['replicas']} replicas" in text
    assert f"`preStop` sleep {main['lifecycle']['preStop']['exec']['command'][1]} s" in text
    assert f"`BIGTWO_GRACE={env_of(deployment)['BIGTWO_GRACE']}` s" in text
    assert (
        f"`terminationGracePeriodSeconds: {deployment['spec']['template']['spec']['terminationGracePeriodSeconds']}`"
        in text
    )
    interval = by_kind("ServiceMonitor")["spec"]["endpoints"][0]["interval"]
    assert f"every {interval.removesuffix('s')} s" in text
    assert f"{base['minReplicas']}–{base['maxReplicas']} pods" in text
    assert f"{overlay['minReplicas']}–{overlay['maxReplicas']} replicas" in text
    assert f"{env_of(overlay_deployment())['BIGTWO_MAX_CONCURRENT_RPCS']} concurrent calls" in text


def shell_blocks(path: Path) -> list[str]:
    """The ``sh`` blocks of a Markdown page, continuation lines joined."""
    tokens = MarkdownIt("commonmark").parse(path.read_text())
    return [
        token.content.replace("\\\n", " ")
        for token in tokens
        if token.type == "fence" and token.info.split()[:1] == ["sh"]
    ]


def secrets_created(commands: str) -> tuple[dict[str, set[str]], set[str], set[str]]:
    """What ``kubectl create secret`` lines create: keys by Secret, namespaces, local files read."""
    keys: dict[str, set[str]] = {}
    namespaces: set[str] = set()
    files: set[str] = set()
    for line in commands.splitlines():
        words = shlex.split(line, comments=True)
        if words[:1] != ["kubectl"] or "secret" not in words or "create" not in words:
            continue
        if "-n" in words:
            namespaces.add(words[words.index("-n") + 1])
        kind, name = words[words.index("secret") + 1 : words.index("secret") + 3]
        made = keys.setdefault(name, set())
        for word in words:
            flag, _, value = word.partition("=")
            if flag == "--from-file":
                key, _, source = value.rpartition("=")
                made.add(key or Path(source).name)
                files.add(source)
            elif flag == "--from-literal":
                made.add(value.partition("=")[0])
        if kind == "tls":
            made.update({"tls.crt", "tls.key"})
            files.update(words[words.index(f) + 1] for f in ("--cert", "--key") if f in words)
            files.update(w.partition("=")[2] for w in words if w.startswith(("--cert=", "--key=")))
    return keys, namespaces, files


def secret_keys_read(deployment: dict[str, Any]) -> dict[str, set[str]]:
    """The keys of each Secret a Deployment mounts and reads: the listed items, and the files under
    the mount that its environment and probes name."""
    pod = deployment["spec"]["template"]["spec"]
    main = container(deployment)
    named = json.dumps(
        [main.get("env", []), *(main.get(p, {}) for p in ("readinessProbe", "livenessProbe", "startupProbe"))]
    )
    volumes = {volume["name"]: volume for volume in pod["volumes"]}
    needed: dict[str, set[str]] = {}
    for mount in main["volumeMounts"]:
        secret = volumes[mount["name"]].get("secret")
        if secret is None:
            continue
        keys = needed.setdefault(secret["secretName"], set())
        items = {item["path"]: item["key"] for item in secret.get("items", [])}
        keys.update(items.values())
        for file in re.findall(re.escape(mount["mountPath"].rstrip("/")) + r"/([\w.-]+)", named):
            assert not items or file in items, f"{file} is read under {mount['mountPath']} but not among its items"
            keys.add(items.get(file, file))
    return needed


def test_the_documented_secret_recipe_creates_every_key_the_manifests_read() -> None:
    blocks = shell_blocks(DEPLOY_DOC)
    recipe = "\n".join(block for block in blocks if "kubectl" in block and "create secret" in block)
    created, namespaces, files = secrets_created(recipe)
    assert namespaces == {kustomization(OVERLAY)["namespace"]}
    for deployment in (by_kind("Deployment"), overlay_deployment()):
        for secret, keys in secret_keys_read(deployment).items():
            assert secret in created, f"docs/DEPLOY.md creates no Secret {secret}"
            assert keys <= created[secret], f"Secret {secret}: the recipe lacks {sorted(keys - created[secret])}"
    assert secret_keys_read(overlay_deployment())["bigtwo-tls"] == {"tls.crt", "tls.key"}, "the pod reads no CA"

    # The files the recipe reads are made by the page's commands, for the name the probes check.
    made = set()
    for block in blocks:
        made.update(re.findall(r"(?:-out|-keyout|>)\s+(\S+)", block))
    assert {Path(f).name for f in files} <= made, f"the recipe reads files no command makes: {files - made}"
    # The certificate holds the names clients reach the headless Service by (the Locust workers verify it).
    namespace = kustomization(OVERLAY)["namespace"]
    text = "\n".join(blocks)
    for name in (f"bigtwo.{namespace}.svc", f"bigtwo.{namespace}.svc.cluster.local"):
        assert f"DNS:{name}" in text, f"the documented certificate does not hold {name}"


def test_the_secret_check_catches_a_recipe_without_a_key_the_pods_read() -> None:
    old_recipe = (
        "kubectl -n bigtwo-example create secret generic bigtwo-token-keys --from-file=token-keys=./token-keys\n"
        "kubectl -n bigtwo-example create secret tls bigtwo-tls --cert=server.crt --key=server.key\n"
    )
    created, _, files = secrets_created(old_recipe)
    assert created == {"bigtwo-token-keys": {"token-keys"}, "bigtwo-tls": {"tls.crt", "tls.key"}}
    assert files == {"./token-keys", "server.crt", "server.key"}
    assert secret_keys_read(overlay_deployment())["bigtwo-tls"] <= created["bigtwo-tls"]
    without_key = "kubectl -n bigtwo-example create secret generic bigtwo-tls --from-file=tls.crt=server.crt\n"
    assert not secret_keys_read(overlay_deployment())["bigtwo-tls"] <= secrets_created(without_key)[0]["bigtwo-tls"]
    # The Locust workers (deploy/k8s/locust) verify the service with the Secret's ca.crt: the recipe makes it.
    workers = load_docs(DEPLOY / "k8s" / "locust" / "workers.yaml")[0]
    recipe = "\n".join(block for block in shell_blocks(DEPLOY_DOC) if "create secret" in block)
    assert secret_keys_read(workers)["bigtwo-tls"] == {"ca.crt"} <= secrets_created(recipe)[0]["bigtwo-tls"]
