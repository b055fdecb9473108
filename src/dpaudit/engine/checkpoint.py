"""Checkpoint and resume: a run directory that survives ``kill -9``.

A long audit is a deterministic sequence of :func:`run_units` calls (the
sanity check has one, the black-box audit one per stage), each mapping work
units to sufficient statistics that merge in unit order.  Because every unit is
seeded from (root seed, key) alone (:mod:`dpaudit.random`), a unit's result is
the same whenever and wherever it runs.  Persisting each result as it arrives
and, after a crash, running only the missing units therefore gives **exactly**
the result of an uninterrupted run.

Layout of a run directory (``--out DIR``; every name from :mod:`dpaudit.rundir.layout`)::

    DIR/config.json              full configuration + dpaudit version (written first)
    DIR/units/c000/manifest.json fingerprint of call 0's units (count, SHA-256 of the units)
    DIR/units/c000/u000017.npz   the result of unit 17 of call 0 (:mod:`.unit_codec`)
    DIR/result.json              the final result; present only when the run completed

Every file is written atomically (temporary file, ``fsync``, rename —
:mod:`dpaudit.io`), so a killed run leaves whole files or none.

**No pickle.**  A run directory may come from a colleague, so reading one never
executes code: unit results are ``.npz`` archives read with
``allow_pickle=False`` plus a JSON description of their structure, and only
the result types dpaudit's auditors return can be stored or rebuilt
(:mod:`dpaudit.engine.unit_codec`).  A unit file that cannot be read back
(truncated, corrupted, an older format) is treated as **missing and
recomputed** — safe because a unit's result depends on its seed alone — and
the count of such files is reported on resume.

Resuming (``--resume``) refuses a different configuration (exit 2 naming the
first differing key), and a different *code*: ``config.json`` records the
dpaudit version and a fingerprint of the mechanism (given by the caller, see
:func:`dpaudit.mechanisms.fingerprint.code_fingerprint`:
the source files of a built-in's class hierarchy, the SHA-256 of a
``module:callable``'s module file, the library version of an adapter), and a
mismatch on ``--resume`` is an error (exit 2) — stored units from other code
would otherwise be mixed silently into the new result.  Within a call, stored
results are reused only when the call's units are byte-for-byte the ones that
produced them (same fingerprint); otherwise that call and every later one are
recomputed — slower, never wrong.

Mechanisms that draw from a source dpaudit cannot seed (OS entropy, e.g.
OpenDP; see :func:`dpaudit.auditors.core.guard.check_randomness`) resume validly but
not bit-identically: the missing units draw fresh noise.

How auditors use it: they call :func:`dpaudit.engine.executor.run_units` with
the :class:`~dpaudit.engine.config.ExecutionConfig` they were given; a caller
that wants checkpointing opens a :func:`session` and passes it in that
configuration (``ExecutionConfig.session``, e.g. via :meth:`Session.attach`).
:meth:`Session.run` then adds the per-unit timeout
(:mod:`dpaudit.engine.timeout`) and, with a run directory, the
checkpointing.  There is no hidden state: without a session in the
configuration, nothing is stored.  Loading stored units runs no code, but
a unit file written by someone else can still hold *wrong* counts: resume
only directories whose results you are prepared to trust.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import pickle  # only to fingerprint units (dumps); nothing is ever unpickled here
import shutil
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from dpaudit.engine.config import ExecutionConfig, WorkerLostError
from dpaudit.engine.executor import execute
from dpaudit.engine.timeout import TimedUnitFunction, check_timeout, with_timeout
from dpaudit.engine.unit_codec import FORMAT as UNIT_FORMAT
from dpaudit.engine.unit_codec import CorruptUnitError, decode_unit, encode_unit
from dpaudit.errors import DPAuditError, InvalidArgumentError
from dpaudit.io import atomic_write_bytes, atomic_write_text
from dpaudit.rundir.layout import (
    CONFIG_FILE,
    MANIFEST_FILE,
    RESULT_FILE,
    UNIT_PREFIX,
    UNIT_SUFFIX,
    UNITS_DIR,
    call_folder,
    call_index,
    unit_file,
    unit_index,
)
from dpaudit.serialization import dumps, to_jsonable

U = TypeVar("U")
R = TypeVar("R")

#: Options that change how a run executes or reports, never its result.
EXECUTION_ONLY_OPTIONS = frozenset(
    {
        "out",
        "force",
        "resume",
        "workers",
        "backend",
        "ray_address",
        "json",
        "quiet",
        "func",
        "unit_timeout",
        "fail_on_violation",
    }
)


class RunDirectoryError(DPAuditError, ValueError):
    """A run directory cannot be used as asked (corrupt, or not a dpaudit run directory)."""


def config_from_options(options: Mapping[str, Any], command: str) -> dict[str, Any]:
    """The configuration that determines a CLI run's result: all options but execution-only ones."""
    config: dict[str, Any] = {"command": command}
    for key, value in sorted(options.items()):
        if key in EXECUTION_ONLY_OPTIONS or key == "command" or callable(value):
            continue
        config[key] = to_jsonable(value)
    return config


