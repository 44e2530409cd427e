"""Per-evaluation limits (seed 004 §4.1): a fit past its time or memory limit is stopped in its
child process and recorded as a failure, and the next call runs in a fresh child."""

from __future__ import annotations

import os
import time

import numpy as np
import psutil
import pytest

from hpo.evaluation.isolation import EvaluationLimits, IsolatedWorker


def add(a: int, b: int) -> int:
    return a + b


def sleep_then(seconds: float, value: int) -> int:
    time.sleep(seconds)
    return value


def spin(seconds: float) -> int:
    end = time.process_time() + seconds
    n = 0
    while time.process_time() < end:
        n += 1
    return n


def allocate(mb: int) -> int:
    blocks = []
    for _ in range(mb // 16):
        blocks.append(np.ones(2 * 2**20))  # 16 MB each, pages touched
        time.sleep(0.002)
    return len(blocks)


def allocate_at_once(mb: int) -> int:
    return int(np.ones(mb * 2**17).sum())  # mb MB in one request


def die() -> None:
    os._exit(3)


def raise_value_error() -> None:
    raise ValueError("learner refused")


def warn_inside_catch_warnings(text: str) -> int:
    """A fit's numerical warning, after a ``catch_warnings`` as scikit-learn enters them."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
    np.log(np.zeros(1))  # RuntimeWarning: divide by zero encountered in log
    warnings.warn(text, RuntimeWarning, stacklevel=1)
    return 1


@pytest.fixture
def worker():
    # 5 s: a call that returns at once stays inside it on a loaded machine (at 1 s, its first
    # call, which starts the child, once took 1.01 s under mutation testing)
    with IsolatedWorker(EvaluationLimits(time_s=5.0, time_kind="wall", memory_mb=300)) as w:
        yield w


def test_the_child_prints_a_repeated_warning_once_and_each_new_one():
    """The fit child's warning printer (installed when it starts): a warning repeated past the
    ``catch_warnings`` that clear Python's own registries is printed once; a new one is too."""
    import warnings

    from hpo.evaluation.isolation import _show_each_warning_once

    printed: list[str] = []
    with warnings.catch_warnings():  # restores the printer after
        warnings.simplefilter("default")
        warnings.showwarning = lambda message, category, *rest: printed.append(
            f"{category.__name__}: {message}"
        )
        _show_each_warning_once()
        for text in ("first", "first", "first", "second"):
            warn_inside_catch_warnings(text)
    assert printed == [
        "RuntimeWarning: divide by zero encountered in log",
        "RuntimeWarning: first",
        "RuntimeWarning: second",
    ]


def unsendable() -> object:
    """A value the child cannot pickle back to the parent."""
    return lambda: None


def test_a_result_that_cannot_be_sent_back_is_an_error_that_says_so(worker):
    """An unpicklable return value is re-raised in the parent as a TypeError naming the cause
    (not a hang waiting for a reply that never comes), and the worker goes on."""
    with pytest.raises(TypeError, match="result cannot be sent back: ."):
        worker.run(unsendable)
    assert worker.run(add, 1, 1).value == 2


def test_a_call_returns_its_value(worker):
    result = worker.run(add, 2, 3)
    assert result.failure is None and result.value == 5


def test_a_sleep_past_the_wall_limit_is_a_time_failure_and_the_worker_goes_on(worker):
    result = worker.run(sleep_then, 30.0, 1)
    assert result.kind == "time" and result.value is None
    assert result.seconds < 10  # stopped, not waited for (30 s)
    assert result.detected_after_s < 1.0  # the seed's "within a second" of the breach
    assert worker.run(add, 1, 1).value == 2  # a fresh child
    assert worker.restarts == 1


def test_the_cpu_limit_counts_cpu_seconds_not_sleep():
    # the first call's CPU includes the child importing this module to unpickle the function
    # (0.5 s was too little for that under mutation testing's instrumented modules)
    with IsolatedWorker(EvaluationLimits(time_s=2.0, time_kind="cpu")) as w:
        assert w.run(sleep_then, 3.0, 7).value == 7  # a sleep spends no CPU
        result = w.run(spin, 30.0)
        assert result.kind == "time" and result.cpu_seconds >= 2.0


def test_an_allocation_past_the_memory_limit_is_a_memory_failure():
    # A wall limit far above the allocation's time: on a loaded machine the 1 s limit of the
    # shared fixture fired before the RSS poll saw 300 MB (CI, load average 7 on 2 cores).
    with IsolatedWorker(EvaluationLimits(time_s=60.0, time_kind="wall", memory_mb=300)) as worker:
        result = worker.run(allocate, 2000)
        assert result.kind == "memory" and result.value is None
        assert result.failure.startswith("memory: resident")  # the RSS poll, not the backstop
        assert result.peak_rss_mb > 300
        assert result.detected_after_s < 1.0
        assert worker.run(add, 2, 2).value == 4


def test_one_huge_request_fails_inside_the_child_at_the_backstop(worker):
    result = worker.run(allocate_at_once, 4000)  # 4 GB at once: past 2 x 300 MB of address space
    assert result.kind == "memory" and "MemoryError" in result.failure
    assert worker.run(add, 3, 3).value == 6


def test_a_child_that_dies_is_a_crash_failure(worker):
    result = worker.run(die)
    assert result.kind == "crash"
    assert worker.run(add, 4, 4).value == 8


def test_the_function_s_own_exception_reaches_the_parent(worker):
    with pytest.raises(ValueError, match="learner refused"):
        worker.run(raise_value_error)
    assert worker.run(add, 5, 5).value == 10


@pytest.mark.parametrize(
    "settings, message",
    [
        ({"time_s": 0}, "limits.time_s must be > 0"),
        ({"memory_mb": -1}, "limits.memory_mb must be > 0"),
        ({"time_kind": "gpu"}, "valid choices: cpu, wall"),
        ({"max_failed_folds": 0}, "max_failed_folds must be >= 1"),
    ],
)
def test_bad_limits_are_refused(settings, message):
    with pytest.raises(ValueError, match=message):
        EvaluationLimits(**settings)


# --- the evaluator under limits: failed folds, the seed's loss, skipping after 3 -------------


class _Sleeper:
    """Sleeps ``seconds`` in ``fit`` (and first allocates ``allocate_mb``, pages touched, when
    given), then predicts class 0."""

    def __init__(self, seconds: float, allocate_mb: int = 0) -> None:
        self.seconds = seconds
        self.allocate_mb = allocate_mb

    def fit(self, X, y):
        if self.allocate_mb:
            allocate(self.allocate_mb)
        time.sleep(self.seconds)
        return self

    def predict(self, X):
        return np.zeros(len(X), dtype=int)


@pytest.fixture(scope="module")
def sleeper_learner():
    """A learner registered for this module only: unregistered afterwards, so that the tests
    that list every learner (tests/test_learners.py) do not see it when they run after these in
    the same process."""
    from hpo.learners import register_learner, registry

    @register_learner("test_sleeper")
    def factory(config, guard, seed, n_train):
        return _Sleeper(float(config["seconds"]), int(config.get("allocate_mb", 0)))

    yield "test_sleeper"
    del registry.LEARNERS["test_sleeper"]


def _evaluator(limits, n_folds=10, regression=False):
    from hpo.data.catalog import Dataset
    from hpo.evaluation.evaluator import Evaluator
    from hpo.evaluation.protocol import ProtocolSettings
    from hpo.learners import FitGuard

    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 3))
    y = rng.normal(size=120) if regression else np.tile([0, 1, 2], 40)
    data = Dataset(name="probe", X=X, y=y)
    protocol = ProtocolSettings(validation="cv", n_folds=n_folds)
    return Evaluator(data, protocol, lambda c: "test_sleeper", FitGuard(), 0, 0, limits=limits)


