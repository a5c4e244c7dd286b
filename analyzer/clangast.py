"""Exact types from clang's AST (libclang), for translation units whose build flags are known.

tree-sitter reads text, so the counters guess types: `auto` takes its initialiser's guessed
type, a template parameter is float unless something binds it, a typedef is followed by its
text and an unknown struct is 4 bytes. With a compile database each unit's flags are known,
and clang itself can say what every declaration's type is: the canonical type with its size
(`float4` 16, a struct's `sizeof` with padding), and, for function templates, the instances
the unit makes (template arguments, and the instance's own declarations, whose types are no
longer dependent). docs/counting.md M10 says where the counters use them.

Optional: the PyPI `libclang` package (the `clang` extra) bundles libclang.so; it is imported
only when a unit is parsed. CUDA needs clang's resource headers (the CUDA wrapper headers,
taken from an installed clang) and a CUDA 12 tree (`toolchain.find_cuda_tree`). Anything
missing, or a unit that does not parse, gives a `UnitTypes` with a one-line `note` and no
types: counting goes on as without clang. `ROOFCAST_LIBCLANG=off` turns it off.

Compile commands are data: only the flags `compdb` checked (-D, -U, -I, -x, -std, the GPU
architecture) reach libclang, as an argument list; nothing runs through a shell.
"""

from __future__ import annotations

import ctypes
import os
import subprocess
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from roofcast.analyzer.compdb import CompileUnit
from roofcast.analyzer.session import SessionMemo

#: values of ROOFCAST_LIBCLANG that turn clang types off
_OFF = frozenset({"0", "off", "no", "none", "false"})
#: cursors nested deeper than this in one function are not visited (their declarations keep
#: the text's types); real code nests far less
MAX_DEPTH = 200
#: function instances visited per unit (instances reach further instances through calls)
MAX_INSTANCES = 2000

#: clang's builtin type kinds -> (roofcast's kind of value); sizes come from clang
_BUILTIN_KINDS = {
    "FLOAT": "sp",
    "DOUBLE": "dp",
    "LONGDOUBLE": "dp",
    "HALF": "hp",
    "FLOAT16": "hp",
    "BFLOAT16": "hp",
    "BOOL": "bool",
    "VOID": "void",
    **{
        k: "int"
        for k in (
            "CHAR_U", "UCHAR", "CHAR16", "CHAR32", "USHORT", "UINT", "ULONG", "ULONGLONG",
            "UINT128", "CHAR_S", "SCHAR", "WCHAR", "SHORT", "INT", "LONG", "LONGLONG", "INT128",
        )
    },
}  # fmt: skip


@dataclass(frozen=True)
class ClangType:
    """A declaration's canonical type, reduced to what counting needs: `kind` (sp, dp, hp,
    int, bool, void, or struct for a class, struct or union), `size` the bytes of one
    element (the pointee's, for pointers and arrays), `pointer` the levels of pointer or
    array, `name` a record's own name (without namespace or template arguments)."""

    kind: str
    size: int
    pointer: int = 0
    name: str = ""


#: (file, line, declared name) -> ((column, type), ...): every declaration of that name there
Declarations = dict[tuple[str, int, str], tuple[tuple[int, ClangType], ...]]


#: as collected: (file, line, name) -> {column: {the types met there}}
_Raw = dict[tuple[str, int, str], dict[int, set[ClangType]]]


@dataclass
class Instance:
    """One instance of a function template: its template arguments by parameter name (a
    type's canonical spelling, or an integer's value) and its declarations' types."""

    args: dict[str, str]
    arg_types: dict[str, ClangType]
    declarations: Declarations = field(default_factory=dict)


@dataclass
class UnitTypes:
    """What clang said of one unit. `declarations`: outside function templates, and inside
    them where every instance agrees; `instances`: by template, (file, line, name) of its
    name, in the order the unit first uses them; `note`: why there are none (empty if
    parsed), or the count of errors clang reported (types of declarations it could not
    type are left out)."""

    declarations: Declarations = field(default_factory=dict)
    instances: dict[tuple[str, int, str], list[Instance]] = field(default_factory=dict)
    note: str = ""
    parsed: bool = False
    errors: int = 0
    seconds: float = 0.0


def disabled_reason() -> str | None:
    """Why clang types cannot be had here (one line), or None when they can."""
    if os.environ.get("ROOFCAST_LIBCLANG", "").strip().lower() in _OFF:
        return "ROOFCAST_LIBCLANG turns libclang off"
    return _library_problem()


@cache
def _library_problem() -> str | None:
    try:
        import clang.cindex as cindex

        cindex.Index.create()
    except Exception as exc:  # noqa: BLE001 - ImportError, or a libclang.so that fails to load
        first = str(exc).strip().splitlines()
        return f"libclang not usable ({type(exc).__name__}: {first[0] if first else ''})"
    return None


