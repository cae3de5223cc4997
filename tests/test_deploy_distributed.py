"""deploy/k8s/locust and deploy/dask: Locust workers and an audit on Dask beside the service, offline.

As in tests/test_deploy.py, no cluster: the built-in kinds are validated against the Kubernetes
OpenAPI schemas (kubernetes-validate, strict), the operator's DaskCluster against
deploy/dask/schemas (its pod and service specs as a Pod and a Service, strict), kustomize references
resolved by hand, and what must agree across files compared: images and commands with the
Dockerfile's build arguments and the project's extras, ports between containers, Services, commands
and NetworkPolicies, Secrets referenced (never inlined) and created by the documented recipe, and the
commands themselves parsed by the programs' own parsers (``dask``, ``locust`` in a subprocess, since
importing Locust patches this process for gevent, and ``bigtwo``).
"""

from __future__ import annotations

import copy
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import jsonschema
import kubernetes_validate
import pytest
import yaml
from service_support import free_port
from test_deploy import K8S_VERSIONS, dockerfile_instructions, load_docs, secrets_created, shell_blocks

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"
LOCUST = DEPLOY / "k8s" / "locust"
LOCUSTFILE_DIR = DEPLOY / "locust"
DASK = DEPLOY / "dask"
BASE = DEPLOY / "k8s" / "base"
EXAMPLE = DEPLOY / "k8s" / "overlays" / "example"
DEPLOY_DOC = ROOT / "docs" / "DEPLOY.md"
SCHEMA = DASK / "schemas" / "daskcluster.schema.json"
SECRET_WORDS = re.compile(r"KEY|SECRET|TOKEN|PASSWORD|CREDENTIAL", re.IGNORECASE)


# -- reading the manifests -------------------------------------------------------------------------


def kustomization(folder: Path) -> dict[str, Any]:
    return load_docs(folder / "kustomization.yaml")[0]


def own_objects(folder: Path) -> list[dict[str, Any]]:
    """The objects of a kustomization's own files (not those of the folders it includes)."""
    out = []
    for resource in kustomization(folder)["resources"]:
        if (folder / resource).is_file():
            out.extend(load_docs(folder / resource))
    return out


def find(objects: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    matches = [doc for doc in objects if doc["kind"] == kind and doc["metadata"]["name"] == name]
    assert len(matches) == 1, (kind, name)
    return matches[0]


def namespace_of(folder: Path) -> str:
    return str(kustomization(folder)["namespace"])


def daskcluster() -> dict[str, Any]:
    return find(own_objects(DASK), "DaskCluster", "bigtwo-audit")


def pod_specs() -> Iterator[tuple[str, dict[str, Any]]]:
    """Every pod spec the new manifests make, by a name for messages."""
    for folder in (LOCUST, DASK):
        for doc in own_objects(folder):
            if doc["kind"] in ("Deployment", "Job"):
                yield f"{doc['kind']}/{doc['metadata']['name']}", doc["spec"]["template"]["spec"]
    cluster = daskcluster()["spec"]
    yield "DaskCluster scheduler", cluster["scheduler"]["spec"]
    yield "DaskCluster worker", cluster["worker"]["spec"]


def containers(pod: dict[str, Any]) -> list[dict[str, Any]]:
    return [*pod.get("initContainers", []), *pod["containers"]]


def only_container(pod: dict[str, Any]) -> dict[str, Any]:
    assert len(pod["containers"]) == 1
    return dict(pod["containers"][0])


def validate(doc: dict[str, Any]) -> None:
    for version in K8S_VERSIONS:
        kubernetes_validate.validate(doc, version, strict=True)


def as_pod(spec: dict[str, Any], labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "check", "labels": labels or {}}, "spec": spec}


def as_service(spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "check"}, "spec": spec}


