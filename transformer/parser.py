"""Text -> `Kernel`: lark LALR parse of `grammars/ir.lark`, tree -> IR, semantic checks.

`parse(text, path)` returns a checked `Kernel` or raises an `AscxError` located in the
source. Syntax errors name what was found and list what the grammar expected there.

Size: about 500 lines: the lark tree -> IR transformer and the semantic checks that need
the tree's locations.
"""

from __future__ import annotations

import functools
import hashlib
import math
import os
import sys
import tempfile
from pathlib import Path

import lark
from lark import Token, Tree

from . import ir
from .diagnostics import AscxError, ParseError, SemanticError, Source
from .ir import Loc
from .resources import grammars_dir


_LARK_OPTIONS: dict[str, object] = dict(parser="lalr", propagate_positions=True, maybe_placeholders=True)


@functools.lru_cache(maxsize=1)
def _parser() -> lark.Lark:
    """The LALR parser of `grammars/ir.lark`, built once per process and cached on disk
    (`grammar_cache_path`): building the LALR table costs ~100 ms of every command,
    loading it ~10 ms. The cache only ever speeds things up: a missing, unreadable,
    corrupt or stale file is rebuilt, and a cache folder that cannot be written is
    ignored."""
    grammar = grammars_dir().joinpath("ir.lark").read_text()
    path = grammar_cache_path(grammar)
    if path is not None:
        try:
            with open(path, "rb") as f:
                return lark.Lark.load(f)
        except Exception:  # missing, unreadable or corrupt (any unpickling error): rebuild
            pass
    built = lark.Lark(grammar, **_LARK_OPTIONS)  # type: ignore[arg-type]
    if path is not None:
        _save_parser(built, path)
    return built


def grammar_cache_path(grammar: str) -> Path | None:
    """Where the parser built from `grammar` is cached: `parser/ir-<hash>.lark` under
    `$ASCX_CACHE_DIR`, else under `$XDG_CACHE_HOME/ascx` or `~/.cache/ascx`. The hash
    covers the grammar text, the Lark options and the Lark and Python versions, so a
    changed grammar or upgraded Lark never loads a stale table. None when no home folder
    is known (then nothing is cached)."""
    base = os.environ.get("ASCX_CACHE_DIR")
    if not base:
        xdg = os.environ.get("XDG_CACHE_HOME")
        home = os.path.expanduser("~")
        if not xdg and home == "~":
            return None
        base = os.path.join(xdg or os.path.join(home, ".cache"), "ascx")
    key = hashlib.sha256("\0".join([grammar, repr(sorted(_LARK_OPTIONS.items())), lark.__version__,
                                     sys.version.split()[0]]).encode()).hexdigest()[:24]
    return Path(base) / "parser" / f"ir-{key}.lark"