@cache
def resource_dir() -> str | None:
    """clang's own headers (stddef.h, the CUDA wrappers), which the PyPI libclang lacks:
    from `ROOFCAST_CLANG_RESOURCE_DIR`, else the installed clang's `-print-resource-dir`."""
    given = os.environ.get("ROOFCAST_CLANG_RESOURCE_DIR", "").strip()
    if given:
        return given if Path(given, "include").is_dir() else None
    from roofcast.analyzer.toolchain import ToolchainError, find_clang

    try:
        clang = find_clang()
        out = subprocess.run(
            [clang, "-print-resource-dir"], capture_output=True, text=True, timeout=30
        )
    except (ToolchainError, OSError, subprocess.SubprocessError):
        return None
    folder = out.stdout.strip()
    return folder if out.returncode == 0 and Path(folder, "include").is_dir() else None


@cache
def _cuda_path() -> str | None:
    from roofcast.analyzer.toolchain import ToolchainError, find_cuda_tree

    try:
        return str(find_cuda_tree().path)
    except (ToolchainError, OSError):
        return None


def clang_arguments(unit: CompileUnit, resources: str | None, cuda: str | None) -> list[str]:
    """libclang's arguments for `unit`: its language, standard, -D, -U and -I (in the
    database's order), and what parsing without compiling needs. CUDA is parsed as its
    host side: launches in host code make the kernels' template instances there (a device
    parse rejects them), kernel bodies are typed all the same, and `__CUDA_ARCH__` stays
    undefined, as the text analysis takes it."""
    args: list[str] = []
    if unit.cuda:
        arch = unit.gpu_archs[0] if unit.gpu_archs else "sm_80"
        args += ["-x", "cuda", "--cuda-host-only", f"--cuda-gpu-arch={arch}", "-nocudalib"]
        args += ["-Wno-unknown-cuda-version"]
        if cuda:
            args.append(f"--cuda-path={cuda}")
    else:
        language = unit.language or ("c" if unit.file.suffix == ".c" else "c++")
        args += ["-x", language, "-fopenmp"]
    if unit.std:
        args.append(f"-std={unit.std}")
    if resources:
        args += ["-resource-dir", resources]
    args += [f"-D{name}={value}" for name, value in unit.defines]
    args += [f"-U{name}" for name in sorted(unit.undefines)]
    args += [f"-I{folder}" for folder in unit.include_dirs]
    args.append(f"-I{unit.file.parent}")
    args.append("-w")
    return args


def _unit_types(unit: CompileUnit) -> UnitTypes:
    """The types clang gives `unit`'s declarations; never raises (see `UnitTypes.note`)."""
    import time

    start = time.perf_counter()
    reason = disabled_reason()
    if reason is not None:
        return UnitTypes(note=reason)
    resources = resource_dir()
    if resources is None:
        return UnitTypes(note="no clang resource headers (install clang, or set "
                         "ROOFCAST_CLANG_RESOURCE_DIR)")  # fmt: skip
    cuda = _cuda_path() if unit.cuda else None
    if unit.cuda and cuda is None:
        return UnitTypes(note="no CUDA 12 tree for libclang (the `compile` extra gives one)")
    from roofcast.analyzer import clangcache

    args = clang_arguments(unit, resources, cuda)
    key = clangcache.cache_key(_library_version(), args, unit.file)
    result = clangcache.load(key) if key is not None else None
    if result is None:
        try:
            result, included = _parse(unit, args)
        except Exception as exc:  # noqa: BLE001 - libclang failing on a unit costs its types
            first = str(exc).strip().splitlines()
            note = f"libclang failed: {type(exc).__name__}: {first[0] if first else ''}"
            return UnitTypes(note=note, seconds=time.perf_counter() - start)
        if key is not None:
            # a unit that failed (a missing header) is kept too, with its include folders:
            # adding a file there changes the folder's stamp and so parses it again
            folders = [str(d) for d in (*unit.include_dirs, unit.file.parent)]
            clangcache.store(key, result, [str(unit.file), *included, *folders])
    result.seconds = time.perf_counter() - start
    return result


@cache
def _library_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("libclang")
    except PackageNotFoundError:  # a libclang that is no PyPI install: its path names it
        import clang.cindex as cindex

        return str(cindex.conf.get_filename())


