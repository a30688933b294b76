"""Typed parameter kinds: a pass declares its `{...}` parameters once, as a schema.

Pipeline text gives a pass its parameters as `{...}` items (`tile{qk.i=64,qk.j=128}`,
`interchange{mm.i,mm.j}`, `unroll{mm.k=full}`). Instead of every pass hand-parsing them,
a pass declares a *schema* built from *kinds*:

    @register
    @dataclass(frozen=True)
    class Unroll(Pass):
        name: ClassVar[str] = "unroll"
        params: ClassVar[Params] = Entry("loop", "factor", Loop(), IntOrFull(minimum=2),
                                         example="qk.k=4")
        loop: str = ""
        factor: int = 0   # 0: full

and `Pass.from_args` (text -> instance), `Pass.to_text` (instance -> canonical text),
`params_doc` (the `ascx passes` column) and `Pass.check_params` (is an instance -- e.g. one
drawn from `space()` -- a value of its kinds, its loops and tensors present in the kernel?)
all come from that declaration.

Two layers:

- a **kind** (`Kind`) turns one text (a key or a value) into a Python value and back:
  `Loop` (a loop name), `Tensor`, `Int` (with a minimum: a positive int), `IntOrFull`,
  `Choice` (one of a set of names: `Dtype`, `LayoutName`, a fixed key), `Bool`, `Name`,
  `LoopTensor` (`LOOP.TENSOR`);
- a **shape** (`Params`) says how the items map onto the pass's dataclass fields:
  `NoParams`, `Keywords` (`{field=value,...}`, the default derived from the fields),
  `Names` (`{a,b,...}`: loop lists), `Map` (`{key=value,...}` into one tuple-of-pairs field:
  loop -> int, tensor -> layout, fixed keys -> int), `Entry` (exactly one `key=value`, key
  and value stored in their own fields: loop -> int|full, loop.tensor -> dtype).

Parse errors are `BadPipelineParameter` (both a `BadParameter`, with `param`, `value` and
`accepted` fields for programs, and a `PipelineError`): located at the item's column in the
pipeline text (the driver renders them under `--passes` with a caret), with a hint giving
an example. What a kind cannot know without the kernel (does the loop exist? is the dtype
narrower?) is the pass's `run` to refuse, located in the kernel.

Size: about 680 lines of small classes of one vocabulary: each kind and each shape
parses, prints, documents and validates its own text. Kinds and shapes are declared
together by every pass, so they are kept in one module.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Iterable, Sequence

from transformer import ir
from transformer.diagnostics import BadPipelineParameter, did_you_mean

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


class Arg(tuple):
    """One `{...}` item: a `(key, value_or_None)` pair (so `for k, v in args` works) that
    also knows the 1-based columns of its key and value in the pipeline text (None when
    the item was built in Python, not read from text)."""

    key_col: int | None
    value_col: int | None

    def __new__(cls, key: str, value: str | None, key_col: int | None = None,
                value_col: int | None = None) -> "Arg":
        self = super().__new__(cls, (key, value))
        self.key_col, self.value_col = key_col, value_col
        return self

    @property
    def key(self) -> str:
        return self[0]

    @property
    def value(self) -> str | None:
        return self[1]


def _word(n: int) -> str:
    return {1: "one", 2: "two", 3: "three", 4: "four"}.get(n, str(n))


def _loc(col: int | None) -> ir.Loc | None:
    return ir.Loc(1, col) if col else None


class ParamFail(Exception):
    """A kind's refusal of one text: the message (no pass name) and a hint. The shape
    turns it into a located `BadPipelineParameter`."""

    def __init__(self, message: str, hint: str | None = None, accepted: Iterable[Any] = ()) -> None:
        super().__init__(message)
        self.message, self.hint, self.accepted = message, hint, tuple(accepted)


# --------------------------------------------------------------------------------------
# kinds: one text <-> one value


class Kind:
    """One parameter text <-> one value. `metavar` names it in docs (`LOOP`, `N`)."""

    metavar = "VALUE"

    def parse(self, text: str) -> Any:
        raise NotImplementedError

    def format(self, value: Any) -> str:
        return str(value)

    def problem(self, value: Any) -> str | None:
        """Why `value` is not a value of this kind (None: it is). Used on instances not
        built from text (`space()`, Python callers)."""
        try:
            back = self.parse(self.format(value))
        except ParamFail as e:
            return e.message
        return None if back == value else f"`{self.format(value)}` reads back as {back!r}, not {value!r}"

    def in_kernel(self, value: Any, kernel: ir.Kernel) -> str | None:
        """Why `value` names nothing in `kernel` (None: fine, or nothing to check)."""
        return None

    def doc(self) -> str:
        """The metavar and its constraint, for `params_doc` (e.g. `N >= 2`)."""
        return ""


class Name(Kind):
    """A plain identifier (a new label, a name)."""

    metavar = "NAME"

    def parse(self, text: str) -> str:
        if not _IDENT.fullmatch(text):
            raise ParamFail(f"`{text}` is not a name", "a name is letters, digits and `_`, not starting with a digit")
        return text


class Loop(Kind):
    """A loop name: a label (`qk`), `label.var` (`qk.j`) or a variable, as
    `transformer/loops.py` resolves them."""

    metavar = "LOOP"

    def parse(self, text: str) -> str:
        if not _DOTTED.fullmatch(text):
            raise ParamFail(f"`{text}` is not a loop name",
                            "name a loop by its label (`qk`), `label.var` (`qk.j`) or its variable")
        return text

    def in_kernel(self, value: Any, kernel: ir.Kernel) -> str | None:
        from transformer.diagnostics import PassError
        from transformer.loops import resolve_loop

        try:
            resolve_loop(kernel, value, "params")
        except PassError as e:
            return e.message.removeprefix("params: ")
        return None


class Tensor(Kind):
    """A tensor (or temp/local buffer) declared by the kernel."""

    metavar = "TENSOR"

    def parse(self, text: str) -> str:
        if not _IDENT.fullmatch(text):
            raise ParamFail(f"`{text}` is not a tensor name", "a tensor name is letters, digits and `_`")
        return text

    def in_kernel(self, value: Any, kernel: ir.Kernel) -> str | None:
        names = [t.name for t in kernel.tensors()]
        return None if value in names else f"no tensor named `{value}`"


class Int(Kind):
    """An integer of at least `minimum` (`Int(1)`: a positive int)."""

    metavar = "N"

    def __init__(self, minimum: int | None = 1) -> None:
        self.minimum = minimum

    def parse(self, text: str) -> int:
        try:
            n = int(text)
        except ValueError:
            raise ParamFail(f"must be an integer{self._range()}, got `{text}`") from None
        if self.minimum is not None and n < self.minimum:
            raise ParamFail(f"must be at least {self.minimum}, got {n}")
        return n

    def problem(self, value: Any) -> str | None:
        if not isinstance(value, int) or isinstance(value, bool):
            return f"{value!r} is not an integer"
        return super().problem(value)

    def _range(self) -> str:
        return f" >= {self.minimum}" if self.minimum is not None else ""

    def doc(self) -> str:
        return f"{self.metavar}{self._range()}"


class IntOrFull(Int):
    """An integer of at least `minimum`, or `full` (stored as `full_value`, e.g. 0)."""

    metavar = "N|full"

    def __init__(self, minimum: int = 2, full_value: int = 0) -> None:
        super().__init__(minimum)
        self.full_value = full_value

    def parse(self, text: str) -> int:
        if text == "full":
            return self.full_value
        try:
            return super().parse(text)
        except ParamFail as e:
            raise ParamFail(e.message.replace(f"integer{self._range()}", f"integer{self._range()} or `full`"),
                            e.hint) from None

    def format(self, value: Any) -> str:
        return "full" if value == self.full_value else str(value)

    def doc(self) -> str:
        return f"N{self._range()} or full"


class Bool(Kind):
    """`true`/`false` (also 1/0, yes/no); a bare key means true."""

    metavar = "BOOL"

    def parse(self, text: str) -> bool:
        low = text.lower()
        if low in ("1", "true", "yes"):
            return True
        if low in ("0", "false", "no"):
            return False
        raise ParamFail(f"must be true or false, got `{text}`")

    def format(self, value: Any) -> str:
        return "true" if value else "false"


class Choice(Kind):
    """One of a fixed set of names. `open`: any name parses (the pass refuses an unknown
    one with the kernel in hand, where its hint can list what is legal *there*); docs and
    `problem` still use the set."""

    def __init__(self, names: Iterable[str], metavar: str = "NAME", *, open: bool = False) -> None:
        self.names = tuple(names)
        self.metavar = metavar
        self.open = open

    def parse(self, text: str) -> str:
        if self.open and _IDENT.fullmatch(text):
            return text
        if text not in self.names:
            same = [n for n in self.names if n.lower() == text.lower()]
            hint = f"did you mean `{same[0]}`?" if same else did_you_mean(text, self.names)
            raise ParamFail(f"`{text}` is not one of {', '.join(self.names)}", hint, accepted=self.names)
        return text

    def problem(self, value: Any) -> str | None:
        if value not in self.names:
            return f"`{value}` is not one of {', '.join(self.names)}"
        return None

    def doc(self) -> str:
        return f"{self.metavar}: {'|'.join(self.names)}"


def Dtype(*, floats_only: bool = False, open: bool = True) -> Choice:
    """An element type of the IR (`ir.DTYPES`)."""
    names = [d for d in ir.DTYPES if d in ir.FLOAT_DTYPES] if floats_only else list(ir.DTYPES)
    return Choice(names, "DTYPE", open=open)


def LayoutName(*, open: bool = True) -> Choice:
    """A tensor layout (`ir.LAYOUTS`)."""
    return Choice(ir.LAYOUTS, "LAYOUT", open=open)


class LoopTensor(Kind):
    """`LOOP.TENSOR`: a tensor as read inside one loop nest, -> `(loop, tensor)`."""

    metavar = "LOOP.TENSOR"

    def parse(self, text: str) -> tuple[str, str]:
        loop, dot, tensor = text.rpartition(".")
        if not dot or not loop or not tensor:
            raise ParamFail(f"`{text}` must name a loop and a tensor as `LOOP.TENSOR`")
        return Loop().parse(loop), Tensor().parse(tensor)

    def format(self, value: Any) -> str:
        return f"{value[0]}.{value[1]}"

    def in_kernel(self, value: Any, kernel: ir.Kernel) -> str | None:
        return Loop().in_kernel(value[0], kernel) or Tensor().in_kernel(value[1], kernel)


# --------------------------------------------------------------------------------------
# shapes: the `{...}` items <-> the dataclass fields


class Params:
    """How a pass's `{...}` items map onto its fields. Subclasses implement `parse`
    (items -> field values), `items` (instance -> canonical item texts), `syntax` and
    `check`; `note` (what omitted parameters mean, ...) and `example` feed docs and hints."""

    def __init__(self, *, note: str = "", example: str = "") -> None:
        self.note = note
        self.example = example

    # -- to implement
    def parse(self, pass_name: str, args: Sequence[tuple[str, str | None]]) -> dict[str, Any]:
        raise NotImplementedError

    def items(self, p: Any) -> list[str]:
        raise NotImplementedError

    def syntax(self) -> str:
        raise NotImplementedError

    def values(self, p: Any) -> list[tuple[str, Kind, Any]]:
        """(field, kind, value) of every value `p` holds, for `check`."""
        raise NotImplementedError

    # -- derived
    def text(self, p: Any) -> str:
        items = self.items(p)
        return p.name + ("{" + ",".join(items) + "}" if items else "")

    def doc(self) -> str:
        """The `params_doc` of a pass with this schema: syntax; constraints; note."""
        parts = [self.syntax()]
        constraints = sorted({d for d in (k.doc() for k in self.kinds()) if d})
        parts += constraints
        if self.note:
            parts.append(self.note)
        if self.example:
            parts.append(f"e.g. {{{self.example}}}")
        return "; ".join(p for p in parts if p)

    def kinds(self) -> list[Kind]:
        return []

    def check(self, p: Any, kernel: ir.Kernel | None = None) -> list[str]:
        """Problems with instance `p`: a value that is not of its kind, or (given the
        kernel) a loop or tensor the kernel does not have. Empty: fine."""
        out = []
        for fname, kind, value in self.values(p):
            why = kind.problem(value) or (kind.in_kernel(value, kernel) if kernel is not None else None)
            if why:
                out.append(f"{p.name}.{fname}: {why}")
        return out

    # -- errors
    def fail(self, pass_name: str, message: str, *, arg: Any = None, at_value: bool = False,
             param: str, value: Any = None, hint: str | None = None, accepted: Iterable[Any] = ()) -> BadPipelineParameter:
        col = None
        if isinstance(arg, Arg):
            col = arg.value_col if at_value and arg.value_col else arg.key_col
        if hint is None and self.example:
            hint = f"e.g. `{pass_name}{{{self.example}}}`"
        return BadPipelineParameter(pass_name, message, _loc(col), param=param, value=value,
                                    accepted=accepted, hint=hint)

    def _kind(self, pass_name: str, kind: Kind, text: str, *, arg: Any, at_value: bool, param: str,
              what: str) -> Any:
        try:
            return kind.parse(text)
        except ParamFail as e:
            msg = e.message if e.message.startswith("`") else f"{what} {e.message}"
            raise self.fail(pass_name, msg, arg=arg, at_value=at_value, param=param, value=text,
                            hint=e.hint, accepted=e.accepted) from None


class NoParams(Params):
    """The pass takes no parameters."""

    def parse(self, pass_name: str, args: Sequence[tuple[str, str | None]]) -> dict[str, Any]:
        if args:
            raise self.fail(pass_name, "takes no parameters", arg=args[0], param=args[0][0],
                            hint=f"write `{pass_name}`")
        return {}

    def items(self, p: Any) -> list[str]:
        return []

    def values(self, p: Any) -> list[tuple[str, Kind, Any]]:
        return []

    def syntax(self) -> str:
        return "none"


class Keywords(Params):
    """`{field=value,...}`: each item sets the dataclass field of that name; omitted fields
    keep their defaults, and fields at their default are not printed. A bare `field` means
    `field=true` for a `Bool`."""

    def __init__(self, fields: dict[str, Kind], *, note: str = "", example: str = "") -> None:
        super().__init__(note=note, example=example)
        self.fields = dict(fields)

    @staticmethod
    def from_dataclass(cls: type) -> "Keywords":
        """The default schema: int fields are `Int(None)`, bool `Bool`, others `Name`-free text."""
        out: dict[str, Kind] = {}
        for f in dataclasses.fields(cls):
            ty = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type))
            out[f.name] = Bool() if "bool" in ty else Int(None) if ("int" in ty and "str" not in ty) else _Text()
        return Keywords(out)

    def parse(self, pass_name: str, args: Sequence[tuple[str, str | None]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for arg in args:
            key, value = arg
            kind = self.fields.get(key)
            if kind is None:
                raise self.fail(pass_name, f"no parameter `{key}`", arg=arg, param=key, value=value,
                                accepted=self.fields,
                                hint=("accepted: " + ", ".join(self.fields)) if self.fields
                                else f"`{pass_name}` takes no parameters")
            if key in out:
                raise self.fail(pass_name, f"parameter `{key}` given twice", arg=arg, param=key, value=value)
            if value is None:
                if not isinstance(kind, Bool):
                    raise self.fail(pass_name, f"parameter `{key}` needs a value", arg=arg, param=key,
                                    hint=f"write `{key}={kind.metavar}`")
                out[key] = True
                continue
            out[key] = self._kind(pass_name, kind, value, arg=arg, at_value=True, param=key,
                                  what=f"parameter `{key}`")
        return out

    def items(self, p: Any) -> list[str]:
        defaults = {f.name: f.default for f in dataclasses.fields(p)}
        return [f"{k}={kind.format(getattr(p, k))}" for k, kind in self.fields.items()
                if getattr(p, k) != defaults.get(k)]

    def values(self, p: Any) -> list[tuple[str, Kind, Any]]:
        defaults = {f.name: f.default for f in dataclasses.fields(p)}
        return [(k, kind, getattr(p, k)) for k, kind in self.fields.items() if getattr(p, k) != defaults.get(k)]

    def kinds(self) -> list[Kind]:
        return list(self.fields.values())

    def syntax(self) -> str:
        return "{" + ",".join(f"{k}={kind.metavar}" for k, kind in self.fields.items()) + "} (each optional)" \
            if self.fields else "none"


class _Text(Kind):
    """Any text without `,{}=` (the default parser's `str` fields)."""

    metavar = "TEXT"

    def parse(self, text: str) -> str:
        return text


class Names(Params):
    """`{a,b,...}`: bare names of one kind (loops). `fields` is one field (a tuple of all
    the names) or several fields (one name each, `count` = their number); `minimum` and
    `optional` (no items at all is fine: the defaults) bound the count; names are distinct."""

    def __init__(self, fields: str | tuple[str, ...], kind: Kind | None = None, *, minimum: int | None = None,
                 optional: bool = False, distinct: bool = True, noun: str = "", note: str = "",
                 example: str = "") -> None:
        super().__init__(note=note, example=example)
        self.distinct = distinct
        self.noun = noun or self.kind_noun(kind or Loop())
        self.fields = fields
        self.kind = kind or Loop()
        self.exact = None if isinstance(fields, str) else len(fields)
        self.minimum = minimum if minimum is not None else (self.exact or 1)
        self.optional = optional

    @staticmethod
    def kind_noun(kind: Kind) -> str:
        return kind.metavar.lower()

    def _names(self, p: Any) -> tuple[str, ...]:
        if isinstance(self.fields, str):
            return tuple(getattr(p, self.fields))
        return tuple(getattr(p, f) for f in self.fields)

    def parse(self, pass_name: str, args: Sequence[tuple[str, str | None]]) -> dict[str, Any]:
        if not args and self.optional:
            return {}
        names = []
        for arg in args:
            key, value = arg
            if value is not None:
                raise self.fail(pass_name, f"takes {self.noun} names, not `{key}={value}`",
                                arg=arg, param=self._param(len(names)), value=f"{key}={value}")
            names.append(self._kind(pass_name, self.kind, key, arg=arg, at_value=False,
                                    param=self._param(len(names)), what="name"))
        count = len(names)
        if (self.exact is not None and count != self.exact) or count < self.minimum:
            want = f"exactly {_word(self.exact)}" if self.exact is not None else f"at least {_word(self.minimum)}"
            verb = "takes no parameters or" if self.optional else "needs"
            raise self.fail(pass_name, f"{verb} {want} {self.noun} names, got {count}",
                            arg=args[-1] if args else None, param=self._param(0))
        for i, n in enumerate(names):
            if self.distinct and n in names[:i]:
                raise self.fail(pass_name, f"names a {self.kind_noun(self.kind)} twice: {', '.join(names)}", arg=args[i],
                                param=self._param(i), value=n)
        if isinstance(self.fields, str):
            return {self.fields: tuple(names)}
        return dict(zip(self.fields, names))

    def _param(self, i: int) -> str:
        return self.fields if isinstance(self.fields, str) else self.fields[min(i, len(self.fields) - 1)]

    def items(self, p: Any) -> list[str]:
        names = self._names(p)
        if self.optional and not any(names):
            return []
        return [self.kind.format(n) for n in names]

    def values(self, p: Any) -> list[tuple[str, Kind, Any]]:
        names = self._names(p)
        if self.optional and not any(names):
            return []
        return [(self._param(i), self.kind, n) for i, n in enumerate(names)]

    def check(self, p: Any, kernel: ir.Kernel | None = None) -> list[str]:
        out = super().check(p, kernel)
        names = [n for n in self._names(p)]
        if not (self.optional and not any(names)):
            if (self.exact is not None and len(names) != self.exact) or len(names) < self.minimum:
                out.append(f"{p.name}: {len(names)} names")
            if self.distinct and len(set(names)) != len(names):
                out.append(f"{p.name}: a name given twice")
        return out

    def kinds(self) -> list[Kind]:
        return [self.kind]

    def syntax(self) -> str:
        m = self.kind.metavar
        if self.exact is not None:
            s = "{" + ",".join([m] * self.exact) + "}"
        else:
            s = "{" + ",".join([m] * self.minimum) + ",...}"
        return ("none or " + s) if self.optional else s


class Map(Params):
    """`{key=value,...}` into one field holding a tuple of `(key, value)` pairs in the
    order written. `minimum`: fewest items (0: `{}` and no braces are fine). `keys`: a fixed
    key set given all together or not at all (printed in that order)."""

    def __init__(self, field: str, key: Kind, value: Kind, *, minimum: int = 0,
                 keys: tuple[str, ...] | None = None, note: str = "", example: str = "") -> None:
        super().__init__(note=note, example=example)
        self.field, self.key, self.value = field, key, value
        self.minimum = minimum
        self.keys = keys
        if keys is not None:
            self.key = Choice(keys, "KEY")

    def parse(self, pass_name: str, args: Sequence[tuple[str, str | None]]) -> dict[str, Any]:
        pairs: list[tuple[Any, Any]] = []
        for arg in args:
            key, value = arg
            k = self._kind(pass_name, self.key, key, arg=arg, at_value=False, param=self.field,
                           what="key")
            if value is None:
                raise self.fail(pass_name, f"`{key}` needs a value", arg=arg, param=self.field, value=key,
                                hint=f"write `{key}={self.value.metavar}`")
            if any(k == seen for seen, _ in pairs):
                raise self.fail(pass_name, f"`{key}` given twice", arg=arg, param=self.field, value=key)
            pairs.append((k, self._kind(pass_name, self.value, value, arg=arg, at_value=True,
                                        param=self.field, what=f"the value of `{key}`")))
        if len(pairs) < self.minimum:
            raise self.fail(pass_name, f"needs at least {self.minimum} `{self.key.metavar}={self.value.metavar}`",
                            param=self.field)
        if self.keys is not None and pairs and sorted(k for k, _ in pairs) != sorted(self.keys):
            missing = [k for k in self.keys if k not in dict(pairs)]
            raise self.fail(pass_name, f"takes all of {', '.join(self.keys)} or none (missing {', '.join(missing)})",
                            arg=args[-1], param=self.field, accepted=self.keys)
        if self.keys is not None:
            pairs.sort(key=lambda kv: self.keys.index(kv[0]))  # type: ignore[union-attr]
        return {self.field: tuple(pairs)}

    def items(self, p: Any) -> list[str]:
        return [f"{self.key.format(k)}={self.value.format(v)}" for k, v in getattr(p, self.field)]

    def values(self, p: Any) -> list[tuple[str, Kind, Any]]:
        out: list[tuple[str, Kind, Any]] = []
        for k, v in getattr(p, self.field):
            out += [(self.field, self.key, k), (self.field, self.value, v)]
        return out

    def check(self, p: Any, kernel: ir.Kernel | None = None) -> list[str]:
        out = super().check(p, kernel)
        pairs = getattr(p, self.field)
        keys = [k for k, _ in pairs]
        if len(pairs) < self.minimum or len(set(keys)) != len(keys):
            out.append(f"{p.name}.{self.field}: {len(pairs)} items, keys {keys}")
        if self.keys is not None and pairs and keys != list(self.keys):
            out.append(f"{p.name}.{self.field}: keys {keys}, not all of {list(self.keys)} in order")
        return out

    def kinds(self) -> list[Kind]:
        return [self.value] if self.keys is not None else [self.key, self.value]

    def syntax(self) -> str:
        if self.keys is not None:
            body = ",".join(f"{k}={self.value.metavar}" for k in self.keys)
            return "{" + body + "} (all or none)"
        one = f"{self.key.metavar}={self.value.metavar}"
        s = "{" + one + ",...}"
        return s if self.minimum else f"none or {s}"


class Entry(Params):
    """Exactly one `key=value` item, key and value in their own fields (`key_fields`: one
    field, or several when the key kind gives a tuple: `LOOP.TENSOR`). `bare`: the value
    stored when the item is a bare key (`multicore{qk}`), printed as a bare key; None: a
    value is required."""

    def __init__(self, key_fields: str | tuple[str, ...], value_field: str, key: Kind, value: Kind, *,
                 bare: Any = None, value_name: str = "value", note: str = "", example: str = "") -> None:
        super().__init__(note=note, example=example)
        self.value_name = value_name
        self.key_fields = (key_fields,) if isinstance(key_fields, str) else key_fields
        self.value_field = value_field
        self.key, self.value, self.bare = key, value, bare

    def _key_of(self, p: Any) -> Any:
        vals = tuple(getattr(p, f) for f in self.key_fields)
        return vals[0] if len(vals) == 1 else vals

    def parse(self, pass_name: str, args: Sequence[tuple[str, str | None]]) -> dict[str, Any]:
        one = f"`{self.key.metavar}={self.value.metavar}`"
        if len(args) != 1:
            raise self.fail(pass_name, f"takes exactly one {one} item, got {len(args)}",
                            arg=args[1] if len(args) > 1 else None, param=self.key_fields[0],
                            hint=(f"e.g. `{pass_name}{{{self.example}}}`; " if self.example else "")
                            + f"chain `{pass_name}` passes for several")
        arg = args[0]
        key, value = arg
        k = self._kind(pass_name, self.key, key, arg=arg, at_value=False, param=self.key_fields[0],
                       what="key")
        if value is None:
            if self.bare is None:
                raise self.fail(pass_name, f"`{pass_name}{{{key}}}` needs a {self.value_name}", arg=arg,
                                param=self.value_field)
            v = self.bare
        else:
            v = self._kind(pass_name, self.value, value, arg=arg, at_value=True, param=self.value_field,
                           what=f"the value of `{key}`")
        keys = k if len(self.key_fields) > 1 else (k,)
        return {**dict(zip(self.key_fields, keys)), self.value_field: v}

    def items(self, p: Any) -> list[str]:
        key = self.key.format(self._key_of(p))
        v = getattr(p, self.value_field)
        if self.bare is not None and v == self.bare:
            return [key]
        return [f"{key}={self.value.format(v)}"]

    def values(self, p: Any) -> list[tuple[str, Kind, Any]]:
        out: list[tuple[str, Kind, Any]] = [(self.key_fields[0], self.key, self._key_of(p))]
        v = getattr(p, self.value_field)
        if self.bare is None or v != self.bare:
            out.append((self.value_field, self.value, v))
        return out

    def kinds(self) -> list[Kind]:
        return [self.key, self.value]

    def syntax(self) -> str:
        one = "{" + f"{self.key.metavar}={self.value.metavar}" + "}"
        return ("{" + self.key.metavar + "} or " + one) if self.bare is not None else one
