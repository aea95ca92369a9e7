"""The one binding: what was asked, the policy and the evidence's protocol -> the criteria in force.

Every front end is a skin over :func:`bind`: the command line (``passk gate``,
``report``, ``plan``, ``run``), the GitHub Action, the pytest plugin and Inspect's
:class:`~passk.integrations.inspect.Curtailment` each translate what their user
gave into one plain mapping keyed by the names of :data:`CRITERIA` and
:data:`CHOICES` (:func:`asked_from`), and call :func:`bind`. None of them builds
criteria from a policy, refuses an option, or names an override itself.

Two tables name each setting once:

- :data:`CRITERIA`, the gate's criteria: each one's key in the policy, its
  spelling on every front end, its key in a run's protocol, and the direction
  that tightens it. A value asked for that is looser than the policy's is
  refused (:class:`~passk.errors.PolicyError`), and one looser than what the
  run's protocol declared before the runs is refused too
  (:class:`~passk.errors.LoosenedCriteria`); a stricter one is kept.
- :data:`CHOICES`, the reader's and the comparison's choices that change what
  counts (the errors rule, pooling, the success rule, the metric and filter,
  duplicates, incomplete evidence, the settings two versions may differ in).
  Under a policy each is bound by it (refused where it would count differently
  than the policy says); without one, each choice in effect is named in every
  rendering of the verdict (:attr:`InForce.overrides`).

The value in force of a criterion is the asked one where given, else the
protocol's (declared before the runs), else the policy's, else the default;
:attr:`InForce.origins` says which, for the HTML page and the Action.

Examples
--------
>>> from passk.gate.policy import Policy
>>> from passk.criteria import GateCriteria
>>> p = Policy("passk.toml", criteria=GateCriteria(k=3, max_flakiness=0.2))
>>> f = bind({"bar": 0.8}, p)
>>> f.criteria.describe(), f.origins["k"], f.origins["bar"]
('k 3, bar 0.8 on the estimate, flakiness cap 0.2', 'policy passk.toml', 'command line (--min-overall 0.8)')
>>> bind({"cap": 0.5}, p)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
passk.errors.PolicyError: --max-flakiness 0.5 would loosen the policy's cap 0.2 (passk.toml): ...
"""  # noqa: E501  # a doctest's output line cannot wrap

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from passk._public import publish
from passk.criteria import CORRECTIONS, DEFAULT_CRITERIA, GATE_ON, GateCriteria
from passk.errors import BadInput, LoosenedCriteria, PolicyError
from passk.render.words import plural

if TYPE_CHECKING:
    from passk.gate.policy import Policy
    from passk.results.protocol import Protocol

__all__ = [
    "CHOICES",
    "CRITERIA",
    "FRONTS",
    "Choice",
    "Criterion",
    "InForce",
    "asked_from",
    "bind",
    "looser",
]

#: The front ends, as :func:`asked_from` and the origins name them.
FRONTS = ("cli", "plugin", "env", "python", "api")

#: Which mode may replace which: ``proved`` is stricter than both others (its suite bound
#: is below the estimate, and a task proved steady is within the cap); ``chapter`` and
#: ``proved-warn`` are not ordered (one blocks on flakiness, the other on the suite bound).
_MODE_STRICTER = {"chapter": ("chapter", "proved"), "proved-warn": ("proved-warn", "proved"),
                  "proved": ("proved",)}


@dataclass(frozen=True)
class Criterion:
    """One of the gate's criteria, named once for every front end.

    Attributes
    ----------
    name : str
        Its key in the policy's table and in the mapping :func:`bind` takes.
    table : str
        The policy's table: ``gate`` or ``baseline``.
    field : str
        The :class:`~passk.criteria.GateCriteria` attribute.
    flag, plugin, env, keyword : str or None
        Its spelling on the command line, in the pytest plugin, as the Action's
        environment variable, and as a Python keyword (``run_suite``,
        ``Curtailment``); None where that front end does not take it.
    protocol : str or None
        Its key in a run's protocol settings (declared before the runs).
    tighter : str or Mapping
        ``'higher'`` (a larger value is stricter), ``'lower'``, or for a choice,
        each value's stricter-or-equal replacements.
    """

    name: str
    table: str
    field: str
    flag: str
    plugin: str | None
    env: str | None
    keyword: str | None
    protocol: str | None
    tighter: str | Mapping[str, tuple[str, ...]]

    def shown(self, value: Any) -> str:
        """The value as a message prints it."""
        return f"{value:g}" if isinstance(value, float) else (
            repr(value) if isinstance(value, str) else str(value))

    def named(self, value: Any) -> str:
        """The criterion and its value as a message names them (``baseline alpha 0.05``)."""
        return f"{'baseline ' if self.table == 'baseline' else ''}{self.name} {self.shown(value)}"


