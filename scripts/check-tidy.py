#!/usr/bin/env python3
"""Runs clang-tidy (the checks in .clang-tidy) over the project's own C++ sources, in parallel, and
fails on any diagnostic.

    scripts/check-tidy.py [BUILD_DIR] [-j N] [--nice N] [--no-cache] [FILE_REGEX]

The build must have been configured (the top CMakeLists.txt exports compile_commands.json) and built
once, so that generated headers (moc, config.h) exist. FILE_REGEX narrows the files while fixing
(default: every .cpp under app, backends, bench, core, tests, widgets; never generated moc files).

A file found clean is remembered in BUILD_DIR/tidy-cache under a key made of clang-tidy's version,
the .clang-tidy file, the file's compile commands and the content of every file it includes (the
compiler's dependency list, and that of a precompiled header it is given), so a rerun checks only the
files that a change can affect. Files with diagnostics are not remembered: they are checked again
each run. The summary gives the CPU time spent and names the slowest files checked (wall seconds):
the place to look when the suite grows.

Exits 77 (ctest: skipped) where clang-tidy is not installed (Debian package clang-tidy).
"""
import argparse
import concurrent.futures
import hashlib
import json
import os
import re
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Not the analysis pass's per-ISA builds: they are written in GCC's vector extensions
# (__builtin_shuffle with run-time indices, conditional lvalues of vector lanes), which clang cannot
# compile. The scalar oracle they must match bit for bit (analyzer_reference.cpp) is checked. Nor
# core/base/cpu_isa.cpp: GCC's __builtin_cpu_supports("f16c"), a feature clang 14 does not name. Nor
# tests/test_pch_anchor.cpp: it holds nothing but the suites' precompiled system headers, in which
# clang-tidy reports nothing; checking it parsed Qt and nlohmann-json twice (two targets) for nothing.
DEFAULT_REGEX = (
    "^" + re.escape(ROOT) + "/"
    "(?!core/analysis/analyzer_fast_|core/base/cpu_isa\\.cpp|tests/test_pch_anchor\\.cpp)"
    "(app|backends|bench|core|tests|widgets)/.*\\.cpp$"
)
DIAGNOSTIC = re.compile(r": (warning|error): ")


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("build", nargs="?", default=os.path.join(ROOT, "build", "dev"))
    parser.add_argument("regex", nargs="?", default=DEFAULT_REGEX)
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--nice", type=int, default=0, help="run clang-tidy at this niceness")
    parser.add_argument("--no-cache", action="store_true", help="check every file, remember nothing")
    args = parser.parse_args()
    # One positional that is not a folder is the regex (as `check-tidy.py REGEX`).
    if not os.path.isdir(args.build) and args.regex == DEFAULT_REGEX:
        args.build, args.regex = os.path.join(ROOT, "build", "dev"), args.build
    return args


class FileHashes:
    """Content hashes of the files the sources include, each file read once per run."""

    def __init__(self):
        self.known = {}

    def __call__(self, path):
        if path not in self.known:
            try:
                with open(path, "rb") as f:
                    self.known[path] = hashlib.sha256(f.read()).hexdigest()
            except OSError:
                self.known[path] = "missing"
        return self.known[path]


def make_dependencies(text):
    """The prerequisites of a make rule as the compiler writes it (`obj: a.cpp b.h \\`)."""
    body = text.replace("\\\n", " ").split(":", 1)[-1]
    return [p for p in body.split() if p]


def listed_if_fresh(depfile, directory):
    """The prerequisites a dependency file lists, where it is newer than each of them; else None."""
    try:
        with open(depfile) as f:
            deps = make_dependencies(f.read())
        stamp = os.path.getmtime(depfile)
        if deps and all(os.path.getmtime(os.path.join(directory, d)) <= stamp for d in deps):
            return deps
    except OSError:
        pass
    return None


def dependencies(entry):
    """Every file the entry's compile reads: the build's own dependency file where it is newer than
    each file it lists, else the compiler's list made now (-M). Neither names what a precompiled
    forced include (CMake's cmake_pch.hxx, with its .gch beside it) brings in: that comes from the
    header's own compile (its .gch.d), or, where that is stale, the .gch itself stands for it."""
    args = shlex.split(entry["command"])
    directory = entry["directory"]
    deps = None
    if "-o" in args:
        deps = listed_if_fresh(os.path.join(directory, args[args.index("-o") + 1] + ".d"), directory)
    if deps is None:
        listing = [a for a in args if a != "-c"]
        if "-o" in listing:
            i = listing.index("-o")
            del listing[i : i + 2]
        out = subprocess.run(listing + ["-M"], cwd=directory, capture_output=True, text=True, check=False)
        if out.returncode != 0:
            return None
        deps = make_dependencies(out.stdout)
    for i, arg in enumerate(args[:-1]):
        header = args[i + 1]
        if arg == "-include" and os.path.exists(header + ".gch"):
            deps += listed_if_fresh(header + ".gch.d", directory) or [header + ".gch"]
    return deps


def cache_key(entries, config, hashes):
    """The key of one source: every command the database has for it (clang-tidy checks the file
    under each) and the content of every file those commands read."""
    digest = hashlib.sha256(config.encode())
    files = set()
    for entry in entries:
        deps = dependencies(entry)
        if deps is None:
            return None
        digest.update(entry["command"].encode())
        files.update(os.path.normpath(os.path.join(entry["directory"], d)) for d in deps)
    for dep in sorted(files):
        digest.update(f"\n{dep} {hashes(dep)}".encode())
    return digest.hexdigest()