def _parse(unit: CompileUnit, args: list[str]) -> tuple[UnitTypes, list[str]]:
    """The unit's types, and the files the parse included (for the cache)."""
    import clang.cindex as cindex

    index = cindex.Index.create()
    try:
        tu = index.parse(str(unit.file), args)
    except cindex.TranslationUnitLoadError as exc:
        return UnitTypes(note=f"libclang could not parse {unit.file.name}: {exc}"), []
    errors = [d for d in tu.diagnostics if d.severity >= cindex.Diagnostic.Error]
    fatal = [d for d in errors if d.severity >= cindex.Diagnostic.Fatal]
    # errors in clang's and the system's headers (a newer clang's wrappers naming a builtin
    # this libclang lacks) leave the unit's own declarations typed
    errors = [d for d in errors if not d.location.is_in_system_header]
    included = [i.include.name for i in tu.get_includes() if i.include is not None]
    if fatal:
        note = f"libclang could not parse {unit.file.name}: {fatal[0].spelling}"
        return UnitTypes(note=note, errors=len(errors)), included
    walker = _Walker(cindex)
    walker.walk_unit(tu.cursor)
    note = f"{len(errors)} errors from clang (their declarations left out)" if errors else ""
    types = UnitTypes(
        declarations=walker.merged(),
        instances=walker.instances,
        note=note,
        parsed=True,
        errors=len(errors),
    )
    return types, included


class _Walker:
    """Collects declarations' types over the unit's own files (not system headers), and the
    instances of function templates that calls in them reach."""

    def __init__(self, cindex: Any) -> None:
        self.ci = cindex
        kinds = cindex.CursorKind
        self.functions = {
            kinds.FUNCTION_DECL, kinds.FUNCTION_TEMPLATE, kinds.CXX_METHOD,
            kinds.CONSTRUCTOR, kinds.DESTRUCTOR, kinds.LAMBDA_EXPR,
        }  # fmt: skip
        self.scopes = {
            kinds.NAMESPACE, kinds.STRUCT_DECL, kinds.CLASS_DECL, kinds.CLASS_TEMPLATE,
            kinds.UNEXPOSED_DECL, kinds.LINKAGE_SPEC,
        }  # fmt: skip
        self.declared = {kinds.VAR_DECL, kinds.PARM_DECL}
        self.references = {kinds.CALL_EXPR, kinds.DECL_REF_EXPR}
        #: (file, line, name) -> {column: {types}} from non-template code and templates' text
        self.plain: _Raw = {}
        self.instances: dict[tuple[str, int, str], list[Instance]] = {}
        self.seen_instances: set[str] = set()
        self.queue: deque[tuple[tuple[str, int, str], Instance, Any]] = deque()
        #: each instance walked, with its declarations as collected (`merged` reduces them)
        self.walked: list[tuple[Instance, _Raw]] = []
        self.invalid = cindex.conf.lib.clang_isInvalidDeclaration
        self.invalid.argtypes = [cindex.Cursor]
        self.invalid.restype = ctypes.c_uint

    def walk_unit(self, root: Any) -> None:
        stack = [root]
        while stack:
            cursor = stack.pop()
            for child in cursor.get_children():
                if child.location.is_in_system_header:
                    continue
                if child.kind in self.functions:
                    self.walk_function(child, self.plain)
                elif child.kind in self.scopes:
                    stack.append(child)
                elif child.kind == self.ci.CursorKind.VAR_DECL:
                    self.record(child, self.plain)
        visited = 0
        while self.queue and visited < MAX_INSTANCES:
            visited += 1
            template, instance, cursor = self.queue.popleft()
            raw: _Raw = {}
            self.walk_function(cursor, raw)
            self.walked.append((instance, raw))
            self.instances.setdefault(template, []).append(instance)

    def walk_function(self, function: Any, into: _Raw) -> None:
        """Every declaration in `function` (parameters, locals, lambdas' too), and the
        template instances its calls and references name."""
        stack: list[tuple[Any, int]] = [(function, 0)]
        while stack:
            cursor, depth = stack.pop()
            for child in cursor.get_children():
                kind = child.kind
                if kind in self.declared:
                    self.record(child, into)
                elif kind in self.references:
                    self.reference(child)
                if depth < MAX_DEPTH:
                    stack.append((child, depth + 1))

    def record(self, cursor: Any, into: _Raw) -> None:
        location = cursor.location
        if location.file is None or not cursor.spelling:
            return
        if self.invalid(cursor):
            return  # clang could not type it (an unknown name): it says `int`
        found = canonical(cursor.type)
        if found is None:
            return
        key = (os.path.realpath(location.file.name), location.line, cursor.spelling)
        into.setdefault(key, {}).setdefault(location.column, set()).add(found)

    def reference(self, cursor: Any) -> None:
        target = cursor.referenced
        if target is None or target.kind not in self.functions:
            return
        count = target.get_num_template_arguments()
        if count <= 0 or not target.is_definition():
            return
        usr = target.get_usr() + "|" + target.type.spelling
        if usr in self.seen_instances or target.location.is_in_system_header:
            return
        self.seen_instances.add(usr)
        template = self.ci.conf.lib.clang_getSpecializedCursorTemplate(target)
        if template is None or template.location.file is None:
            return
        names = [
            c.spelling
            for c in template.get_children()
            if c.kind
            in (
                self.ci.CursorKind.TEMPLATE_TYPE_PARAMETER,
                self.ci.CursorKind.TEMPLATE_NON_TYPE_PARAMETER,
                self.ci.CursorKind.TEMPLATE_TEMPLATE_PARAMETER,
            )
        ]
        args: dict[str, str] = {}
        arg_types: dict[str, ClangType] = {}
        kinds = self.ci.TemplateArgumentKind
        for i, name in enumerate(names[:count]):
            try:
                kind = target.get_template_argument_kind(i)
            except ValueError:  # a kind these bindings do not name (a template template)
                continue
            if kind == kinds.TYPE:
                t = target.get_template_argument_type(i).get_canonical()
                args[name] = t.spelling
                found = canonical(t)
                if found is not None:
                    arg_types[name] = found
            elif kind == kinds.INTEGRAL:
                args[name] = str(target.get_template_argument_value(i))
        key = (
            os.path.realpath(template.location.file.name),
            template.location.line,
            template.spelling,
        )
        self.queue.append((key, Instance(args, arg_types), target))

    def merged(self) -> Declarations:
        """Declarations outside instances, plus those of instances where all instances of
        the template agree (a dependent type in the template's text has none of its own)."""
        combined: _Raw = {}
        for raw in (self.plain, *(raw for _, raw in self.walked)):
            for key, columns in raw.items():
                for column, types in columns.items():
                    combined.setdefault(key, {}).setdefault(column, set()).update(types)
        for instance, raw in self.walked:
            instance.declarations = _unique(raw)
        return _unique(combined)


