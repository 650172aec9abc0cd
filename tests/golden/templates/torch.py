

class _SchedlangWarning(UserWarning):
    """What this module's classes warn with (``schedlang.SchedlangWarning`` in-process)."""


def _checked_params(values, where=""):
    """``values`` as the constructor takes them: every name a parameter of the file, an int
    one a whole number >= 0 (returned as an int), a float one finite, every ``where`` clause
    true.  Raises ValueError naming the parameter; ``where`` prefixes the message."""
    out = {}
    for name, value in values.items():
        kind = _PARAM_KINDS.get(name)
        if kind is None:
            raise ValueError(f"{where}unknown parameter {name!r}; this class takes "
                             f"{sorted(_PARAM_KINDS)}")
        if isinstance(value, (bool, str, bytes)) or not hasattr(value, "__float__"):
            raise ValueError(f"{where}parameter {name!r} must be a number, not {value!r}")
        number = float(value) if not isinstance(value, int) else value
        if not math.isfinite(number):
            raise ValueError(f"{where}parameter {name!r} must be finite, not {value!r}")
        if kind == "float":
            out[name] = value if isinstance(value, (int, float)) else number
        elif number < 0 or number != math.floor(number):
            raise ValueError(f"{where}parameter {name!r} is an int (a whole number >= 0), "
                             f"not {value!r}")
        else:
            out[name] = int(number)
    for name, clause, names in _where_failures(out):
        shown = ", ".join(f"{key} = {out[key]!r}" for key in names)
        raise ValueError(f"{where}parameter {name!r} must satisfy {clause} ({shown})")
    return out


def _restored_params(given, state_dict, rule):
    """The parameters a class runs with after ``load_state_dict(state_dict, params=rule)``:
    the constructor's (``rule="constructor"``, warning with each saved value that differs) or
    the saved ones (``"saved"``; the constructor's for any the state lacks, with a warning).
    The saved values are checked either way."""
    if rule not in ("constructor", "saved"):
        raise ValueError(f"load_state_dict(params=...) is 'constructor' or 'saved', not {rule!r}")
    saved = state_dict.get("params")
    saved = {} if saved is None else saved
    if not isinstance(saved, dict):
        raise ValueError(f"load_state_dict: the state's params is not a dict: {saved!r}")
    checked = _checked_params({**given, **saved}, "load_state_dict: ")
    if rule == "constructor":
        changed = [f"{name}={saved[name]!r} (constructor: {given[name]!r})"
                   for name in given if name in saved and saved[name] != given[name]]
        if changed:
            torch.optim.lr_scheduler.warnings.warn(_SchedlangWarning(
                "load_state_dict: the saved parameters differ from the constructor's: "
                + ", ".join(changed) + "; the constructor's are kept (the saved clock is restored); "
                "load_state_dict(state, params='saved') keeps the saved ones"), stacklevel=3)
        return given
    missing = [name for name in given if name not in saved]
    if missing:
        torch.optim.lr_scheduler.warnings.warn(_SchedlangWarning(
            "load_state_dict: the checkpoint has no value for " + ", ".join(map(repr, missing))
            + "; the constructor's value is kept"), stacklevel=3)
    return checked


_PLAIN = (float, int)
#: Schedules that set one entry of a tuple-valued hyperparameter (Adam's ``betas``).
_ENTRIES = {'beta1': ('betas', 0), 'beta2': ('betas', 1)}


def _get(group, key):
    entry = _ENTRIES.get(key)
    return group[key] if entry is None else group[entry[0]][entry[1]]


def _has(group, key):
    entry = _ENTRIES.get(key)
    return key in group if entry is None else entry[0] in group


def _set(group, key, value):
    """Write a value: a float entry is replaced, a tensor entry is written in place.

    In place means ``current[...] = value``, never ``fill_``/``copy_``: under AOTAutograd
    (``torch.compile``'s aot_eager and inductor backends, torch 2.13) a ``fill_`` or
    ``copy_`` into a 0-d float64 graph input is dropped, and the lr stays frozen.
    """
    current = _get(group, key)
    if isinstance(current, _PLAIN):
        entry = _ENTRIES.get(key)
        if entry is None:
            group[key] = value
        else:
            values = list(group[entry[0]])
            values[entry[1]] = value
            group[entry[0]] = tuple(values)
    else:
        current[...] = value