def generated_configmap() -> dict[str, Any]:
    """The ConfigMap deploy/locust/kustomization.yaml generates (without kustomize's name hash)."""
    generator = kustomization(LOCUSTFILE_DIR)["configMapGenerator"]
    assert len(generator) == 1
    files = generator[0]["files"]
    for name in files:
        assert "/" not in name, "kustomize reads generator files only inside the kustomization's folder"
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": generator[0]["name"], "labels": generator[0]["options"]["labels"]},
        "data": {name: (LOCUSTFILE_DIR / name).read_text() for name in files},
    }


# -- validation ---------------------------------------------------------------------------------------


def test_every_new_manifest_of_a_built_in_kind_validates_strictly() -> None:
    seen = set()
    for folder in (LOCUST, DASK):
        for doc in own_objects(folder):
            seen.add(doc["kind"])
            if doc["kind"] == "DaskCluster":
                continue
            validate(doc)
    assert seen == {"ServiceAccount", "Deployment", "Service", "NetworkPolicy", "Job", "DaskCluster"}
    configmap = generated_configmap()
    validate(configmap)
    assert len(json.dumps(configmap["data"]).encode()) < 1_000_000, "a ConfigMap holds at most 1 MiB"


def test_the_daskcluster_matches_its_schema_and_its_specs_validate() -> None:
    schema = json.loads(SCHEMA.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    cluster = daskcluster()
    jsonschema.validate(cluster, schema)
    spec = cluster["spec"]
    validate(as_pod(spec["scheduler"]["spec"]))
    validate(as_pod(spec["worker"]["spec"]))
    validate(as_service(spec["scheduler"]["service"]))


@pytest.mark.parametrize(
    ("where", "typo"),
    [
        (("spec", "worker"), "replica"),
        (("spec", "scheduler"), "servcie"),
        (("spec",), "idleTimout"),
        (("spec", "worker", "metadata"), "label"),
    ],
)
def test_the_daskcluster_schema_catches_a_typo(where: tuple[str, ...], typo: str) -> None:
    """The CRD keeps unknown fields, so the API server would accept these and the operator ignore them."""
    schema = json.loads(SCHEMA.read_text())
    broken = copy.deepcopy(daskcluster())
    node = broken
    for key in where:
        node = node[key]
    node[typo] = copy.deepcopy(next(iter(node.values())))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema)


def test_a_typo_inside_the_daskcluster_pod_spec_is_caught_too() -> None:
    worker = copy.deepcopy(daskcluster()["spec"]["worker"]["spec"])
    only_container(worker)  # one container, so the typo lands in it
    worker["containers"][0]["comand"] = worker["containers"][0].pop("command")
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(as_pod(worker), K8S_VERSIONS[-1], strict=True)


# -- kustomize ---------------------------------------------------------------------------------------


def test_the_kustomizations_resolve_and_stay_out_of_the_base() -> None:
    locust = kustomization(LOCUST)
    for folder in (LOCUST, DASK, LOCUSTFILE_DIR):
        for resource in kustomization(folder).get("resources", []):
            path = (folder / resource).resolve()
            assert path.is_file() or (path / "kustomization.yaml").is_file(), (folder, resource)
    assert (LOCUST / "../overlays/example").resolve() == EXAMPLE.resolve()
    assert "../overlays/example" in locust["resources"] and "../../locust" in locust["resources"]
    assert namespace_of(LOCUST) == namespace_of(DASK) == namespace_of(EXAMPLE), "beside the service"
    for folder in (BASE, EXAMPLE):
        text = json.dumps(kustomization(folder))
        assert "locust" not in text and "dask" not in text, f"{folder.name} must not include the load or batch pods"
    # The Locust pods name the generated ConfigMap, which kustomize renames with its hash.
    name = generated_configmap()["metadata"]["name"]
    for doc in own_objects(LOCUST):
        if doc["kind"] == "Deployment":
            volumes = doc["spec"]["template"]["spec"]["volumes"]
            assert name in [v.get("configMap", {}).get("name") for v in volumes], doc["metadata"]["name"]