def _unique(raw: _Raw) -> Declarations:
    """Each declaration's type where it has one only (two: instances that disagree)."""
    out: Declarations = {}
    for key, columns in raw.items():
        unique = tuple(
            (column, next(iter(types))) for column, types in sorted(columns.items())
            if len(types) == 1
        )  # fmt: skip
        if unique:
            out[key] = unique
    return out


def canonical(clang_type: Any) -> ClangType | None:
    """`clang_type` as a ClangType: pointers, arrays and references peeled (each pointer or
    array a level), then a builtin, enum or record with its size. None for what has no
    size here: dependent, incomplete, invalid or function types."""
    import clang.cindex as cindex

    kinds = cindex.TypeKind
    t = clang_type.get_canonical()
    pointer = 0
    for _ in range(16):
        kind = t.kind
        if kind in (kinds.POINTER, kinds.BLOCKPOINTER):
            pointer += 1
            t = t.get_pointee().get_canonical()
        elif kind in (kinds.LVALUEREFERENCE, kinds.RVALUEREFERENCE):
            t = t.get_pointee().get_canonical()
        elif kind in (
            kinds.CONSTANTARRAY, kinds.INCOMPLETEARRAY, kinds.VARIABLEARRAY,
            kinds.DEPENDENTSIZEDARRAY,
        ):  # fmt: skip
            pointer += 1
            t = t.get_array_element_type().get_canonical()
        else:
            break
    kind = t.kind
    if kind == kinds.VOID:
        return ClangType("void", 1, pointer) if pointer else None
    size = t.get_size()
    if size <= 0:
        return None  # dependent, incomplete or invalid: no size to give
    if kind.name in _BUILTIN_KINDS:
        return ClangType(_BUILTIN_KINDS[kind.name], size, pointer)
    if kind == kinds.ENUM:
        return ClangType("int", size, pointer)
    if kind == kinds.RECORD:
        name = t.get_declaration().spelling or ""
        if not name or "(" in name:
            return None  # a lambda's or an unnamed class: nothing reads its size
        return ClangType("struct", size, pointer, name)
    if kind == kinds.VECTOR:  # ext_vector_type: lanes of a builtin
        return None
    return None


def iter_instances(
    types: UnitTypes, file: str, first: int, last: int, name: str
) -> Iterator[Instance]:
    """The instances of the function template `name` declared in `file` between lines
    `first` and `last` (a kernel's definition), in the order the unit uses them."""
    path = os.path.realpath(file)
    for (where, line, template), instances in types.instances.items():
        if where == path and template == name and first <= line <= max(first, last):
            yield from instances


#: a unit's types, once per analysis session (its files may change between analyses; the
#: disk cache checks their stamps)
unit_types: SessionMemo[CompileUnit, UnitTypes] = SessionMemo(_unit_types)
