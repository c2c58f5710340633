{{/*
The containers of a replica: the training container and the git-sync init container.

These templates take a replica context, a dict:
  root            the job chart's root context
  key             the replica's values key (e.g. "worker"), used in messages
  type            the replica type in the job spec (e.g. "Worker")
  replica         the replica block (.Values.<key>)
  container       dict of:
    name            container name the operator expects (tensorflow, pytorch, mpi)
    portName        name of the container port ("" = no port; the port number is replica.port)
    defaultCommand  exec list used when the replica has no command of its own, instead of the
                    top-level command (MPI workers); unset = the top-level command
    keepToken       true to keep the service-account token mounted (the MPI v1 launcher needs it)
    volumes         extra pod volumes (a list of Volume objects) the job chart adds for this replica
    volumeMounts    extra mounts of the training container (a list of VolumeMount objects)
  jobInfo         the job chart's Arena job info (see _jobinfo.tpl); absent: none

Every user-supplied string is written with toJson: a JSON string is a YAML double-quoted scalar, so
text with ": ", "#", quotes, braces, "{{ }}", newlines or leading spaces reaches the pod byte for byte.
*/}}

{{/*
arena-common.gpus: nvidia.com/gpu per pod of a replica block, as an integer string.
*/}}
{{- define "arena-common.gpus" -}}
{{- int (default 0 .gpus) -}}
{{- end -}}

{{/*
arena-common.command: the training container's command as a JSON list ("[]" = none: the image's
entrypoint runs). The replica's own command wins; else the container's defaultCommand; else the
top-level command. A command string always runs as [<shell>, "-c", <command>].
*/}}
{{- define "arena-common.command" -}}
{{- $v := .root.Values -}}
{{- $command := list -}}
{{- if .replica.command -}}
{{- $command = list $v.shell "-c" .replica.command -}}
{{- else if .container.defaultCommand -}}
{{- $command = .container.defaultCommand -}}
{{- else if $v.command -}}
{{- $command = list $v.shell "-c" $v.command -}}
{{- end -}}
{{- toJson $command -}}
{{- end -}}

{{/*
arena-common.noGpuEnv: NVIDIA_VISIBLE_DEVICES=void for every container of a replica that requests no
nvidia.com/gpu, so that an NVIDIA runtime does not expose the node's GPUs to it.
*/}}
{{- define "arena-common.noGpuEnv" -}}
{{- if eq (include "arena-common.gpus" .replica) "0" -}}
- name: NVIDIA_VISIBLE_DEVICES
  value: void
{{- end -}}
{{- end -}}

{{/*
arena-common.envVars: a list of env values as container env items: each a value (byte for byte) or a
valueFrom (a Secret's or ConfigMap's key, a field of the pod: only names, never a Secret's data).
*/}}
{{- define "arena-common.envVars" -}}
{{- range . }}
- name: {{ .name | toJson }}
  {{- if hasKey . "valueFrom" }}
  valueFrom:
    {{- toYaml .valueFrom | nindent 4 }}
  {{- else }}
  value: {{ .value | toJson }}
  {{- end }}
{{- end }}
{{- end -}}

{{/*
arena-common.env: the training container's env list (may be empty): the values' env, then Arena's job info
(workers, gpus), which replaces a variable of the values of the same name, as Arena sets its own over the
user's.
*/}}
{{- define "arena-common.env" -}}
{{- $own := include "arena-common.jobInfoEnv" . | fromJsonArray -}}
{{- $ownNames := list -}}
{{- range $own }}{{ $ownNames = append $ownNames .name }}{{ end -}}
{{- $env := list -}}
{{- range .root.Values.env }}{{ if not (has .name $ownNames) }}{{ $env = append $env . }}{{ end }}{{ end -}}
{{- include "arena-common.envVars" (concat $env $own) }}
{{- with include "arena-common.noGpuEnv" . }}
{{ . }}
{{- end }}
{{- end -}}

{{/*
arena-common.resources: the replica's requests/limits merged with its GPUs (nvidia.com/gpu) and devices,
which go in requests and in limits alike. Renders nothing when there is nothing to request.
*/}}
{{- define "arena-common.resources" -}}
{{- $requests := dict -}}
{{- $limits := dict -}}
{{- with .replica.resources -}}
{{- with .requests }}{{ $requests = deepCopy . }}{{ end -}}
{{- with .limits }}{{ $limits = deepCopy . }}{{ end -}}
{{- end -}}
{{- $gpus := int (include "arena-common.gpus" .replica) -}}
{{- if gt $gpus 0 -}}
{{- $_ := set $requests "nvidia.com/gpu" $gpus -}}
{{- $_ := set $limits "nvidia.com/gpu" $gpus -}}
{{- end -}}
{{- range $name, $count := .replica.devices -}}
{{- if gt (int $count) 0 -}}
{{- $_ := set $requests $name (int $count) -}}
{{- $_ := set $limits $name (int $count) -}}
{{- end -}}
{{- end -}}
{{- $out := dict -}}
{{- if $requests }}{{ $_ := set $out "requests" $requests }}{{ end -}}
{{- if $limits }}{{ $_ := set $out "limits" $limits }}{{ end -}}
{{- if $out }}{{ toYaml $out }}{{ end -}}
{{- end -}}