FORK = {"start_method": "fork", "time_kind": "wall"}


def test_an_evaluation_past_its_time_limit_fails_its_folds_and_skips_after_three(sleeper_learner):
    evaluator = _evaluator(EvaluationLimits(time_s=1.0, **FORK))
    try:
        slow = evaluator.validate({"seconds": 30.0}, batch=0)
        assert slow.valid_loss == 1.0  # error 100 % on every fold (seed 004 §4.1)
        assert slow.limit_breaches == 3 and slow.skipped_folds == 7 and slow.n_fits == 3
        fast = evaluator.validate({"seconds": 0.0}, batch=0)  # the run goes on
        assert fast.limit_breaches == 0 and fast.skipped_folds == 0 and fast.n_fits == 10
        assert fast.valid_loss < 1.0
    finally:
        evaluator.close()


def test_an_evaluation_past_its_memory_limit_fails_its_folds_and_the_run_goes_on(sleeper_learner):
    # A forked child starts with this process's resident pages in its RSS (a pytest worker that
    # ran other modules first can hold more than 300 MB), so the limit is 300 MB above them.
    inherited_mb = psutil.Process().memory_info().rss / 2**20
    evaluator = _evaluator(EvaluationLimits(memory_mb=inherited_mb + 300, **FORK))
    try:
        hog = evaluator.validate({"seconds": 0.0, "allocate_mb": 2000}, batch=0)
        assert hog.valid_loss == 1.0 and hog.failure.startswith("memory: resident")
        assert hog.limit_breaches == 3 and hog.skipped_folds == 7 and hog.n_fits == 3
        fast = evaluator.validate({"seconds": 0.0}, batch=0)  # the run goes on
        assert fast.limit_breaches == 0 and fast.n_fits == 10 and fast.valid_loss < 1.0
    finally:
        evaluator.close()


def test_a_regression_breach_scores_rmse_1e10(sleeper_learner):
    evaluator = _evaluator(EvaluationLimits(time_s=1.0, max_failed_folds=1, **FORK), 3, True)
    try:
        result = evaluator.validate({"seconds": 30.0}, batch=0)
        assert np.sqrt(result.valid_loss) == pytest.approx(1e10)
        assert result.limit_breaches == 1 and result.skipped_folds == 2
    finally:
        evaluator.close()