def _order(choices: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """A total order from loosest to strictest, as each value's stricter-or-equal ones."""
    return {c: tuple(choices[i:]) for i, c in enumerate(choices)}


#: The gate's criteria, each named once (see :class:`Criterion`).
CRITERIA: tuple[Criterion, ...] = (
    Criterion("k", "gate", "k", "--k", "--passk-k", "PASSK_K", "k", "k", "higher"),
    Criterion("bar", "gate", "min_overall_pass_hat_k", "--min-overall", "--passk-min-overall",
              "PASSK_MIN_OVERALL", "min_overall_pass_hat_k", "min_overall_pass_hat_k",
              "higher"),
    Criterion("cap", "gate", "max_flakiness", "--max-flakiness", "--passk-max-flakiness",
              "PASSK_MAX_FLAKINESS", "max_flakiness", "max_flakiness", "lower"),
    Criterion("on", "gate", "on", "--on", "--passk-on", "PASSK_ON", "on", "gate_on",
              _order(GATE_ON)),
    Criterion("confidence", "gate", "confidence", "--confidence", "--passk-confidence",
              "PASSK_CONFIDENCE", "confidence", "confidence", "higher"),
    Criterion("min_runs", "gate", "min_runs", "--min-runs", "--passk-min-runs",
              "PASSK_MIN_RUNS", "min_runs", "min_runs", "higher"),
    Criterion("mode", "gate", "mode", "--mode", "--passk-mode", "PASSK_MODE", "mode", "mode",
              _MODE_STRICTER),
    Criterion("alpha", "baseline", "alpha", "--alpha", None, "PASSK_ALPHA", "alpha", None,
              "lower"),
    Criterion("correction", "baseline", "correction", "--correction", None,
              "PASSK_CORRECTION", "correction", None, _order(tuple(reversed(CORRECTIONS)))),
    Criterion("margin", "baseline", "margin", "--margin", None, "PASSK_MARGIN", "margin",
              None, "lower"),
)
_BY_NAME = {c.name: c for c in CRITERIA}


@dataclass(frozen=True)
class Choice:
    """A reader's or comparison's choice that changes what counts, named once.

    Attributes
    ----------
    name : str
        Its key in the mapping :func:`bind` takes (the reader's keyword).
    flag : str
        Its command-line spelling, as the verdict names it.
    env : str or None
        The Action's environment variable, where the Action takes it.
    """

    name: str
    flag: str
    env: str | None = None


#: The choices that change what counts (see the module's docstring).
CHOICES: tuple[Choice, ...] = (
    Choice("scorer", "--scorer"),
    Choice("success_values", "--success-value"),
    Choice("success_threshold", "--success-threshold"),
    Choice("score_key", "--score-key"),
    Choice("metric", "--metric"),
    Choice("filter", "--filter"),
    Choice("eval_key", "--eval-key"),
    Choice("count_errors_as_failures", "--count-errors-as-failures"),
    Choice("accept_incomplete", "--accept-incomplete"),
    Choice("pool_evaluations", "--pool-evaluations"),
    Choice("pool_unverified_runs", "--pool-unverified-runs"),
    Choice("errors", "--errors"),
    Choice("allow_change", "--allow-change"),
    Choice("duplicates", "--duplicates"),
)
_CHOICE = {c.name: c for c in CHOICES}
#: The errors rule from loosest to strictest.
_ERRORS_ORDER = ("exclude", "fail", "fail-all")


def _given(value: Any) -> bool:
    """Whether an option was given: ``None``, ``False``, empty and the defaults' ``0``
    for ``min_runs`` are "not given"."""
    return value is not None and value is not False and value not in ([], ())


def looser(criterion: Criterion | str, held: Any, asked: Any) -> bool:
    """Whether ``asked`` is looser than ``held`` for ``criterion``.

    Examples
    --------
    >>> looser("cap", 0.2, 0.3), looser("k", 5, 8), looser("mode", "chapter", "proved-warn")
    (True, False, True)
    >>> looser("margin", None, 0.05), looser("margin", 0.05, None)
    (False, True)
    """
    c = _BY_NAME[criterion] if isinstance(criterion, str) else criterion
    if asked == held:
        return False
    if c.name == "margin":  # a margin asks for non-inferiority to be shown: None is loosest
        return asked is None or (held is not None and asked > held)
    if isinstance(c.tighter, Mapping):
        return asked not in c.tighter.get(held, (held,))
    return bool(asked < held if c.tighter == "higher" else asked > held)


@dataclass(frozen=True)
class InForce:
    """The criteria in force and everything that says where each came from.

    Attributes
    ----------
    criteria : GateCriteria
        The criteria (``criteria.k`` is a stand-in where :attr:`k` is None).
    k : int or None
        The k asked for, declared or the policy's; None: each task's own (the
        protocol's per test), else the smallest n over tasks.
    k_for : Mapping[str, int]
        A k per risk label.
    origins : Mapping[str, str]
        Each criterion's origin in words: the front end's option, the run's
        protocol, the policy (by its path from the repository's root and hash),
        or the default.
    overrides : tuple of str
        Every choice in effect that changes what counts, as a phrase naming it
        and its value; the policy's own success rule and errors rule too.
    policy : Policy or None
    policy_line : str
        The policy as every verdict names it (``policy PATH (sha256 ...)``), or
        that there is none.
    reader : Mapping[str, Any]
        The reader's options in force (the asked ones, then the policy's rule).
    declared : Mapping[str, Any]
        What the run's protocol declared, by the protocol's keys.
    stricter : tuple of str
        One sentence per criterion asked stricter than the protocol's.
    """

    criteria: GateCriteria
    k: int | None
    k_for: Mapping[str, int] = field(default_factory=dict)
    origins: Mapping[str, str] = field(default_factory=dict)
    overrides: tuple[str, ...] = ()
    policy: Policy | None = None
    policy_line: str = ""
    reader: Mapping[str, Any] = field(default_factory=dict)
    declared: Mapping[str, Any] = field(default_factory=dict)
    stricter: tuple[str, ...] = ()

    def value(self, name: str) -> Any:
        """A criterion's value in force by its :data:`CRITERIA` name."""
        if name == "k":
            return self.k
        return getattr(self.criteria, _BY_NAME[name].field)


def _spelling(c: Criterion | Choice, front: str) -> str:
    if isinstance(c, Choice):
        return c.flag if front != "env" or c.env is None else c.env
    spelled = {"cli": c.flag, "plugin": c.plugin, "env": c.env, "python": c.keyword,
               "api": c.name}[front]
    return spelled or c.flag


def _said(c: Criterion | Choice, front: str, value: Any) -> str:
    """An option as its front end spells it, with its value."""
    shown = f"{value:g}" if isinstance(value, float) else (
        ", ".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value))
    name = _spelling(c, front)
    if front in ("python", "api"):
        return f"{name}={shown}"
    if front == "env":  # the Action's input, as action.yml names it
        return f"input {name.removeprefix('PASSK_').lower().replace('_', '-')} {shown}"
    return name if value is True else f"{name} {shown}"