{{/*
arena-common.volumeMounts: mounts of the training container: /dev/shm, the data PVCs, the host paths and
the synced code.
*/}}
{{- define "arena-common.volumeMounts" -}}
{{- $v := .Values -}}
{{- if $v.shmSize }}
- name: dshm
  mountPath: /dev/shm
{{- end }}
{{- range $i, $d := $v.data }}
- name: {{ printf "data-%d" $i }}
  mountPath: {{ $d.mountPath | toJson }}
  {{- if $d.subPath }}
  subPath: {{ $d.subPath | toJson }}
  {{- end }}
  {{- if $d.readOnly }}
  readOnly: true
  {{- end }}
{{- end }}
{{- range $i, $h := $v.hostPaths }}
- name: {{ printf "hostpath-%d" $i }}
  mountPath: {{ $h.mountPath | toJson }}
  {{- if $h.readOnly }}
  readOnly: true
  {{- end }}
{{- end }}
{{- if $v.codeSync.enabled }}
- name: code-sync
  mountPath: {{ $v.codeSync.root | toJson }}
{{- end }}
{{- range $i, $f := $v.configFiles }}
- name: config-files
  mountPath: {{ $f.mountPath | toJson }}
  subPath: {{ printf "config-%d" $i }}
  readOnly: true
{{- end }}
{{- range $i, $s := $v.secretVolumes }}
- name: {{ printf "secret-%d" $i }}
  mountPath: {{ $s.mountPath | toJson }}
  readOnly: true
{{- end }}
{{- end -}}

{{/*
arena-common.container: the training container (one list item).
*/}}
{{- define "arena-common.container" -}}
{{- $v := .root.Values -}}
{{- $r := .replica -}}
{{- $c := .container -}}
- name: {{ $c.name }}
  image: {{ default $v.image $r.image | toJson }}
  imagePullPolicy: {{ $v.imagePullPolicy }}
  {{- $command := include "arena-common.command" . | fromJsonArray }}
  {{- with $command }}
  command:
    {{- range . }}
    - {{ toJson . }}
    {{- end }}
  {{- end }}
  {{- /* the image's own entrypoint (no command) keeps the image's working directory */}}
  {{- if and $command $v.workingDir }}
  workingDir: {{ toJson $v.workingDir }}
  {{- end }}
  {{- with include "arena-common.env" . }}
  env:
    {{- . | trim | nindent 4 }}
  {{- end }}
  {{- with $v.envFrom }}
  envFrom:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- if $c.portName }}
  ports:
    - name: {{ $c.portName }}
      containerPort: {{ int $r.port }}
      protocol: TCP
  {{- end }}
  {{- with include "arena-common.resources" . }}
  resources:
    {{- . | trim | nindent 4 }}
  {{- end }}
  {{- with $v.securityContext }}
  securityContext:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- $mounts := include "arena-common.volumeMounts" .root | trim }}
  {{- with .container.volumeMounts }}
  {{- $mounts = printf "%s\n%s" $mounts (toYaml .) | trim }}
  {{- end }}
  {{- with $mounts }}
  volumeMounts:
    {{- . | nindent 4 }}
  {{- end }}
{{- end -}}

{{/*
arena-common.codeSyncLink: the checkout's name under codeSync.root: codeSync.linkName, else the last
segment of the repository URL without ".git" (https://host/org/repo.git and git@host:repo.git -> repo).
*/}}
{{- define "arena-common.codeSyncLink" -}}
{{- $cs := .Values.codeSync -}}
{{- if $cs.linkName -}}
{{- $cs.linkName -}}
{{- else -}}
{{- regexReplaceAll "^.*[/:]" (trimSuffix "/" (default "" $cs.repo)) "" | trimSuffix ".git" -}}
{{- end -}}
{{- end -}}

{{/*
arena-common.gitSyncContainer: the git-sync v4 init container that clones codeSync.repo at codeSync.ref
into the code-sync volume once, before the training container starts. Credentials come only from the
Secret codeSync.secretName (keys username and password).
*/}}
{{- define "arena-common.gitSyncContainer" -}}
{{- $v := .root.Values -}}
{{- $cs := $v.codeSync -}}
{{- if eq $cs.mode "rsync" -}}
- name: rsync
  image: {{ $cs.image | toJson }}
  imagePullPolicy: {{ $v.imagePullPolicy }}
  command:
    - rsync
    - -avP
    - {{ $cs.repo | toJson }}
    - {{ $cs.root | toJson }}
{{- else -}}
- name: git-sync
  image: {{ $cs.image | toJson }}
  imagePullPolicy: {{ $v.imagePullPolicy }}
  args:
    - {{ printf "--repo=%s" $cs.repo | toJson }}
    - {{ printf "--ref=%s" (default "HEAD" $cs.ref) | toJson }}
    - {{ printf "--root=%s" $cs.root | toJson }}
    - {{ printf "--link=%s" (include "arena-common.codeSyncLink" .root) | toJson }}
    - --one-time
    - {{ printf "--depth=%d" (int (default 0 $cs.depth)) | toJson }}
{{- end }}
  {{- $noGpu := include "arena-common.noGpuEnv" . }}
  {{- if or $cs.secretName $noGpu $cs.env }}
  env:
    {{- with include "arena-common.envVars" $cs.env }}
    {{- . | trim | nindent 4 }}
    {{- end }}
    {{- with $cs.secretName }}
    - name: GITSYNC_USERNAME
      valueFrom:
        secretKeyRef:
          name: {{ . | toJson }}
          key: username
    - name: GITSYNC_PASSWORD
      valueFrom:
        secretKeyRef:
          name: {{ . | toJson }}
          key: password
    {{- end }}
    {{- with $noGpu }}
    {{- . | trim | nindent 4 }}
    {{- end }}
  {{- end }}
  {{- with $cs.resources }}
  resources:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  securityContext:
    allowPrivilegeEscalation: false
    capabilities:
      drop:
        - ALL
    runAsNonRoot: true
    runAsUser: 65533
    runAsGroup: 65533
    seccompProfile:
      type: RuntimeDefault
  volumeMounts:
    - name: code-sync
      mountPath: {{ $cs.root | toJson }}
{{- end -}}