# -- images and commands --------------------------------------------------------------------------------


def documented_batch_build() -> tuple[str, dict[str, str]]:
    """The image name and build arguments of docs/DEPLOY.md's ``docker build`` of the batch image."""
    for block in shell_blocks(DEPLOY_DOC):
        for line in block.splitlines():
            words = shlex.split(line, comments=True)
            if words[:2] == ["docker", "build"] and any(w.startswith("EXTRAS=") for w in words):
                args = dict(words[i + 1].split("=", 1) for i, w in enumerate(words) if w == "--build-arg")
                return words[words.index("-t") + 1], args
    raise AssertionError("docs/DEPLOY.md builds no image with --build-arg EXTRAS=...")


def extras_of(spec: str) -> set[str]:
    match = re.fullmatch(r"\[([\w,-]+)\]", spec)
    assert match, spec
    return set(match.group(1).split(","))


def test_the_images_are_the_service_image_with_the_extras_their_commands_need() -> None:
    steps = dockerfile_instructions()
    runs = [rest for word, rest in steps if word == "RUN"]
    assert any('pip wheel --wheel-dir /wheels ".${EXTRAS}" ${EXTRA_PACKAGES}' in run for run in runs)
    assert any('pip install --no-index --find-links=/wheels "bigtwo${EXTRAS}" ${EXTRA_PACKAGES}' in run for run in runs)
    # The service image is the server and its browser port, nothing else (README "Installs").
    declared = [rest for word, rest in steps if word == "ARG"]
    assert declared.count('EXTRAS="[server,web,ledger]"') == 2, "declared in both stages"

    image, build_args = documented_batch_build()
    extras = extras_of(build_args["EXTRAS"])
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert extras <= set(project)
    installed = " ".join(dep for extra in extras for dep in project[extra]) + " " + build_args.get("EXTRA_PACKAGES", "")
    # The init container runs python -c "from distributed import Client; ...".
    # bigtwo audit prints with rich: the cli extra (which holds the server's).
    program_needs = {"dask": "dask[distributed]", "locust": "locust", "bigtwo": "rich", "python": "dask[distributed]"}

    rewrite = {i["name"]: f"{i['newName']}:{i['newTag']}" for i in kustomization(LOCUST)["images"]}
    images = set()
    for where, pod in pod_specs():
        for box in containers(pod):
            full = rewrite.get(box["image"], box["image"])
            images.add(full)
            assert full == image, f"{where}: {full}, but docs/DEPLOY.md builds {image}"
            program = box["command"][0]
            assert program_needs[program] in installed, f"{where}: {program} needs {program_needs[program]}"
            assert "args" not in box, f"{where}: the image's ENTRYPOINT is bigtwo serve: give the whole command"
    assert len(images) == 1, images
    assert "s3fs" in build_args.get("EXTRA_PACKAGES", ""), "the workers read s3:// replays"
    assert "distributed" in extras and "load" in extras


def command_of(folder: Path, kind: str, name: str) -> list[str]:
    return list(only_container(find(own_objects(folder), kind, name)["spec"]["template"]["spec"])["command"])