def _origin_word(front: str) -> str:
    return {"cli": "command line", "plugin": "pytest option", "env": "the Action's input",
            "python": "argument", "api": "asked"}[front]


def asked_from(values: Mapping[str, Any], front: str) -> dict[str, Any]:
    """What a front end was given, by :data:`CRITERIA`'s and :data:`CHOICES`' names.

    ``values`` maps the front end's own names (an argparse destination such as
    ``min_overall``, a pytest option's ``passk_min_overall``, an environment
    variable ``PASSK_MIN_OVERALL``, a keyword ``min_overall_pass_hat_k``) to
    values already parsed; missing names are not given.

    Examples
    --------
    >>> asked_from({"min_overall": 0.8, "k": None}, "cli")["bar"]
    0.8
    >>> asked_from({"passk_max_flakiness": 0.1}, "plugin")["cap"]
    0.1
    """
    if front not in FRONTS:
        raise BadInput(f"front ({front!r}) must be one of {', '.join(FRONTS)}")
    out: dict[str, Any] = {}
    for c in CRITERIA:
        spelled = _spelling(c, front)
        key = (spelled if front in ("env", "python", "api")
               else spelled.lstrip("-").replace("-", "_"))
        out[c.name] = values.get(key)
    for ch in CHOICES:
        key = ch.flag.lstrip("-").replace("-", "_")
        if ch.name == "success_values":
            key = "success_value" if front == "cli" else ch.name
        out[ch.name] = values.get(key, values.get(ch.name))
    for extra in ("k_for", "runs", "files", "no_policy"):
        if extra in values:
            out[extra] = values[extra]
    return out