def _save_parser(parser: lark.Lark, path: Path) -> None:
    """Write the cache atomically (temp file + rename: concurrent processes never read a
    half-written table); a folder that cannot be written only costs the next start-up."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as f:
            parser.save(f)
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def parse(text: str, path: str = "<input>", *, check: bool = True) -> ir.Kernel:
    """Parse and (by default) semantically check one kernel."""
    if text.startswith("\ufeff"):  # a UTF-8 byte-order mark (Windows editors write one)
        text = text[1:]
    source = Source(path, text)
    try:
        tree = _parser().parse(text)
    except lark.exceptions.UnexpectedInput as e:
        raise _syntax_error(e, source) from None
    _check_nesting(tree, source)
    try:
        kernel = _Builder().kernel(tree.children[0])
    except AscxError as e:
        raise e.with_source(source) from None
    if check:
        from .check import check_kernel

        errors = check_kernel(kernel)
        if errors:
            raise errors[0].with_source(source)
    return kernel


def parse_file(path: str) -> ir.Kernel:
    """Parse a file; `-` reads standard input."""
    src = read_source(path)
    return parse(src.text, src.path)


def read_source(path: str) -> Source:
    """The text of `path` (`-` reads standard input, reported as `<stdin>`). An unreadable
    file is an error naming it; bytes that are not UTF-8 are an error at their line and
    column."""
    if path == "-":
        stream = getattr(sys.stdin, "buffer", None)
        data = stream.read() if stream is not None else sys.stdin.read().encode("utf-8", "surrogateescape")
        name = "<stdin>"
    else:
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            raise AscxError(f"cannot read `{path}`: {e.strerror}", source=Source(path, "")) from None
        name = path
    try:
        return Source(name, data.decode("utf-8"))
    except UnicodeDecodeError as e:
        before = data[: e.start].decode("utf-8")
        line = before.count("\n") + 1
        col = len(before) - (before.rfind("\n") + 1) + 1
        raise ParseError(f"not UTF-8 text: byte 0x{data[e.start]:02x} is not part of a UTF-8 character",
                         Loc(line, col), hint="ascx reads kernels as UTF-8; save the file in that encoding",
                         source=Source(name, data.decode("utf-8", "replace"))) from None


# Nesting limits: every stage after the parser (checker, interpreter, passes, code
# generation) walks expressions and loop nests recursively, so deeper input would
# exhaust Python's stack. Real kernels stay far below both.
MAX_EXPR_DEPTH = 100
MAX_LOOP_DEPTH = 32
_EXPR_NODES = frozenset({"binary", "neg", "call", "power"})  # operators; an access is not one, but
# nesting inside its indices counts (`x[y[...]]` is one deeper per access)


def _check_nesting(tree: Tree, source: Source) -> None:
    """Reject expressions nested more than MAX_EXPR_DEPTH operators deep and loops nested
    more than MAX_LOOP_DEPTH deep, at the innermost node past the limit (an iterative walk:
    the tree may be far deeper than the Python stack)."""
    stack: list[tuple[Tree, int, int, Tree | None]] = [(tree, 0, 0, None)]
    while stack:
        node, expr_depth, loop_depth, outermost = stack.pop()
        if node.data in _EXPR_NODES:
            expr_depth += 1
        if node.data in _EXPR_NODES or node.data == "access":
            outermost = outermost or node
            if expr_depth > MAX_EXPR_DEPTH:
                raise ParseError(f"expression nested more than {MAX_EXPR_DEPTH} operators deep",
                                 _loc_of(outermost), hint="compute it in steps through a temp", source=source)
        elif node.data == "for_stmt":
            loop_depth += 1
            if loop_depth > MAX_LOOP_DEPTH:
                var = next(c for c in node.children if isinstance(c, Token) and c.type == "NAME")
                raise ParseError(f"loops nested more than {MAX_LOOP_DEPTH} deep", _loc_of(var), source=source)
        inner = expr_depth + (node.data == "access")
        stack.extend((c, inner, loop_depth, outermost) for c in node.children if isinstance(c, Tree))


# --------------------------------------------------------------------------------------
# Syntax errors

_TOKEN_TEXT = {
    "LPAR": "(", "RPAR": ")", "LSQB": "[", "RSQB": "]", "LBRACE": "{", "RBRACE": "}",
    "COMMA": ",", "COLON": ":", "EQUAL": "=", "AT": "@", "MINUS": "-", "NEG": "-",
    "__ANON_0": "->", "ASSIGN_OP": "= += *= max= min=", "COMPARE_OP": "a comparison",
    "ADD_OP": "+ -", "MUL_OP": "* /", "NAME": "a name", "INT": "an integer",
    "FLOAT": "a float literal", "INF": "inf", "$END": "end of input",
    "<END-OF-FILE>": "end of input",
}


def _describe_terminal(name: str) -> str:
    if name in _TOKEN_TEXT:
        text = _TOKEN_TEXT[name]
        return text if text.startswith(("a ", "an ", "end ")) else f"`{text}`"
    try:
        term = _parser().get_terminal(name)
        pattern = term.pattern
        if isinstance(pattern, lark.lexer.PatternStr):
            return f"`{pattern.value}`"
    except KeyError:
        pass
    return name


def _syntax_error(e: lark.exceptions.UnexpectedInput, source: Source) -> ParseError:
    line = getattr(e, "line", None) or 1
    col = getattr(e, "column", None) or 1
    if isinstance(e, lark.exceptions.UnexpectedToken):
        tok = e.token
        if tok.type == "$END":
            lines = source.text.splitlines() or [""]
            line, col = len(lines), len(lines[-1]) + 1
            found = "end of input"
        else:
            found = f"`{tok.value}`"
        expected = sorted({_describe_terminal(t) for t in e.expected})
        msg = f"unexpected {found}"
        hint = "expected " + _join_alternatives(expected) if expected else None
        before = source.text[: tok.start_pos] if tok.type != "$END" and tok.start_pos is not None else source.text
        special = _special_hint(tok, set(e.expected), before)
        if special is not None:
            special_msg, special_hint, pos = special
            msg = special_msg or msg
            hint = special_hint or hint
            if pos is not None:
                line = source.text.count("\n", 0, pos) + 1
                col = pos - (source.text.rfind("\n", 0, pos) + 1) + 1
        return ParseError(msg, Loc(line, col), hint=hint, source=source)
    if isinstance(e, lark.exceptions.UnexpectedCharacters):
        pos = e.pos_in_stream
        ch = source.text[pos] if pos < len(source.text) else "?"
        allowed = sorted({_describe_terminal(t) for t in (e.allowed or ())})
        hint = "expected " + _join_alternatives(allowed) if allowed else None
        if ch == "." and "INT" not in (e.allowed or ()):
            after = source.text[pos + 1 : pos + 2]
            before = source.text[pos - 1 : pos] if pos > 0 else ""
            if before.isdigit() and after.isdigit():
                hint = ("a float literal is not allowed here: sizes, indices, loop bounds and "
                        "annotation arguments are integers")
            else:
                hint = ("a float literal needs digits on both sides of the point (`1.0`, `0.5`); "
                        "ranges are `lo..hi`")
        return ParseError(f"unexpected character `{ch}`", Loc(line, col), hint=hint, source=source)
    if isinstance(e, lark.exceptions.UnexpectedEOF):
        lines = source.text.splitlines() or [""]
        return ParseError("unexpected end of input", Loc(len(lines), len(lines[-1]) + 1),
                          hint="a `}` may be missing", source=source)
    return ParseError(str(e).splitlines()[0], Loc(line, col), source=source)


def _join_alternatives(items: list[str]) -> str:
    if len(items) == 1:
        return items[0]
    if len(items) > 10:
        items = items[:10] + ["..."]
    return "one of " + ", ".join(items)


_DECL_KEYWORDS = ("size", "const", "temp", "local")


def _special_hint(
    tok: Token, expected: set[str], before: str
) -> tuple[str | None, str | None, int | None] | None:
    """A better (message, hint, position) for common mistakes, judged from the unexpected
    token, what the grammar expected and the source text before the token; None if
    nothing applies. Any part may be None to keep the generic one; the position is an
    offset into the source where the mistake is (rather than where the parser noticed)."""
    import re

    if tok.type == "$END" and "RBRACE" in expected:
        return None, "a `}` may be missing", None
    # blank out comments without moving offsets
    text = re.sub(r"#[^\n]*", lambda m: " " * len(m.group()), before).rstrip()
    last_line = text.rsplit("\n", 1)[-1].strip()
    if tok.type == "COMPARE_OP" and "COMPARE_OP" not in expected and re.search(r"(<=|>=|==|!=|<(?!-)|>)", last_line):
        return None, "comparisons do not chain (`a < b < c`); nest `select`s instead", None
    m = re.search(r"@\s*([A-Za-z_][A-Za-z0-9_]*)$", text)
    if m and expected == {"LPAR"}:
        if m.group(1) in ir.SCOPES and last_line.startswith("temp"):
            return (f"a `temp` cannot have a scope (`@{m.group(1)}`)",
                    "on-chip buffers are declared `local NAME: DTYPE[DIMS] @SCOPE`", m.start())
        return None, f"an annotation takes its arguments in parentheses, e.g. `@{m.group(1)}(4)`", None
    if expected == {"AT"} and last_line.startswith("local"):
        return ("a `local` needs a scope",
                "write `local NAME: DTYPE[DIMS] @SCOPE` with SCOPE one of " + ", ".join(ir.SCOPES),
                len(text))
    if expected == {"INT"} and tok.value == "-" and last_line.startswith("size"):
        return None, "a size is a positive integer", None
    if tok.type == "NAME" and re.search(r"(^|\W)(" + "|".join(_DECL_KEYWORDS) + r")$", text):
        return None, "declarations (`size`, `const`, `temp`, `local`) come before the first statement", None
    if expected == {"COLON"} and re.search(r"@\s*[A-Za-z_]\w*\s*\([^()]*\)\s*[A-Za-z_]\w*$", text):
        return None, "annotations are written on the lines before a `for` loop (and its label)", None
    return None


# --------------------------------------------------------------------------------------
# Tree -> IR


def _loc_of(node: Tree | Token) -> Loc | None:
    if isinstance(node, Token):
        return Loc(node.line or 1, node.column or 1)
    meta = node.meta
    if getattr(meta, "empty", True):
        return None
    return Loc(meta.line, meta.column)


class _Builder:
    """Turns the lark tree into IR nodes. Structural checks that the grammar cannot
    express cheaply (annotation arguments, literal ranges) are done here; name and type
    checks are the checker's job."""

    def kernel(self, t: Tree) -> ir.Kernel:
        name_tok, in_params, out_params, *rest = t.children
        decls = [c for c in rest if isinstance(c, Tree) and c.data.endswith("_decl")]
        stmts = [c for c in rest if not (isinstance(c, Tree) and c.data.endswith("_decl"))]
        inputs = tuple(self.param(p, "input") for p in self._params(in_params))
        outputs = tuple(self.param(p, "output") for p in self._params(out_params))
        sizes, consts, buffers = [], [], []
        for d in decls:
            if d.data == "size_decl":
                sizes.append(self.size_decl(d, sizes))
            elif d.data == "const_decl":
                consts.append(self.const_decl(d))
            elif d.data == "temp_decl":
                n, ty = d.children
                buffers.append(self.tensor(n, ty, "temp", None))
            elif d.data == "local_decl":
                n, ty, scope = d.children
                buffers.append(self.tensor(n, ty, "local", scope))
        return ir.Kernel(
            name=str(name_tok),
            inputs=inputs,
            outputs=outputs,
            sizes=tuple(sizes),
            consts=tuple(consts),
            buffers=tuple(buffers),
            body=tuple(self.stmt(s) for s in stmts),
            loc=_loc_of(name_tok),
        )

    def size_decl(self, d: Tree, before: list[ir.SizeDecl]) -> ir.SizeDecl:
        """`size S = 1024 [in 1..65536] [multiple of 16]`, or a derived size `size Dh = D / 2`
        (an expression of the sizes before it: its value follows theirs); the checker
        validates the values."""
        n, v, rng, mult = d.children
        lo, hi = (int(rng.children[0]), int(rng.children[1])) if rng is not None else (None, None)
        e = self.expr(v)
        value, derived = (e.value, None) if isinstance(e, ir.IntLit) else (0, e)
        if derived is not None:
            try:
                value = ir.eval_int_expr(derived, {s.name: s.value for s in before})
            except (KeyError, ValueError):
                value = 0  # an unknown name or a bad divisor: the checker says which, where
        return ir.SizeDecl(str(n), value, loc=_loc_of(n), lo=lo, hi=hi,
                           multiple=int(mult.children[0]) if mult is not None else None,
                           range_loc=_loc_of(rng.children[0]) if rng is not None else None, expr=derived)

    @staticmethod
    def _params(t: Tree | None) -> list[Tree]:
        return [] if t is None else [c for c in t.children if isinstance(c, Tree)]

    def param(self, t: Tree, kind: str) -> ir.TensorDecl:
        n, ty = t.children
        return self.tensor(n, ty, kind, None)

    def tensor(self, name: Token, ty: Tree, kind: str, scope: Token | None) -> ir.TensorDecl:
        dtype_tok, shape_t, layout = ty.children
        shape: tuple[ir.Expr, ...] = ()
        if shape_t is not None and shape_t.children[0] is not None:
            shape = tuple(self.expr(c) for c in shape_t.children[0].children)
        return ir.TensorDecl(
            name=str(name),
            dtype=str(dtype_tok),
            shape=shape,
            kind=kind,
            scope=str(scope) if scope is not None else None,
            layout=str(layout.children[0]) if layout is not None else None,
            loc=_loc_of(name),
        )

    def const_decl(self, d: Tree) -> ir.ConstDecl:
        n, dtype, num = d.children
        neg, lit = num.children
        if lit.type == "INT":
            value: int | float = int(lit)
        elif lit.type == "INF":
            value = math.inf
        else:
            value = float(lit)
        if neg is not None:
            value = -value
        if str(dtype) in ir.FLOAT_DTYPES:
            value = float(value)
        elif isinstance(value, float):
            if not math.isfinite(value) or value != int(value):
                raise SemanticError(
                    f"const `{n}` of integer type {dtype} has a non-integer value",
                    _loc_of(lit),
                    hint="use an integer literal or a float dtype",
                )
            value = int(value)
        return ir.ConstDecl(str(n), str(dtype), value, loc=_loc_of(n))

    # ---- statements ------------------------------------------------------------------
    def stmt(self, t: Tree) -> ir.Stmt:
        if t.data == "for_stmt":
            return self.for_stmt(t)
        if t.data == "assign":
            lv, op, val = t.children
            target = self.expr(lv)
            assert isinstance(target, (ir.Access, ir.Name))
            return ir.Assign(target, str(op), self.expr(val), loc=_loc_of(lv))
        if t.data == "copy_stmt":
            dst, src = t.children
            return ir.Copy(self.region(dst), self.region(src), loc=_loc_of(t))
        raise AssertionError(t.data)

    def for_stmt(self, t: Tree) -> ir.For:
        # children: annotation*, label|None, NAME, lo, hi, stmt*
        idx = 0
        annotations = []
        while idx < len(t.children) and isinstance(t.children[idx], Tree) and t.children[idx].data == "annotation":
            annotations.append(self.annotation(t.children[idx]))
            idx += 1
        label, var, lo, hi = t.children[idx : idx + 4]
        body = t.children[idx + 4 :]
        seen = set()
        for a in annotations:
            if a.name in seen:
                raise ParseError(f"annotation `@{a.name}` given twice on one loop", a.loc)
            seen.add(a.name)
        return ir.For(
            var=str(var),
            lo=self.expr(lo),
            hi=self.expr(hi),
            body=tuple(self.stmt(s) for s in body),
            label=str(label.children[0]) if label is not None else None,
            annotations=tuple(annotations),
            loc=_loc_of(label.children[0]) if label is not None else _loc_of(var),
            var_loc=_loc_of(var),
        )

    def annotation(self, t: Tree) -> ir.Annotation:
        name_tok, args = t.children
        name = str(name_tok)
        loc = _loc_of(name_tok)
        if name not in ir.ANNOTATIONS:
            from .diagnostics import did_you_mean

            raise ParseError(
                f"unknown annotation `@{name}`",
                loc,
                hint=did_you_mean(name, ir.ANNOTATIONS) or None,
            )
        keywords = ir.ANNOTATIONS[name]
        pairs: list[tuple[str, int]] = []
        for pos, a in enumerate([] if args is None else args.children):
            # `(NAME "=")? INT`: an optional group without a placeholder, so a positional
            # argument has one child and a keyword argument two.
            key_tok, val = (None, a.children[0]) if len(a.children) == 1 else a.children
            if key_tok is None:
                if pos != 0:
                    raise ParseError(f"`@{name}` takes positional argument only first", _loc_of(val))
                key = keywords[0]
            else:
                key = str(key_tok)
                if key not in keywords:
                    raise ParseError(
                        f"`@{name}` has no parameter `{key}`",
                        _loc_of(key_tok),
                        hint="accepted: " + ", ".join(keywords),
                    )
            if any(k == key for k, _ in pairs):
                raise ParseError(f"`@{name}` parameter `{key}` given twice", _loc_of(val))
            pairs.append((key, int(val)))
        return ir.Annotation(name, tuple(pairs), loc=loc)

    def region(self, t: Tree) -> ir.Region:
        name, *dims = t.children
        out: list[ir.Slice | ir.Expr] = []
        for d in dims:
            if isinstance(d, Tree) and d.data == "slice":
                lo, hi = d.children
                out.append(ir.Slice(self.expr(lo), self.expr(hi)))
            else:
                out.append(self.expr(d))
        return ir.Region(str(name), tuple(out), loc=_loc_of(name))

    # ---- expressions -----------------------------------------------------------------
    def expr(self, t: Tree | Token) -> ir.Expr:
        if isinstance(t, Token):  # a bare NAME inside some rules
            return ir.Name(str(t), loc=_loc_of(t))
        d = t.data
        if d == "int_lit":
            tok = t.children[0]
            return ir.IntLit(int(tok), loc=_loc_of(tok))
        if d == "float_lit":
            tok = t.children[0]
            return ir.FloatLit(float(tok), loc=_loc_of(tok))
        if d == "inf_lit":
            return ir.FloatLit(math.inf, loc=_loc_of(t.children[0]))
        if d == "name":
            tok = t.children[0]
            return ir.Name(str(tok), loc=_loc_of(tok))
        if d == "access":
            tok, dims = t.children
            indices = () if dims is None else tuple(self.expr(c) for c in dims.children)
            return ir.Access(str(tok), indices, loc=_loc_of(tok))
        if d == "call":
            tok, args = t.children
            a = () if args is None else tuple(self.expr(c) for c in args.children)
            return ir.Call(str(tok), a, loc=_loc_of(tok))
        if d == "neg":
            operand = t.children[0]
            return ir.Unary("-", self.expr(operand), loc=_loc_of(t))
        if d == "power":
            lhs, op, rhs = t.children
            return ir.Call("pow", (self.expr(lhs), self.expr(rhs)), loc=_loc_of(op))
        if d == "binary":
            lhs, op, rhs = t.children
            return ir.Binary(str(op), self.expr(lhs), self.expr(rhs), loc=_loc_of(op))
        raise AssertionError(f"unhandled tree {d}")