def test_the_locust_commands_parse_with_locust_and_agree_on_the_ports() -> None:
    master = command_of(LOCUST, "Deployment", "bigtwo-locust-master")
    worker = command_of(LOCUST, "Deployment", "bigtwo-locust-worker")
    script = (
        "import json, sys\n"
        "from locust.argument_parser import get_parser\n"
        "out = {}\n"
        "for name, args in json.loads(sys.argv[1]).items():\n"
        "    o = get_parser(default_config_files=[]).parse_args(args)\n"
        "    out[name] = {k: getattr(o, k) for k in ('locustfile', 'master', 'worker', 'master_host',"
        " 'master_port', 'master_bind_port', 'web_port')}\n"
        "print(json.dumps(out))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, json.dumps({"master": master[1:], "worker": worker[1:]})],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    parsed = json.loads(done.stdout)
    assert parsed["master"]["master"] and parsed["worker"]["worker"]
    objects = own_objects(LOCUST)
    service = find(objects, "Service", "bigtwo-locust-master")
    ports = {p["name"]: p["port"] for p in service["spec"]["ports"]}
    master_box = only_container(find(objects, "Deployment", "bigtwo-locust-master")["spec"]["template"]["spec"])
    container_ports = {p["name"]: p["containerPort"] for p in master_box["ports"]}
    assert (
        container_ports
        == ports
        == {"master": parsed["master"]["master_bind_port"], "web": parsed["master"]["web_port"]}
    )
    assert parsed["worker"]["master_host"] == service["metadata"]["name"]
    assert parsed["worker"]["master_port"] == ports["master"]
    # The locustfile is where the ConfigMap is mounted.
    for deployment in ("bigtwo-locust-master", "bigtwo-locust-worker"):
        pod = find(objects, "Deployment", deployment)["spec"]["template"]["spec"]
        mounts = {m["name"]: m["mountPath"] for m in only_container(pod)["volumeMounts"]}
        locustfile = Path(parsed["master" if "master" in deployment else "worker"]["locustfile"])
        assert str(locustfile.parent) == mounts["locustfile"] and locustfile.name in generated_configmap()["data"]
    policy = find(objects, "NetworkPolicy", "bigtwo-locust")
    assert {port["port"] for port in policy["spec"]["ingress"][0]["ports"]} == {ports["master"]}


def test_the_dask_commands_parse_with_dask_and_agree_on_the_ports(tmp_path: Path) -> None:
    from bigtwo.cli.main import build_parser
    from bigtwo.tools.cluster import DaskTarget
    from distributed.cli import dask_scheduler, dask_worker

    spec = daskcluster()["spec"]
    scheduler_box = only_container(spec["scheduler"]["spec"])
    worker_box = only_container(spec["worker"]["spec"])
    scheduler = dask_scheduler.main.make_context("scheduler", list(scheduler_box["command"][2:])).params
    worker = dask_worker.main.make_context("worker", list(worker_box["command"][2:])).params
    assert scheduler_box["command"][:2] == ["dask", "scheduler"] and worker_box["command"][:2] == ["dask", "worker"]
    assert worker["nthreads"] == 1 and worker["scheduler"] is None, "one thread; the operator gives the address"
    assert worker["name"] == "$(DASK_WORKER_NAME)", "the name the operator sets in the environment"
    assert worker["local_directory"].startswith("/tmp/")

    ports = {p["name"]: p["containerPort"] for p in scheduler_box["ports"]}
    assert ports == {
        "tcp-comm": int(scheduler["port"]),
        "http-dashboard": int(scheduler["dashboard_address"].lstrip(":")),
    }
    service = spec["scheduler"]["service"]
    assert {p["name"]: p["port"] for p in service["ports"]} == ports
    assert {p["targetPort"] for p in service["ports"]} == set(ports)
    assert service["selector"] == {"dask.org/cluster-name": "bigtwo-audit", "dask.org/component": "scheduler"}
    for probe in ("readinessProbe", "livenessProbe"):
        assert scheduler_box[probe]["httpGet"]["port"] in ports

    # The Job joins the Service the operator makes (<cluster>-scheduler) on its tcp-comm port.
    address = f"tcp://{daskcluster()['metadata']['name']}-scheduler:{ports['tcp-comm']}"
    job = find(own_objects(DASK), "Job", "bigtwo-audit")["spec"]["template"]["spec"]
    command = only_container(job)["command"]
    assert command[:2] == ["bigtwo", "audit"] and command[command.index("--dask") + 1] == address
    assert DaskTarget.parse(address).address == address
    assert f"Client('{address}'" in " ".join(job["initContainers"][0]["command"]), "the wait is for the same scheduler"
    key_path = Path(command[command.index("--key") + 1])
    local_key = tmp_path / key_path.name
    local_key.write_text("k" * 64)
    argv = [str(local_key) if word == str(key_path) else word for word in command[1:]]
    args = build_parser(argv).parse_args(argv)
    assert args.dask == DaskTarget.parse(address) and args.key == str(local_key) and args.require_signature
    assert [urlparse(path).scheme for path in args.paths] == ["s3"], "replays named by URL, read by the workers"

    # Only the cluster's pods and the Job reach the scheduler and workers.
    policy = find(own_objects(DASK), "NetworkPolicy", "bigtwo-audit-dask")
    job_labels = find(own_objects(DASK), "Job", "bigtwo-audit")["spec"]["template"]["metadata"]["labels"]
    sources = [peer["podSelector"]["matchLabels"] for peer in policy["spec"]["ingress"][0]["from"]]
    assert any(selector.items() <= job_labels.items() for selector in sources), "the Job may reach the scheduler"
    assert policy["spec"]["podSelector"]["matchLabels"].items() <= service["selector"].items()


# -- security, resources, secrets ------------------------------------------------------------------------


def test_every_pod_is_non_root_read_only_and_bounded() -> None:
    """The example namespace enforces the restricted Pod Security Standard: every pod must meet it."""
    namespace = find(load_docs(EXAMPLE / "namespace.yaml"), "Namespace", namespace_of(DASK))
    assert namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"
    uid = [rest for word, rest in dockerfile_instructions() if word == "USER"][-1].split(":")[0]
    names = []
    for where, pod in pod_specs():
        names.append(where)
        security = pod["securityContext"]
        assert security["runAsNonRoot"] is True and str(security["runAsUser"]) == uid, where
        assert security["seccompProfile"]["type"] == "RuntimeDefault", where
        assert pod["automountServiceAccountToken"] is False, where
        volumes = {volume["name"]: volume for volume in pod["volumes"]}
        assert set(volumes) <= {"tmp", "locustfile", "tls-ca", "replay-key"}, where
        for box in containers(pod):
            context = box["securityContext"]
            assert context["readOnlyRootFilesystem"] is True and context["allowPrivilegeEscalation"] is False, where
            assert context["capabilities"]["drop"] == ["ALL"], where
            resources = box["resources"]
            assert resources["requests"]["cpu"] and resources["requests"]["memory"], where
            assert resources["limits"]["cpu"] and resources["limits"]["memory"], where
            mounts = {mount["name"]: mount for mount in box["volumeMounts"]}
            assert set(mounts) <= set(volumes), where
            assert mounts["tmp"]["mountPath"] == "/tmp" and "emptyDir" in volumes["tmp"], where
            assert all(m.get("readOnly") for n, m in mounts.items() if n != "tmp"), where
    assert len(names) == 5, names


def env_secret_refs(box: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """A container's environment from Secrets: variable -> (Secret, key). Fails on an inlined secret."""
    refs = {}
    for item in box.get("env", []):
        if "value" in item:
            assert not SECRET_WORDS.search(item["name"]), f"{item['name']} is inlined; take it from a Secret"
            continue
        ref = item["valueFrom"]["secretKeyRef"]
        refs[item["name"]] = (ref["name"], ref["key"])
    return refs


def test_the_replay_store_credentials_come_from_a_secret_and_the_docs_create_it() -> None:
    for folder in (LOCUST, DASK):
        assert "Secret" not in {doc["kind"] for doc in own_objects(folder)}, "Secrets are made out of band"
    text = "\n".join(path.read_text() for path in (*DASK.glob("*.yaml"), *LOCUST.glob("*.yaml")))
    assert not re.search(r"AKIA[0-9A-Z]{16}", text), "an AWS access key id in a manifest"

    spec = daskcluster()["spec"]
    job = find(own_objects(DASK), "Job", "bigtwo-audit")["spec"]["template"]["spec"]
    worker_refs = env_secret_refs(only_container(spec["worker"]["spec"]))
    job_refs = env_secret_refs(only_container(job))
    assert worker_refs == job_refs, "the workers read the store, the Job lists it: the same credentials"
    assert {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"} <= set(worker_refs)
    for _, pod in pod_specs():
        for box in containers(pod):
            env_secret_refs(box)

    # The signing key: a Secret mounted as a file in the Job, where --key points.
    box = only_container(job)
    key_path = Path(box["command"][box["command"].index("--key") + 1])
    mount = next(m for m in box["volumeMounts"] if Path(m["mountPath"]) == key_path.parent)
    volume = next(v for v in job["volumes"] if v["name"] == mount["name"])["secret"]
    assert [item["path"] for item in volume["items"]] == [key_path.name]

    needed: dict[str, set[str]] = {}
    optional = {
        item["valueFrom"]["secretKeyRef"]["key"]
        for item in box["env"]
        if item["valueFrom"]["secretKeyRef"].get("optional")
    }
    for secret, key in worker_refs.values():
        if key not in optional:
            needed.setdefault(secret, set()).add(key)
    needed.setdefault(volume["secretName"], set()).update(item["key"] for item in volume["items"])

    recipe = "\n".join(block for block in shell_blocks(DEPLOY_DOC) if "create secret" in block)
    created, namespaces, _ = secrets_created(recipe)
    assert namespaces == {namespace_of(DASK)}
    for secret, keys in needed.items():
        assert secret in created, f"docs/DEPLOY.md creates no Secret {secret}"
        assert keys <= created[secret], f"Secret {secret}: the recipe lacks {sorted(keys - created[secret])}"


def test_the_service_policy_admits_the_locust_workers_and_their_targets_name_the_service() -> None:
    base_policy = find(load_docs(BASE / "networkpolicy.yaml"), "NetworkPolicy", "bigtwo")
    service = find(load_docs(BASE / "service.yaml"), "Service", "bigtwo")
    grpc_port = next(p["port"] for p in service["spec"]["ports"] if p["name"] == "grpc")
    workers = find(own_objects(LOCUST), "Deployment", "bigtwo-locust-worker")
    labels = workers["spec"]["template"]["metadata"]["labels"]
    admitted = [
        rule
        for rule in base_policy["spec"]["ingress"]
        if grpc_port in {p["port"] for p in rule["ports"]}
        and any(
            peer.get("namespaceSelector") == {} and peer["podSelector"]["matchLabels"].items() <= labels.items()
            for peer in rule["from"]
        )
    ]
    assert admitted, "the service's NetworkPolicy would drop the workers' calls"
    env = {item["name"]: item.get("value", "") for item in only_container(workers["spec"]["template"]["spec"])["env"]}
    expected = f"dns:///{service['metadata']['name']}.{namespace_of(LOCUST)}.svc.cluster.local:{grpc_port}"
    assert env["BIGTWO_TARGETS"] == expected, "the headless Service's name: every ready pod"
    assert service["spec"]["clusterIP"] == "None"
    # The example overlay serves TLS: the workers verify it with the CA its Secret holds, for a name
    # the documented certificate holds.
    pod = workers["spec"]["template"]["spec"]
    mounts = {m["name"]: m["mountPath"] for m in only_container(pod)["volumeMounts"]}
    ca = Path(env["BIGTWO_TLS_CA"])
    tls = next(v for v in pod["volumes"] if v["name"] == "tls-ca")["secret"]
    assert Path(mounts["tls-ca"]) == ca.parent and [i["path"] for i in tls["items"]] == [ca.name]
    assert tls["secretName"] == "bigtwo-tls" and [i["key"] for i in tls["items"]] == ["ca.crt"], "not the server key"
    host = expected.removeprefix("dns:///").rpartition(":")[0]
    assert f"DNS:{host}" in "\n".join(shell_blocks(DEPLOY_DOC)), "the certificate names the target"
    policy = find(own_objects(LOCUST), "NetworkPolicy", "bigtwo-locust")
    egress_ports = {p["port"] for rule in policy["spec"]["egress"] for p in rule["ports"]}
    assert grpc_port in egress_ports and 53 in egress_ports


# -- the real build, where kubectl is installed --------------------------------------------------------


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl kustomize builds offline, when installed")
@pytest.mark.parametrize("folder", [LOCUST, DASK], ids=["locust", "dask"])
def test_kustomize_builds_the_folders_and_every_built_object_validates(folder: Path) -> None:
    """kustomize itself (``kubectl kustomize``: no cluster) resolves what the tests above resolve by
    hand: namespaces set, the ConfigMap's hashed name written into the pods that mount it, images."""
    done = subprocess.run(["kubectl", "kustomize", str(folder)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    built = [doc for doc in yaml.safe_load_all(done.stdout) if doc]
    schema = json.loads(SCHEMA.read_text())
    namespace = namespace_of(folder)
    for doc in built:
        if doc["kind"] == "DaskCluster":
            jsonschema.validate(doc, schema)
        elif doc["kind"] != "ServiceMonitor":  # the example's CRD, checked by tests/test_deploy.py
            validate(doc)
        if doc["kind"] != "Namespace":
            assert doc["metadata"]["namespace"] == namespace, (doc["kind"], doc["metadata"]["name"])
    configmaps = {doc["metadata"]["name"] for doc in built if doc["kind"] == "ConfigMap"}
    for doc in built:
        if doc["kind"] in ("Deployment", "Job"):
            pod = doc["spec"]["template"]["spec"]
            for volume in pod["volumes"]:
                if "configMap" in volume:
                    assert volume["configMap"]["name"] in configmaps, "the hashed name reached the pod"
            for box in containers(pod):
                assert "/" in box["image"] and ":" in box["image"].rpartition("/")[2], box["image"]
    own = {(doc["kind"], doc["metadata"]["name"]) for doc in own_objects(folder)}
    assert own <= {(doc["kind"], doc["metadata"]["name"]) for doc in built}


# -- the commands, run ---------------------------------------------------------------------------------


def replaced(command: list[str], flags: dict[str, str], words: dict[str, str] | None = None) -> list[str]:
    """``command`` with the value after each of ``flags`` and each of ``words`` replaced; a flag the
    command lacks is an error (ValueError), so the manifests cannot drift from what this test runs."""
    out = [(words or {}).get(word, word) for word in command]
    for flag, value in flags.items():
        out[out.index(flag) + 1] = value
    return out


@pytest.mark.timeout(120)
def test_the_manifests_commands_audit_signed_replays_on_a_local_dask_cluster(tmp_path: Path) -> None:
    """The scheduler's, a worker's, the wait's and the Job's commands exactly as the manifests give
    them, with only what Kubernetes would fill in replaced: addresses (127.0.0.1 and free ports for
    the Service's name and fixed ports), the worker's name (the operator's DASK_WORKER_NAME), the
    key's path (the mounted Secret) and the store's URL (a file:// folder of signed replays)."""
    spec = daskcluster()["spec"]
    job = find(own_objects(DASK), "Job", "bigtwo-audit")["spec"]["template"]["spec"]
    audit = list(only_container(job)["command"])
    address = audit[audit.index("--dask") + 1]
    port = free_port()
    local = f"tcp://127.0.0.1:{port}"
    bin_dir = Path(sys.executable).parent
    folder = tmp_path / "replays"
    folder.mkdir()
    for name in ("dragon.toml", "hong-kong.toml", "match-4-deals.toml"):  # the signed golden replays
        shutil.copy(ROOT / "tests" / "golden" / name, folder)
    store = next(word for word in audit if word.startswith("s3://"))

    scheduler = replaced(
        only_container(spec["scheduler"]["spec"])["command"],
        {"--port": str(port), "--dashboard-address": f"127.0.0.1:{free_port()}"},
    )
    worker = replaced(
        only_container(spec["worker"]["spec"])["command"],
        {"--dashboard-address": f"127.0.0.1:{free_port()}", "--local-directory": str(tmp_path / "dask")},
        {"$(DASK_WORKER_NAME)": "bigtwo-audit-default-worker-0"},
    )
    wait = [word.replace(address, local) for word in job["initContainers"][0]["command"]]
    audit = replaced(
        audit,
        {"--dask": local, "--key": str(ROOT / "tests" / "golden" / "test-signing-key")},
        {store: f"file://{folder}"},
    )
    env = {**{k: v for k, v in os.environ.items() if not k.startswith(("DASK_", "BIGTWO_"))}}
    started: list[subprocess.Popen[bytes]] = []
    logs = tmp_path / "dask.log"
    try:
        with logs.open("wb") as log:
            for command, extra in ((scheduler, ["--host", "127.0.0.1"]), (worker, ["--host", "127.0.0.1"])):
                started.append(
                    subprocess.Popen(
                        [str(bin_dir / command[0]), *command[1:], *extra],
                        env={**env, "DASK_SCHEDULER_ADDRESS": local},  # what the operator sets
                        stdout=log,
                        stderr=subprocess.STDOUT,
                        start_new_session=True,
                    )
                )
            waited = subprocess.run([sys.executable, *wait[1:]], env=env, capture_output=True, text=True, timeout=90)
            assert waited.returncode == 0, waited.stderr + logs.read_text(errors="replace")
            done = subprocess.run(
                [str(bin_dir / audit[0]), *audit[1:]], env=env, capture_output=True, text=True, timeout=90
            )
        assert done.returncode == 0, done.stdout + done.stderr + logs.read_text(errors="replace")
        assert "3 valid, 0 failed" in done.stdout + done.stderr, done.stdout + done.stderr
    finally:
        for process in started:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in started:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


def test_the_deploy_page_states_what_the_manifests_set() -> None:
    text = " ".join(DEPLOY_DOC.read_text().split())
    headings = re.findall(r"^## (.+)$", DEPLOY_DOC.read_text(), re.MULTILINE)
    assert "Locust workers" in headings and "Dask" in headings, "AUDIT.md links DEPLOY.md#dask"
    objects = own_objects(LOCUST)
    workers = find(objects, "Deployment", "bigtwo-locust-worker")
    master = find(objects, "Service", "bigtwo-locust-master")
    ports = {p["name"]: p["port"] for p in master["spec"]["ports"]}
    assert f"{workers['spec']['replicas']} replicas of `locust --worker" in text
    assert f"ports `master` {ports['master']} and `web` {ports['web']}" in text
    env = {e["name"]: e.get("value") for e in only_container(workers["spec"]["template"]["spec"])["env"]}
    assert f"`BIGTWO_TARGETS={env['BIGTWO_TARGETS']}`" in text
    assert f"scale deployment {workers['metadata']['name']}" in text

    cluster = daskcluster()
    name = cluster["metadata"]["name"]
    assert f"{cluster['spec']['worker']['replicas']} workers (`dask worker --nthreads 1`" in text
    assert f"scale daskworkergroup {name}-default" in text, "the operator's name for the default worker group"
    assert f"Service the operator names `{name}-scheduler`" in text
    job = find(own_objects(DASK), "Job", "bigtwo-audit")["spec"]["template"]["spec"]
    assert " ".join(only_container(job)["command"]) in text, "the Job's command, as the page shows it"
    assert f"`backoffLimit: {find(own_objects(DASK), 'Job', 'bigtwo-audit')['spec']['backoffLimit']}`" in text
