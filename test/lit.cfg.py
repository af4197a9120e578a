# lit configuration for Kiln's tool tests.
import os
import lit.formats

config.name = "Kiln"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".kiln", ".test"]
config.excludes = ["Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.kiln_obj_root, "test")

# Tests never touch the user's store: each run gets one under the build tree.
config.environment["KILN_CACHE_DIR"] = os.path.join(config.kiln_obj_root, "test", "lit-cache")
for var in ("HOME", "TMPDIR", "XDG_CACHE_HOME"):
    if var in os.environ:
        config.environment[var] = os.environ[var]

# Tests call the tools by name: kiln-compile, kiln-run, kiln-store, FileCheck, not.
tool_dirs = [config.kiln_tools_dir, config.llvm_tools_dir]
# `lit --param kiln_run_options="--mattr=-avx"`: every kiln-run of the run
# (RUN lines and the conformance scripts alike) gets these options, through
# a wrapper first on PATH: the instruction-set variants of the conformance
# suite (docs/Portability.md). Tests that pass --mattr themselves cannot
# take it: run the suite with --filter Conformance.
run_options = lit_config.params.get("kiln_run_options", "")
if run_options:
    import shlex
    wrap_dir = os.path.join(config.kiln_obj_root, "test", "kiln-run-options")
    os.makedirs(wrap_dir, exist_ok=True)
    wrapper = os.path.join(wrap_dir, "kiln-run")
    with open(wrapper, "w") as f:
        f.write('#!/bin/sh\nexec %s "$@" %s\n' % (
            shlex.quote(os.path.join(config.kiln_tools_dir, "kiln-run")),
            " ".join(shlex.quote(o) for o in shlex.split(run_options))))
    os.chmod(wrapper, 0o755)
    tool_dirs.insert(0, wrap_dir)
config.environment["PATH"] = os.pathsep.join(
    tool_dirs + [os.environ.get("PATH", "")])
config.substitutions.append(("%inputs", os.path.join(config.test_source_root, "Inputs")))
# The source tree, for tests that read its docs.
config.substitutions.append(("%kiln_src", config.kiln_src_root))
# %limit_memory, at the start of a `bash -c` command: the tool it runs may
# allocate 1 GiB at most, so that an input that makes it allocate without
# bound fails the test. `ulimit -v` in a plain build; ASan and TSan reserve
# terabytes of address space for their shadow memory, so there the
# sanitizer's allocator enforces it instead (an allocation over 1 GiB or a
# resident size over 1 GiB is a fatal report). utils/sanitize.sh.
sanitize = getattr(config, "kiln_sanitize", "")
if "address" in sanitize:
    limit_memory = ("export ASAN_OPTIONS=$ASAN_OPTIONS:max_allocation_size_mb=1024"
                    ":hard_rss_limit_mb=1024;")
elif "thread" in sanitize:
    limit_memory = ("export TSAN_OPTIONS=$TSAN_OPTIONS:max_allocation_size_mb=1024"
                    ":hard_rss_limit_mb=1024;")
else:
    limit_memory = "ulimit -v 1048576;"
config.substitutions.append(("%limit_memory", limit_memory))
# The store's remote tier is a build option (KILN_REMOTE): its tests need
# it, and a build without it has tests of its own (UNSUPPORTED: remote).
if getattr(config, "kiln_remote", "ON").upper() not in ("OFF", "0", "FALSE", "NO", ""):
    config.available_features.add("remote")
# The tools' quick-start link (KILN_QUICK_START_TOOLS, docs/Design.md §13):
# its test reads the link of the built tools (%kiln_tools).
config.substitutions.append(("%kiln_tools", config.kiln_tools_dir))
if getattr(config, "kiln_quick_start", "OFF").upper() not in ("OFF", "0", "FALSE", "NO", ""):
    config.available_features.add("quick-start")
# Tests that need the address-space limit itself (a mapping that must not
# fit) are unsupported in sanitizer builds.
if sanitize:
    config.available_features.add("sanitizer")
# An ASan build: LeakSanitizer cannot run in a setuid process (it stops the
# world with ptrace, which the kernel refuses there, and the process ignores
# ASAN_OPTIONS), so tests of setuid binaries are unsupported in it.
if "address" in sanitize:
    config.available_features.add("asan")
# The host's instruction-set features that tests depend on, as host-NAME with
# LLVM's name: what kiln-run may ask for with --mattr, and what it must refuse
# ("the host lacks +avx512f"). /proc/cpuinfo spells some of them otherwise.
# Tests that give files to another user (a setuid binary) need root.
if hasattr(os, "geteuid") and os.geteuid() == 0:
    config.available_features.add("root")
# The architecture the tools generate code for by default (a cross build
# runs them under an emulator): target-x86_64 or target-aarch64. Tests of
# one instruction set's code say REQUIRES: target-x86_64. The flags of
# /proc/cpuinfo are the build machine's, so they count only on x86-64.
target_arch = getattr(config, "kiln_target_arch", "x86_64").lower()
if target_arch in ("amd64", "x86_64"):
    target_arch = "x86_64"
elif target_arch in ("arm64", "aarch64"):
    target_arch = "aarch64"
config.available_features.add("target-" + target_arch)
config.environment["KILN_TEST_TARGET_ARCH"] = target_arch
# The instruction sets this build generates code for (KILN_TARGETS):
# codegen-x86, codegen-aarch64. Cross-compilation tests need both.
for t in getattr(config, "kiln_targets", "X86;AArch64").split(";"):
    if t:
        config.available_features.add("codegen-" + t.lower())
# The other architecture Kiln generates code for (cross-compilation tests).
config.substitutions.append(("%foreign_triple", "aarch64-linux-gnu"
                             if target_arch == "x86_64" else "x86_64-linux-gnu"))
if target_arch == "x86_64" and os.path.exists("/proc/cpuinfo"):
    flags = set()
    for line in open("/proc/cpuinfo"):
        if line.startswith("flags"):
            flags.update(line.split(":", 1)[1].split())
            break
    for feature, flag in (("avx2", "avx2"), ("avx512f", "avx512f"),
                          ("avx512fp16", "avx512_fp16")):
        if flag in flags:
            config.available_features.add("host-" + feature)