def _checked_group_values(params, group_values, groups, where):
    """Each param group's own values (``group`` parameters), checked together with the
    others as the constructor checks them; floats."""
    if len(group_values) != groups:
        raise ValueError(f"{where}values for {len(group_values)} param groups; "
                         f"the optimizer has {groups}")
    out = []
    for index, own in enumerate(group_values):
        if own:
            checked = _checked_params({**params, **own}, f"{where}optimizer param group {index}: ")
            own = {name: float(checked[name]) for name in own}
        out.append(own)
    return out


def _tags(group, optimizer_name):
    """A param group's tags: its ``"tags"`` entry (a string or a collection, Cerebras'
    convention) and the name its optimizer is given (a dict of optimizers)."""
    tags = group.get("tags") or ()
    tags = {tags} if isinstance(tags, str) else {t for t in tags if t is not None}
    return tags if optimizer_name is None else tags | {optimizer_name}


def _unscheduled(group):
    """The keys a group's ``"unscheduled"`` entry leaves alone: True (every key), a key, or a
    collection of keys."""
    held = group.get("unscheduled") or ()
    return held if held is True else {held} if isinstance(held, str) else set(held)


def _drivers(schedules, group, optimizer_name=None):
    """Param-group key -> the schedule that sets it in ``group`` (see the class docstring): of
    the schedules ``KEY__T1__T2...`` whose tags the group all has, the one with the most tags
    (``KEY`` alone has none); two with as many refuse."""
    tags = _tags(group, optimizer_name)
    held = _unscheduled(group)
    out, rank = {}, {}
    for name in schedules:
        key, *wanted = name.split("__")
        if held is True or key in held or not set(wanted) <= tags:
            continue
        if rank.get(key) == len(wanted):
            raise ValueError(f"param group tags {sorted(tags)} pick two schedules for {key!r}: "
                             f"{out[key]!r} and {name!r}")
        if rank.get(key, -1) < len(wanted):
            out[key], rank[key] = name, len(wanted)
    return out


def _label(optimizer_name, index):
    """How errors name a param group."""
    where = "optimizer" if optimizer_name is None else f"optimizer {optimizer_name!r}"
    return f"{where} param group {index}"


def _named_optimizers(optimizer):
    """``{name: optimizer}`` from one optimizer (named None) or a dict of named ones."""
    named = dict(optimizer) if isinstance(optimizer, dict) else {None: optimizer}
    if not named:
        raise ValueError("no optimizer to drive: the dict of optimizers is empty")
    for name, each in named.items():
        if name is not None and (not isinstance(name, str) or not name.isidentifier() or "__" in name):
            raise ValueError(f"an optimizer's name is an identifier without '__' (it tags the "
                             f"optimizer's param groups), not {name!r}")
        if not isinstance(each, torch.optim.Optimizer):
            raise TypeError(f"{type(each).__name__} is not an Optimizer")
    return named


def _param_groups(named):
    """``[(optimizer name, index, group)]``: every param group of every optimizer, in order."""
    return [(name, index, group) for name, each in named.items()
            for index, group in enumerate(each.param_groups)]


def _check_driven(schedules, groups, drivers):
    """Every param group driven, every schedule driving: a group no schedule reaches, or one
    that holds a key the file schedules elsewhere and gets no schedule for it, is refused
    (unless its ``"unscheduled"`` entry names the key), as is a tagged schedule no group's
    tags select (checked first: a misspelt name leaves groups undriven too).  ``groups``:
    ``_param_groups``; ``drivers``: each group's ``_drivers``."""
    for schedule in schedules:
        wanted = set(schedule.split("__")[1:])
        if wanted and not any(wanted <= _tags(group, name) for name, _, group in groups):
            names = [name for name in dict.fromkeys(name for name, _, _ in groups) if name is not None]
            raise ValueError(f"schedule {schedule!r} drives no param group: no group has the tags "
                             f"{sorted(wanted)} (optimizers: {', '.join(names) or 'one, unnamed'})")
    keys = sorted({name.split("__", 1)[0] for name in schedules}, key=lambda k: (k != "lr", k))
    for (name, index, group), driven in zip(groups, drivers):
        held = _unscheduled(group)
        if held is True:
            continue
        for key in keys:
            if key not in driven and key not in held and (not driven or _has(group, key)):
                tags = sorted(_tags(group, name))
                picks = sorted(s for s in schedules if s.split("__", 1)[0] == key)
                raise ValueError(f"no schedule drives {key!r} in {_label(name, index)} (its tags: "
                                 f"{', '.join(tags) or 'none'}; the file's {key!r} schedules: "
                                 f"{', '.join(picks)})")