def _first_difference(recorded: Mapping[str, Any], wanted: Mapping[str, Any]) -> str | None:
    for key in sorted(set(recorded) | set(wanted)):
        if recorded.get(key, "<absent>") != wanted.get(key, "<absent>"):
            return key
    return None


@dataclass
class RunDirectory:
    """An opened run directory; see the module docstring for its layout."""

    path: Path
    config: dict[str, Any]
    created: bool = False

    # ---------------------------------------------------------------- opening
    @classmethod
    def open(
        cls,
        path: str | Path,
        config: Mapping[str, Any],
        *,
        force: bool = False,
        resume: bool = False,
        code: Mapping[str, str] | None = None,
    ) -> RunDirectory:
        """Start a new run in ``path`` or (``resume``) continue the one recorded there.

        A new run needs ``path`` to be missing or empty, or (``force``) an
        earlier run directory, which is replaced.  ``resume`` needs
        ``path/config.json`` equal to ``config``, made by the same dpaudit
        version and the same mechanism ``code`` (a mapping of names to digests
        or versions, compared key by key).
        """
        out = Path(path)
        config = json.loads(dumps(dict(config)))  # normalised exactly as it is stored
        code = dict(code or {})
        if out.exists() and not out.is_dir():
            raise InvalidArgumentError("--out", str(path), "a directory path (it is a file)")
        if resume:
            return cls._resume(out, config, code)
        if out.exists() and any(out.iterdir()):
            if not force:
                raise InvalidArgumentError(
                    "--out",
                    str(path),
                    "an empty or new directory (--force replaces an earlier run, "
                    "--resume continues it)",
                )
            if not (out / CONFIG_FILE).is_file():
                raise InvalidArgumentError(
                    "--out",
                    str(path),
                    f"a dpaudit run directory for --force (no {CONFIG_FILE}: not replacing "
                    "a directory dpaudit did not create)",
                )
            shutil.rmtree(out)
        created = not out.exists()
        try:
            out.mkdir(parents=True, exist_ok=True)
            atomic_write_text(out / CONFIG_FILE, dumps(_config_record(config, code)) + "\n")
        except OSError as exc:
            if created:
                shutil.rmtree(out, ignore_errors=True)
            raise InvalidArgumentError(
                "--out", str(path), f"a writable directory ({exc.strerror or exc})"
            ) from None
        return cls(out, config, created=True)

    @classmethod
    def _resume(cls, out: Path, config: dict[str, Any], code: dict[str, str]) -> RunDirectory:
        record_path = out / CONFIG_FILE
        if not record_path.is_file():
            raise InvalidArgumentError(
                "--resume",
                str(out),
                f"a run directory with {CONFIG_FILE} from an earlier run (start without --resume)",
            )
        try:
            record = json.loads(record_path.read_text(encoding="utf-8"))
            recorded = record["config"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise RunDirectoryError(f"cannot read {record_path}: {exc}") from None
        changed = _code_difference(record, code)
        if changed is not None:
            raise RunDirectoryError(
                f"run directory {out} was made with a different mechanism code/dpaudit version: "
                f"{changed}; its stored results cannot be reused (--force starts over)"
            )
        key = _first_difference(recorded, config)
        if key is not None:
            raise InvalidArgumentError(
                key,
                config.get(key, "<absent>"),
                f"{recorded.get(key, '<absent>')!r} as recorded in {record_path} "
                "(resuming with a different configuration is refused; --force starts over)",
            )
        return cls(out, config, created=False)

    # ---------------------------------------------------------------- results
    @property
    def complete(self) -> bool:
        """True once :meth:`write_result` has run."""
        return (self.path / RESULT_FILE).is_file()

    def write_result(self, result: Any) -> Path:
        """Write the final result (JSON, atomically); its presence marks the run complete."""
        target = self.path / RESULT_FILE
        atomic_write_text(target, dumps(result) + "\n")
        return target

    def discard(self) -> None:
        """Remove the directory if this run created it (nothing half-done is left behind)."""
        if self.created:
            shutil.rmtree(self.path, ignore_errors=True)

    # ------------------------------------------------------------ unit store
    def _call_dir(self, call: int) -> Path:
        return self.path / UNITS_DIR / call_folder(call)

    def begin_call(
        self, call: int, fingerprint: str, n_units: int, desc: str
    ) -> tuple[dict[int, Any], list[int]]:
        """Register call ``call``; return its stored results (index → result) and unreadable units.

        Unreadable unit files (truncated, corrupted) are left out of the
        results, so they are recomputed.  When the stored manifest differs
        (other units, or an older storage format), this call's and every later
        call's stored results are dropped.
        """
        folder = self._call_dir(call)
        manifest = {
            "fingerprint": fingerprint,
            "units": n_units,
            "desc": desc,
            "store": UNIT_FORMAT,
        }
        stored: dict[int, Any] = {}
        unreadable: list[int] = []
        manifest_path = folder / MANIFEST_FILE
        if manifest_path.is_file():
            try:
                previous = json.loads(manifest_path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                previous = None
            if previous == manifest:
                stored, unreadable = self._load_units(folder, n_units)
            else:
                self._drop_calls_from(call)
        folder.mkdir(parents=True, exist_ok=True)
        if not manifest_path.is_file():
            atomic_write_text(manifest_path, json.dumps(manifest) + "\n")
        return stored, unreadable

    def _unit_path(self, call: int, index: int) -> Path:
        return self._call_dir(call) / unit_file(index)

    def _load_units(self, folder: Path, n_units: int) -> tuple[dict[int, Any], list[int]]:
        stored: dict[int, Any] = {}
        unreadable: list[int] = []
        for item in folder.glob(f"{UNIT_PREFIX}*{UNIT_SUFFIX}"):
            index = unit_index(item.name)
            if index is None or not 0 <= index < n_units:
                continue  # not a unit file of this call
            try:
                stored[index] = decode_unit(item.read_bytes())
            except (OSError, CorruptUnitError):
                unreadable.append(index)  # treated as missing: recomputed and rewritten
        return stored, sorted(unreadable)

    def _drop_calls_from(self, call: int) -> None:
        root = self.path / UNITS_DIR
        if not root.is_dir():
            return
        for folder in root.iterdir():
            index = call_index(folder.name)
            if index is not None and index >= call:
                shutil.rmtree(folder, ignore_errors=True)

    def save_unit(self, call: int, index: int, result: Any) -> None:
        """Persist one unit's result atomically (:func:`~dpaudit.engine.unit_codec.encode_unit`)."""
        atomic_write_bytes(self._unit_path(call, index), encode_unit(result))

    def stored_units(self) -> int:
        """Number of unit results on disk (all calls)."""
        units = (self.path / UNITS_DIR).glob(f"*/{UNIT_PREFIX}*{UNIT_SUFFIX}")
        return sum(1 for u in units if call_index(u.parent.name) is not None)


def _config_record(config: Mapping[str, Any], code: Mapping[str, str]) -> dict[str, Any]:
    from dpaudit import __version__

    return {
        "format": 1,
        "dpaudit_version": __version__,
        "code": dict(code),
        "config": dict(config),
    }


def _code_difference(record: Mapping[str, Any], code: Mapping[str, str]) -> str | None:
    """What differs between the recorded and the current code, in words; None if nothing."""
    from dpaudit import __version__

    then = record.get("dpaudit_version", "<unrecorded>")
    if then != __version__:
        return f"dpaudit {then} then, {__version__} now"
    recorded = record.get("code") or {}
    for key in sorted(set(recorded) | set(code)):
        old, new = recorded.get(key, "<unrecorded>"), code.get(key, "<unrecorded>")
        if old != new:
            return f"{key} was {_short(old)}, is {_short(new)}"
    return None


def _short(value: Any) -> str:
    text = str(value)
    is_digest = len(text) > 24 and all(c in "0123456789abcdef" for c in text)
    return text[:16] + "…" if is_digest else text


def fingerprint(fn: Callable[..., Any], units: Sequence[Any]) -> str:
    """SHA-256 of the function's name and the pickled units: identical work ⇔ equal fingerprint.

    A PyTorch module inside a unit (an LM rewriter's model) is pickled as its
    :func:`module_digest` instead of its weights: a 135M-parameter model would otherwise
    be serialised whole once per unit only to be hashed.
    """
    inner = fn.fn if isinstance(fn, TimedUnitFunction) else fn
    digest = hashlib.sha256(f"{inner.__module__}.{inner.__qualname__}".encode())
    buffer = io.BytesIO()
    _DigestPickler(buffer, protocol=4).dump(list(units))
    digest.update(buffer.getvalue())
    return digest.hexdigest()


class _DigestPickler(pickle.Pickler):
    """Pickles torch modules by :func:`module_digest` (``persistent_id``), all else as usual."""

    def persistent_id(self, obj: Any) -> Any:
        torch = sys.modules.get("torch")
        if torch is not None and isinstance(obj, torch.nn.Module):
            return ("torch-module", type(obj).__qualname__, module_digest(obj))
        return None


#: A parameter's every ``_DIGEST_STRIDE``-th value enters :func:`module_digest`.
_DIGEST_STRIDE = 97


def module_digest(module: Any) -> str:
    """SHA-256 of a torch module's parameter and buffer names, shapes, dtypes and every
    97th value of each: another model, or the same one with changed weights, differs
    (a change confined to the values skipped would not show; no loader makes one)."""
    digest = hashlib.sha256(type(module).__qualname__.encode())
    for name, tensor in (*module.named_parameters(), *module.named_buffers()):
        flat = tensor.detach().reshape(-1)[::_DIGEST_STRIDE].to("cpu").float().numpy()
        digest.update(f"{name}:{tuple(tensor.shape)}:{tensor.dtype}".encode())
        digest.update(flat.tobytes())
    return digest.hexdigest()


# ------------------------------------------------------------------ sessions
@dataclass
class Session:
    """A run directory and a per-unit timeout, applied by :meth:`run` to every call it is given.

    Passed explicitly: :meth:`attach` puts it into an
    :class:`~dpaudit.engine.config.ExecutionConfig`, and
    :func:`dpaudit.engine.executor.run_units` hands every call made with that
    configuration to :meth:`run`.
    """

    directory: RunDirectory | None = None
    unit_timeout: float | None = None
    calls: int = 0
    reused: int = 0
    computed: int = 0
    unreadable: int = 0
    log: list[str] = field(default_factory=list)

    def attach(self, config: ExecutionConfig | None = None) -> ExecutionConfig:
        """``config`` (default: the default configuration) with this session in it."""
        return dataclasses.replace(config or ExecutionConfig(), session=self)

    def run(
        self,
        fn: Callable[[U], R],
        units: Sequence[U],
        config: ExecutionConfig,
        *,
        desc: str = "working",
        on_result: Callable[[int, R], None] | None = None,
    ) -> list[R]:
        """:func:`~dpaudit.engine.executor.run_units` through this session.

        Same contract: results in unit order, ``on_result(i, r)`` per result
        (stored results included, as they are loaded).  An auditor that applies
        its own per-unit timeout keeps it; others get the session's.
        """
        timed = fn if isinstance(fn, TimedUnitFunction) else with_timeout(fn, self.unit_timeout)
        if self.directory is None:
            return execute(timed, units, config, desc=desc, on_result=on_result)
        units = list(units)
        call = self.calls
        self.calls += 1
        directory = self.directory
        stored, unreadable = directory.begin_call(call, fingerprint(fn, units), len(units), desc)
        self.unreadable += len(unreadable)
        results: list[Any] = [None] * len(units)
        for i, r in sorted(stored.items()):
            results[i] = r
            if on_result is not None:
                on_result(i, r)
        missing = [i for i in range(len(units)) if i not in stored]
        self.reused += len(stored)
        self.computed += len(missing)
        if missing:

            def _arrived(j: int, r: Any) -> None:
                i = missing[j]
                directory.save_unit(call, i, r)
                if on_result is not None:
                    on_result(i, r)

            fresh = execute(
                timed, [units[i] for i in missing], config, desc=desc, on_result=_arrived
            )
            for i, r in zip(missing, fresh, strict=True):
                results[i] = r
        return results


@contextmanager
def session(
    directory: RunDirectory | None = None, *, unit_timeout: float | None = None
) -> Iterator[Session]:
    """A :class:`Session` that checkpoints into ``directory`` and times out slow units.

    Pass it on with :meth:`Session.attach`.  If the block raises because of bad
    input or a broken mechanism, a directory created by this run is removed (no
    partial output); after an interruption (Ctrl-C, a lost worker) or in a
    resumed directory the stored units are kept for the next ``--resume``.
    """
    state = Session(directory, check_timeout(unit_timeout))
    try:
        yield state
    except BaseException as exc:
        # Bad input or a broken mechanism: nothing half-done stays.  Interruptions and
        # lost workers keep the stored units for --resume.
        broken = isinstance(exc, (DPAuditError, ValueError, TypeError))
        if directory is not None and broken and not isinstance(exc, WorkerLostError):
            directory.discard()
        raise


@contextmanager
def checkpointed(
    path: str | Path,
    config: Mapping[str, Any],
    *,
    resume: bool = False,
    force: bool = False,
    unit_timeout: float | None = None,
) -> Iterator[Session]:
    """Open (or resume) the run directory ``path`` and yield a :func:`session` storing into it.

    For callers that manage their own output folder (e.g. one sub-directory per
    figure)::

        with checkpointed(out / CHECKPOINT_DIR, {"figure": name, "scale": scale},
                          resume=args.resume) as run:
            result = compute_figure(run.attach(execution))   # its units are persisted
            run.directory.write_result(result)
    """
    directory = RunDirectory.open(path, config, force=force, resume=resume)
    with session(directory, unit_timeout=unit_timeout) as state:
        yield state


# ------------------------------------------------------------------ CLI glue
@contextmanager
def cli_run(options: Any, command: str, code: Mapping[str, str] | None = None) -> Iterator[Session]:
    """Open ``--out``/``--force``/``--resume`` from parsed CLI options and yield a session.

    ``code`` identifies the mechanism's code (e.g.
    :func:`dpaudit.mechanisms.fingerprint.code_fingerprint`); ``--resume`` refuses
    a run directory recorded with other code.

    The session's ``directory`` is the run directory (None without ``--out``);
    the caller passes the session on (:meth:`Session.attach`) and writes the
    result with :meth:`RunDirectory.write_result` inside the block.  Call it
    after every argument has been validated, so bad input leaves nothing behind.
    """
    values = vars(options)
    out = values.get("out")
    if values.get("resume") and not out:
        raise InvalidArgumentError("--resume", True, "used together with --out DIR")
    if values.get("force") and values.get("resume"):
        raise InvalidArgumentError("--force", True, "either --force or --resume, not both")
    timeout = check_timeout(values.get("unit_timeout"), "--unit-timeout")
    directory = None
    if out:
        directory = RunDirectory.open(
            out,
            config_from_options(values, command),
            force=bool(values.get("force")),
            resume=bool(values.get("resume")),
            code=code,
        )
    with session(directory, unit_timeout=timeout) as state:
        yield state
    summary = resume_summary(state.reused, state.computed, state.unreadable)
    if directory is not None and summary:
        sys.stderr.write(f"dpaudit {command}: {summary}\n")


def resume_summary(reused: int, computed: int, unreadable: int = 0) -> str | None:
    """``resumed R stored work units, computed C`` (+ unreadable files); None if nothing resumed."""
    if not (reused or unreadable):
        return None
    text = f"resumed {reused} stored work units, computed {computed}"
    if unreadable:
        text += f" ({unreadable} unreadable unit files were recomputed)"
    return text