UNITY_SOURCE = re.compile(r"/Unity/unity_[0-9]+_cxx\.cxx$")
UNITY_INCLUDE = re.compile(r'^#include "([^"]+)"', re.MULTILINE)


def without_gch(command):
    """The command with each forced include that has GCC's precompiled header beside it (CMake's
    cmake_pch.hxx, the suites' shared one) passed on to clang's front end as plain text: the clang
    driver would take the .gch for a clang PCH and fail ("not a valid precompiled PCH file")."""
    args = shlex.split(command)
    out = []
    i = 0
    while i < len(args):
        if args[i] == "-include" and i + 1 < len(args) and os.path.exists(args[i + 1] + ".gch"):
            out += ["-Xclang", "-include", "-Xclang", args[i + 1]]
            i += 2
            continue
        out.append(args[i])
        i += 1
    return shlex.join(out)


def without_unity(entries):
    """The database with each unity-build unit (UNITY_BUILD targets) replaced by the sources it
    includes, each with the unit's command, so clang-tidy checks every source as its own file. Their
    object names are made up, so their dependencies come from the compiler (-M)."""
    out = []
    for entry in entries:
        if not UNITY_SOURCE.search(entry["file"]):
            out.append(entry)
            continue
        with open(entry["file"]) as f:
            sources = UNITY_INCLUDE.findall(f.read())
        args = shlex.split(entry["command"])
        for source in sources:
            own = [source if a == entry["file"] else a for a in args]
            own[own.index("-o") + 1] += "." + os.path.basename(source) + ".tidy.o"
            out.append({"directory": entry["directory"], "file": source, "command": shlex.join(own)})
    return out


def main():
    args = parse_args()
    tidy = shutil.which("clang-tidy-14") or shutil.which("clang-tidy")
    if not tidy:
        print("clang-tidy not installed (Debian package clang-tidy): skipped", file=sys.stderr)
        return 77
    database = os.path.join(args.build, "compile_commands.json")
    if not os.path.isfile(database):
        print(f"{database}: configure the build first", file=sys.stderr)
        return 2
    with open(database) as f:
        every = without_unity(json.load(f))
    selected = re.compile(args.regex)
    # One check per source: clang-tidy checks a file under each command the database has for it (a
    # source built into two targets, as the suites' precompiled-header anchor), so one call covers all.
    sources = {}
    for e in every:
        if selected.search(e["file"]):
            sources.setdefault(e["file"], []).append(e)
    if not sources:
        print(f"clang-tidy: no source matches {args.regex}", file=sys.stderr)
        return 2

    version = subprocess.run([tidy, "--version"], capture_output=True, text=True, check=True).stdout
    with open(os.path.join(ROOT, ".clang-tidy")) as f:
        config = version + f.read()
    cache = os.path.join(args.build, "tidy-cache")
    os.makedirs(cache, exist_ok=True)
    hashes = FileHashes()
    # The database clang-tidy reads: every source of the build's, unity units expanded (a source
    # missing from it would get a neighbour's flags, guessed), precompiled headers read as text.
    expanded = tempfile.TemporaryDirectory()
    with open(os.path.join(expanded.name, "compile_commands.json"), "w") as f:
        json.dump([dict(e, command=without_gch(e["command"])) for e in every], f)
    start = time.monotonic()
    children = resource.getrusage(resource.RUSAGE_CHILDREN)

    def remembered(source):
        return os.path.join(cache, hashlib.sha256(source.encode()).hexdigest()[:24])

    def check(source):
        """(source, diagnostics or None where clean, seconds of clang-tidy or None where the cache
        answered)."""
        key = None if args.no_cache else cache_key(sources[source], config, hashes)
        if key is not None:
            try:
                with open(remembered(source)) as f:
                    if f.read() == key:
                        return source, None, None
            except OSError:
                pass
        began = time.monotonic()
        command = [tidy, "-p", expanded.name, "--quiet", source]
        if args.nice:
            command = ["nice", "-n", str(args.nice)] + command
        out = subprocess.run(command, capture_output=True, text=True, check=False)
        text = out.stdout + out.stderr
        seconds = time.monotonic() - began
        if out.returncode != 0 or DIAGNOSTIC.search(text):
            return source, text or f"clang-tidy exited {out.returncode}\n", seconds
        if key is not None:
            with open(remembered(source), "w") as f:
                f.write(key)
        return source, None, seconds

    failed, took = [], {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for source, diagnostics, seconds in pool.map(check, sources):
            if seconds is not None:
                took[source] = seconds
            if diagnostics is not None:
                failed.append(source)
                if not args.no_cache:
                    try:
                        os.remove(remembered(source))
                    except OSError:
                        pass
                sys.stderr.write(diagnostics)
    seconds = round(time.monotonic() - start)
    done = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = round(done.ru_utime + done.ru_stime - children.ru_utime - children.ru_stime)
    cached = len(sources) - len(took)
    slowest = ", ".join(
        f"{os.path.relpath(name, ROOT)} {round(took[name])} s" for name in sorted(took, key=took.get)[:-4:-1]
    )
    summary = (
        f"{len(sources)} file(s), {len(took)} checked (slowest {slowest or 'none'}), {cached} unchanged "
        f"since found clean, {args.jobs} job(s), {seconds} s ({cpu} s of CPU)"
    )
    if failed:
        print(f"clang-tidy: diagnostics in {len(failed)} file(s) over {summary}:", file=sys.stderr)
        for name in failed:
            print(f"  {os.path.relpath(name, ROOT)}", file=sys.stderr)
        return 1
    print(f"clang-tidy: clean over {summary}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
