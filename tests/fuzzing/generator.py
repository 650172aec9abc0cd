"""A seeded, grammar-based generator of valid schedlang programs.

``generate(seed)`` returns a ``Program`` (source text plus ``params=`` to bind).
The programs are valid by construction: every schedule before ``>>`` or inside
``repeat``/``cycle`` is finite (wrapped in ``for N`` when its finiteness is not
known), ``sqrt``/``log``/``exp`` warmups see only values bounded away from zero,
parameters are bound to values their ``where`` clauses accept.  So a compiler
rejection of a generated program is itself a finding.

Independent of schedlang: only text is produced here.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

#: Positive decimal literals (exact in schedlang).
VALUES = ("1", "0.5", "1e-3", "3e-4", "0.1", "2", "6e-4", "1e-5", "0.25", "7", "1.5", "0.3")
#: Durations; the long ones exercise formulas evaluated far from step 0.
SHORT = (1, 2, 3, 5, 7, 10, 17, 50, 100, 250, 1000)
LONG = (100_000, 1_000_000, 1_000_000_000)
#: Fractions of ``total`` that are whole at its values (5000, 2000, 100000) but round up in floats.
FRACTIONS = ("0.07", "0.55", "0.8", "0.17", "0.56")
GAMMAS = ("0.5", "0.1", "0.9", "0.99", "0.7")
POWERS = ("1", "2", "0.5", "3", "1.5")
#: The share of programs with a batch schedule and segments on the token or sample clock.
CLOCKED = 0.15

#: A sample of presets of every library, written as a user would (all infinite or finite;
#: their finiteness is not assumed: ``for N`` is added where a finite schedule is needed).
PRESETS = (
    "torch.StepLR(lr=0.1, step_size=30, gamma=0.5)",
    "torch.MultiStepLR(lr=0.1, milestones=[30, 80, 80, 150], gamma=0.5)",
    "torch.LinearLR(lr=0.1, start_factor=0.01, end_factor=1.0, total_iters=200)",
    "torch.ExponentialLR(lr=0.1, gamma=0.99)",
    "torch.PolynomialLR(lr=0.1, total_iters=200, power=2.0)",
    "torch.CosineAnnealingLR(lr=0.1, T_max=200, eta_min=0.001)",
    "torch.CosineAnnealingWarmRestarts(lr=0.1, T_0=20, T_mult=2, eta_min=0.001)",
    "torch.CyclicLR(base_lr=0.001, max_lr=0.1, step_size_up=30, step_size_down=70, mode=\"triangular2\")",
    "torch.OneCycleLR(max_lr=0.1, total_steps=300)",
    "torch.SequentialLR(schedulers=[torch.LinearLR(lr=0.1, start_factor=0.01, total_iters=100), "
    "torch.CosineAnnealingLR(lr=0.1, T_max=300, eta_min=0.001)], milestones=[100])",
    "torch.ChainedScheduler(schedulers=[torch.ConstantLR(lr=0.1, factor=0.1, total_iters=20), "
    "torch.ExponentialLR(lr=0.1, gamma=0.99)])",
    "torch.LambdaLR(lr=0.1, lr_lambda=0.97 ** t)",
    "cerebras.PolynomialLR(initial_learning_rate=0.01, end_learning_rate=1e-4, total_iters=300, power=2.0)",
    "cerebras.InverseExponentialTimeDecayLR(initial_learning_rate=0.01, step_exponent=1.5, "
    "total_iters=100, decay_rate=0.5)",
    "cerebras.InverseSquareRootDecayLR(initial_learning_rate=0.01, scale=2.0, warmup_steps=100)",
    "cerebras.CosineAnnealingWarmRestarts(initial_learning_rate=0.01, T_0=30, T_mult=2)",
    "cerebras.CyclicLR(base_lr=1e-4, max_lr=1e-2, step_size_up=50, mode=\"exp_range\", "
    "gamma=0.9900000095367432)",
    "cerebras.OneCycleLR(initial_learning_rate=4e-4, max_lr=1e-2, total_steps=200, three_phase=true, "
    "anneal_strategy=\"linear\")",
    "cerebras.SequentialLR(schedulers=[cerebras.ConstantLR(learning_rate=1e-3), "
    "cerebras.CosineDecayLR(initial_learning_rate=1e-2, end_learning_rate=1e-3, total_iters=200), "
    "cerebras.StepLR(initial_learning_rate=1e-3, step_size=50, gamma=0.5)], milestones=[40, 300])",
    "cerebras.MultiplicativeLR(initial_learning_rate=0.01, coefficient=0.9900000095367432)",
    "optax.warmup_cosine_decay_schedule(init_value=0.0, peak_value=1e-3, warmup_steps=100, "
    "decay_steps=500, end_value=1e-5)",
    "optax.exponential_decay(init_value=1e-3, transition_steps=50, decay_rate=0.5, staircase=true, "
    "end_value=2e-5)",
    "optax.piecewise_interpolate_schedule(\"cosine\", 1e-3, [[100, 0.5], [250, 0.1], [400, 2.0]])",
    "optax.sgdr_schedule(cosine_kwargs=[optax.warmup_cosine_decay_schedule(init_value=0.0, "
    "peak_value=1e-3, warmup_steps=20, decay_steps=200, end_value=1e-5), "
    "optax.warmup_cosine_decay_schedule(init_value=0.0, peak_value=1e-3, warmup_steps=20, "
    "decay_steps=300, end_value=1e-5)])",
    "optax.cosine_onecycle_schedule(transition_steps=300, peak_value=1e-3, pct_start=0.25)",
    "hf.cosine(lr=3e-4, num_warmup_steps=20, num_training_steps=300, num_cycles=1.5)",
    "hf.cosine_with_restarts(lr=3e-4, num_warmup_steps=50, num_training_steps=350, num_cycles=3)",
    "hf.inverse_sqrt(lr=3e-4, num_warmup_steps=0, timescale=50)",
    "hf.warmup_stable_decay(lr=3e-4, num_warmup_steps=40, num_stable_steps=150, num_decay_steps=120, "
    "warmup_type=\"cosine\", decay_type=\"1-sqrt\", min_lr_ratio=0.1)",
    "composer.StepScheduler(lr=0.1, step_size=25ba, gamma=0.5)",
    "composer.CosineAnnealingWarmRestartsScheduler(lr=0.1, t_0=30ba, t_mult=2, alpha_f=0.1)",
    "composer.MultiStepWithWarmupScheduler(lr=0.1, t_warmup=40ba, milestones=[100ba, 200ba], gamma=0.5)",
    "composer.LinearScheduler(lr=0.1, alpha_i=0.5, alpha_f=0.01, t_max=200)",
    "sambaflow.cosine_schedule_with_warmup(learning_rate=1e-3, warmup_steps=100, max_steps=500)",
)


@dataclass(frozen=True)
class Expr:
    """Generated text with what the generator knows about it."""

    text: str
    finite: bool | None  # True: finite; False: infinite; None: not tracked
    positive: bool = False  # bounded below by a positive constant at every step
    atomic: bool = False  # needs no parentheses as an operand


@dataclass
class Program:
    seed: int
    source: str
    params: dict = field(default_factory=dict)
    schedules: tuple[str, ...] = ("lr",)

    def describe(self) -> str:
        bound = f"  # params={self.params!r}" if self.params else ""
        return f"# seed {self.seed}{bound}\n{self.source}"


def paren(e: Expr) -> str:
    return e.text if e.atomic else f"({e.text})"


class Generator:
    def __init__(self, seed: int, max_depth: int = 4):
        self.seed = seed
        self.rng = random.Random(seed)
        self.max_depth = max_depth
        self.value_params: list[str] = []  # float parameters, all > 0
        self.step_params: list[str] = []  # int parameters, all > 0
        self.lets: list[tuple[str, Expr]] = []
        self.defs: list[tuple[str, str]] = []  # name, kind

    # -- atoms --------------------------------------------------------------------------

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def value(self) -> str:
        if self.value_params and self.chance(0.2):
            name = self.rng.choice(self.value_params)
            return name if self.chance(0.7) else f"0.5 * {name}"
        return self.rng.choice(VALUES)

    def steps(self) -> str:
        if self.step_params and self.chance(0.2):
            name = self.rng.choice(self.step_params)
            if name == "total" and self.chance(0.3):
                # whole for every value of total below, but not in floats: 0.07 * 5000 is
                # 350.00000000000006, so a float comparison lets step 350 through
                return f"{self.rng.choice(FRACTIONS)} * total"
            return self.rng.choice((name, f"{name} + 5", f"2 * {name}"))
        if self.chance(0.04):
            return str(self.rng.choice(LONG))
        return str(self.rng.choice(SHORT))

    def small_steps(self) -> str:
        return str(self.rng.choice((2, 3, 5, 10, 20, 50)))

    # -- schedules ----------------------------------------------------------------------

    def leaf(self) -> Expr:
        r = self.rng
        kind = r.choice(("constant", "constant_n", "linear", "cosine", "poly", "exp", "step",
                         "multistep", "piecewise", "inverse_sqrt", "cosine_restarts", "cyclic",
                         "onecycle", "formula", "preset", "linear", "cosine", "constant_n"))
        v = self.value
        if kind == "constant":
            return Expr(f"constant({v()})", False, True, True)
        if kind == "constant_n":
            return Expr(f"constant({v()}, {self.steps()})", True, True, True)
        if kind in ("linear", "cosine"):
            return Expr(f"{kind}({v()}, {v()}, {self.steps()})", True, True, True)
        if kind == "poly":
            return Expr(f"poly({v()}, {v()}, {self.steps()}, power={r.choice(POWERS)})", True, True, True)
        if kind == "exp":
            rate = r.choice(("0.5", "0.9", "0.99", "0.9999", "0.1") + (("1.5",) if self.chance(0.1) else ()))
            stair = ", staircase=true" if self.chance(0.3) else ""
            return Expr(f"exp({v()}, {rate}, {self.steps()}{stair})", False, False, True)
        if kind == "step":
            return Expr(f"step({v()}, {r.choice(GAMMAS)}, {self.steps()})", False, False, True)
        if kind == "multistep":
            ms = sorted(r.sample(range(1, 400), r.randint(1, 4)))
            if self.chance(0.2):
                ms.append(ms[-1])  # a repeated milestone counts twice
            listed = ", ".join(map(str, ms))
            return Expr(f"multistep({v()}, {r.choice(GAMMAS)}, [{listed}])", False, False, True)
        if kind == "piecewise":
            ms = sorted(r.sample(range(1, 400), r.randint(1, 4)))
            vals = [v() for _ in range(len(ms) + 1)]
            return Expr(f"piecewise([{', '.join(vals)}], [{', '.join(map(str, ms))}])", False, True, True)
        if kind == "inverse_sqrt":
            return Expr(f"inverse_sqrt({v()}, {self.steps()})", False, False, True)
        if kind == "cosine_restarts":
            mult = r.choice(("", ", mult=2", ", mult=3", ", mult=1"))
            return Expr(f"cosine_restarts({v()}, {v()}, {self.steps()}{mult})", False, True, True)
        if kind == "cyclic":
            down = f", {self.steps()}" if self.chance(0.5) else ""
            mode = r.choice(("", ', mode="triangular2"', ', mode="exp_range", gamma=0.99',
                             ', mode="exp_range", gamma=0.999', ', mode="triangular"'))
            positive = "exp_range" not in mode and "2" not in mode
            return Expr(f"cyclic({v()}, {v()}, {self.small_steps()}{down}{mode})", False, positive, True)
        if kind == "onecycle":
            n = r.choice((10, 20, 100, 300, 1000))
            extra = ""
            if self.chance(0.3):
                extra += ", pct_start=0.25"
            if self.chance(0.3):
                extra += ', anneal="linear"'
            if self.chance(0.3):
                extra += ", three_phase=true"
            return Expr(f"onecycle({v()}, {n}{extra})", True, False, True)
        if kind == "formula":
            n = self.steps()
            return r.choice((
                Expr(f"{v()} / (1 + t / {n})", False, False),
                Expr(f"{v()} * {r.choice(GAMMAS)} ** (t / {n})", False, False),
                Expr(f"{v()} * exp(-t / {n})", False, False),
                Expr(f"{v()} * (1 + cos(pi * t / {n})) / 2", False, False),
                Expr(f"{v()} * sqrt({n} / (t + {n}))", False, False),
                Expr(f"{v()} / floor(t / {n} + 1)", False, False),
                Expr(f"{v()} * 0.5 ** ceil(t / {n})", False, False),
                Expr(f"{v()} + {v()} * abs(sin(pi * t / {n}))", False, True),
            ))
        return Expr(r.choice(PRESETS), None, False, True)

    def finite(self, e: Expr) -> Expr:
        if e.finite:
            return e
        return Expr(f"{paren(e)} for {self.steps()}", True, e.positive)

    def sched(self, depth: int = 0) -> Expr:
        r = self.rng
        if depth >= self.max_depth or self.chance(0.25 + 0.1 * depth):
            if self.lets and self.chance(0.15):
                name, e = r.choice(self.lets)
                return Expr(name, e.finite, e.positive, True)
            if self.defs and self.chance(0.15):
                name, kind = r.choice(self.defs)
                if kind == "seg":
                    return Expr(f"{name}({self.value()}, {self.steps()})", True, True, True)
                return Expr(f"{name}({self.value()}, {self.steps()})", False, False, True)
            return self.leaf()
        d = depth + 1
        kind = r.choice(("seq", "seq", "seq", "warmup", "for", "if", "arith", "arith", "math",
                         "repeat", "cycle", "stretch", "scale"))
        if kind == "seq":
            a, b = self.finite(self.sched(d)), self.sched(d)
            fin = b.finite
            return Expr(f"{paren(a)} >> {paren(b)}", fin, a.positive and b.positive)
        if kind == "warmup":
            b = self.sched(d)
            shape = r.choice(("linear", "cosine") + (("exp",) if b.positive else ()))
            start = f", start={self.value()}" if shape == "exp" or self.chance(0.4) else ""
            return Expr(f"warmup({shape}, {self.steps()}{start}) >> {paren(b)}", b.finite, False)
        if kind == "for":
            a = self.sched(d)
            return Expr(f"{paren(a)} for {self.steps()}", True, a.positive)
        if kind == "if":
            a, b = self.sched(d), self.sched(d)
            k, m = sorted(r.sample((0, 1, 3, 5, 10, 17, 100, 1000, 12345), 2))
            cond = r.choice((f"t < {m}", f"{k} <= t < {m}", f"not (t < {m})", f"t == {m}",
                             f"t != {k}", f"t < {k} or t >= {m}", f"t > {k} and t <= {m}"))
            return Expr(f"if {cond} then {paren(a)} else {paren(b)}", None, a.positive and b.positive)
        if kind == "arith":
            a, b = self.sched(d), self.sched(d)
            c = self.value()
            op = r.choice(("c*s", "s/c", "c-s", "s+s", "s*s", "c/s", "s-s"))
            if op == "c/s" and not a.positive:
                op = "c*s"
            text = {"c*s": f"{c} * {paren(a)}", "s/c": f"{paren(a)} / {c}", "c-s": f"{c} - {paren(a)}",
                    "s+s": f"{paren(a)} + {paren(b)}", "s*s": f"{paren(a)} * {paren(b)}",
                    "c/s": f"{c} / {paren(a)}", "s-s": f"{paren(a)} - {paren(b)}"}[op]
            positive = {"c*s": a.positive, "s/c": a.positive, "c/s": True,
                        "s+s": a.positive and b.positive, "s*s": a.positive and b.positive}.get(op, False)
            return Expr(text, None, positive)
        if kind == "math":
            a, b = self.sched(d), self.sched(d)
            fn = r.choice(("min", "max", "clamp", "floor", "ceil", "abs", "sqrt", "exp", "log", "cos"))
            if fn in ("min", "max"):
                third = f", {self.value()}" if self.chance(0.3) else ""
                pos = (a.positive and b.positive) if fn == "min" else (a.positive or b.positive)
                return Expr(f"{fn}({a.text}, {b.text}{third})", None, pos, True)
            if fn == "clamp":
                lo, hi = sorted(self.rng.sample(VALUES, 2), key=float)
                return Expr(f"clamp({a.text}, {lo}, {hi})", None, True, True)
            if fn in ("floor", "ceil"):
                k = r.choice(("10", "1000", "3"))
                return Expr(f"{fn}({paren(a)} * {k}) / {k}", None, False)
            if fn == "abs":
                return Expr(f"abs({self.value()} - {paren(a)})", None, False, True)
            if fn in ("sqrt", "log") and a.positive:
                return Expr(f"{fn}({a.text})", None, fn == "sqrt", True)
            if fn == "exp":
                return Expr(f"exp(-{paren(a)})", None, False, True)
            return Expr(f"cos({a.text})", None, False, True)
        if kind == "repeat":
            a = self.finite(self.sched(d))
            return Expr(f"repeat({a.text}, times={r.choice((1, 2, 3, 7))})", True, a.positive, True)
        if kind == "cycle":
            a = self.finite(self.sched(d))
            return Expr(f"cycle({a.text})", False, a.positive, True)
        if kind == "stretch":
            a = self.sched(d)
            return Expr(f"stretch({a.text}, {r.choice((2, 3, 10))})", a.finite, a.positive, True)
        # scale: only over t-free building blocks (a formula in t has no duration to rescale)
        parts = [f"{r.choice(('linear', 'cosine'))}({self.value()}, {self.value()}, {r.choice(SHORT[3:])})"
                 for _ in range(r.randint(1, 3))]
        ratio = r.choice(("0.5", "2", "0.3", "1.5"))
        return Expr(f"scale({' >> '.join(parts)}, {ratio})", True, True, True)

    # -- deep programs ------------------------------------------------------------------

    def deep(self) -> str:
        r = self.rng
        n = r.randint(20, 90)  # a chain; nesting stays under the documented 100 levels
        style = r.choice(("chain", "nested_seq", "nested_arith", "nested_if"))
        if style == "chain":
            return " >> ".join(f"linear({self.value()}, {self.value()}, {r.choice(SHORT)})" for _ in range(n))
        if style == "nested_seq":
            text = f"constant({self.value()}, 3)"
            for _ in range(min(n, 45)):
                text = f"({text}) >> linear({self.value()}, {self.value()}, {r.choice(SHORT)})"
            return text
        if style == "nested_arith":
            text = f"linear({self.value()}, {self.value()}, 10)"
            for _ in range(min(n, 30)):
                text = f"{r.choice(('0.5', '1.5', '1'))} * ({text}) + {r.choice(('0', '1e-3'))}"
            return text
        text = f"constant({self.value()})"
        for i in range(min(n, 45)):
            text = f"if t < {1000 - 10 * i} then linear({self.value()}, {self.value()}, 7) else ({text})"
        return text

    # -- programs -----------------------------------------------------------------------

    # -- programs on the sample and token clocks (SPEC §12) ------------------------------

    def clocked(self) -> Program:
        """A batch schedule and a chain mixing segments counted in steps with segments whose
        lengths are in tokens or samples, ending anywhere inside a batch."""
        r = self.rng
        seq = r.choice((1, 3, 4096))
        batches = [r.choice((1, 2, 7, 32, 3072))]
        for _ in range(r.choice((0, 1, 2, 4))):
            batches.append(max(1, batches[-1] * r.choice((2, 3)) // r.choice((1, 1, 2))))
        per_step = batches[0] * seq
        thresholds, at = [], 0
        for _ in batches[1:]:
            at += per_step * r.choice((1, 3, 10, 1000)) + r.randrange(per_step)
            thresholds.append(at)
        unit = r.choice(("tok", "tok", "sp"))
        scale = 1 if unit == "tok" else seq

        def amount(count: int) -> str:
            return f"{max(count // scale, 1)}{unit}"

        lines = [f"param seq_len: int = {seq}"]
        if len(batches) == 1:
            lines.append(f"batch = {batches[0]}")
        else:
            listed = ", ".join(amount(th) for th in thresholds)
            lines.append(f"batch = stages({batches[0]}, [{', '.join(map(str, batches[1:]))}], [{listed}])")
        parts = []
        for index in range(r.randint(1, 5)):
            if self.chance(0.4):
                parts.append(paren(self.finite(self.sched(2))))
                continue
            length = amount(per_step * r.choice((1, 2, 10, 100, 5000)) + r.randrange(per_step))
            v = self.value
            kind = r.choice(("constant", "linear", "cosine", "poly", "warmup", "for", "exp"))
            if kind == "warmup":
                parts.append(f"warmup({r.choice(('linear', 'cosine'))}, {length}) >> "
                             f"cosine({v()}, {v()}, {length})")
            elif kind == "for":
                parts.append(f"(constant({v()}) for {length})")
            elif kind == "exp":
                parts.append(f"(exp({v()}, 0.5, {length}) for {length})")
            elif kind == "poly":
                parts.append(f"poly({v()}, {v()}, {length}, power={r.choice(POWERS)})")
            elif kind == "constant":
                parts.append(f"constant({v()}, {length})")
            else:
                parts.append(f"{kind}({v()}, {v()}, {length})")
        tail = r.choice(("constant(1e-5)", f"step({self.value()}, 0.5, {amount(per_step * 7)})",
                         "linear(1, 0.5, 10)"))
        lines.append(f"schedule lr = {' >> '.join([*parts, tail])}")
        return Program(self.seed, "\n".join(lines) + "\n", {}, ("lr",))

    def program(self) -> Program:
        r = self.rng
        if r.random() < CLOCKED:
            return self.clocked()
        lines: list[str] = []
        params: dict = {}
        if self.chance(0.35):
            lines.append("param peak: float = 1e-3 where peak > 0")
            self.value_params.append("peak")
            if self.chance(0.5):
                params["peak"] = r.choice(("0.002", "0.5", 3))
        if self.chance(0.35):
            lines.append("param warm: int = 10 where warm > 0")
            self.step_params.append("warm")
            if self.chance(0.5):
                params["warm"] = r.choice((1, 3, 100, 1234))
            if self.chance(0.5):
                lines.append("param total: int = 5000 where total > warm")
                self.step_params.append("total")
                if self.chance(0.5):
                    params["total"] = r.choice((2000, 100_000))
        if self.chance(0.2):
            lines.append("def seg(v, n) = linear(v, v / 10, n) >> constant(v / 10, n)")
            self.defs.append(("seg", "seg"))
        if self.chance(0.2):
            lines.append("def halving(v, every) = v * 0.5 ** floor(t / every)")
            self.defs.append(("halving", "formula"))
        for i in range(r.choice((0, 0, 1, 2))):
            e = self.sched(1)
            lines.append(f"let part{i} = {e.text}")
            self.lets.append((f"part{i}", e))
        names = ["lr"] + (["wd"] if self.chance(0.25) else [])
        for name in names:
            body = self.deep() if self.chance(0.04) else self.sched().text
            lines.append(f"schedule {name} = {body}")
        return Program(self.seed, "\n".join(lines) + "\n", params, tuple(names))


def generate(seed: int) -> Program:
    return Generator(seed).program()