def _refused(what: str, policy_value: str, policy: Policy) -> PolicyError:
    return PolicyError(f"{what} would loosen the policy's {policy_value} ({policy.path}): "
                       "remove it, or change the policy in a reviewed commit")


def _policy_values(policy: Policy) -> dict[str, Any]:
    return {c.name: getattr(policy.criteria, c.field) for c in CRITERIA}


#: Choices a policy refuses whatever their value, with what of the policy they would loosen.
_NEVER_UNDER_POLICY = {"accept_incomplete": "task set and runs (incomplete evidence fails "
                                            "closed)",
                       "duplicates": "evidence (a run recorded twice is an error)"}
#: Pooling choices and the kind a policy's ``pooling`` must list to allow them.
_POOLING = {"pool_unverified_runs": "unverified-runs", "pool_evaluations": "evaluations"}
#: The success rule's single-valued keys: the choice, the rule's attribute, its name.
_RULE_KEYS = (("scorer", "scorer"), ("score_key", "score key"), ("metric", "metric"),
              ("filter", "filter"))


def _refuse_pooling(asked: Mapping[str, Any], policy: Policy, said: Mapping[str, str]) -> None:
    if _given(asked.get("errors")) and (_ERRORS_ORDER.index(asked["errors"])
                                        < _ERRORS_ORDER.index(policy.errors)):
        raise _refused(said["errors"], f"errors = {policy.errors!r}", policy)
    for name, kind in _POOLING.items():
        if asked.get(name) and kind not in policy.pooling:
            raise _refused(said[name], f"pooling {list(policy.pooling)}", policy)
    files = asked.get("files")
    if isinstance(files, int) and files > 1 and "trials" not in policy.pooling:
        raise _refused(f"{files} results files", f"pooling {list(policy.pooling)}", policy)
    for name, what in _NEVER_UNDER_POLICY.items():
        if asked.get(name) not in (None, False, "error"):
            raise _refused(said[name], what, policy)


def _bind_rule(asked: Mapping[str, Any], policy: Policy, said: Mapping[str, str],
               reader: dict[str, Any]) -> None:
    """The success rule in force: each asked key must count as the policy's does (the same
    scorer, key, metric and filter; no extra success value; no lower threshold)."""
    rule = policy.success
    for name, what in _RULE_KEYS:
        value, held = asked.get(name), getattr(rule, name)
        if value is not None and value != held:
            raise _refused(said[name], f"{what} {held!r}" if held
                           else f"success rule (no {what} chosen: the producer's own)", policy)
        reader[name] = held if value is None else value
    values = asked.get("success_values")
    extra = sorted(set(values or ()) - set(rule.values))
    if extra:
        raise _refused(f"--success-value {', '.join(extra)}",
                       f"success values {list(rule.values)}" if rule.values
                       else "success rule (the producer's pass/fail values)", policy)
    reader["success_values"] = list(values) if values else (list(rule.values) or None)
    threshold = asked.get("success_threshold")
    if threshold is not None and (rule.threshold is None or threshold < rule.threshold):
        raise _refused(said["success_threshold"],
                       f"success threshold {rule.threshold:g}" if rule.threshold is not None
                       else "success rule (no threshold)", policy)
    reader["success_threshold"] = rule.threshold if threshold is None else threshold


