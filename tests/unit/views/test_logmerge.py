"""logs --all: the lines of every instance interleaved by the kubelet's timestamps, prefixed as kubectl does."""

from __future__ import annotations

from arena_helm.views.logmerge import interleave, parse_line, prefix, split_stamped, started


def test_lines_of_all_instances_in_time_order_with_kubectl_prefixes():
    master = split_stamped(b"2026-01-02T15:04:05.5Z step 1\n2026-01-02T15:04:07Z step 3\n")
    worker = split_stamped(b"2026-01-02T15:04:05.45Z worker up\n2026-01-02T15:04:06.000000001Z step 2\n")
    heads = prefix("lm-master-0", "pytorch", 0, False), prefix("lm-worker-0", "pytorch", 1, False)
    assert interleave([(heads[0], master), (heads[1], worker)], timestamps=False) == (
        b"[pod/lm-worker-0/pytorch] worker up\n"       # .45 s before .5 s, though its text is longer
        b"[pod/lm-master-0/pytorch] step 1\n"
        b"[pod/lm-worker-0/pytorch] step 2\n"
        b"[pod/lm-master-0/pytorch] step 3\n")         # 07 without a fraction after 06.000000001
    assert interleave([(heads[0], master)], timestamps=True) == (
        b"[pod/lm-master-0/pytorch] 2026-01-02T15:04:05.5Z step 1\n"
        b"[pod/lm-master-0/pytorch] 2026-01-02T15:04:07Z step 3\n")


def test_same_time_goes_to_the_earlier_instance_and_an_instance_never_reorders_its_own_lines():
    a = split_stamped(b"2026-01-02T15:04:05Z a1\n2026-01-02T15:04:04Z a2 (clock stepped back)\n")
    b = split_stamped(b"2026-01-02T15:04:05Z b1\n")
    out = interleave([(b"A ", a), (b"B ", b)], timestamps=False)
    assert out == b"A a1\nA a2 (clock stepped back)\nB b1\n"


def test_a_line_without_its_own_time_keeps_its_place_and_the_last_line_gets_a_newline():
    lines = split_stamped(b"2026-01-02T15:04:05Z one\ncontinued\n2026-01-02T15:04:09Z last")
    assert [(line.key, line.text) for line in lines] == [
        ("2026-01-02T15:04:05.000000000", b"one\n"), ("2026-01-02T15:04:05.000000000", b"continued\n"),
        ("2026-01-02T15:04:09.000000000", b"last")]
    assert interleave([(b"", lines)], timestamps=False) == b"one\ncontinued\nlast\n"


def test_an_offset_time_is_ordered_as_the_same_instant_in_utc():
    assert parse_line(b"2026-01-02T17:04:05.25+02:00 x\n").key == parse_line(b"2026-01-02T15:04:05.25Z x\n").key
    assert parse_line(b"no time here\n", "k").key == "k"


def test_prefix_colour_only_when_asked_one_colour_an_instance():
    assert prefix("p", "c", 0, False) == b"[pod/p/c] "
    assert prefix("p", "c", 0, True) == b"\x1b[32m[pod/p/c]\x1b[0m "
    assert prefix("p", "c", 6, True) == prefix("p", "c", 0, True) != prefix("p", "c", 1, True)


def test_only_a_container_that_ran_has_a_log():
    pod = {"status": {"initContainerStatuses": [{"name": "git-sync", "state": {"terminated": {"exitCode": 0}}}],
                      "containerStatuses": [{"name": "main", "state": {"waiting": {"reason": "ContainerCreating"}}},
                                            {"name": "side", "state": {"running": {}}}]}}
    assert [started(pod, c) for c in ("git-sync", "main", "side", "other")] == [True, False, True, False]
    assert not started({}, "main")