class _Optimizers:
    """Several named optimizers one scheduler drives on one clock: ``param_groups`` is every
    optimizer's groups in order (how ``get_last_lr()`` and the class's group lists count)."""

    def __init__(self, named):
        self.optimizers = named

    @property
    def param_groups(self):
        return [group for each in self.optimizers.values() for group in each.param_groups]

    def __repr__(self):
        return f"_Optimizers({list(self.optimizers)})"


def _ceil_div(a, b):
    return -((-a) // b)


def _count_at(stages, step):
    """Samples consumed before ``step`` under the batch stages (first, samples, batch)."""
    first, samples, batch = max(s for s in stages if s[0] <= step)
    return samples + batch * (step - first)


def _step_at(stages, samples):
    """The first step whose consumed-before samples reach ``samples``."""
    if samples <= 0:
        return 0
    first, before, batch = max(s for s in stages if s[1] < samples)
    return first + int(_ceil_div(samples - before, batch))


def _batch_at(batches, samples):
    """The batch of a step taken after ``samples`` consumed: the batch table's rule (the
    batch is a function of the samples consumed, SPEC §12), whatever step that is."""
    return max(entry for entry in batches if entry[0] <= samples)[1]


class WarmupCosine(torch.optim.lr_scheduler.LRScheduler):
    """Sets ``lr`` in every optimizer param group from warmup_cosine.sched.

    Values are absolute.  As with any PyTorch scheduler, call ``step()`` after
    ``optimizer.step()``: after k calls a group holds the value at step k.

    The optimizer is one optimizer, or a dict of named ones (``{"muon": m, "adamw": a}``)
    driven on one clock; then ``optimizer.param_groups`` is every group of theirs, in order.
    A schedule named ``KEY__TAG`` drives ``KEY`` in the groups tagged ``TAG`` (a group's
    ``"tags"`` entry, Cerebras' ``param_group_tags``, or its optimizer's name);
    ``KEY__T1__T2`` in those with both tags; the schedule with the most tags a group has
    wins, ``KEY`` alone has none.  Every group is driven: one that no schedule reaches, or
    that holds a scheduled key no schedule sets in it, is refused here, unless its
    ``"unscheduled"`` entry (True, or the keys) says to leave it.  A ``group`` parameter takes, in
    each param group that has an entry of its name, that entry (read once, here in the
    constructor), and the constructor's value in the others.

    With a batch schedule (``batch = ...`` in the file), the run's samples and tokens are
    counted too (``samples``, ``tokens``, kept in ``state_dict``): by the planned batch on
    ``step()``, or as measured with ``step(tokens=n)`` / ``step(samples=n)`` (packed or
    skipped batches).  Measured counts are the clock (SPEC §12): a segment given in samples
    or tokens takes its formula at the measured count itself (``MEASURED``), and the step is
    the first planned step whose consumed-before count reaches it (one earlier where such a
    segment ends between the two: it still covers the count), which segments counted in
    steps read.  Once measured (or restored from a state whose counts left the plan), a
    plain ``step()`` adds the batch the batch table gives at the samples consumed.  Measured
    counts are host integers: step eagerly, outside a compiled or captured region.

    Two counters, one truth at a time.  Eagerly, the step is a host int and a
    value costs one plain-Python call plus, for a tensor entry
    (``lr=torch.tensor(1e-3)``), one in-place write.  Inside ``torch.compile``
    or a CUDA-graph capture the step is an int64 tensor per device, advanced
    in place, and tensor entries are computed from it by branch-free torch
    code: no Python int changes (nothing for Dynamo to guard on, no
    recompilation) and no host sync.  ``last_epoch``, ``get_last_lr()`` and
    ``state_dict()`` read the device counter back (one sync) only after such
    steps.
    """

    SCHEDULES = {'lr': (lr, _reference_lr)}
    #: The param-group key each schedule drives (``lr__no_wd`` drives ``lr``).
    KEYS = {name: name.split("__", 1)[0] for name in SCHEDULES}
    RELATIVE = False
    #: ``group`` parameters: identifier -> the param-group entry that overrides it.
    GROUP_PARAMS = {}
    #: The run's batch stages: (first step, samples consumed before it, samples per step).
    STAGES = ()
    #: Tokens per sample (None: the run counts samples only).
    SEQ_LEN = None
    #: The batch table: (samples consumed, the batch from there on).
    BATCHES = ()
    #: Schedule -> its measured form ``f(step, samples, tokens, **params)``, for those with a
    #: segment on the sample or token clock; and where those segments end, (unit, count).
    MEASURED = {}
    COUNT_ENDS = ()
    #: The stage tables the torch functions read (``_count_tensor``), made on the counters'
    #: devices by the constructor.
    COUNT_TABLES = ()

    def __init__(self, optimizer, *, last_epoch=-1):
        self.params = _checked_params({})
        self._epoch = last_epoch
        self._host_stale = False
        self._measured = None  # (samples, tokens) once step() is given a measured count
        self._counters = {}
        named = _named_optimizers(optimizer)
        groups = _param_groups(named)
        self._drivers = [_drivers(self.SCHEDULES, group, name) for name, _, group in groups]
        _check_driven(self.SCHEDULES, groups, self._drivers)
        #: The names of the optimizers driven (None: one, passed alone).
        self._optimizer_names = None if None in named else list(named)
        self._group_values = _checked_group_values(
            self.params, [{name: group[key] for name, key in self.GROUP_PARAMS.items() if key in group}
                          for _, _, group in groups], len(groups), "")
        for (name, index, group), drivers in zip(groups, self._drivers):
            for key in drivers:
                if not _has(group, key):
                    raise KeyError(f"{_label(name, index)} has no {key!r} to schedule")
                value = _get(group, key)
                if isinstance(value, torch.Tensor) and value.device not in self._counters:
                    self._counters[value.device] = torch.full((), last_epoch, dtype=torch.int64,
                                                              device=value.device)
                if self.RELATIVE and last_epoch == -1 and key != "lr":
                    group.setdefault("initial_" + key,
                                     value.clone() if isinstance(value, torch.Tensor) else value)
        self._cuda = any(device.type == "cuda" for device in self._counters)
        for device in self._counters:  # now, not in a later CUDA graph capture
            for table in self.COUNT_TABLES:
                _count_tables(table, device)
        # Not LRScheduler.__init__: it wraps optimizer.step in a function Dynamo refuses to
        # trace, which breaks every compiled training step in two.  The rest is the same.
        # Several optimizers: ``self.optimizer`` is their groups in one list (``_Optimizers``).
        self.optimizer = optimizer = named[None] if None in named else _Optimizers(named)
        for name, index, group in groups:
            if last_epoch == -1:
                lr = group["lr"]
                group.setdefault("initial_lr", lr.clone() if isinstance(lr, torch.Tensor) else lr)
            elif "initial_lr" not in group:
                raise KeyError(f"param 'initial_lr' is not specified in {_label(name, index)} "
                               "when resuming a scheduler with last_epoch >= 0")
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._step_count = 0
        self.step()

    @property
    def last_epoch(self):
        if self._host_stale:
            self._epoch = int(next(iter(self._counters.values())))
            self._host_stale = False
        return self._epoch

    @last_epoch.setter
    def last_epoch(self, value):
        self._epoch = int(value)
        self._host_stale = False
        for counter in self._counters.values():
            counter.fill_(self._epoch)

    def _on_device(self):
        """Whether this step runs compiled or captured: the device counters are the truth."""
        return bool(self._counters) and (torch.compiler.is_compiling()
                                         or (self._cuda and torch.cuda.is_current_stream_capturing()))

    def values(self, name, on_device=False):
        """Schedule ``name``'s value at the current step for every param group it drives
        (None for the others)."""
        torch_function, python_function = self.SCHEDULES[name]
        key = self.KEYS[name]
        found = {}  # one value per (device, dtype) -- or None for a float -- and group values
        out = []
        for group, drivers, own in zip(self.optimizer.param_groups, self._drivers, self._group_values):
            if drivers.get(key) != name:
                out.append(None)
                continue
            current = _get(group, key)
            params = {**self.params, **own} if own else self.params
            kind = None if isinstance(current, _PLAIN) or not on_device else (current.device, current.dtype)
            where = (kind, tuple(own.items())) if own else kind
            value = found.get(where)
            if value is None:
                if kind is None and self._measured is not None and name in self.MEASURED:
                    samples, tokens = self._measured
                    value = float(self.MEASURED[name](self.last_epoch, samples, tokens, **params))
                elif kind is None:
                    value = float(python_function(self.last_epoch, **params))
                else:
                    value = torch_function(self._counters[current.device], **params, _dtype=current.dtype)
                found[where] = value
            if self.RELATIVE:
                value = value * group["initial_" + key]
            out.append(value)
        return out

    def get_lr(self):
        out = [group["lr"] for group in self.optimizer.param_groups]
        for name in self.SCHEDULES:
            if self.KEYS[name] == "lr":
                out = [old if new is None else new for old, new in zip(out, self.values(name))]
        return out

    _get_closed_form_lr = get_lr

    def get_last_lr(self):
        return [lr.clone() if isinstance(lr, torch.Tensor) else lr
                for lr in (group["lr"] for group in self.optimizer.param_groups)]

    @property
    def samples(self):
        """Samples consumed before the current step (planned, or as measured)."""
        if not self.STAGES:
            raise ValueError("this schedule has no batch schedule: declare `batch = ...`")
        if self._measured is not None:
            return self._measured[0]
        return _count_at(self.STAGES, max(self.last_epoch, 0))

    @property
    def tokens(self):
        """Tokens consumed before the current step (None when the run counts no tokens)."""
        if self._measured is not None:
            return self._measured[1]
        return None if self.SEQ_LEN is None else self.SEQ_LEN * self.samples

    def _advance(self, tokens, samples):
        """Add a measured count (see the class docstring)."""
        if not self.STAGES:
            raise ValueError("step(tokens=/samples=) needs a batch schedule: declare `batch = ...`")
        if (tokens is None) == (samples is None):
            raise ValueError("step() takes tokens= or samples=, not both")
        amount = tokens if samples is None else samples
        if isinstance(amount, torch.Tensor):
            amount = amount.item()
        if isinstance(amount, bool) or int(amount) != amount or amount < 0:
            raise ValueError(f"a measured count is a whole number >= 0, not {amount!r}")
        amount = int(amount)
        consumed, used = self.samples, self.tokens
        if tokens is not None:
            if self.SEQ_LEN is None:
                raise ValueError("step(tokens=) needs the tokens per sample: declare `param seq_len`")
            used = used + amount
            self._measured = (used // self.SEQ_LEN, used)
            return
        consumed += amount
        self._measured = (consumed, None if self.SEQ_LEN is None else consumed * self.SEQ_LEN)

    def _measured_step(self):
        """The step the measured counts reach (see the class docstring)."""
        samples, tokens = self._measured
        step = _step_at(self.STAGES, samples if tokens is None else _ceil_div(tokens, self.SEQ_LEN))
        planned = _count_at(self.STAGES, step)
        for unit, end in self.COUNT_ENDS:
            count, reached = (tokens, planned * self.SEQ_LEN) if unit == "tok" else (samples, planned)
            if step > 0 and count < end <= reached:
                return step - 1
        return step

    def step(self, epoch=None, *, tokens=None, samples=None):
        if epoch is None and tokens is None and samples is None and not self._counters                 and self._measured is None:
            # The eager loop's plain step with float entries: the next step, one plain-Python
            # value per schedule and parameter set, one dict write per group, from a plan
            # built once (``_plain_plan``); the general path below does the same with every
            # lookup and check made again.
            self._step_count += 1
            self._epoch = step = self._epoch + 1
            plan = self.__dict__.get("_plan")
            if plan is None or plan[0] is not self.params or plan[1] is not self._group_values:
                plan = self._plain_plan()
            groups = self.optimizer.param_groups  # the groups now: see ``_plain_plan``
            for function, params, writes in plan[2]:
                value = float(function(step, **params))
                for index, key, plain, initial in writes:
                    group = groups[index]
                    scaled = value if initial is None else value * group[initial]
                    if plain and isinstance(group[key], _PLAIN):
                        group[key] = scaled
                    else:  # a tuple's entry (``betas``), or a tensor the group holds now
                        _set(group, key, scaled)
            return
        measuring = tokens is not None or samples is not None
        if measuring and epoch is not None:
            raise ValueError("step() takes an epoch or a measured count, not both")
        on_device = epoch is None and self._on_device()
        if on_device and (measuring or self._measured is not None):
            raise RuntimeError("this scheduler counts measured samples or tokens (host integers): "
                               "call its step() eagerly, outside the compiled or captured region")
        if on_device:
            for counter in self._counters.values():
                counter.add_(1)
            self._host_stale = True
        elif measuring or (epoch is None and self._measured is not None):
            if measuring:
                self._advance(tokens, samples)
            else:  # measured so far: the batch the table gives at the samples consumed
                samples, tokens = self._measured
                batch = _batch_at(self.BATCHES, samples)
                self._measured = (samples + batch, None if tokens is None else tokens + batch * self.SEQ_LEN)
            self._step_count += 1
            self.last_epoch = self._measured_step()
        elif epoch is None:
            self._step_count += 1
            self.last_epoch = self.last_epoch + 1
        else:  # a step given: the plan's counts at it
            self._measured = None
            self._step_count += 1
            self.last_epoch = epoch
        self._write(on_device)

    def _plain_plan(self):
        """``[(python function, params, [(group index, key, plain, initial key or None)])]``:
        what a plain step of float entries computes and writes, as ``values`` and ``_write``
        decide it (the groups each schedule drives, their ``group`` parameters, relative
        scaling); ``plain``: the key is the group's own entry, not one inside a tuple
        (``betas``).  Kept with the parameters and group values it was built for
        (``load_state_dict`` replaces both, so a plan built before it is built again).  It
        holds group indexes, never the group dicts: the optimizer's groups can be replaced
        after this class is built (``optimizer.load_state_dict`` makes new ones, and
        Accelerate's ``prepare`` calls it), and each step writes the groups it finds."""
        plan = []
        for name, (_, python_function) in self.SCHEDULES.items():
            key = self.KEYS[name]
            by_params = {}
            for index, (drivers, own) in enumerate(zip(self._drivers, self._group_values)):
                if drivers.get(key) != name:
                    continue
                where = tuple(own.items()) if own else ()
                if where not in by_params:
                    params = {**self.params, **own} if own else self.params
                    by_params[where] = (python_function, params, [])
                by_params[where][2].append((index, key, key not in _ENTRIES,
                                            "initial_" + key if self.RELATIVE else None))
            plan += by_params.values()
        self._plan = (self.params, self._group_values, plan)
        return self._plan

    def _write(self, on_device):
        """Set every scheduled entry of the param groups to its value at the current step."""
        groups = self.optimizer.param_groups
        for name in self.SCHEDULES:
            key = self.KEYS[name]
            for group, value in zip(groups, self.values(name, on_device)):
                if value is not None:
                    _set(group, key, value)

    def state_dict(self):
        state = {key: value for key, value in self.__dict__.items()
                 if key not in ("optimizer", "_counters", "_epoch", "_host_stale", "_plan")}
        state["last_epoch"] = self.last_epoch
        if self.STAGES:
            state["samples"], state["tokens"] = self.samples, self.tokens
        return state

    def load_state_dict(self, state_dict, params="constructor"):
        """Restore the clock of ``state_dict`` (step, samples, tokens) and set the param groups
        at it; keep the constructor's parameters (a warning names each saved value that
        differs), or the saved ones with ``params="saved"``.  The groups are set so that the
        first resumed step runs this class's value: load the optimizer's state first (as HF's
        Trainer and Lightning do), or its saved lr replaces it."""
        state = dict(state_dict)
        # Which schedule drives which group is the constructor's (this file's, these
        # optimizers'), as the parameters are: a state saved for other optimizers is refused.
        state.pop("_drivers", None)
        names = state.pop("_optimizer_names", None)
        if names != self._optimizer_names:
            raise ValueError(f"load_state_dict: the state was saved driving the optimizers "
                             f"{names or 'one, unnamed'}; this scheduler drives "
                             f"{self._optimizer_names or 'one, unnamed'}")
        state["params"] = _restored_params(self.params, state_dict, params)
        if "_group_values" in state:
            saved_groups = _checked_group_values(
                state["params"], state["_group_values"], len(self.optimizer.param_groups),
                "load_state_dict: ")
            state["_group_values"] = saved_groups if params == "saved" else self._group_values
        epoch = state.pop("last_epoch")
        for stale in ("_device_steps", "_last_lr"):  # written by earlier versions of this class
            state.pop(stale, None)
        counts = state.pop("samples", None), state.pop("tokens", None)
        for count in counts:
            if count is not None and (isinstance(count, bool) or not isinstance(count, int) or count < 0):
                raise ValueError(f"load_state_dict: a consumed count is a whole number >= 0, not {count!r}")
        measured = state.pop("_measured", None)
        if measured is not None and tuple(measured) != counts:
            raise ValueError("load_state_dict: the measured counts disagree with samples and tokens")
        self.__dict__.update(state)
        self.last_epoch = epoch
        if self.STAGES and counts[0] is not None and measured is None:
            samples = _count_at(self.STAGES, max(epoch, 0))
            planned = (samples, None if self.SEQ_LEN is None else self.SEQ_LEN * samples)
            if counts != planned:  # the run measured its counts: keep them
                measured = counts
        self._measured = None if measured is None else tuple(measured)
        if self._measured is not None:  # the counts are the clock: the step they reach
            self.last_epoch = self._measured_step()
        self._write(False)