def _bind_choices(asked: Mapping[str, Any], policy: Policy | None, front: str,
                  producer: str | None) -> tuple[dict[str, Any], list[str]]:
    """The reader's options in force and the phrases naming each choice in effect; under a
    policy, every choice that would count differently than it says is refused."""
    reader = {name: asked.get(name) for name in ("scorer", "success_values",
                                                 "success_threshold", "score_key", "metric",
                                                 "filter", "errors")}
    phrases = [_said(ch, front, asked[ch.name]) for ch in CHOICES
               if _given(asked.get(ch.name)) and asked.get(ch.name) != "error"]
    if policy is None:
        return reader, phrases
    said = {ch.name: _said(ch, front, asked.get(ch.name)) for ch in CHOICES}
    _refuse_pooling(asked, policy, said)
    _bind_rule(asked, policy, said, reader)
    if reader.get("errors") is None and policy.errors == "exclude":
        reader["errors"] = "exclude"
    if producer is not None:
        policy.success.check_applies(producer, policy.path)
    shown = policy.success.phrases()
    phrases += ["policy's " + ", ".join(shown)] if shown else []
    phrases += [f"policy's errors = {policy.errors}"] if policy.errors != "fail" else []
    return reader, phrases


def _one(c: Criterion, asked: Any, held: Mapping[str, Any], declared: Mapping[str, Any],
         policy: Policy | None, protocol: Protocol | None, front: str
         ) -> tuple[Any, str, str | None]:
    """One criterion in force: (value, origin, the 'stricter than declared' sentence)."""
    value = None if c.name == "min_runs" and not asked else asked
    d = declared.get(c.protocol) if c.protocol is not None else None
    if policy is not None and d is not None and looser(c, held[c.name], d):
        raise PolicyError(
            f"the evidence's protocol declares {c.name} {c.shown(d)}, looser than the "
            f"policy's {c.name} {c.shown(held[c.name])} ({policy.path}): the evidence must "
            "be measured under the policy; rerun under it")
    if value is not None and policy is not None and looser(c, held[c.name], value):
        raise _refused(_said(c, front, value), c.named(held[c.name]), policy)
    if value is not None and d is not None and looser(c, d, value):
        raise LoosenedCriteria(
            f"{_said(c, front, value)} would loosen the declared {c.name} {c.shown(d)}: "
            "criteria are fixed before the runs"
            + (f" (protocol {protocol.fingerprint})" if protocol is not None else ""))
    if value is not None:
        origin = f"{_origin_word(front)} ({_said(c, front, value)})"
        if d is None or value == d:
            return value, origin, None
        shown = (f"{value:g} is stricter than the declared {d:g}" if isinstance(value, float)
                 else f"{value} is stricter than the declared {d}")
        return value, f"{origin}, stricter than the run's protocol's {c.shown(d)}", \
            f"{c.protocol} {shown}"
    if d is not None:
        return d, "the run's protocol (declared before the runs)", None
    if policy is not None:
        return held[c.name], policy.phrase, None
    if c.name == "k":
        return None, "the smallest number of runs of any task", None
    return getattr(DEFAULT_CRITERIA, c.field), "the default", None


def _bind_runs(asked: Mapping[str, Any], policy: Policy | None, floor: int | None,
               front: str, origins: dict[str, str]) -> dict[str, int]:
    """The k per risk (none looser than the k in force) and the runs per risk (none fewer
    than the policy's)."""
    k_for = {str(r): int(kk) for r, kk in dict(asked.get("k_for") or {}).items()}
    for risk, kk in k_for.items():
        if floor is not None and kk < floor:
            what = f"--k-for {risk}={kk}" if front == "cli" else f"k {kk} for {risk}"
            if policy is not None and kk < policy.criteria.k:
                raise _refused(what, f"k {policy.criteria.k}", policy)
            raise LoosenedCriteria(f"{what} would loosen the declared k {floor}: criteria are "
                                   "fixed before the runs")
        origins[f"k for {risk}"] = f"{_origin_word(front)} (--k-for {risk}={kk})"
    if policy is None:
        return k_for
    for risk, n in dict(asked.get("runs") or {}).items():
        need = policy.tasks.runs_for(risk)
        if need is not None and n < need:
            raise _refused(f"{plural(n, 'run')} for {risk} tasks", f"runs {need} for {risk}",
                           policy)
    return k_for