# ---- all_logs over a fake API adapter ------------------------------------------------------------------------
class FakeKube:
    """The one adapter method all_logs uses: stream_log, from fixed texts (a pod not in ``logs`` fails as the
    API server does for a container it cannot read)."""

    def __init__(self, logs: dict[str, bytes]):
        self.logs = logs
        self.asked: list[tuple[str, str, dict]] = []

    def stream_log(self, namespace, pod, *, container=None, **options):
        from arena_helm.core.errors import ClusterError

        self.asked.append((pod, container, options))
        if pod not in self.logs:
            raise ClusterError(f"reading the log of pod {pod}: container {container} is terminated and gone")
        data = self.logs[pod]
        yield from (data[i:i + 7] for i in range(0, len(data), 7))  # chunks that cut lines


def pod(name: str, role: str, index: str, state: dict | None) -> dict:
    return {"metadata": {"name": name, "namespace": "team", "labels": {
                "training.kubeflow.org/job-name": "lm", "training.kubeflow.org/replica-type": role,
                "training.kubeflow.org/replica-index": index}},
            "spec": {"containers": [{"name": "pytorch"}]},
            "status": {"phase": "Running" if state else "Pending",
                       **({"containerStatuses": [{"name": "pytorch", "state": state}]} if state else {})}}


PODS = [pod("lm-worker-0", "worker", "0", {"running": {}}), pod("lm-master-0", "master", "0", {"running": {}}),
        pod("lm-worker-1", "worker", "1", None)]


def run_all(kube, pods=PODS, **options):
    import io

    from arena_helm.views.logmerge import all_logs

    out, notes = io.BytesIO(), []
    args = {"container": None, "follow": False, "tail": None, "since_seconds": None, "since_time": None,
            "timestamps": False, **options}
    all_logs(kube, "team", "lm", pods, "PyTorchJob", out=out, note=notes.append, colour=False, **args)
    return out.getvalue(), notes


def test_all_logs_reads_each_started_instance_with_timestamps_and_interleaves_them():
    kube = FakeKube({"lm-master-0": b"2026-01-02T15:04:05Z m1\n2026-01-02T15:04:07Z m2\n",
                     "lm-worker-0": b"2026-01-02T15:04:06Z w1\n"})
    out, notes = run_all(kube, tail=5)
    assert out == b"[pod/lm-master-0/pytorch] m1\n[pod/lm-worker-0/pytorch] w1\n[pod/lm-master-0/pytorch] m2\n"
    assert notes == ["pod lm-worker-1 has not started its container pytorch yet: no log"]
    assert [(p, c, o["timestamps"], o["tail"]) for p, c, o in kube.asked] == [
        ("lm-master-0", "pytorch", True, 5), ("lm-worker-0", "pytorch", True, 5)]  # the master first


class FollowKube(FakeKube):
    """``logs``: what a read whole returns; ``streams``: what a follow returns (a pod not in it fails)."""

    def __init__(self, logs: dict[str, bytes], streams: dict[str, bytes]):
        super().__init__(logs)
        self.streams = streams

    def stream_log(self, namespace, pod, *, container=None, **options):
        if not options.get("follow"):
            yield from super().stream_log(namespace, pod, container=container, **options)
            return
        from arena_helm.core.errors import ClusterError

        self.asked.append((pod, container, options))
        if pod not in self.streams:
            raise ClusterError(f"reading the log of pod {pod}: the stream broke")
        data = self.streams[pod]
        yield from (data[i:i + 5] for i in range(0, len(data), 5))