def test_without_limits_nothing_runs_in_a_child(sleeper_learner):
    evaluator = _evaluator(None, n_folds=3)
    assert evaluator.fitter.worker is None
    assert evaluator.validate({"seconds": 0.0}, batch=0).n_fits == 3


def test_isolated_fits_score_exactly_as_in_process_ones():
    from hpo.data.catalog import load_dataset
    from hpo.evaluation.evaluator import Evaluator
    from hpo.evaluation.protocol import ProtocolSettings
    from hpo.learners import FitGuard

    data = load_dataset("sklearn-breast-cancer")
    protocol = ProtocolSettings(validation="cv", n_folds=3)
    config = {"classifier": "decision_tree", "decision_tree__max_depth": 4}
    scores = []
    for limits in (None, EvaluationLimits(time_s=60, memory_mb=3000)):
        evaluator = Evaluator(
            data, protocol, lambda c: c["classifier"], FitGuard(), 0, 0, limits=limits
        )
        scores.append((evaluator.validate(config, 0).valid_loss, evaluator.test(config).error))
        evaluator.close()
    assert scores[0] == scores[1]


def test_partial_evaluations_run_in_the_child_as_in_process():
    """Seed 002's resource (a share of the training rows; epochs for the network) reaches the
    fit through the limits' child as it does in-process (the two seeds merged)."""
    from hpo.data.catalog import load_dataset
    from hpo.evaluation.evaluator import Evaluator
    from hpo.evaluation.protocol import ProtocolSettings
    from hpo.learners import FitGuard

    data = load_dataset("sklearn-breast-cancer")
    protocol = ProtocolSettings(validation="cv", n_folds=3)
    config = {"classifier": "decision_tree", "decision_tree__max_depth": 4}
    results = []
    for limits in (None, EvaluationLimits(time_s=60, memory_mb=3000, **FORK)):
        evaluator = Evaluator(
            data, protocol, lambda c: c["classifier"], FitGuard(), 0, 0, limits=limits
        )
        result = evaluator.validate(config, 0, resource=0.5, resource_kind="train_fraction")
        results.append((result.valid_loss, result.resource_spent, result.n_fits))
        evaluator.close()
    assert results[0] == results[1]
    assert results[0][2] == 3 and results[0][1] == pytest.approx(1.5, abs=0.01)


def test_limits_off_keep_the_run_identity_and_on_change_it():
    from experiments.configuration.spec import RunSpec
    from experiments.run.results import config_hash

    spec = RunSpec.of(dataset="sklearn-iris", optimizer="rs", rules={"rs": "best_validation"})
    assert "limits" not in spec.identity()
    on = spec.with_settings(limits=EvaluationLimits(time_s=10))
    assert config_hash(on) != config_hash(spec)


def test_run_py_limits_settings_are_checked_before_a_run():
    from experiments.configuration.command_line import check_overrides
    from experiments.configuration.config import UsageError, _limits

    with pytest.raises(UsageError, match="unknown limits setting 'bogus'; valid choices: enabled"):
        check_overrides(["limits.bogus=1"])
    assert _limits({"enabled": False, "time_s": 5}) is None  # off: no child process
    assert _limits({"enabled": True, "time_s": 5}).time_s == 5
    with pytest.raises(ValueError, match="limits.time_s must be > 0"):
        _limits({"enabled": True, "time_s": 0})


def test_a_child_exits_when_its_parent_is_killed_in_the_middle_of_a_call(tmp_path):
    """A parent killed from outside (SIGKILL, nothing can run in it) while its child is in a
    60 s call: the child exits within a few seconds instead of running the call to its end."""
    import signal
    import subprocess
    import sys
    import textwrap

    script = tmp_path / "parent.py"
    script.write_text(
        textwrap.dedent(
            """
            import os, signal, threading, time
            from hpo.evaluation.isolation import EvaluationLimits, IsolatedWorker

            worker = IsolatedWorker(EvaluationLimits(time_s=120, time_kind="wall"))

            def kill_me():
                while worker.pid is None:
                    time.sleep(0.05)
                time.sleep(1.0)
                print(worker.pid, flush=True)
                os.kill(os.getpid(), signal.SIGKILL)

            if __name__ == "__main__":
                threading.Thread(target=kill_me, daemon=True).start()
                worker.run(time.sleep, 60)
            """
        )
    )
    # the forkserver and the child inherit the output pipe: read the line, do not wait for EOF
    parent = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    child = int(parent.stdout.readline())
    assert parent.wait(timeout=60) == -signal.SIGKILL
    parent.stdout.close()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            if psutil.Process(child).status() == psutil.STATUS_ZOMBIE:
                break
        except psutil.NoSuchProcess:
            break
        time.sleep(0.1)
    else:
        os.kill(child, 9)
        raise AssertionError(f"the child {child} outlived its killed parent by 5 s")
