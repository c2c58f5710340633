#!/usr/bin/env python3
"""Write every chart's ``values.schema.json`` (JSON Schema draft-07) from the definitions in this file.

The job charts (tfjob, pytorchjob, mpijob) share most of their values (the training container, volumes,
pod placement, runPolicy, the replica block and the tensorboard subchart), so their schemas are built here
from one set of definitions instead of being kept in sync by hand.

    scripts/gen-chart-schemas.py           # rewrite charts/*/values.schema.json
    scripts/gen-chart-schemas.py --check   # exit 1 if a committed schema differs from what this writes

Rules every schema follows (the tests check them):
- every object that lists ``properties`` has ``additionalProperties: false`` (unknown keys are rejected),
  except free-form maps (labels, nodeSelector, ...) that describe their values instead;
- every property has a ``description`` (scripts/gen-chart-readme.py turns them into the README tables);
- ``global`` is allowed (an object) at the top of every chart: helm adds ``global: {}`` to a subchart's
  values and passes a user's ``global`` to every chart; a job chart also allows ``arena-common`` (helm adds
  the library chart's values, ``{global: {}}``, under its name) and ``tensorboard`` (the subchart's values,
  described here in full so that a typo is rejected even while the subchart is disabled).
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CHARTS = REPO / "charts"
DRAFT = "http://json-schema.org/draft-07/schema#"

DNS_LABEL = "^([a-z0-9]([-a-z0-9]*[a-z0-9])?)?$"
# Names that become Service names (DNS-1035 labels: they start with a letter).
SERVICE_NAME = "^([a-z]([-a-z0-9]*[a-z0-9])?)?$"
ABS_PATH = "^/"
QUANTITY_CORE = r"([0-9]+(\.[0-9]+)?|\.[0-9]+)([eE][0-9]+|[numkMGTPE]|[KMGTPE]i)?"
QUANTITY = f"^{QUANTITY_CORE}$"
RESOURCE_NAME = r"^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$"
ENV_NAME = r"^[-._a-zA-Z][-._a-zA-Z0-9]*$"


# ---------------------------------------------------------------- building blocks
def string(description: str, **extra) -> dict:
    return {"type": "string", "description": description, **extra}


def boolean(description: str) -> dict:
    return {"type": "boolean", "description": description}


def integer(description: str, minimum: int | None = 0, maximum: int | None = None, nullable: bool = False) -> dict:
    out: dict = {"type": ["integer", "null"] if nullable else "integer", "description": description}
    if minimum is not None:
        out["minimum"] = minimum
    if maximum is not None:
        out["maximum"] = maximum
    return out


def obj(description: str, properties: dict, required: list[str] | None = None) -> dict:
    out = {"type": "object", "description": description, "additionalProperties": False, "properties": properties}
    if required:
        out["required"] = required
    return out


def string_map(description: str) -> dict:
    return {"type": "object", "description": description, "additionalProperties": {"type": "string"}}


def array(description: str, items: dict, **extra) -> dict:
    return {"type": "array", "description": description, "items": items, **extra}


def quantity(description: str) -> dict:
    return {
        "type": ["string", "number"],
        "description": description,
        "pattern": QUANTITY,
        "minimum": 0,
    }


def global_values() -> dict:
    return {
        "type": "object",
        "description": "Helm's global values, shared with every subchart. Unused by this chart; "
        "allowed because helm passes them to every chart.",
    }


def image_pull_policy(description: str) -> dict:
    return string(description, enum=["Always", "IfNotPresent", "Never"])


def image_pull_secrets(description: str) -> dict:
    return array(description, string("Name of a Secret of type kubernetes.io/dockerconfigjson.", minLength=1),
                 uniqueItems=True)


def resources(description: str) -> dict:
    def side(what: str) -> dict:
        return obj(
            f"Container resource {what} (CPU, memory, ephemeral storage).",
            {
                "cpu": quantity(f"CPU {what}, e.g. 4 or \"500m\"."),
                "memory": quantity(f"Memory {what}, e.g. \"16Gi\"."),
                "ephemeral-storage": quantity(f"Local ephemeral storage {what}, e.g. \"20Gi\"."),
            },
        )

    return obj(description, {"requests": side("requests"), "limits": side("limits")})


def tolerations() -> dict:
    return array(
        "Pod tolerations (Kubernetes Toleration objects).",
        obj(
            "A Kubernetes Toleration.",
            {
                "key": string("Taint key the toleration applies to (empty matches every key with Exists)."),
                "operator": string("Exists or Equal (the default).", enum=["Exists", "Equal"]),
                "value": string("Taint value to match (with Equal)."),
                "effect": string("Taint effect to match; empty matches all.",
                                 enum=["", "NoSchedule", "PreferNoSchedule", "NoExecute"]),
                "tolerationSeconds": integer("How long a NoExecute taint is tolerated.", minimum=None,
                                             nullable=True),
            },
        ),
    )


def affinity() -> dict:
    inner = {"type": "object", "description": ""}
    return obj(
        "Pod affinity (a Kubernetes Affinity object), passed through.",
        {
            "nodeAffinity": {**inner, "description": "Kubernetes NodeAffinity."},
            "podAffinity": {**inner, "description": "Kubernetes PodAffinity."},
            "podAntiAffinity": {**inner, "description": "Kubernetes PodAntiAffinity."},
        },
    )


def pod_security_context() -> dict:
    free = {"type": "object"}
    return obj(
        "Pod-level securityContext (a Kubernetes PodSecurityContext).",
        {
            "runAsUser": integer("UID the containers run as.", minimum=0, nullable=True),
            "runAsGroup": integer("GID the containers run as.", minimum=0, nullable=True),
            "runAsNonRoot": {"type": ["boolean", "null"], "description": "Refuse to start a container as UID 0."},
            "fsGroup": integer("Group that owns the pod's volumes.", minimum=0, nullable=True),
            "fsGroupChangePolicy": string("OnRootMismatch or Always.", enum=["OnRootMismatch", "Always"]),
            "supplementalGroups": array("Extra groups of the first process.", {"type": "integer", "minimum": 0}),
            "supplementalGroupsPolicy": string("Merge or Strict.", enum=["Merge", "Strict"]),
            "seccompProfile": {**free, "description": "Seccomp profile (type RuntimeDefault, Localhost, "
                               "Unconfined)."},
            "appArmorProfile": {**free, "description": "AppArmor profile."},
            "seLinuxOptions": {**free, "description": "SELinux context."},
            "seLinuxChangePolicy": string("SELinux relabelling policy.", enum=["MountOption", "Recursive"]),
            "sysctls": array("Namespaced sysctls.", {"type": "object"}),
            "windowsOptions": {**free, "description": "Windows-specific settings."},
        },
    )


def container_security_context(description: str) -> dict:
    free = {"type": "object"}
    return obj(
        description,
        {
            "allowPrivilegeEscalation": {"type": ["boolean", "null"],
                                         "description": "Whether a process can gain more privileges than its "
                                         "parent (setuid binaries)."},
            "privileged": {"type": ["boolean", "null"], "description": "Run the container privileged."},
            "readOnlyRootFilesystem": {"type": ["boolean", "null"],
                                       "description": "Mount the container's root filesystem read-only."},
            "runAsUser": integer("UID of the container process.", minimum=0, nullable=True),
            "runAsGroup": integer("GID of the container process.", minimum=0, nullable=True),
            "runAsNonRoot": {"type": ["boolean", "null"], "description": "Refuse to start as UID 0."},
            "capabilities": obj(
                "Linux capabilities to add or drop.",
                {
                    "add": array("Capabilities to add, e.g. IPC_LOCK for RDMA.", {"type": "string"}),
                    "drop": array("Capabilities to drop, e.g. ALL.", {"type": "string"}),
                },
            ),
            "procMount": string("Default or Unmasked.", enum=["Default", "Unmasked"]),
            "seccompProfile": {**free, "description": "Seccomp profile."},
            "appArmorProfile": {**free, "description": "AppArmor profile."},
            "seLinuxOptions": {**free, "description": "SELinux context."},
            "windowsOptions": {**free, "description": "Windows-specific settings."},
        },
    )


# ---------------------------------------------------------------- tensorboard
def tensorboard_schema() -> dict:
    return obj(
        "TensorBoard: a Deployment and a Service that serve the training logs.",
        {
            "global": global_values(),
            "enabled": boolean("Render TensorBoard. In a job chart this is also the dependency condition "
                               "(tensorboard.enabled) that turns the subchart on."),
            "nameOverride": string(
                "Base name; objects are named <nameOverride or release name>-tensorboard. Inside a job "
                "chart it must equal the job chart's nameOverride (the job chart checks).",
                pattern=SERVICE_NAME, maxLength=51,
            ),
            "image": string("TensorBoard image (it must provide the tensorboard command).", minLength=1),
            "imagePullPolicy": image_pull_policy("Image pull policy of the TensorBoard container."),
            "imagePullSecrets": image_pull_secrets("Names of image pull Secrets for the TensorBoard pod."),
            "logDir": string(
                "The --logdir TensorBoard reads: an absolute path inside pvc.mountPath or hostPath.mountPath, "
                "or a URL TensorBoard understands (gs://, s3://, hdfs://).",
                minLength=1,
            ),
            "pvc": obj(
                "Read the logs from a PersistentVolumeClaim, mounted read-only.",
                {
                    "claimName": string("Name of the PVC holding the logs; \"\" mounts no PVC.", pattern=DNS_LABEL),
                    "mountPath": string("Where the PVC is mounted (read-only) in the TensorBoard container.",
                                        pattern=ABS_PATH),
                },
            ),
            "hostPath": obj(
                "Read the logs from a directory of the node, mounted read-only. Off unless enabled "
                "explicitly.",
                {
                    "enabled": boolean("Mount hostPath.path (must be set explicitly: host paths tie the pod "
                                       "to a node)."),
                    "path": string("Directory on the node.", pattern="^(/.*)?$"),
                    "mountPath": string("Where the directory is mounted in the container.", pattern=ABS_PATH),
                },
            ),
            "service": obj(
                "The Service in front of TensorBoard.",
                {
                    "type": string("Service type.", enum=["ClusterIP", "NodePort", "LoadBalancer"]),
                    "port": integer("Service port (the container listens on 6006).", minimum=1, maximum=65535),
                    "nodePort": integer("Fixed node port for NodePort/LoadBalancer; null lets Kubernetes "
                                        "choose.", minimum=1, maximum=65535, nullable=True),
                },
            ),
            "resources": resources("CPU/memory requests and limits of the TensorBoard container."),
            "nodeSelector": string_map("Node labels the TensorBoard pod must match."),
            "tolerations": tolerations(),
            "affinity": affinity(),
            "podSecurityContext": pod_security_context(),
            "securityContext": container_security_context("securityContext of the TensorBoard container."),
            "labels": string_map("Extra labels on the Deployment, its pod and the Service."),
            "annotations": string_map("Extra annotations on the Deployment, its pod and the Service."),
        },
    )


# ---------------------------------------------------------------- job charts
def replica_block(what: str, *, default_port: int | None, fixed_replicas: int | None = None,
                  min_replicas: int = 0, command_doc: str | None = None) -> dict:
    props: dict = {
        "replicas": integer(
            f"Number of {what} pods" + (f" (always {fixed_replicas})." if fixed_replicas is not None
                                        else "; 0 leaves the replica type out."),
            minimum=fixed_replicas if fixed_replicas is not None else min_replicas,
            maximum=fixed_replicas,
        ),
        "image": string(f"Image of the {what} pods; \"\" uses the top-level image."),
        "command": string(command_doc or f"Command of the {what} pods (run with <shell> -c); \"\" uses the "
                          "top-level command."),
        "gpus": integer(f"nvidia.com/gpu per {what} pod (in requests and limits). With 0, "
                        "NVIDIA_VISIBLE_DEVICES=void hides the node's GPUs.", minimum=0),
        "devices": {
            "type": "object",
            "description": "Other extended resources per pod, resource name to count (e.g. amd.com/gpu: 1), "
            "in requests and limits.",
            "propertyNames": {"pattern": RESOURCE_NAME},
            "additionalProperties": {"type": "integer", "minimum": 0},
        },
        "resources": resources(f"CPU/memory requests and limits of the {what} container (GPUs and devices "
                               "are added to them)."),
        "nodeSelector": string_map(f"Node labels for the {what} pods, merged over the top-level nodeSelector."),
        "restartPolicy": string(f"restartPolicy of the {what} replicas; \"\" keeps the operator's default.",
                                enum=["", "Always", "OnFailure", "Never", "ExitCode"]),
    }
    if default_port is not None:
        props["port"] = integer(f"Container port of the {what} pods (the operator wires it up).",
                                minimum=1, maximum=65535)
    return obj(f"The {what} replicas.", props)


def run_policy() -> dict:
    return obj(
        "The job's runPolicy (common to the Kubeflow training operators).",
        {
            "cleanPodPolicy": string("Which pods to delete when the job finishes.", enum=["None", "Running", "All"]),
            "backoffLimit": integer("Retries before the job is marked failed; null = operator default.",
                                    nullable=True),
            "ttlSecondsAfterFinished": integer("Delete the job this many seconds after it finishes; null = "
                                               "never.", nullable=True),
            "activeDeadlineSeconds": integer("Fail the job after this many seconds of running; null = no "
                                             "deadline.", minimum=1, nullable=True),
            "suspend": {"type": ["boolean", "null"],
                        "description": "Suspend the job: the operator deletes its pods (true) and recreates them "
                        "(false); arena-helm suspend/resume set it. null = not set (not suspended)."},
            "schedulingPolicy": obj(
                "Gang-scheduling policy (Volcano or scheduler-plugins), passed through.",
                {
                    "minAvailable": integer("Minimal number of pods to schedule together.", minimum=0),
                    "queue": string("Volcano queue of the PodGroup."),
                    "priorityClass": string("PriorityClass of the PodGroup."),
                    "minResources": {
                        "type": "object",
                        "description": "Minimal resources of the PodGroup, resource name to quantity.",
                        "additionalProperties": {"type": ["string", "number"], "pattern": QUANTITY},
                    },
                    "scheduleTimeoutSeconds": integer("How long the PodGroup waits to be scheduled.", minimum=0),
                },
            ),
        },
    )


def code_sync() -> dict:
    return obj(
        "Clone a git repository into every pod before training (a git-sync v4 init container).",
        {
            "enabled": boolean("Add the git-sync init container."),
            "repo": string("Repository URL (https:// or ssh). Credentials never go here: use secretName."),
            "ref": string("Branch, tag or commit to check out; \"\" = the remote HEAD."),
            "root": string("Where the code volume is mounted (in git-sync and in the training container).",
                           pattern=ABS_PATH),
            "linkName": string("Name of the checkout under root; \"\" = the repository name (URL basename "
                               "without .git).", pattern="^[^/]*$"),
            "image": string("git-sync v4 image.", minLength=1),
            "secretName": string("Secret with keys username and password (GITSYNC_USERNAME / GITSYNC_PASSWORD); "
                                 "\"\" for a public repository.", pattern=DNS_LABEL),
            "depth": integer("Clone depth (--depth); 0 = full history.", minimum=0),
            "resources": resources("CPU/memory requests and limits of the git-sync container."),
        },
    )


def common_job_properties(chart: str, kind: str) -> dict:
    return {
        "global": global_values(),
        "arena-common": obj(
            "Values of the arena-common library chart: it has none; helm adds this key (holding global) "
            "itself. Leave it unset.",
            {"global": global_values()},
        ),
        "nameOverride": string(f"Name of the {kind}; \"\" = the release name. Lower-case letters, digits and "
                               "'-', starting with a letter (it names Services).",
                               pattern=SERVICE_NAME, maxLength=63),
        "image": string("Default image of every replica (a replica's image overrides it). Required once a "
                        "replica has no image of its own."),
        "imagePullPolicy": image_pull_policy("Image pull policy of every training container."),
        "imagePullSecrets": image_pull_secrets("Names of image pull Secrets for every pod."),
        "command": string("The training command, run as <shell> -c <command>, exactly as given; \"\" runs the "
                          "image's entrypoint."),
        "shell": string("Shell that runs the command.", minLength=1),
        "workingDir": string("Working directory of the training containers; \"\" = the image's.",
                             pattern="^(/.*)?$"),
        "env": array(
            "Environment variables of every training container.",
            obj("An environment variable.",
                {"name": string("Variable name.", pattern=ENV_NAME),
                 "value": string("Value, passed byte for byte.")},
                required=["name", "value"]),
        ),
        "shmSize": string("Size of a memory-backed /dev/shm (e.g. \"8Gi\"); \"\" = the runtime's default.",
                          pattern=f"^({QUANTITY_CORE})?$"),
        "data": array(
            "PersistentVolumeClaims mounted into every training container.",
            obj("A PVC mount.",
                {"claimName": string("Name of the PVC.", pattern=DNS_LABEL, minLength=1),
                 "mountPath": string("Mount path in the container.", pattern=ABS_PATH),
                 "readOnly": boolean("Mount read-only."),
                 "subPath": string("Sub-path of the volume to mount (\"\" = its root).")},
                required=["claimName", "mountPath"]),
        ),
        "hostPaths": array(
            "Node directories mounted into every training container.",
            obj("A hostPath mount.",
                {"path": string("Directory on the node.", pattern=ABS_PATH),
                 "mountPath": string("Mount path in the container.", pattern=ABS_PATH),
                 "readOnly": boolean("Mount read-only.")},
                required=["path", "mountPath"]),
        ),
        "codeSync": code_sync(),
        "nodeSelector": string_map("Node labels every pod must match."),
        "tolerations": tolerations(),
        "affinity": affinity(),
        "priorityClassName": string("PriorityClass of the pods."),
        "schedulerName": string("Scheduler of the pods (e.g. volcano); \"\" = the default scheduler."),
        "serviceAccountName": string("ServiceAccount of the pods; \"\" = the namespace default (its token "
                                     "is then not mounted).", pattern=DNS_LABEL),
        "podSecurityContext": pod_security_context(),
        "securityContext": container_security_context(
            "securityContext of the training containers (never privileged unless set here)."),
        "hostNetwork": boolean("Use the node's network namespace (e.g. for RDMA)."),
        "hostPID": boolean("Use the node's PID namespace."),
        "hostIPC": boolean("Use the node's IPC namespace."),
        "labels": string_map(f"Extra labels on the {kind} and on every pod."),
        "annotations": string_map(f"Extra annotations on the {kind} and on every pod."),
        "queue": string("Kueue LocalQueue; sets label kueue.x-k8s.io/queue-name on the job.", pattern=DNS_LABEL),
        "runPolicy": run_policy(),
    }


def job_schema(chart: str) -> dict:
    kind = {"tfjob": "TFJob", "pytorchjob": "PyTorchJob", "mpijob": "MPIJob"}[chart]
    props = common_job_properties(chart, kind)
    if chart == "tfjob":
        props["chief"] = replica_block("chief", default_port=2222, min_replicas=0)
        props["chief"]["properties"]["replicas"]["maximum"] = 1
        props["chief"]["properties"]["replicas"]["description"] = "Number of chief pods: 0 or 1."
        props["worker"] = replica_block("worker", default_port=2222)
        props["ps"] = replica_block("parameter server", default_port=2222)
        props["evaluator"] = replica_block("evaluator", default_port=2222)
        props["evaluator"]["properties"]["replicas"]["maximum"] = 1
        props["evaluator"]["properties"]["replicas"]["description"] = "Number of evaluator pods: 0 or 1."
        props["successPolicy"] = string("\"\" (the job succeeds when the chief, or worker 0, does) or "
                                        "AllWorkers.", enum=["", "AllWorkers"])
    elif chart == "pytorchjob":
        props["master"] = replica_block("master", default_port=23456, fixed_replicas=1)
        props["worker"] = replica_block("worker", default_port=23456)
        props["nprocPerNode"] = string("Processes per pod (torchrun --nproc-per-node): a number, auto, cpu or "
                                       "gpu; \"\" leaves it to the operator.",
                                       pattern="^(|auto|cpu|gpu|[1-9][0-9]*)$")
    elif chart == "mpijob":
        props["mpiApiVersion"] = string("v2beta1 (mpi-operator), v1 (the training-operator's MPIJob), or auto: "
                                        "what the cluster serves (v2beta1 first; v2beta1 when rendering offline).",
                                        enum=["v2beta1", "v1", "auto"])
        props["launcher"] = replica_block("launcher", default_port=None, fixed_replicas=1,
                                          command_doc="Command of the launcher (run with <shell> -c); \"\" uses "
                                          "the top-level command.")
        props["worker"] = replica_block(
            "worker", default_port=None, min_replicas=1,
            command_doc="Command of the workers (run with <shell> -c); \"\" runs the default keep-alive: "
            "/usr/sbin/sshd -De for v2beta1, sleep infinity for v1.")
        props["slotsPerWorker"] = integer("MPI slots (processes) per worker.", minimum=1)
        props["mpiImplementation"] = string("MPI implementation (v2beta1 only).", enum=["OpenMPI", "Intel", "MPICH"])
        props["sshAuthMountPath"] = string("Where the operator mounts the SSH keys (v2beta1 only).",
                                           pattern=ABS_PATH)
    tb = tensorboard_schema()
    tb["description"] = ("Values of the tensorboard subchart (see charts/tensorboard); enabled turns it on. "
                         "Its objects are named <job name>-tensorboard.")
    props["tensorboard"] = tb
    schema = obj(f"Values of the {chart} chart ({kind}).", props)
    return {"$schema": DRAFT, "title": f"{chart} values", **schema}


def library_schema() -> dict:
    schema = obj("The arena-common library chart has no values of its own.", {"global": global_values()})
    return {"$schema": DRAFT, "title": "arena-common values", **schema}


def standalone_tensorboard_schema() -> dict:
    return {"$schema": DRAFT, "title": "tensorboard values", **tensorboard_schema()}


def schemas() -> dict[str, dict]:
    out = {
        "arena-common": library_schema(),
        "tensorboard": standalone_tensorboard_schema(),
    }
    for chart in ("tfjob", "pytorchjob", "mpijob"):
        out[chart] = job_schema(chart)
    return copy.deepcopy(out)


def render(schema: dict) -> str:
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report stale schemas (exit 1)")
    parser.add_argument("--charts-dir", type=Path, default=CHARTS, help="folder holding the charts")
    args = parser.parse_args(argv)
    stale = []
    for chart, schema in schemas().items():
        path = args.charts_dir / chart / "values.schema.json"
        text = render(schema)
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current == text:
            continue
        stale.append(path)
        if not args.check:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path.relative_to(args.charts_dir.parent)}")
    if args.check and stale:
        for path in stale:
            print(f"stale: {path} (run scripts/gen-chart-schemas.py)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