def bind(asked: Mapping[str, Any], policy: Policy | None = None,
         protocol: Protocol | None = None, *, front: str = "cli",
         producer: str | None = None, said: Sequence[str] = (),
         recorded_k: tuple[int, str] | None = None) -> InForce:
    """The criteria in force, each with its origin, and every choice that changes what counts.

    Parameters
    ----------
    asked : Mapping[str, Any]
        What the user gave, by :data:`CRITERIA`'s and :data:`CHOICES`' names
        (:func:`asked_from`), plus ``k_for`` (risk -> k), ``runs`` (risk ->
        runs, for a run), ``files`` (how many results files are pooled) and
        ``no_policy`` (the policy was set aside, by
        :func:`passk.gate.policy.policy_in_force`: the verdict line says so);
        ``None`` (and ``False``, empty, ``min_runs`` 0): not given.
    policy : Policy, optional
        The repository's policy (:func:`passk.gate.policy.policy_in_force`).
    protocol : Protocol, optional
        The evidence's protocol: the criteria it declared before the runs.
    front : {'cli', 'plugin', 'env', 'python'}
        How options are spelled in messages and origins.
    producer : str, optional
        The evidence's producer: a policy's success key that does not apply to
        it is refused.
    said : sequence of str
        What applying the policy's errors rule did (:func:`passk.gate.policy.count_errors`),
        named with the choices.
    recorded_k : tuple of (int, str), optional
        The k the evidence's producer records and where
        (:attr:`passk.results.counts.Results.recorded_k`): k's value when nothing
        else gives one (not asked, declared or the policy's), in place of the
        smallest number of runs.

    Returns
    -------
    InForce

    Raises
    ------
    PolicyError
        An option, or the protocol, looser than the policy; a policy key that
        does not apply to the producer.
    LoosenedCriteria
        An option looser than what the protocol declared before the runs.
    """
    if asked.get("no_policy") and policy is not None:  # set aside, yet read: never both
        raise PolicyError(f"--no-policy, yet the policy {policy.path} was read: a policy in "
                          "force is never set aside here (passk.gate.policy.policy_in_force "
                          "sets it aside, for the commands that may)")
    held = _policy_values(policy) if policy is not None else {}
    settings = protocol.settings if protocol is not None else {}
    declared = {c.protocol: settings[c.protocol] for c in CRITERIA
                if c.protocol is not None and settings.get(c.protocol) is not None}
    values: dict[str, Any] = {}
    origins: dict[str, str] = {}
    stricter: list[str] = []
    for c in CRITERIA:
        values[c.name], origins[c.name], line = _one(c, asked.get(c.name), held, declared,
                                                     policy, protocol, front)
        stricter += [line] if line else []
    if values["k"] is None and recorded_k is not None:  # the producer's own k, not the runs'
        values["k"], origins["k"] = recorded_k[0], f"the log's {recorded_k[1]}"
    floor = values["k"] if (declared.get("k") is not None or policy is not None) else None
    k_for = _bind_runs(asked, policy, floor, front, origins)
    reader, phrases = _bind_choices(asked, policy, front, producer)
    criteria = GateCriteria(
        k=int(values["k"]) if values["k"] is not None else DEFAULT_CRITERIA.k,
        **{c.field: values[c.name] for c in CRITERIA if c.name != "k"})
    from passk.gate.policy import NO_POLICY, POLICY_SET_ASIDE

    return InForce(criteria, None if values["k"] is None else int(values["k"]), k_for, origins,
                   (*phrases, *said), policy,
                   policy.phrase if policy is not None else
                   POLICY_SET_ASIDE if asked.get("no_policy") else NO_POLICY,
                   reader, declared, tuple(stricter))


def choices_for(reader: Mapping[str, Any], taken: Sequence[str]) -> dict[str, Any]:
    """The reader options in force that a format takes (``FORMAT_OPTIONS``), set ones only."""
    return {k: v for k, v in reader.items() if v is not None and k in taken}


Parse = Callable[[str], Any]


publish(globals())  # the names passk.__all__ takes from here say 'passk' (passk._public)