def test_all_logs_follow_writes_what_is_there_in_time_order_then_each_new_line_once():
    kube = FollowKube(
        {"lm-master-0": b"2026-01-02T15:04:05.1Z m1\n2026-01-02T15:04:07.5Z m2\n2026-01-02T15:04:07.5Z m2b\n",
         "lm-worker-0": b"2026-01-02T15:04:06Z w1\n"},
        # the streams open at the second of the last line read: what that second holds comes again
        {"lm-master-0": b"2026-01-02T15:04:07.2Z m1x\n2026-01-02T15:04:07.5Z m2\n2026-01-02T15:04:07.5Z m2b\n"
                        b"2026-01-02T15:04:07.5Z m3 same time\n2026-01-02T15:04:08Z m4\nno newline, no time",
         "lm-worker-0": b"2026-01-02T15:04:06Z w1\n2026-01-02T15:04:09Z w2\n"})
    out, notes = run_all(kube, follow=True, tail=3)
    text = out.decode().splitlines()
    assert text[:4] == ["[pod/lm-master-0/pytorch] m1", "[pod/lm-worker-0/pytorch] w1", "[pod/lm-master-0/pytorch] m2",
                        "[pod/lm-master-0/pytorch] m2b"]  # what was there, in time order
    new = text[4:]  # then each stream's new lines, as they come (no order between the instances)
    assert [line for line in new if line.startswith("[pod/lm-master-0")] == [
        "[pod/lm-master-0/pytorch] m3 same time", "[pod/lm-master-0/pytorch] m4",
        "[pod/lm-master-0/pytorch] no newline, no time"]
    assert [line for line in new if line.startswith("[pod/lm-worker-0")] == ["[pod/lm-worker-0/pytorch] w2"]
    follows = [(p, o["since_time"], o["tail"], o["timestamps"]) for p, _, o in kube.asked if o.get("follow")]
    assert sorted(follows) == [("lm-master-0", "2026-01-02T15:04:07Z", None, True),
                               ("lm-worker-0", "2026-01-02T15:04:06Z", None, True)]
    assert notes == ["pod lm-worker-1 has not started its container pytorch yet: no log"]


def test_all_logs_follow_of_an_empty_log_keeps_the_options_and_names_a_stream_that_broke():
    kube = FollowKube({"lm-master-0": b"", "lm-worker-0": b"2026-01-02T15:04:06Z w1\n"},
                      {"lm-master-0": b"2026-01-02T15:04:09Z first line\n"})
    out, notes = run_all(kube, follow=True, tail=2, since_seconds=60)
    assert out.decode().splitlines() == ["[pod/lm-worker-0/pytorch] w1", "[pod/lm-master-0/pytorch] first line"]
    assert notes[1:] == ["reading the log of pod lm-worker-0: the stream broke; that instance's stream ended"]
    master = [o for p, _, o in kube.asked if p == "lm-master-0" and o.get("follow")]
    assert [(o["tail"], o["since_seconds"], o["since_time"]) for o in master] == [(2, 60, None)]


def test_resume_skips_the_lines_already_written_and_never_an_untimed_one():
    from arena_helm.views.logmerge import Resume, parse_line, split_stamped

    assert Resume.after(split_stamped(b"no time\n")) is None
    resume = Resume.after(split_stamped(b"2026-01-02T15:04:05.25Z a\n2026-01-02T15:04:05.25Z b\n"))
    assert resume == Resume("2026-01-02T15:04:05.250000000", 2)
    assert resume.since_time == "2026-01-02T15:04:05Z"
    skipped = resume.skip()
    seen = [parse_line(raw) for raw in (b"2026-01-02T15:04:05.1Z x\n", b"2026-01-02T15:04:05.25Z a\n",
                                        b"2026-01-02T15:04:05.25Z b\n", b"2026-01-02T15:04:05.25Z c\n",
                                        b"2026-01-02T15:04:06Z d\n", b"untimed\n")]
    assert [skipped(line) for line in seen] == [True, True, True, False, False, False]


def test_all_logs_leaves_out_a_log_it_cannot_read_unless_it_can_read_none():
    import pytest

    from arena_helm.core.errors import ClusterError, NotFoundError

    out, notes = run_all(FakeKube({"lm-worker-0": b"2026-01-02T15:04:06Z w1\n"}))
    assert out == b"[pod/lm-worker-0/pytorch] w1\n"
    assert notes[1] == "reading the log of pod lm-master-0: container pytorch is terminated and gone; left out"
    with pytest.raises(ClusterError, match="pod lm-master-0"):
        run_all(FakeKube({}))
    with pytest.raises(NotFoundError, match=r"^job lm has no instance that has started yet \(see arena-helm get lm"):
        run_all(FakeKube({}), pods=PODS[2:])
    with pytest.raises(NotFoundError, match="^job lm has no pods yet"):
        run_all(FakeKube({}), pods=[])
